//===- OnnxImporter.cpp - ONNX ModelProto to the tg dialect ---------------===//
//
// Import runs in five steps:
//  1. read the file (binary protobuf or ONNX text) and validate external data
//     references without reading them;
//  2. bind symbolic input dimensions (--batch, --seq, --input-shape);
//  3. run ONNX's checker and shape inference (strict, with data propagation);
//  4. classify initializers as parameters or constants (rule below);
//  5. walk the nodes in order: nodes whose inputs are all known at compile
//     time are evaluated (HostTensor.cpp), the others become tg ops whose
//     result types are the inferred ONNX types; each op is verified at once
//     so that a disagreement is reported against its ONNX node.
//
// A model with `training_info` (ONNX's training extension) brings its own
// training step: the algorithm graph extends the inference graph (their
// lists are concatenated, as ONNX specifies), `update_binding` names the
// initializers that change (they become the parameters, whatever their type)
// and the values they take after each step, and the initialization graph,
// evaluated at compile time, gives initializers their starting values. The
// module then holds @forward (the inference graph) and @algorithm (the
// combined graph, ending in one tg.assign per update_binding).
//
// The parameter rule: an initializer is a trainable parameter when it is
// floating-point and the loss depends on it differentiably, i.e. through some
// chain of operand positions that carry gradients (not a Where condition, a
// Gather index, a Reshape shape, an Equal, a cast to an integer type, ...).
// Every other initializer is a constant. `--frozen NAME` (or the model
// metadata entry `hmcc.frozen`, a comma-separated list) makes a parameter a
// constant: buffers the rule cannot tell from weights, such as rotary tables
// that multiply activations, need it.
//
//===----------------------------------------------------------------------===//

#include "lib/import/OnnxImporter.h"
#include "lib/import/HostTensor.h"
#include "lib/import/OnnxAttributes.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/DebugStringHelper.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <climits>
#include <map>
#include <set>
#include <unordered_map>

using namespace mlir;
using onnx::NodeProto;
using onnx::TensorProto;
using namespace hmcc::import;

namespace hmcc {

namespace {

const char *const kUnary[][2] = {
    {"Sqrt", "sqrt"}, {"Reciprocal", "reciprocal"}, {"Neg", "neg"},
    {"Exp", "exp"},   {"Log", "log"},               {"Tanh", "tanh"},
    {"Sigmoid", "sigmoid"}, {"Erf", "erf"},         {"Relu", "relu"},
    {"Identity", "identity"}};
const char *const kBinary[][2] = {{"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"},
                                  {"Div", "div"}, {"Pow", "pow"}, {"Equal", "equal"}};
const char *const kOther[] = {
    "MatMul", "Gemm", "Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
    "Concat", "Split", "Slice", "Gather", "Expand", "Where", "Trilu", "Cast",
    "Constant", "ConstantOfShape", "Shape", "Range", "ReduceMean", "ReduceSum",
    "ReduceMax", "Softmax", "LogSoftmax", "LayerNormalization",
    "SoftmaxCrossEntropyLoss", "Dropout"};

/// Operand positions that carry no gradient, per op; "*" means none does.
const std::map<std::string, std::set<int>> kNonDifferentiable = {
    {"Where", {0}},     {"Gather", {1}},    {"Slice", {1, 2, 3, 4}},
    {"Reshape", {1}},   {"Expand", {1}},    {"Squeeze", {1}},
    {"Unsqueeze", {1}}, {"ReduceSum", {1}}, {"ReduceMean", {1}},
    {"ReduceMax", {1}}, {"Split", {1}},     {"Trilu", {1}},
    {"Dropout", {1, 2}}, {"SoftmaxCrossEntropyLoss", {1, 2}}};
const std::set<std::string> kNoGradient = {"Shape", "Equal", "ConstantOfShape",
                                           "Range", "Constant"};

/// Operand positions whose value must be known at compile time.
const std::map<std::string, std::set<int>> kCompileTimeOperands = {
    {"Reshape", {1}},   {"Expand", {1}},    {"Slice", {1, 2, 3, 4}},
    {"Squeeze", {1}},   {"Unsqueeze", {1}}, {"ReduceSum", {1}},
    {"ReduceMean", {1}}, {"ReduceMax", {1}}, {"Split", {1}},
    {"Trilu", {1}},     {"Dropout", {1, 2}}, {"ConstantOfShape", {0}},
    {"Range", {0, 1, 2}}};

/// Operators of the ai.onnx.preview.training domain hmcc accepts.
const char *const kPreviewTrainingDomain = "ai.onnx.preview.training";
const std::map<std::string, std::string> kPreviewTraining = {
    {"Adagrad", "adagrad"}, {"Momentum", "momentum"}, {"Adam", "adam"}};

bool isPreviewTraining(const NodeProto &node) {
  return node.domain() == kPreviewTrainingDomain &&
         (kPreviewTraining.count(node.op_type()) || node.op_type() == "Gradient");
}

std::string quote(const std::string &s) { return "'" + s + "'"; }

/// Failure carrying a message; the importer's functions return it upwards.
struct ImportError {
  std::string message;
};

class Importer {
public:
  Importer(MLIRContext &context, StringRef path, const ImportOptions &options)
      : context(context), builder(&context), path(path.str()), options(options) {
    modelDir = llvm::sys::path::parent_path(path).str();
    if (modelDir.empty())
      modelDir = ".";
  }

  OwningOpRef<ModuleOp> run() {
    load();
    mergeTrainingInfo();
    bindInputValues();
    validateExternalData();
    bindDimensions();
    checkAndInfer();
    collectTypes();
    classifyInitializers();
    foldConstants();
    return build();
  }

private:
  MLIRContext &context;
  OpBuilder builder;
  std::string path, modelDir;
  const ImportOptions &options;
  onnx::ModelProto model;
  int64_t opset = 0;

  std::unordered_map<std::string, const TensorProto *> initializers;
  std::unordered_map<std::string, onnx::TypeProto> types;
  std::set<std::string> parameters;
  std::set<std::string> boundInputs; ///< data inputs given values (--input-value)
  std::unordered_map<std::string, HostTensor> constants;
  std::unordered_map<std::string, Value> values;
  std::unordered_map<std::string, Value> materialized;

  // training_info (empty without one).
  bool training = false;
  std::set<std::string> inferenceInputs;   ///< the inference graph's own inputs
  std::set<std::string> algorithmValues;   ///< values the algorithm's nodes define
  std::vector<std::string> inferenceOutputs, algorithmOutputs;
  std::vector<std::pair<std::string, std::string>> updates; ///< initializer <- value
  std::map<std::string, HostTensor> initialValues; ///< from the initialization graph

  [[noreturn]] void fail(const std::string &message) {
    throw ImportError{path + ": " + message};
  }

  /// "node 'name' (op T, domain 'd', opset N)"; unnamed nodes go by their
  /// position in the graph ("node #3").
  std::string describe(const NodeProto &node) {
    std::string domain = node.domain().empty() ? "ai.onnx" : node.domain();
    int64_t version = opset;
    for (const auto &entry : model.opset_import())
      if (entry.domain() == node.domain() && !node.domain().empty())
        version = entry.version();
    std::string name = quote(node.name());
    if (node.name().empty())
      for (int k = 0; k < model.graph().node_size(); ++k)
        if (&model.graph().node(k) == &node)
          name = "#" + std::to_string(k);
    return "node " + name + " (op " + node.op_type() + ", domain " + quote(domain) +
           ", opset " + std::to_string(version) + ")";
  }
  [[noreturn]] void fail(const NodeProto &node, const std::string &message) {
    fail(describe(node) + ": " + message);
  }

  //===--------------------------------------------------------------------===//
  // 1. Reading
  //===--------------------------------------------------------------------===//

  void load() {
    bool isDir = false;
    if (!llvm::sys::fs::exists(path))
      fail("no such file");
    if (!llvm::sys::fs::is_directory(path, isDir) && isDir)
      fail("is a directory, not an ONNX file");
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/true);
    if (!buffer)
      fail("cannot read: " + buffer.getError().message());
    StringRef bytes = (*buffer)->getBuffer();
    if (StringRef(path).ends_with(".onnxtxt")) {
      auto status = onnx::OnnxParser::Parse(model, bytes.data());
      if (!status.IsOK())
      {
        std::string message = status.ErrorMessage();
        std::replace(message.begin(), message.end(), '\n', ' ');
        fail("cannot parse the ONNX text: " + StringRef(message).trim().str());
      }
    } else {
      google::protobuf::io::ArrayInputStream stream(bytes.data(),
                                                    static_cast<int>(bytes.size()));
      google::protobuf::io::CodedInputStream coded(&stream);
      coded.SetTotalBytesLimit(INT_MAX);
      if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
        size_t printable = 0;
        for (char c : bytes)
          printable += (c >= 32 && c < 127) || c == '\n' || c == '\t' || c == '\r';
        bool text = !bytes.empty() && printable * 10 >= bytes.size() * 9;
        fail(std::string("not a valid ONNX model: the protobuf is ") +
             (text ? "not there (this looks like a text file)"
                   : "malformed or truncated"));
      }
    }
    if (!model.has_graph() || model.ir_version() <= 0)
      fail("not an ONNX model (no graph or no IR version)");
    for (const auto &entry : model.opset_import())
      if (entry.domain().empty() || entry.domain() == "ai.onnx")
        opset = entry.version();
    bool defaultNodes = llvm::any_of(model.graph().node(), [](const NodeProto &n) {
      return n.domain().empty() || n.domain() == "ai.onnx";
    });
    if (opset == 0 && defaultNodes)
      fail("the model imports no version of the default ONNX opset");
    for (const TensorProto &t : model.graph().initializer())
      initializers[t.name()] = &t;
  }

  /// The external-data file of an initializer, checked to lie inside the
  /// model's directory; the bytes are read only when needed.
  struct ExternalRef {
    std::string file;
    int64_t offset = 0, length = -1;
  };

  std::optional<ExternalRef> externalRef(const TensorProto &t) {
    if (t.data_location() != TensorProto::EXTERNAL)
      return std::nullopt;
    ExternalRef ref;
    std::string location;
    for (const auto &kv : t.external_data()) {
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset")
        ref.offset = std::stoll(kv.value());
      else if (kv.key() == "length")
        ref.length = std::stoll(kv.value());
    }
    std::string what = "external data of initializer " + quote(t.name());
    if (location.empty())
      fail(what + " has no location");
    if (llvm::sys::path::is_absolute(location))
      fail(what + " uses the absolute path " + quote(location) +
           "; external data must lie inside the model's directory");
    llvm::SmallString<256> joined(modelDir);
    llvm::sys::path::append(joined, location);
    llvm::SmallString<256> realDir, realFile;
    llvm::sys::fs::real_path(modelDir, realDir);
    // Resolve '..' lexically first so that a missing file still gets the
    // right diagnosis, then through symlinks when it exists.
    llvm::SmallString<256> lexical(joined);
    llvm::sys::path::remove_dots(lexical, /*remove_dot_dot=*/true);
    llvm::SmallString<256> lexicalDir(modelDir);
    llvm::sys::path::remove_dots(lexicalDir, true);
    auto inside = [](StringRef dir, StringRef file) {
      return file.starts_with(dir) &&
             (file.size() > dir.size() && llvm::sys::path::is_separator(file[dir.size()]));
    };
    bool escapes = StringRef(location).contains("..") &&
                   !(lexicalDir == "." ? !StringRef(lexical).starts_with("..")
                                       : inside(lexicalDir, lexical));
    if (!escapes && !llvm::sys::fs::real_path(joined, realFile))
      escapes = !inside(realDir, realFile);
    if (escapes)
      fail(what + " at " + quote(location) +
           " escapes the model's directory; external data must lie inside it");
    uint64_t size = 0;
    if (llvm::sys::fs::file_size(joined, size))
      fail(what + ": file " + quote(location) + " does not exist next to the model");
    int64_t bytesNeeded = ref.length >= 0 ? ref.length : 0;
    if (ref.offset < 0 || ref.offset + bytesNeeded > static_cast<int64_t>(size))
      fail(what + ": bytes " + std::to_string(ref.offset) + ".." +
           std::to_string(ref.offset + bytesNeeded) + " lie beyond the end of " +
           quote(location) + " (" + std::to_string(size) + " bytes)");
    ref.file = std::string(joined);
    return ref;
  }

  void validateExternalData() {
    for (const TensorProto &t : model.graph().initializer())
      externalRef(t);
  }

  //===--------------------------------------------------------------------===//
  // ONNX training_info
  //===--------------------------------------------------------------------===//

  /// Appends the algorithm graph to the inference graph, checks the
  /// bindings, and evaluates the initialization graph.
  void mergeTrainingInfo() {
    if (model.training_info_size() == 0)
      return;
    if (model.training_info_size() > 1)
      fail("the model has " + std::to_string(model.training_info_size()) +
           " training_info entries; hmcc compiles one training algorithm");
    onnx::TrainingInfoProto info = model.training_info(0);
    model.clear_training_info();
    training = true;
    auto *graph = model.mutable_graph();
    const onnx::GraphProto &algorithm = info.algorithm();
    if (algorithm.node_size() == 0)
      fail("training_info: the algorithm graph has no nodes");

    std::set<std::string> initializerNames;
    for (const auto &in : graph->input())
      inferenceInputs.insert(in.name());
    for (const auto &out : graph->output())
      inferenceOutputs.push_back(out.name());
    for (const TensorProto &t : graph->initializer())
      initializerNames.insert(t.name());
    for (const TensorProto &t : algorithm.initializer()) {
      if (!initializerNames.insert(t.name()).second)
        fail("training_info: the algorithm's initializer " + quote(t.name()) +
             " is also an initializer of the inference graph");
      *graph->add_initializer() = t;
    }
    for (const auto &in : algorithm.input())
      *graph->add_input() = in;
    for (const NodeProto &node : algorithm.node()) {
      for (const std::string &out : node.output())
        algorithmValues.insert(out);
      *graph->add_node() = node;
    }
    for (const auto &out : algorithm.output()) {
      algorithmOutputs.push_back(out.name());
      *graph->add_output() = out;
    }
    for (const auto &vi : algorithm.value_info())
      *graph->add_value_info() = vi;
    if (algorithm.sparse_initializer_size() || graph->sparse_initializer_size())
      fail("sparse initializers are not supported");

    std::set<std::string> outputs(algorithmOutputs.begin(), algorithmOutputs.end());
    outputs.insert(inferenceOutputs.begin(), inferenceOutputs.end());
    std::set<std::string> assigned;
    for (const auto &binding : info.update_binding()) {
      const std::string &key = binding.key(), &value = binding.value();
      std::string what = "training_info: update_binding " + quote(key) + " <- " + quote(value);
      if (!initializerNames.count(key))
        fail(what + ": " + quote(key) + " is not an initializer of the model or the algorithm");
      if (!outputs.count(value))
        fail(what + ": " + quote(value) + " is not an output of the algorithm or the model");
      if (!assigned.insert(key).second)
        fail(what + ": " + quote(key) + " is bound twice");
      updates.emplace_back(key, value);
    }
    if (updates.empty())
      fail("training_info: update_binding is empty, so the algorithm changes nothing");
    evaluateInitialization(info, initializerNames);
    for (const TensorProto &t : graph->initializer())
      initializers[t.name()] = &t;
  }

  /// Runs the initialization graph at compile time; each
  /// initialization_binding replaces an initializer's value.
  void evaluateInitialization(const onnx::TrainingInfoProto &info,
                              const std::set<std::string> &initializerNames) {
    const onnx::GraphProto &init = info.initialization();
    const std::string where = "training_info initialization: ";
    if (info.initialization_binding_size() == 0)
      return; // nothing it computes is used
    if (init.input_size())
      fail(where + "the graph has inputs (" + quote(init.input(0).name()) +
           "); ONNX's initialization graph takes none");
    std::map<std::string, HostTensor> env;
    for (const TensorProto &t : init.initializer()) {
      HostTensor value;
      if (auto message = decodeTensor(t, nullptr, value))
        fail(where + "initializer " + quote(t.name()) + " " + *message);
      env[t.name()] = std::move(value);
    }
    for (const NodeProto &node : init.node()) {
      std::string name = where + "node " + quote(node.name()) + " (op " + node.op_type() + ")";
      if (!node.domain().empty() && node.domain() != "ai.onnx")
        fail(name + ": only default-domain operators can run at compile time");
      std::vector<HostTensor> results;
      if (node.op_type() == "Constant") {
        results.push_back(constantNodeValue(node));
      } else {
        std::vector<const HostTensor *> inputs;
        for (const std::string &in : node.input()) {
          if (in.empty()) {
            inputs.push_back(nullptr);
            continue;
          }
          auto it = env.find(in);
          if (it == env.end())
            fail(name + ": input " + quote(in) + " is not defined before this node");
          inputs.push_back(&it->second);
        }
        std::string error;
        bool done = evaluateNode(node, inputs, results, error);
        if (!error.empty())
          fail(name + ": " + error);
        if (!done)
          fail(name + ": hmcc cannot evaluate this operator at compile time (random "
                      "initializers are not supported; store the values as initializers)");
      }
      for (int k = 0; k < node.output_size() && k < static_cast<int>(results.size()); ++k)
        env[node.output(k)] = std::move(results[k]);
    }
    auto *graph = model.mutable_graph();
    for (const auto &binding : info.initialization_binding()) {
      const std::string &key = binding.key(), &value = binding.value();
      std::string what = where + "binding " + quote(key) + " <- " + quote(value);
      if (!initializerNames.count(key))
        fail(what + ": " + quote(key) + " is not an initializer of the model or the algorithm");
      bool isOutput = llvm::any_of(init.output(), [&](auto &o) { return o.name() == value; });
      if (!isOutput || !env.count(value))
        fail(what + ": " + quote(value) + " is not an output of the initialization graph");
      for (TensorProto &t : *graph->mutable_initializer()) {
        if (t.name() != key)
          continue;
        const HostTensor &v = env.at(value);
        std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
        if (v.dtype != t.data_type() || v.shape != dims)
          fail(what + ": the value's type differs from the initializer's");
        t.Clear();
        encodeTensor(key, v, t);
        initialValues[key] = v;
      }
    }
  }

  /// Turns the data inputs named by --input-value into initializers.
  void bindInputValues() {
    auto *graph = model.mutable_graph();
    for (const auto &[name, file] : options.inputValues) {
      auto inputs = dataInputs();
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
      return;
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
    for (const auto &in : graph->input())
      if (!boundInputs.count(in.name()))
        *kept.Add() = in;
    graph->mutable_input()->Swap(&kept);
    initializers.clear();
    for (const TensorProto &t : graph->initializer())
      initializers[t.name()] = &t;
  }

  //===--------------------------------------------------------------------===//
  // 2. Binding symbolic dimensions
  //===--------------------------------------------------------------------===//

  std::vector<onnx::ValueInfoProto *> dataInputs() {
    std::vector<onnx::ValueInfoProto *> inputs;
    for (auto &in : *model.mutable_graph()->mutable_input())
      if (!initializers.count(in.name()))
        inputs.push_back(&in);
    return inputs;
  }

  void bindDimensions() {
    std::map<std::string, int64_t> symbols;
    auto bind = [&](onnx::TensorShapeProto_Dimension &dim, int64_t value,
                    const std::string &what) {
      if (value <= 0)
        fail(what + ": dimensions must be positive, not " + std::to_string(value));
      if (dim.has_dim_value()) {
        if (dim.dim_value() != value)
          fail(what + " is " + std::to_string(dim.dim_value()) +
               " in the model, not " + std::to_string(value));
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
    auto inputs = dataInputs();
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
    auto *graph = model.mutable_graph();
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
          fail("input " + quote(in->name()) + " has a dynamic dimension " +
               std::to_string(d) + symbol + "; bind it with --batch N, --seq N or " +
               "--input-shape " + in->name() + "=D0,D1,...");
        }
    }
  }

  //===--------------------------------------------------------------------===//
  // 3. Checker and shape inference
  //===--------------------------------------------------------------------===//

  void checkAndInfer() {
    for (const NodeProto &node : model.graph().node()) {
      if (isPreviewTraining(node))
        continue;
      if (!node.domain().empty() && node.domain() != "ai.onnx")
        fail(node, "unsupported operator domain; hmcc supports the default ONNX domain and "
                   "Adagrad, Momentum and Adam of ai.onnx.preview.training (see hmcc --list-ops)");
      if (!llvm::is_contained(supportedOnnxOps(), node.op_type()))
        fail(node, "unsupported operator (hmcc --list-ops lists the supported ones)");
    }
    try {
      onnx::checker::check_model(withoutExternalData());
    } catch (const std::exception &e) {
      fail("the ONNX checker rejects the model: " + StringRef(e.what()).trim().str());
    }
    infer();
  }

  void infer() {
    try {
      onnx::shape_inference::InferShapes(
          model, onnx::OpSchemaRegistry::Instance(),
          onnx::ShapeInferenceOptions(/*check_type=*/true, /*error_mode=*/1,
                                      /*enable_data_propagation=*/true));
    } catch (const std::exception &e) {
      fail("inconsistent shapes: ONNX shape inference fails: " + StringRef(e.what()).trim().str());
    }
  }

  /// ONNX's checker looks for external data relative to the working
  /// directory; hmcc has already checked it relative to the model. The copy
  /// given to the checker turns externally stored initializers into graph
  /// inputs of the same type, which checks the same graph.
  onnx::ModelProto withoutExternalData() {
    onnx::ModelProto copy = model;
    auto *graph = copy.mutable_graph();
    auto *inits = graph->mutable_initializer();
    for (int k = inits->size() - 1; k >= 0; --k) {
      const TensorProto &t = inits->Get(k);
      if (t.data_location() != TensorProto::EXTERNAL)
        continue;
      bool listed = llvm::any_of(graph->input(), [&](auto &in) { return in.name() == t.name(); });
      if (!listed) {
        auto *input = graph->add_input();
        input->set_name(t.name());
        auto *tensor = input->mutable_type()->mutable_tensor_type();
        tensor->set_elem_type(t.data_type());
        for (int64_t d : t.dims())
          tensor->mutable_shape()->add_dim()->set_dim_value(d);
      }
      inits->DeleteSubrange(k, 1);
    }
    return copy;
  }

  void collectTypes() {
    const auto &graph = model.graph();
    for (const auto *list : {&graph.input(), &graph.value_info(), &graph.output()})
      for (const auto &vi : *list)
        types[vi.name()] = vi.type();
  }

  //===--------------------------------------------------------------------===//
  // 4. Parameters and constants
  //===--------------------------------------------------------------------===//

  void classifyInitializers() {
    if (training) {
      // update_binding names the tensors that change; the rule is not needed.
      if (!options.frozen.empty())
        fail("--frozen does not apply to a model with training_info: its update_binding "
             "names the tensors that change");
      for (const auto &update : updates)
        parameters.insert(update.first);
      return;
    }
    std::set<std::string> differentiable;
    for (const auto &out : model.graph().output())
      differentiable.insert(out.name());
    const auto &nodes = model.graph().node();
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      const NodeProto &node = *it;
      bool feedsLoss = false;
      for (const auto &out : node.output())
        feedsLoss |= differentiable.count(out) > 0;
      if (!feedsLoss || kNoGradient.count(node.op_type()))
        continue;
      if (node.op_type() == "Cast" &&
          !HostTensor::isFloatType(static_cast<int32_t>(attrInt(node, "to", 0))))
        continue;
      auto skip = kNonDifferentiable.find(node.op_type());
      for (int k = 0; k < node.input_size(); ++k)
        if (skip == kNonDifferentiable.end() || !skip->second.count(k))
          differentiable.insert(node.input(k));
    }

    std::vector<llvm::GlobPattern> frozen;
    std::vector<std::string> frozenNames = options.frozen;
    for (const auto &prop : model.metadata_props())
      if (prop.key() == "hmcc.frozen") {
        StringRef list = prop.value();
        while (!list.empty()) {
          auto [head, rest] = list.split(',');
          if (!head.trim().empty())
            frozenNames.push_back(head.trim().str());
          list = rest;
        }
      }
    for (const std::string &name : frozenNames) {
      auto pattern = llvm::GlobPattern::create(name);
      if (!pattern)
        fail("--frozen " + quote(name) + " is not a valid pattern: " +
             llvm::toString(pattern.takeError()));
      bool matches = false;
      for (const TensorProto &t : model.graph().initializer())
        matches |= pattern->match(t.name());
      if (!matches)
        fail("--frozen " + quote(name) + " matches no initializer of the model");
      frozen.push_back(std::move(*pattern));
    }

    for (const TensorProto &t : model.graph().initializer()) {
      bool isFrozen = llvm::any_of(frozen, [&](auto &p) { return p.match(t.name()); });
      if (HostTensor::isFloatType(t.data_type()) && differentiable.count(t.name()) &&
          !isFrozen && !boundInputs.count(t.name()))
        parameters.insert(t.name());
    }
  }

  const HostTensor &constantInitializer(const std::string &name) {
    auto found = constants.find(name);
    if (found != constants.end())
      return found->second;
    const TensorProto &t = *initializers.at(name);
    std::string bytes;
    std::optional<ExternalRef> ext = externalRef(t);
    if (ext) {
      auto buffer = llvm::MemoryBuffer::getFileSlice(
          ext->file, ext->length >= 0 ? ext->length : 0, ext->offset, false);
      if (ext->length < 0) {
        uint64_t size = 0;
        llvm::sys::fs::file_size(ext->file, size);
        buffer = llvm::MemoryBuffer::getFileSlice(ext->file, size - ext->offset,
                                                  ext->offset, false);
      }
      if (!buffer)
        fail("cannot read the external data of initializer " + quote(name));
      bytes = (*buffer)->getBuffer().str();
    }
    HostTensor value;
    if (auto message = decodeTensor(t, ext ? &bytes : nullptr, value))
      fail("initializer " + quote(name) + " " + *message);
    return constants[name] = std::move(value);
  }

  //===--------------------------------------------------------------------===//
  // Types and constants in MLIR
  //===--------------------------------------------------------------------===//

  Type elementType(int32_t dtype) {
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

  RankedTensorType tensorType(int32_t dtype, llvm::ArrayRef<int64_t> shape,
                              const std::string &what) {
    Type element = elementType(dtype);
    if (!element)
      fail(what + " has element type " +
           TensorProto::DataType_Name(static_cast<TensorProto::DataType>(dtype)) +
           ", which hmcc does not support");
    return RankedTensorType::get(shape, element);
  }

  /// The static type ONNX inferred for value `name`.
  RankedTensorType inferredType(const std::string &name, const std::string &producer) {
    auto it = types.find(name);
    std::string what = "value " + quote(name) + producer;
    if (it == types.end() || !it->second.has_tensor_type() ||
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

  ElementsAttr elementsOf(const HostTensor &t, const std::string &name) {
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

  /// The SSA value for an ONNX value name, materialising constants on use.
  Value valueOf(const std::string &name, const NodeProto &user) {
    if (auto it = values.find(name); it != values.end())
      return it->second;
    if (auto it = materialized.find(name); it != materialized.end())
      return it->second;
    if (!isConstant(name))
      fail(user, "input " + quote(name) + " is not defined before this node");
    auto c = constants.find(name);
    Value v = tg::ConstantOp::create(builder, builder.getUnknownLoc(),
                                     elementsOf(c->second, name));
    v.getDefiningOp()->setLoc(NameLoc::get(builder.getStringAttr(name)));
    return materialized[name] = v;
  }

  //===--------------------------------------------------------------------===//
  // 5. Building the graph
  //===--------------------------------------------------------------------===//

  /// The model's name: the graph's, unless it is an exporter's placeholder
  /// (PyTorch names every graph torch_jit or main_graph); then the file's
  /// stem, or for a file called model.onnx the folder's name.
  std::string modelName() {
    StringRef name = model.graph().name();
    if (!name.empty() && name != "torch_jit" && name != "main_graph" &&
        name != "torch-jit-export")
      return name.str();
    StringRef stem = llvm::sys::path::stem(path);
    if (stem == "model") {
      StringRef dir = llvm::sys::path::filename(modelDir);
      if (!dir.empty() && dir != "." && dir != "..")
        return dir.str();
    }
    return stem.str();
  }

  OwningOpRef<ModuleOp> build() {
    const auto &graph = model.graph();
    Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
    OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc, modelName());
    module->getOperation()->setAttr("tg.source",
                                    builder.getStringAttr(llvm::sys::path::filename(path)));
    module->getOperation()->setAttr("tg.opset", builder.getI64IntegerAttr(opset));
    builder.setInsertionPointToEnd(module->getBody());

    for (const TensorProto &t : graph.initializer()) {
      if (!parameters.count(t.name()))
        continue;
      std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
      auto type = tensorType(t.data_type(), shape, "initializer " + quote(t.name()));
      auto param = tg::ParameterOp::create(builder, NameLoc::get(builder.getStringAttr(t.name()), fileLoc),
                                           t.name(), type, t.name(), nullptr, nullptr, nullptr,
                                           nullptr);
      if (auto ext = externalRef(t)) {
        llvm::SmallString<256> rel(StringRef(ext->file).drop_front(modelDir.size()));
        param.setLocationAttr(builder.getStringAttr(StringRef(rel).ltrim("/")));
        param.setOffsetAttr(builder.getI64IntegerAttr(ext->offset));
        int64_t bytes = tg::tensorBytes(type);
        param.setLengthAttr(builder.getI64IntegerAttr(ext->length >= 0 ? ext->length : bytes));
      }
      if (auto init = initialValues.find(t.name()); init != initialValues.end())
        param.setInitialValueAttr(elementsOf(init->second, t.name()));
    }

    if (!training) {
      buildFunction(*module, "forward", [](const std::string &) { return true; },
                    [](const NodeProto &) { return true; }, graph.output(), {});
    } else {
      auto onlyInference = [&](const NodeProto &node) {
        return llvm::none_of(node.output(),
                             [&](const std::string &o) { return algorithmValues.count(o) > 0; });
      };
      google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inferenceOuts, algorithmOuts;
      for (const auto &out : graph.output())
        *(llvm::is_contained(algorithmOutputs, out.name()) ? algorithmOuts : inferenceOuts).Add() =
            out;
      buildFunction(*module, "forward",
                    [&](const std::string &in) { return inferenceInputs.count(in) > 0; },
                    onlyInference, inferenceOuts, {});
      buildFunction(*module, "algorithm", [](const std::string &) { return true; },
                    [](const NodeProto &) { return true; }, algorithmOuts, updates);
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
  void buildFunction(ModuleOp module, StringRef name,
                     llvm::function_ref<bool(const std::string &)> takesInput,
                     llvm::function_ref<bool(const NodeProto &)> takesNode,
                     const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &outputs,
                     llvm::ArrayRef<std::pair<std::string, std::string>> assigns) {
    const auto &graph = model.graph();
    Location fileLoc = module.getLoc();
    values.clear();
    materialized.clear();
    builder.setInsertionPointToEnd(module.getBody());

    llvm::SmallVector<Type> argTypes, resultTypes;
    std::vector<const onnx::ValueInfoProto *> inputs;
    for (const auto &in : graph.input())
      if (!initializers.count(in.name()) && takesInput(in.name())) {
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
        values[t.name()] = tg::ParamOp::create(builder, NameLoc::get(builder.getStringAttr(t.name())),
                                               type, t.name());
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

  bool isConstant(const std::string &name) {
    if (name.empty())
      return true;
    if (constants.count(name))
      return true;
    if (initializers.count(name) && !parameters.count(name)) {
      constantInitializer(name);
      return true;
    }
    return false;
  }

  //===--------------------------------------------------------------------===//
  // Constant folding, to a fixpoint with ONNX's shape inference
  //===--------------------------------------------------------------------===//

  /// The static shape of a value, where known.
  std::optional<std::vector<int64_t>> staticShape(const std::string &name) {
    if (auto c = constants.find(name); c != constants.end())
      return c->second.shape;
    if (auto i = initializers.find(name); i != initializers.end())
      return std::vector<int64_t>(i->second->dims().begin(), i->second->dims().end());
    auto it = types.find(name);
    if (it == types.end() || !it->second.has_tensor_type() ||
        !it->second.tensor_type().has_shape())
      return std::nullopt;
    std::vector<int64_t> shape;
    for (const auto &dim : it->second.tensor_type().shape().dim()) {
      if (!dim.has_dim_value())
        return std::nullopt;
      shape.push_back(dim.dim_value());
    }
    return shape;
  }

  /// The value of a Constant node.
  HostTensor constantNodeValue(const NodeProto &node) {
    HostTensor value;
    if (const auto *a = findAttr(node, "value")) {
      if (auto message = decodeTensor(a->t(), nullptr, value))
        fail(node, "its value " + *message);
    } else if (const auto *a = findAttr(node, "value_float")) {
      value = {TensorProto::FLOAT, {}, {a->f()}, {}};
    } else if (const auto *a = findAttr(node, "value_floats")) {
      value = {TensorProto::FLOAT, {a->floats_size()}, {a->floats().begin(), a->floats().end()}, {}};
    } else if (const auto *a = findAttr(node, "value_int")) {
      value = {TensorProto::INT64, {}, {}, {a->i()}};
    } else if (const auto *a = findAttr(node, "value_ints")) {
      value = {TensorProto::INT64, {a->ints_size()}, {}, {a->ints().begin(), a->ints().end()}};
    } else {
      fail(node, "only tensor, float and int constants are supported");
    }
    return value;
  }

  /// Evaluates `node` when its inputs are known at compile time (Shape needs
  /// only a static input shape); on success its outputs become constants.
  bool tryFold(const NodeProto &node) {
    const std::string &op = node.op_type();
    if (op == "Constant") {
      constants[node.output(0)] = constantNodeValue(node);
      return true;
    }
    if (op == "Shape") {
      auto shape = staticShape(node.input(0));
      if (!shape)
        return false;
      int64_t rank = static_cast<int64_t>(shape->size());
      int64_t start = attrInt(node, "start", 0), end = attrInt(node, "end", rank);
      start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
      end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
      HostTensor dims{TensorProto::INT64, {std::max<int64_t>(end - start, 0)}, {}, {}};
      for (int64_t d = start; d < end; ++d)
        dims.i.push_back((*shape)[d]);
      constants[node.output(0)] = std::move(dims);
      return true;
    }
    if (op == "Dropout" || node.input_size() == 0 ||
        !llvm::all_of(node.input(), [&](const std::string &in) { return isConstant(in); }))
      return false;
    std::vector<const HostTensor *> inputs;
    for (const auto &in : node.input())
      inputs.push_back(in.empty() ? nullptr : &constants.at(in));
    std::vector<HostTensor> outputs;
    std::string error;
    bool folded = evaluateNode(node, inputs, outputs, error);
    if (!error.empty())
      fail(node, error);
    if (!folded || outputs.size() != static_cast<size_t>(node.output_size()) ||
        !llvm::all_of(outputs, [](auto &t) { return t.size() <= kMaxFoldedElements; }))
      return false;
    for (size_t k = 0; k < outputs.size(); ++k)
      constants[node.output(k)] = std::move(outputs[k]);
    return true;
  }

  static void encodeTensor(const std::string &name, const HostTensor &t, TensorProto &out) {
    out.set_name(name);
    out.set_data_type(t.dtype);
    for (int64_t d : t.shape)
      out.add_dims(d);
    for (int64_t k = 0; k < t.size(); ++k) {
      switch (t.dtype) {
      case TensorProto::FLOAT: out.add_float_data(static_cast<float>(t.f[k])); break;
      case TensorProto::DOUBLE: out.add_double_data(t.f[k]); break;
      case TensorProto::INT64: out.add_int64_data(t.i[k]); break;
      default: out.add_int32_data(static_cast<int32_t>(t.i[k])); break;
      }
    }
  }

  /// Folds what can be folded, hands the results to ONNX's shape inference
  /// as initializers, and repeats while that reveals more static shapes
  /// (shape arithmetic over symbolic dimensions needs several rounds).
  void foldConstants() {
    auto *graph = model.mutable_graph();
    for (int round = 0; round < 64; ++round) {
      google::protobuf::RepeatedPtrField<NodeProto> kept;
      bool changed = false;
      for (const NodeProto &node : graph->node()) {
        if (!tryFold(node)) {
          *kept.Add() = node;
          continue;
        }
        changed = true;
        for (const std::string &out : node.output())
          if (!out.empty() && constants.count(out))
            encodeTensor(out, constants.at(out), *graph->add_initializer());
      }
      graph->mutable_node()->Swap(&kept);
      if (!changed)
        return;
      for (const TensorProto &t : graph->initializer())
        if (!initializers.count(t.name()))
          initializers[t.name()] = &t;
      // Inference keeps what value_info already says (a symbolic dimension
      // from the last round, say), so it starts afresh.
      graph->clear_value_info();
      infer();
      collectTypes();
    }
  }

  void importNode(const NodeProto &node, int index) {
    const std::string &op = node.op_type();
    std::string name = node.name().empty() ? op + "_" + std::to_string(index) : node.name();
    Location loc = NameLoc::get(builder.getStringAttr(name));
    std::vector<Operation *> created = convert(node, loc);

    std::string diagnostics;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      diagnostics += d.str();
      return success();
    });
    for (Operation *created_op : created)
      if (failed(verify(created_op)))
        fail(node, "inconsistent shapes: " + diagnostics);
  }

  RankedTensorType typeOfInput(const NodeProto &node, int k) {
    const std::string &name = node.input(k);
    if (constants.count(name) || (initializers.count(name) && !parameters.count(name))) {
      const HostTensor &t = constants.count(name) ? constants.at(name) : constantInitializer(name);
      return tensorType(t.dtype, t.shape, quote(name));
    }
    return cast<RankedTensorType>(valueOf(name, node).getType());
  }

  const HostTensor &constantInput(const NodeProto &node, int k, const char *what) {
    if (k >= node.input_size() || node.input(k).empty())
      fail(node, std::string("the ") + what + " input is missing");
    assert(needsCompileTimeValue(node.op_type(), k) && "operand missing from the table");
    if (!isConstant(node.input(k)))
      fail(node, std::string("its ") + what + " input (" + quote(node.input(k)) +
                     ") must be known at compile time; hmcc compiles static graphs "
                     "(give a graph input a value with --input-value NAME=FILE.pb)");
    return constants.at(node.input(k));
  }

  bool hasInput(const NodeProto &node, int k) {
    return k < node.input_size() && !node.input(k).empty();
  }

  std::vector<int64_t> ints(const HostTensor &t) {
    std::vector<int64_t> v;
    for (int64_t k = 0; k < t.size(); ++k)
      v.push_back(t.integer(k));
    return v;
  }

  /// Normalises, sorts and checks a list of axes.
  std::vector<int64_t> axesOf(const NodeProto &node, std::vector<int64_t> axes, int64_t rank) {
    for (int64_t &a : axes) {
      if (a < -rank || a >= rank)
        fail(node, "axis " + std::to_string(a) + " is out of range for rank " +
                       std::to_string(rank));
      if (a < 0)
        a += rank;
    }
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    return axes;
  }

  int64_t axisOf(const NodeProto &node, int64_t axis, int64_t rank) {
    return axesOf(node, {axis}, rank).front();
  }

  std::vector<Operation *> convert(const NodeProto &node, Location loc) {
    const std::string &op = node.op_type();
    if (isPreviewTraining(node))
      return {convertPreviewTraining(node, loc)};
    OperationState state(loc, "tg." + mnemonicOf(op));
    auto operand = [&](int k) { state.addOperands(valueOf(node.input(k), node)); };
    auto result = [&](int k) {
      state.addTypes(inferredType(node.output(k), " (output of " + describe(node) + ")"));
    };
    int64_t rank = node.input_size() > 0 ? typeOfInput(node, 0).getRank() : 0;

    if (mnemonicOf(op) != "" && (isUnary(op) || isBinary(op) || op == "Where" ||
                                 op == "MatMul" || op == "Reshape" || op == "Expand" ||
                                 op == "Cast")) {
      int arity = isUnary(op) || op == "Reshape" || op == "Expand" || op == "Cast" ? 1
                  : op == "Where"                                                 ? 3
                                                                                  : 2;
      for (int k = 0; k < arity; ++k)
        operand(k);
      result(0);
    } else if (op == "Gemm") {
      for (int k = 0; k < node.input_size(); ++k)
        if (!node.input(k).empty())
          operand(k);
      result(0);
      state.addAttribute("alpha", builder.getF32FloatAttr(attrFloat(node, "alpha", 1.0f)));
      state.addAttribute("beta", builder.getF32FloatAttr(attrFloat(node, "beta", 1.0f)));
      if (attrInt(node, "transA", 0))
        state.addAttribute("transA", builder.getUnitAttr());
      if (attrInt(node, "transB", 0))
        state.addAttribute("transB", builder.getUnitAttr());
    } else if (op == "Transpose") {
      std::vector<int64_t> perm = attrInts(node, "perm");
      if (perm.empty())
        for (int64_t d = rank - 1; d >= 0; --d)
          perm.push_back(d);
      operand(0);
      result(0);
      state.addAttribute("perm", builder.getDenseI64ArrayAttr(perm));
    } else if (op == "Flatten") {
      int64_t axis = attrInt(node, "axis", 1);
      if (axis < -rank || axis > rank)
        fail(node, "axis " + std::to_string(axis) + " is out of range");
      operand(0);
      result(0);
      state.addAttribute("axis", builder.getI64IntegerAttr(axis < 0 ? axis + rank : axis));
    } else if (op == "Squeeze" || op == "Unsqueeze") {
      std::vector<int64_t> axes = hasInput(node, 1) ? ints(constantInput(node, 1, "axes"))
                                                    : attrInts(node, "axes");
      int64_t outRank = op == "Unsqueeze" ? rank + static_cast<int64_t>(axes.size()) : rank;
      if (op == "Squeeze" && axes.empty()) {
        auto type = typeOfInput(node, 0);
        for (int64_t d = 0; d < rank; ++d)
          if (type.getDimSize(d) == 1)
            axes.push_back(d);
      }
      operand(0);
      result(0);
      state.addAttribute("axes", builder.getDenseI64ArrayAttr(axesOf(node, axes, outRank)));
    } else if (op == "Concat") {
      for (int k = 0; k < node.input_size(); ++k)
        operand(k);
      result(0);
      state.addAttribute("axis", builder.getI64IntegerAttr(axisOf(node, attrInt(node, "axis", 0), rank)));
    } else if (op == "Split") {
      int64_t axis = axisOf(node, attrInt(node, "axis", 0), rank);
      operand(0);
      std::vector<int64_t> sizes;
      for (int k = 0; k < node.output_size(); ++k) {
        result(k);
        sizes.push_back(cast<RankedTensorType>(state.types.back()).getDimSize(axis));
      }
      state.addAttribute("axis", builder.getI64IntegerAttr(axis));
      state.addAttribute("sizes", builder.getDenseI64ArrayAttr(sizes));
    } else if (op == "Slice") {
      auto type = typeOfInput(node, 0);
      std::vector<int64_t> starts = ints(constantInput(node, 1, "starts"));
      std::vector<int64_t> ends = ints(constantInput(node, 2, "ends"));
      std::vector<int64_t> axes, steps(starts.size(), 1);
      if (hasInput(node, 3))
        axes = ints(constantInput(node, 3, "axes"));
      else
        for (size_t k = 0; k < starts.size(); ++k)
          axes.push_back(static_cast<int64_t>(k));
      if (hasInput(node, 4))
        steps = ints(constantInput(node, 4, "steps"));
      if (ends.size() != starts.size() || axes.size() != starts.size() ||
          steps.size() != starts.size())
        fail(node, "starts, ends, axes and steps differ in length");
      for (size_t k = 0; k < axes.size(); ++k) {
        axes[k] = axisOf(node, axes[k], rank);
        if (steps[k] == 0)
          fail(node, "a step is zero");
        clampSlice(starts[k], ends[k], steps[k], type.getDimSize(axes[k]), starts[k], ends[k]);
      }
      operand(0);
      result(0);
      state.addAttribute("starts", builder.getDenseI64ArrayAttr(starts));
      state.addAttribute("ends", builder.getDenseI64ArrayAttr(ends));
      state.addAttribute("axes", builder.getDenseI64ArrayAttr(axes));
      state.addAttribute("steps", builder.getDenseI64ArrayAttr(steps));
    } else if (op == "Gather") {
      operand(0);
      operand(1);
      result(0);
      state.addAttribute("axis", builder.getI64IntegerAttr(axisOf(node, attrInt(node, "axis", 0), rank)));
    } else if (op == "Trilu") {
      operand(0);
      result(0);
      int64_t k = hasInput(node, 1) ? constantInput(node, 1, "k").integer(0) : 0;
      state.addAttribute("k", builder.getI64IntegerAttr(k));
      if (attrInt(node, "upper", 1))
        state.addAttribute("upper", builder.getUnitAttr());
    } else if (op == "ConstantOfShape") {
      operand(0);
      result(0);
      HostTensor fill{TensorProto::FLOAT, {}, {0.0}, {}};
      if (const auto *a = findAttr(node, "value"))
        if (auto message = decodeTensor(a->t(), nullptr, fill))
          fail(node, "its value " + *message);
      Type element = cast<RankedTensorType>(state.types.back()).getElementType();
      state.addAttribute("value", isa<FloatType>(element)
                                      ? TypedAttr(builder.getFloatAttr(element, fill.real(0)))
                                      : TypedAttr(builder.getIntegerAttr(element, fill.integer(0))));
    } else if (op == "Range") {
      operand(0);
      operand(1);
      operand(2);
      result(0);
    } else if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax") {
      std::vector<int64_t> axes = hasInput(node, 1) ? ints(constantInput(node, 1, "axes"))
                                                    : attrInts(node, "axes");
      operand(0);
      result(0);
      if (axes.empty() && attrInt(node, "noop_with_empty_axes", 0))
        state.name = OperationName("tg.identity", &context);
      else
        state.addAttribute("axes", builder.getDenseI64ArrayAttr(axesOf(node, axes, rank)));
      if (attrInt(node, "keepdims", 1) && state.name.getStringRef() != "tg.identity")
        state.addAttribute("keepdims", builder.getUnitAttr());
    } else if (op == "Softmax" || op == "LogSoftmax") {
      int64_t axis = axisOf(node, attrInt(node, "axis", opset >= 13 ? -1 : 1), rank);
      if (opset < 13 && axis != rank - 1)
        fail(node, "before opset 13 Softmax flattens its input; only the last axis is supported");
      operand(0);
      result(0);
      state.addAttribute("axis", builder.getI64IntegerAttr(axis));
    } else if (op == "LayerNormalization") {
      operand(0);
      operand(1);
      if (hasInput(node, 2))
        operand(2);
      result(0);
      // Mean and inverse standard deviation come together or not at all.
      bool stats = false;
      for (int k = 1; k < node.output_size(); ++k)
        stats |= !node.output(k).empty();
      if (stats) {
        auto statType = RankedTensorType::get(
            cast<RankedTensorType>(state.types.back()).getShape(), builder.getF32Type());
        int64_t axis = axisOf(node, attrInt(node, "axis", -1), rank);
        llvm::SmallVector<int64_t> shape(statType.getShape());
        for (int64_t d = axis; d < rank; ++d)
          shape[d] = 1;
        state.addTypes({RankedTensorType::get(shape, builder.getF32Type()),
                        RankedTensorType::get(shape, builder.getF32Type())});
      }
      state.addAttribute("axis", builder.getI64IntegerAttr(axisOf(node, attrInt(node, "axis", -1), rank)));
      state.addAttribute("epsilon", builder.getF32FloatAttr(attrFloat(node, "epsilon", 1e-5f)));
    } else if (op == "SoftmaxCrossEntropyLoss") {
      operand(0);
      operand(1);
      if (hasInput(node, 2))
        operand(2);
      result(0);
      if (node.output_size() > 1 && !node.output(1).empty())
        result(1);
      state.addAttribute("reduction", builder.getStringAttr(attrString(node, "reduction", "mean")));
      if (findAttr(node, "ignore_index"))
        state.addAttribute("ignore_index", builder.getI64IntegerAttr(attrInt(node, "ignore_index", 0)));
    } else if (op == "Dropout") {
      float ratio = hasInput(node, 1) ? static_cast<float>(constantInput(node, 1, "ratio").real(0))
                                      : attrFloat(node, "ratio", 0.5f);
      bool training = hasInput(node, 2) && constantInput(node, 2, "training_mode").integer(0);
      operand(0);
      result(0);
      state.addTypes(RankedTensorType::get(
          cast<RankedTensorType>(state.types.back()).getShape(), builder.getI1Type()));
      state.addAttribute("ratio", builder.getF32FloatAttr(ratio));
      if (training)
        state.addAttribute("training", builder.getUnitAttr());
      if (findAttr(node, "seed"))
        state.addAttribute("seed", builder.getI64IntegerAttr(attrInt(node, "seed", 0)));
    } else {
      fail(node, "unsupported operator (hmcc --list-ops lists the supported ones)");
    }

    Operation *created = builder.create(state);
    // Results stand for the node's outputs in order; Dropout's mask and
    // LayerNormalization's statistics are there even where ONNX leaves an
    // output name empty.
    bool positional = op == "Dropout" || op == "LayerNormalization";
    unsigned next = 0;
    for (int k = 0; k < node.output_size(); ++k) {
      if (node.output(k).empty() && !positional)
        continue;
      if (next < created->getNumResults() && !node.output(k).empty())
        values[node.output(k)] = created->getResult(next);
      ++next;
    }
    return {created};
  }

  /// Adagrad / Momentum / Adam of ai.onnx.preview.training as
  /// tg.onnx_optimizer, with ONNX's attribute defaults.
  Operation *convertPreviewTraining(const NodeProto &node, Location loc) {
    if (node.op_type() == "Gradient")
      return convertGradient(node, loc);
    OperationState state(loc, "tg.onnx_optimizer");
    for (const std::string &in : node.input())
      state.addOperands(valueOf(in, node));
    for (int k = 0; k < node.output_size(); ++k) {
      if (node.output(k).empty())
        fail(node, "every output must be named");
      state.addTypes(inferredType(node.output(k), " (output of " + describe(node) + ")"));
    }
    const std::string &kind = kPreviewTraining.at(node.op_type());
    auto f32 = [&](const char *name, float fallback) {
      state.addAttribute(name, builder.getF32FloatAttr(attrFloat(node, name, fallback)));
    };
    state.addAttribute("kind", builder.getStringAttr(kind));
    f32("norm_coefficient", 0.0f);
    if (kind == "adagrad") {
      f32("decay_factor", 0.0f);
      f32("epsilon", 1e-6f);
    } else if (kind == "momentum") {
      if (!findAttr(node, "alpha") || !findAttr(node, "beta") || !findAttr(node, "mode"))
        fail(node, "Momentum needs its alpha, beta and mode attributes");
      f32("alpha", 0.0f);
      f32("beta", 0.0f);
      std::string mode = attrString(node, "mode", "standard");
      if (mode != "standard" && mode != "nesterov")
        fail(node, "mode must be standard or nesterov, not " + quote(mode));
      if (mode == "nesterov")
        state.addAttribute("nesterov", builder.getUnitAttr());
    } else {
      f32("alpha", 0.9f);
      f32("beta", 0.999f);
      f32("epsilon", 1e-6f);
      f32("norm_coefficient_post", 0.0f);
    }
    Operation *created = builder.create(state);
    for (int k = 0; k < node.output_size(); ++k)
      values[node.output(k)] = created->getResult(k);
    return created;
  }

  /// ONNX Gradient: d y / d xs by name (attributes `y` and `xs`).
  Operation *convertGradient(const NodeProto &node, Location loc) {
    const auto *xs = findAttr(node, "xs");
    const auto *y = findAttr(node, "y");
    if (!xs || !y)
      fail(node, "Gradient needs its xs and y attributes");
    if (findAttr(node, "zs") && findAttr(node, "zs")->strings_size())
      fail(node, "Gradient's zs attribute is not supported");
    if (xs->strings_size() != node.output_size())
      fail(node, "Gradient has " + std::to_string(xs->strings_size()) + " xs but " +
                     std::to_string(node.output_size()) + " outputs");
    OperationState state(loc, "tg.gradient");
    state.addOperands(valueOf(y->s(), node));
    for (const std::string &x : xs->strings()) {
      Value v = valueOf(x, node);
      state.addOperands(v);
      state.addTypes(v.getType());
    }
    Operation *created = builder.create(state);
    for (int k = 0; k < node.output_size(); ++k)
      values[node.output(k)] = created->getResult(k);
    return created;
  }

  static bool isUnary(const std::string &op) {
    return llvm::any_of(kUnary, [&](auto &e) { return op == e[0]; });
  }
  static bool isBinary(const std::string &op) {
    return llvm::any_of(kBinary, [&](auto &e) { return op == e[0]; });
  }

  /// The tg mnemonic of an ONNX op type.
  static std::string mnemonicOf(const std::string &op) {
    for (auto &e : kUnary)
      if (op == e[0])
        return e[1];
    for (auto &e : kBinary)
      if (op == e[0])
        return e[1];
    static const std::map<std::string, std::string> other = {
        {"MatMul", "matmul"}, {"Gemm", "gemm"}, {"Transpose", "transpose"},
        {"Reshape", "reshape"}, {"Flatten", "flatten"}, {"Squeeze", "squeeze"},
        {"Unsqueeze", "unsqueeze"}, {"Concat", "concat"}, {"Split", "split"},
        {"Slice", "slice"}, {"Gather", "gather"}, {"Expand", "expand"},
        {"Where", "where"}, {"Trilu", "trilu"}, {"Cast", "cast"},
        {"ConstantOfShape", "constant_of_shape"}, {"Range", "range"},
        {"ReduceMean", "reduce_mean"}, {"ReduceSum", "reduce_sum"},
        {"ReduceMax", "reduce_max"}, {"Softmax", "softmax"},
        {"LogSoftmax", "log_softmax"}, {"LayerNormalization", "layer_norm"},
        {"SoftmaxCrossEntropyLoss", "softmax_cross_entropy_loss"},
        {"Dropout", "dropout"}};
    auto it = other.find(op);
    return it == other.end() ? "" : it->second;
  }
};

} // namespace

bool needsCompileTimeValue(StringRef opType, int operand) {
  auto it = kCompileTimeOperands.find(opType.str());
  return it != kCompileTimeOperands.end() && it->second.count(operand);
}

const std::vector<std::string> &supportedPreviewTrainingOps() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (auto &[name, kind] : kPreviewTraining)
      v.push_back(std::string(kPreviewTrainingDomain) + "." + name);
    v.push_back(std::string(kPreviewTrainingDomain) + ".Gradient");
    std::sort(v.begin(), v.end());
    return v;
  }();
  return ops;
}

const std::vector<std::string> &supportedOnnxOps() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (auto &e : kUnary)
      v.push_back(e[0]);
    for (auto &e : kBinary)
      v.push_back(e[0]);
    for (const char *op : kOther)
      v.push_back(op);
    std::sort(v.begin(), v.end());
    return v;
  }();
  return ops;
}

OwningOpRef<ModuleOp> importOnnxModel(MLIRContext &context, StringRef path,
                                      const ImportOptions &options, std::string &error) {
  context.loadDialect<tg::TGDialect, func::FuncDialect>();
  try {
    Importer importer(context, path, options);
    return importer.run();
  } catch (const ImportError &e) {
    error = e.message;
  } catch (const std::exception &e) {
    error = path.str() + ": " + e.what();
  }
  return nullptr;
}

} // namespace hmcc
