//===- OpConverters.cpp - the table of supported ONNX operators -----------===//
//
// The op table (OpConverters.h), the queries that read it, and the generic
// table-driven conversion; the hand-written converters the table names are
// in SpecialConverters.cpp.
//
//===----------------------------------------------------------------------===//

#include "lib/import/OpConverters.h"
#include "lib/import/Folding.h"
#include "lib/import/GraphBuilder.h"
#include "lib/import/ImportError.h"
#include "lib/import/ModelLoader.h"
#include "lib/import/NodeConverter.h"
#include "lib/import/OnnxAttributes.h"
#include "lib/import/OnnxImporter.h"

#include "mlir/IR/OperationSupport.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using onnx::NodeProto;
using onnx::TensorProto;

namespace hmcc::import {

const char *const kPreviewTrainingDomain = "ai.onnx.preview.training";

//===----------------------------------------------------------------------===//
// NodeConverter
//===----------------------------------------------------------------------===//

NodeConverter::NodeConverter(GraphBuilder &graph, const OpDef *def, const NodeProto &node,
                             Location loc)
    : graph(graph), def(def), node(node), builder(graph.getBuilder()),
      state(loc, "tg." + (def ? def->mnemonic : std::string())) {}

void NodeConverter::fail(const std::string &message) { graph.getModel().fail(node, message); }

void NodeConverter::operand(int k) { state.addOperands(graph.valueOf(node.input(k), node)); }

void NodeConverter::result(int k) {
  state.addTypes(graph.inferredType(node.output(k),
                                    " (output of " + graph.getModel().describe(node) + ")"));
}

RankedTensorType NodeConverter::typeOfInput(int k) {
  const std::string &name = node.input(k);
  if (const HostTensor *t = graph.getConstants().value(name))
    return graph.tensorType(t->dtype, t->shape, quote(name));
  return cast<RankedTensorType>(graph.valueOf(name, node).getType());
}

const HostTensor &NodeConverter::constantInput(int k, const char *what) {
  if (k >= node.input_size() || node.input(k).empty())
    fail(std::string("the ") + what + " input is missing");
  assert(def && def->compileTime.count(k) && "operand missing from the table");
  ConstantTable &constants = graph.getConstants();
  if (!constants.isConstant(node.input(k)))
    fail(std::string("its ") + what + " input (" + quote(node.input(k)) +
         ") must be known at compile time; hmcc compiles static graphs "
         "(give a graph input a value with --input-value NAME=FILE.pb)");
  return *constants.find(node.input(k));
}

std::vector<int64_t> NodeConverter::ints(const HostTensor &t) {
  std::vector<int64_t> v;
  for (int64_t k = 0; k < t.size(); ++k)
    v.push_back(t.integer(k));
  return v;
}

std::vector<int64_t> NodeConverter::axesOf(std::vector<int64_t> axes, int64_t rank) {
  for (int64_t &a : axes) {
    if (a < -rank || a >= rank)
      fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (a < 0)
      a += rank;
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

std::vector<int64_t> NodeConverter::axesInputOrAttr() {
  return hasInput(1) ? ints(constantInput(1, "axes")) : attrInts(node, "axes");
}

//===----------------------------------------------------------------------===//
// The generic path
//===----------------------------------------------------------------------===//

void applyAttr(NodeConverter &cx, const AttrMap &a) {
  OpBuilder &b = cx.builder;
  const NodeProto &node = cx.node;
  switch (a.kind) {
  case AttrMap::F32:
    cx.addAttr(a.name, b.getF32FloatAttr(attrFloat(node, a.name, static_cast<float>(a.number))));
    break;
  case AttrMap::Flag:
    if (attrInt(node, a.name, static_cast<int64_t>(a.number)))
      cx.addAttr(a.name, b.getUnitAttr());
    break;
  case AttrMap::String:
    cx.addAttr(a.name, b.getStringAttr(attrString(node, a.name, a.text)));
    break;
  case AttrMap::IntIfPresent:
    if (findAttr(node, a.name))
      cx.addAttr(a.name, b.getI64IntegerAttr(attrInt(node, a.name, 0)));
    break;
  case AttrMap::Axis:
    cx.addAttr(a.name, b.getI64IntegerAttr(cx.axisOf(
                           attrInt(node, a.name, static_cast<int64_t>(a.number)), cx.rank)));
    break;
  }
}

/// Operands, then result types, then attributes, as the entry lists them.
static void convertGeneric(NodeConverter &cx) {
  const OpDef &def = *cx.def;
  if (def.allInputs) {
    for (int k = 0; k < cx.node.input_size(); ++k)
      cx.operand(k);
  } else {
    for (const Slot &s : def.operands)
      if (!s.ifPresent || cx.hasInput(s.index))
        cx.operand(s.index);
  }
  for (const Slot &s : def.results)
    if (!s.ifPresent || cx.hasOutput(s.index))
      cx.result(s.index);
  for (const AttrMap &a : def.attrs)
    applyAttr(cx, a);
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

static OpDef op(const char *opType, const char *mnemonic) {
  OpDef def;
  def.opType = opType;
  def.mnemonic = mnemonic;
  return def;
}
/// One input, one output, no attributes.
static OpDef unary(const char *opType, const char *mnemonic) { return op(opType, mnemonic); }
/// Two inputs (broadcast), one output.
static OpDef binary(const char *opType, const char *mnemonic) {
  return op(opType, mnemonic).in({0, 1});
}
/// An op always evaluated at compile time: it never reaches the graph.
static OpDef foldedOnly(const char *opType) { return op(opType, "").noGradient(); }
static OpDef previewTraining(const char *opType, const char *mnemonic, ConvertFn convert) {
  OpDef def = op(opType, mnemonic).special(convert).resultsBy(ResultMap::Every);
  def.domain = kPreviewTrainingDomain;
  return def;
}
static AttrMap f32(const char *name, float fallback) { return {AttrMap::F32, name, fallback}; }
static AttrMap flag(const char *name, int64_t fallback) {
  return {AttrMap::Flag, name, static_cast<double>(fallback)};
}
static AttrMap str(const char *name, const char *fallback) {
  return {AttrMap::String, name, 0, fallback};
}
static AttrMap intIfPresent(const char *name) { return {AttrMap::IntIfPresent, name}; }
static AttrMap axis(const char *name, int64_t fallback) {
  return {AttrMap::Axis, name, static_cast<double>(fallback)};
}

const std::vector<OpDef> &opTable() {
  static const std::vector<OpDef> table = {
      // Elementwise.
      unary("Sqrt", "sqrt"),
      unary("Reciprocal", "reciprocal"),
      unary("Neg", "neg"),
      unary("Exp", "exp"),
      unary("Log", "log"),
      unary("Tanh", "tanh"),
      unary("Sigmoid", "sigmoid"),
      unary("Erf", "erf"),
      unary("Relu", "relu"),
      unary("Identity", "identity"),
      binary("Add", "add"),
      binary("Sub", "sub"),
      binary("Mul", "mul"),
      binary("Div", "div"),
      binary("Pow", "pow"),
      binary("Equal", "equal").noGradient(),
      op("Where", "where").in({0, 1, 2}).noGradientAt({0}),
      op("Cast", "cast"),
      // Linear algebra.
      op("MatMul", "matmul").in({0, 1}),
      op("Gemm", "gemm")
          .in({ifPresent(0), ifPresent(1), ifPresent(2)})
          .attr(f32("alpha", 1.0f))
          .attr(f32("beta", 1.0f))
          .attr(flag("transA", 0))
          .attr(flag("transB", 0)),
      // Shapes and data movement.
      op("Transpose", "transpose").special(convertTranspose),
      op("Reshape", "reshape").constInputs({1}),
      op("Flatten", "flatten").special(convertFlatten),
      op("Squeeze", "squeeze").special(convertSqueeze).constInputs({1}),
      op("Unsqueeze", "unsqueeze").special(convertUnsqueeze).constInputs({1}),
      op("Concat", "concat").inAll().attr(axis("axis", 0)),
      op("Split", "split").special(convertSplit).constInputs({1}),
      op("Slice", "slice").special(convertSlice).constInputs({1, 2, 3, 4}),
      op("Gather", "gather").in({0, 1}).attr(axis("axis", 0)).noGradientAt({1}),
      op("Expand", "expand").constInputs({1}),
      op("Trilu", "trilu").special(convertTrilu).constInputs({1}),
      // Values made from shapes.
      foldedOnly("Constant"),
      foldedOnly("Shape"),
      op("ConstantOfShape", "constant_of_shape")
          .special(convertConstantOfShape)
          .constInputs({0})
          .noGradient(),
      op("Range", "range").in({0, 1, 2}).constInputs({0, 1, 2}).noGradient(),
      // Reductions and normalisation.
      op("ReduceMean", "reduce_mean").special(convertReduce).constInputs({1}),
      op("ReduceSum", "reduce_sum").special(convertReduce).constInputs({1}),
      op("ReduceMax", "reduce_max").special(convertReduce).constInputs({1}),
      op("Softmax", "softmax").until(12).special(convertSoftmaxBefore13),
      op("Softmax", "softmax").since(13).special(convertSoftmax),
      op("LogSoftmax", "log_softmax").until(12).special(convertSoftmaxBefore13),
      op("LogSoftmax", "log_softmax").since(13).special(convertSoftmax),
      op("LayerNormalization", "layer_norm")
          .special(convertLayerNorm)
          .resultsBy(ResultMap::Positional),
      op("SoftmaxCrossEntropyLoss", "softmax_cross_entropy_loss")
          .in({0, 1, ifPresent(2)})
          .out({0, ifPresent(1)})
          .attr(str("reduction", "mean"))
          .attr(intIfPresent("ignore_index"))
          .noGradientAt({1, 2}),
      op("Dropout", "dropout")
          .special(convertDropout)
          .constInputs({1, 2})
          .resultsBy(ResultMap::Positional),
      // ai.onnx.preview.training.
      previewTraining("Adagrad", "onnx_optimizer", convertAdagrad),
      previewTraining("Momentum", "onnx_optimizer", convertMomentum),
      previewTraining("Adam", "onnx_optimizer", convertAdam),
      previewTraining("Gradient", "gradient", convertGradient),
  };
  return table;
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

const OpDef *findOp(const Model &model, const NodeProto &node) {
  bool isDefault = node.domain().empty() || node.domain() == "ai.onnx";
  int64_t version = model.opset;
  if (!isDefault)
    for (const auto &entry : model.proto.opset_import())
      if (entry.domain() == node.domain())
        version = entry.version();
  for (const OpDef &def : opTable()) {
    bool sameDomain = isDefault ? def.domain.empty() : def.domain == node.domain();
    if (sameDomain && def.opType == node.op_type() && def.minOpset <= version &&
        version <= def.maxOpset)
      return &def;
  }
  return nullptr;
}

void checkOperators(const Model &model) {
  for (const NodeProto &node : model.proto.graph().node()) {
    const OpDef *def = findOp(model, node);
    if (def && !def->domain.empty())
      continue;
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      model.fail(node, "unsupported operator domain; hmcc supports the default ONNX domain and "
                       "Adagrad, Momentum and Adam of ai.onnx.preview.training (see hmcc "
                       "--list-ops)");
    if (!def)
      model.fail(node, "unsupported operator (hmcc --list-ops lists the supported ones)");
  }
}

Operation *convertNode(GraphBuilder &graph, const NodeProto &node, Location loc) {
  const OpDef *def = findOp(graph.getModel(), node);
  NodeConverter cx(graph, def, node, loc);
  if (def && !def->domain.empty()) {
    def->convert(cx);
  } else {
    cx.rank = node.input_size() > 0 ? cx.typeOfInput(0).getRank() : 0;
    if (!def || def->mnemonic.empty())
      cx.fail("unsupported operator (hmcc --list-ops lists the supported ones)");
    if (def->convert)
      def->convert(cx);
    else
      convertGeneric(cx);
  }

  Operation *created = cx.builder.create(cx.state);
  if (def->resultMap == ResultMap::Every) {
    for (int k = 0; k < node.output_size(); ++k)
      graph.define(node.output(k), created->getResult(k));
    return created;
  }
  bool positional = def->resultMap == ResultMap::Positional;
  unsigned next = 0;
  for (int k = 0; k < node.output_size(); ++k) {
    if (node.output(k).empty() && !positional)
      continue;
    if (next < created->getNumResults() && !node.output(k).empty())
      graph.define(node.output(k), created->getResult(next));
    ++next;
  }
  return created;
}

} // namespace hmcc::import

//===----------------------------------------------------------------------===//
// The lists OnnxImporter.h offers, read from the table
//===----------------------------------------------------------------------===//

namespace hmcc {

bool needsCompileTimeValue(llvm::StringRef opType, int operand) {
  return llvm::any_of(import::opTable(), [&](const import::OpDef &def) {
    return def.opType == opType && def.compileTime.count(operand);
  });
}

const std::vector<std::string> &supportedOnnxOps() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (const import::OpDef &def : import::opTable())
      if (def.domain.empty() && !llvm::is_contained(v, def.opType))
        v.push_back(def.opType);
    std::sort(v.begin(), v.end());
    return v;
  }();
  return ops;
}

const std::vector<std::string> &supportedPreviewTrainingOps() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (const import::OpDef &def : import::opTable())
      if (!def.domain.empty())
        v.push_back(def.domain + "." + def.opType);
    std::sort(v.begin(), v.end());
    return v;
  }();
  return ops;
}

} // namespace hmcc
