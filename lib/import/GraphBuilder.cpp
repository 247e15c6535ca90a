//===- GraphBuilder.cpp - the tg module from the prepared graph -----------===//
//
// Parameters, functions and the ONNX-to-MLIR types and constants
// (GraphBuilder.h); the nodes themselves convert in OpConverters.cpp.
//
//===----------------------------------------------------------------------===//

#include "lib/import/GraphBuilder.h"
#include "lib/support/Limits.h"
#include "lib/import/Folding.h"
#include "lib/import/ImportError.h"
#include "lib/import/ModelLoader.h"
#include "lib/import/OpConverters.h"
#include "lib/import/TrainingInfo.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/DebugStringHelper.h"

#include "llvm/Support/Path.h"

using namespace mlir;
using onnx::NodeProto;
using onnx::TensorProto;

namespace hmcc::import {

GraphBuilder::GraphBuilder(MLIRContext &context, const Model &model,
                           const TrainingInfo &training,
                           const std::set<std::string> &parameters, ConstantTable &constants)
    : context(context), builder(&context), model(model), training(training),
      parameters(parameters), constants(constants) {}

//===----------------------------------------------------------------------===//
// Types and constants in MLIR
//===----------------------------------------------------------------------===//

static Type elementType(OpBuilder &builder, int32_t dtype) {
  switch (dtype) {
  case TensorProto::FLOAT: return builder.getF32Type();
  case TensorProto::DOUBLE: return builder.getF64Type();
  case TensorProto::FLOAT16: return builder.getF16Type();
  case TensorProto::BFLOAT16: return builder.getBF16Type();
  case TensorProto::INT64: return builder.getI64Type();
  case TensorProto::INT32: return builder.getI32Type();
  case TensorProto::BOOL: return builder.getI1Type();
  case TensorProto::INT8: return builder.getIntegerType(8);
  case TensorProto::INT16: return builder.getIntegerType(16);
  case TensorProto::UINT8: return builder.getIntegerType(8, /*isSigned=*/false);
  case TensorProto::UINT16: return builder.getIntegerType(16, false);
  case TensorProto::UINT32: return builder.getIntegerType(32, false);
  case TensorProto::UINT64: return builder.getIntegerType(64, false);
  default: return {};
  }
}

RankedTensorType GraphBuilder::tensorType(int32_t dtype, llvm::ArrayRef<int64_t> shape,
                                          const std::string &what) {
  Type element = elementType(builder, dtype);
  if (!element)
    fail(what + " has element type " +
         TensorProto::DataType_Name(static_cast<TensorProto::DataType>(dtype)) +
         ", which hmcc does not support");
  int64_t elementBytes = std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
  if (!checkedTensorBytes(shape, elementBytes))
    fail(what + " has shape " + formatShape(shape) + ", more than hmcc's limit of 2^48 bytes");
  return RankedTensorType::get(shape, element);
}

RankedTensorType GraphBuilder::inferredType(const std::string &name,
                                            const std::string &producer) {
  auto it = model.types.find(name);
  std::string what = "value " + quote(name) + producer;
  if (it == model.types.end() || !it->second.has_tensor_type() ||
      !it->second.tensor_type().has_shape())
    fail("cannot determine a static shape for " + what +
         "; bind dynamic dimensions with --batch, --seq or --input-shape");
  const auto &tt = it->second.tensor_type();
  std::vector<int64_t> shape;
  for (const auto &dim : tt.shape().dim()) {
    if (!dim.has_dim_value())
      fail("the shape of " + what + " is not static" +
           (dim.has_dim_param() ? " (dimension '" + dim.dim_param() + "')" : "") +
           "; bind dynamic dimensions with --batch, --seq or --input-shape");
    shape.push_back(dim.dim_value());
  }
  return tensorType(tt.elem_type(), shape, what);
}

ElementsAttr GraphBuilder::elementsOf(const HostTensor &t, const std::string &name) {
  RankedTensorType type = tensorType(t.dtype, t.shape, "constant " + quote(name));
  switch (t.dtype) {
  case TensorProto::FLOAT: {
    std::vector<float> v(t.f.begin(), t.f.end());
    return DenseElementsAttr::get(type, llvm::ArrayRef(v));
  }
  case TensorProto::DOUBLE:
    return DenseElementsAttr::get(type, llvm::ArrayRef(t.f));
  case TensorProto::INT64:
    return DenseElementsAttr::get(type, llvm::ArrayRef(t.i));
  case TensorProto::INT32: {
    std::vector<int32_t> v(t.i.begin(), t.i.end());
    return DenseElementsAttr::get(type, llvm::ArrayRef(v));
  }
  case TensorProto::BOOL: {
    llvm::SmallVector<bool> v(t.i.begin(), t.i.end());
    return DenseElementsAttr::get(type, llvm::ArrayRef(v));
  }
  default: {
    unsigned width = type.getElementTypeBitWidth();
    llvm::SmallVector<llvm::APInt> v;
    for (int64_t x : t.i)
      v.emplace_back(width, static_cast<uint64_t>(x), /*isSigned=*/true,
                     /*implicitTrunc=*/true);
    return DenseElementsAttr::get(type, llvm::ArrayRef(v));
  }
  }
}

Value GraphBuilder::valueOf(const std::string &name, const NodeProto &user) {
  if (auto it = values.find(name); it != values.end())
    return it->second;
  if (auto it = materialized.find(name); it != materialized.end())
    return it->second;
  if (name.empty())
    model.fail(user, "an input it needs is absent (its name is empty)");
  if (!constants.isConstant(name))
    model.fail(user, "input " + quote(name) + " is not defined before this node");
  Value v = tg::ConstantOp::create(builder, builder.getUnknownLoc(),
                                   elementsOf(*constants.find(name), name));
  v.getDefiningOp()->setLoc(NameLoc::get(builder.getStringAttr(name)));
  return materialized[name] = v;
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

/// The model's name: the graph's, unless it is an exporter's placeholder
/// (PyTorch names every graph torch_jit or main_graph); then the file's
/// stem, or for a file called model.onnx the folder's name.
std::string GraphBuilder::modelName() {
  StringRef name = model.proto.graph().name();
  if (!name.empty() && name != "torch_jit" && name != "main_graph" &&
      name != "torch-jit-export")
    return name.str();
  StringRef stem = llvm::sys::path::stem(model.path);
  if (stem == "model") {
    StringRef dir = llvm::sys::path::filename(model.dir);
    if (!dir.empty() && dir != "." && dir != "..")
      return dir.str();
  }
  return stem.str();
}

OwningOpRef<ModuleOp> GraphBuilder::build() {
  const auto &graph = model.proto.graph();
  Location fileLoc = FileLineColLoc::get(&context, model.path, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc, modelName());
  module->getOperation()->setAttr("tg.source",
                                  builder.getStringAttr(llvm::sys::path::filename(model.path)));
  module->getOperation()->setAttr("tg.opset", builder.getI64IntegerAttr(model.opset));
  builder.setInsertionPointToEnd(module->getBody());

  for (const TensorProto &t : graph.initializer()) {
    if (!parameters.count(t.name()))
      continue;
    std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
    auto type = tensorType(t.data_type(), shape, "initializer " + quote(t.name()));
    auto param = tg::ParameterOp::create(builder,
                                         NameLoc::get(builder.getStringAttr(t.name()), fileLoc),
                                         t.name(), type, t.name(), nullptr, nullptr, nullptr,
                                         nullptr);
    if (auto ext = externalRef(model, t)) {
      llvm::SmallString<256> rel(StringRef(ext->file).drop_front(model.dir.size()));
      param.setLocationAttr(builder.getStringAttr(StringRef(rel).ltrim("/")));
      param.setOffsetAttr(builder.getI64IntegerAttr(ext->offset));
      param.setLengthAttr(builder.getI64IntegerAttr(ext->length));
    }
    if (auto init = training.initialValues.find(t.name());
        init != training.initialValues.end())
      param.setInitialValueAttr(elementsOf(init->second, t.name()));
  }

  if (!training.training) {
    buildFunction(*module, "forward", [](const std::string &) { return true; },
                  [](const NodeProto &) { return true; }, graph.output(), {});
  } else {
    auto onlyInference = [&](const NodeProto &node) {
      return llvm::none_of(node.output(), [&](const std::string &o) {
        return training.algorithmValues.count(o) > 0;
      });
    };
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inferenceOuts, algorithmOuts;
    for (const auto &out : graph.output())
      *(llvm::is_contained(training.algorithmOutputs, out.name()) ? algorithmOuts
                                                                  : inferenceOuts)
           .Add() = out;
    buildFunction(*module, "forward",
                  [&](const std::string &in) { return training.inferenceInputs.count(in) > 0; },
                  onlyInference, inferenceOuts, {});
    buildFunction(*module, "algorithm", [](const std::string &) { return true; },
                  [](const NodeProto &) { return true; }, algorithmOuts, training.updates);
    module->getOperation()->setAttr("tg.training_info", builder.getUnitAttr());
  }

  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      diagnostics += d.str();
      return success();
    });
    if (failed(verify(*module)))
      fail("the imported graph does not verify: " + diagnostics);
  }
  return module;
}

/// Builds function `name` from the data inputs `takesInput` accepts and
/// the nodes `takesNode` accepts, returning `outputs`; each of `assigns`
/// (initializer <- value) becomes a tg.assign before the return.
void GraphBuilder::buildFunction(
    ModuleOp module, StringRef name, llvm::function_ref<bool(const std::string &)> takesInput,
    llvm::function_ref<bool(const NodeProto &)> takesNode,
    const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &outputs,
    llvm::ArrayRef<std::pair<std::string, std::string>> assigns) {
  const auto &graph = model.proto.graph();
  Location fileLoc = module.getLoc();
  values.clear();
  materialized.clear();
  builder.setInsertionPointToEnd(module.getBody());

  llvm::SmallVector<Type> argTypes, resultTypes;
  std::vector<const onnx::ValueInfoProto *> inputs;
  for (const auto &in : graph.input())
    if (!model.initializers.count(in.name()) && takesInput(in.name())) {
      inputs.push_back(&in);
      argTypes.push_back(inferredType(in.name(), " (a graph input)"));
    }
  for (const auto &out : outputs)
    resultTypes.push_back(inferredType(out.name(), " (a graph output)"));
  auto func = func::FuncOp::create(builder, fileLoc, name,
                                   builder.getFunctionType(argTypes, resultTypes));
  Block *entry = func.addEntryBlock();
  for (auto [k, in] : llvm::enumerate(inputs)) {
    func.setArgAttr(k, "tg.input", builder.getStringAttr(in->name()));
    values[in->name()] = entry->getArgument(k);
  }
  for (int k = 0; k < outputs.size(); ++k)
    func.setResultAttr(k, "tg.output", builder.getStringAttr(outputs.Get(k).name()));
  builder.setInsertionPointToEnd(entry);

  // Parameters are read at the top, those the function uses.
  std::set<std::string> used;
  for (const NodeProto &node : graph.node())
    if (takesNode(node))
      used.insert(node.input().begin(), node.input().end());
  for (const auto &assign : assigns)
    used.insert(assign.second);
  for (const auto &out : outputs)
    used.insert(out.name());
  for (const TensorProto &t : graph.initializer()) {
    if (parameters.count(t.name()) && used.count(t.name())) {
      std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
      auto type = tensorType(t.data_type(), shape, t.name());
      values[t.name()] = tg::ParamOp::create(
          builder, NameLoc::get(builder.getStringAttr(t.name())), type, t.name());
    }
  }

  for (int k = 0; k < graph.node_size(); ++k)
    if (takesNode(graph.node(k)))
      importNode(graph.node(k), k);

  NodeProto none;
  none.set_name("<graph output>");
  llvm::SmallVector<Value> results;
  for (const auto &out : outputs)
    results.push_back(valueOf(out.name(), none));
  // A parameter read aliases the parameter's memory, which an assignment
  // overwrites: values that are parameter reads are copied first, before
  // any assignment.
  llvm::SmallVector<Value> assigned;
  for (const auto &assign : assigns) {
    Value v = valueOf(assign.second, none);
    if (v.getDefiningOp<tg::ParamOp>())
      v = tg::IdentityOp::create(builder, fileLoc, v.getType(), v);
    assigned.push_back(v);
  }
  for (auto [assign, v] : llvm::zip(assigns, assigned)) {
    const auto &[param, valueName] = assign;
    auto declared = module.lookupSymbol<tg::ParameterOp>(param);
    if (declared.getType() != v.getType())
      fail("training_info: update_binding " + quote(param) + " <- " + quote(valueName) +
           ": the value has type " + debugString(v.getType()) + ", the initializer " +
           debugString(declared.getType()));
    tg::AssignOp::create(builder, NameLoc::get(builder.getStringAttr(param)),
                         FlatSymbolRefAttr::get(&context, param), v);
  }
  func::ReturnOp::create(builder, fileLoc, results);
}

void GraphBuilder::importNode(const NodeProto &node, int index) {
  const std::string &op = node.op_type();
  std::string name = node.name().empty() ? op + "_" + std::to_string(index) : node.name();
  Location loc = NameLoc::get(builder.getStringAttr(name));
  Operation *created = convertNode(*this, node, loc);

  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagnostics += d.str();
    return success();
  });
  if (failed(verify(created)))
    model.fail(node, "inconsistent shapes: " + diagnostics);
}

} // namespace hmcc::import
