//===- TrainingInfo.cpp - ONNX training_info merged into the graph --------===//
//
// Merges a model's training_info into its graph (TrainingInfo.h); the module
// then holds @forward (the inference graph) and @algorithm (the combined
// graph, ending in one tg.assign per update_binding), built by
// GraphBuilder.cpp.
//
//===----------------------------------------------------------------------===//

#include "lib/import/TrainingInfo.h"
#include "lib/import/Folding.h"
#include "lib/import/ImportError.h"
#include "lib/import/ModelLoader.h"

#include "llvm/ADT/STLExtras.h"

using onnx::NodeProto;
using onnx::TensorProto;

namespace hmcc::import {

/// Runs the initialization graph at compile time; each
/// initialization_binding replaces an initializer's value.
static void evaluateInitialization(Model &model, TrainingInfo &result,
                                   const onnx::TrainingInfoProto &info,
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
    std::string name = where + "node " + quote(node.name()) + " (op " + escapeText(node.op_type()) + ")";
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      fail(name + ": only default-domain operators can run at compile time");
    std::vector<HostTensor> results;
    if (node.op_type() == "Constant") {
      results.push_back(constantNodeValue(model, node));
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
  auto *graph = model.proto.mutable_graph();
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
      result.initialValues[key] = v;
    }
  }
}

TrainingInfo mergeTrainingInfo(Model &model) {
  TrainingInfo result;
  if (model.proto.training_info_size() == 0)
    return result;
  if (model.proto.training_info_size() > 1)
    fail("the model has " + std::to_string(model.proto.training_info_size()) +
         " training_info entries; hmcc compiles one training algorithm");
  onnx::TrainingInfoProto info = model.proto.training_info(0);
  model.proto.clear_training_info();
  result.training = true;
  auto *graph = model.proto.mutable_graph();
  const onnx::GraphProto &algorithm = info.algorithm();
  if (algorithm.node_size() == 0)
    fail("training_info: the algorithm graph has no nodes");

  std::set<std::string> initializerNames;
  for (const auto &in : graph->input())
    result.inferenceInputs.insert(in.name());
  for (const auto &out : graph->output())
    result.inferenceOutputs.push_back(out.name());
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
      result.algorithmValues.insert(out);
    *graph->add_node() = node;
  }
  for (const auto &out : algorithm.output()) {
    result.algorithmOutputs.push_back(out.name());
    *graph->add_output() = out;
  }
  for (const auto &vi : algorithm.value_info())
    *graph->add_value_info() = vi;
  if (algorithm.sparse_initializer_size() || graph->sparse_initializer_size())
    fail("sparse initializers are not supported");

  std::set<std::string> outputs(result.algorithmOutputs.begin(), result.algorithmOutputs.end());
  outputs.insert(result.inferenceOutputs.begin(), result.inferenceOutputs.end());
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
    result.updates.emplace_back(key, value);
  }
  if (result.updates.empty())
    fail("training_info: update_binding is empty, so the algorithm changes nothing");
  evaluateInitialization(model, result, info, initializerNames);
  model.indexInitializers();
  return result;
}

} // namespace hmcc::import
