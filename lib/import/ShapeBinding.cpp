//===- ShapeBinding.cpp - static shapes for every value -------------------===//
//
// Input values and dimensions, shape inference and folding to a fixpoint
// (ShapeBinding.h).
//
//===----------------------------------------------------------------------===//

#include "lib/import/ShapeBinding.h"
#include "lib/import/Folding.h"
#include "lib/import/ImportError.h"
#include "lib/import/ModelLoader.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <map>

#include <sys/wait.h>
#include <unistd.h>

using onnx::NodeProto;
using onnx::TensorProto;

namespace hmcc::import {

/// The graph inputs that are not initializers.
static std::vector<onnx::ValueInfoProto *> dataInputs(Model &model) {
  std::vector<onnx::ValueInfoProto *> inputs;
  for (auto &in : *model.proto.mutable_graph()->mutable_input())
    if (!model.initializers.count(in.name()))
      inputs.push_back(&in);
  return inputs;
}

std::set<std::string> bindInputValues(Model &model, const ImportOptions &options) {
  std::set<std::string> boundInputs;
  auto *graph = model.proto.mutable_graph();
  for (const auto &[name, file] : options.inputValues) {
    auto inputs = dataInputs(model);
    auto it = std::find_if(inputs.begin(), inputs.end(),
                           [&](auto *in) { return in->name() == name; });
    if (it == inputs.end())
      fail("--input-value names " + quote(name) + ", which is not a data input of the model");
    auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false);
    if (!buffer)
      fail("--input-value " + name + ": cannot read " + quote(file) + ": " +
           buffer.getError().message());
    TensorProto value;
    if (!value.ParseFromArray((*buffer)->getBufferStart(),
                              static_cast<int>((*buffer)->getBufferSize())))
      fail("--input-value " + name + ": " + quote(file) + " is not a serialized ONNX TensorProto");
    const auto &declared = (*it)->type().tensor_type();
    if (value.data_type() != declared.elem_type())
      fail("--input-value " + name + ": the value has element type " +
           TensorProto::DataType_Name(static_cast<TensorProto::DataType>(value.data_type())) +
           ", the input " +
           TensorProto::DataType_Name(static_cast<TensorProto::DataType>(declared.elem_type())));
    if (declared.has_shape()) {
      bool fits = declared.shape().dim_size() == value.dims_size();
      for (int d = 0; fits && d < value.dims_size(); ++d)
        fits = !declared.shape().dim(d).has_dim_value() ||
               declared.shape().dim(d).dim_value() == value.dims(d);
      if (!fits)
        fail("--input-value " + name + ": the value's shape does not fit the input's");
    }
    value.set_name(name);
    *graph->add_initializer() = value;
    boundInputs.insert(name);
  }
  if (boundInputs.empty())
    return boundInputs;
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (const auto &in : graph->input())
    if (!boundInputs.count(in.name()))
      *kept.Add() = in;
  graph->mutable_input()->Swap(&kept);
  model.indexInitializers();
  return boundInputs;
}

void bindDimensions(Model &model, const ImportOptions &options) {
  std::map<std::string, int64_t> symbols;
  auto bind = [&](onnx::TensorShapeProto_Dimension &dim, int64_t value,
                  const std::string &what) {
    if (value <= 0)
      fail(what + ": dimensions must be positive, not " + std::to_string(value));
    if (dim.has_dim_value()) {
      if (dim.dim_value() != value)
        fail(what + " is " + std::to_string(dim.dim_value()) + " in the model, not " +
             std::to_string(value));
      return;
    }
    if (dim.has_dim_param()) {
      auto [it, inserted] = symbols.emplace(dim.dim_param(), value);
      if (!inserted && it->second != value)
        fail(what + " ('" + dim.dim_param() + "') is bound to both " +
             std::to_string(it->second) + " and " + std::to_string(value));
    }
    dim.set_dim_value(value);
  };
  auto inputs = dataInputs(model);
  for (const auto &[name, shape] : options.inputShapes) {
    auto it = std::find_if(inputs.begin(), inputs.end(),
                           [&](auto *in) { return in->name() == name; });
    if (it == inputs.end()) {
      std::string names;
      for (auto *in : inputs)
        names += (names.empty() ? "" : ", ") + in->name();
      fail("--input-shape names " + quote(name) +
           ", which is not a data input of the model (inputs: " + names + ")");
    }
    auto *dims = (*it)->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (dims->dim_size() != static_cast<int>(shape.size()))
      fail("--input-shape " + name + " gives " + std::to_string(shape.size()) +
           " dimensions, but the input has rank " + std::to_string(dims->dim_size()));
    for (int d = 0; d < dims->dim_size(); ++d)
      bind(*dims->mutable_dim(d), shape[d],
           "--input-shape: dimension " + std::to_string(d) + " of input " + quote(name));
  }
  auto bindAxis = [&](std::optional<int64_t> value, int axis, const char *flag) {
    if (!value)
      return;
    for (auto *in : inputs) {
      auto *dims = in->mutable_type()->mutable_tensor_type()->mutable_shape();
      if (axis < dims->dim_size() && !dims->dim(axis).has_dim_value())
        bind(*dims->mutable_dim(axis), *value,
             std::string(flag) + ": dimension " + std::to_string(axis) + " of input " +
                 quote(in->name()));
    }
  };
  bindAxis(options.batch, 0, "--batch");
  bindAxis(options.seq, 1, "--seq");
  // A symbol bound anywhere is bound everywhere it appears.
  auto apply = [&](onnx::ValueInfoProto &vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
      return;
    for (auto &dim : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
      if (dim.has_dim_param() && symbols.count(dim.dim_param()))
        dim.set_dim_value(symbols[dim.dim_param()]);
  };
  auto *graph = model.proto.mutable_graph();
  for (auto &vi : *graph->mutable_input())
    apply(vi);
  for (auto &vi : *graph->mutable_output())
    apply(vi);
  for (auto &vi : *graph->mutable_value_info())
    apply(vi);
  for (auto *in : inputs) {
    if (!in->type().has_tensor_type())
      fail("input " + quote(in->name()) + " is not a tensor");
    if (!in->type().tensor_type().has_shape())
      fail("input " + quote(in->name()) + " has no shape; give one with --input-shape " +
           in->name() + "=D0,D1,...");
    const auto &dims = in->type().tensor_type().shape();
    for (int d = 0; d < dims.dim_size(); ++d)
      if (!dims.dim(d).has_dim_value()) {
        std::string symbol =
            dims.dim(d).has_dim_param() ? " ('" + dims.dim(d).dim_param() + "')" : "";
        fail("input " + quote(in->name()) + " has a dynamic dimension " + std::to_string(d) +
             symbol + "; bind it with --batch N, --seq N or " + "--input-shape " +
             in->name() + "=D0,D1,...");
      }
  }
}

static void runShapeInference(onnx::ModelProto &proto) {
  onnx::shape_inference::InferShapes(
      proto, onnx::OpSchemaRegistry::Instance(),
      onnx::ShapeInferenceOptions(/*check_type=*/true, /*error_mode=*/1,
                                  /*enable_data_propagation=*/true));
}

/// ONNX's shape inference (libonnx 1.12) trusts some ranks and attributes it
/// does not check, and dereferences past them on a malformed model (Gemm on
/// a scalar, LayerNormalization with a far-negative axis). hmcc checks what
/// it can first (Validation.cpp); as the rule for what remains, inference
/// runs once in a child process, and a child that dies makes the import
/// fail with a message instead of crashing hmcc.
static void probeShapeInference(const onnx::ModelProto &proto) {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0)
    return; // no probe: inference runs unguarded below
  if (pid == 0) {
    // The child says nothing and dies plainly: a crash handler (LLVM's, a
    // sanitizer's, a fuzzer's) would only report what the parent reports.
    ::close(STDOUT_FILENO);
    ::close(STDERR_FILENO);
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL})
      std::signal(sig, SIG_DFL);
    try {
      onnx::ModelProto copy = proto;
      runShapeInference(copy);
    } catch (...) {
      // An error the parent's own run reports properly.
    }
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return;
  fail("ONNX's shape inference crashes on this model (" +
       (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                            : "exit status " + std::to_string(WEXITSTATUS(status))) +
       "): a node's inputs or attributes are malformed in a way libonnx does not check, such "
       "as an input of the wrong rank");
}

void inferShapes(Model &model) {
  probeShapeInference(model.proto);
  try {
    runShapeInference(model.proto);
  } catch (const std::exception &e) {
    fail("inconsistent shapes: ONNX shape inference fails: " +
         llvm::StringRef(e.what()).trim().str());
  }
}

void collectTypes(Model &model) {
  const auto &graph = model.proto.graph();
  for (const auto *list : {&graph.input(), &graph.value_info(), &graph.output()})
    for (const auto &vi : *list)
      model.types[vi.name()] = vi.type();
}

void foldToFixpoint(Model &model, ConstantTable &constants) {
  auto *graph = model.proto.mutable_graph();
  for (int round = 0; round < 64; ++round) {
    google::protobuf::RepeatedPtrField<NodeProto> kept;
    bool changed = false;
    for (const NodeProto &node : graph->node()) {
      if (!constants.tryFold(node)) {
        *kept.Add() = node;
        continue;
      }
      changed = true;
      for (const std::string &out : node.output())
        if (!out.empty())
          if (const HostTensor *value = constants.find(out))
            encodeTensor(out, *value, *graph->add_initializer());
    }
    graph->mutable_node()->Swap(&kept);
    if (!changed)
      return;
    for (const TensorProto &t : graph->initializer())
      if (!model.initializers.count(t.name()))
        model.initializers[t.name()] = &t;
    // Inference keeps what value_info already says (a symbolic dimension
    // from the last round, say), so it starts afresh.
    graph->clear_value_info();
    inferShapes(model);
    collectTypes(model);
  }
}

} // namespace hmcc::import
