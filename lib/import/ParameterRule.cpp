//===- ParameterRule.cpp - which initializers are trained -----------------===//
//
// Classifies initializers as trainable parameters or constants
// (ParameterRule.h states the rule).
//
//===----------------------------------------------------------------------===//

#include "lib/import/ParameterRule.h"
#include "lib/import/HostTensor.h"
#include "lib/import/ImportError.h"
#include "lib/import/ModelLoader.h"
#include "lib/import/OnnxAttributes.h"
#include "lib/import/OpConverters.h"
#include "lib/import/TrainingInfo.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/GlobPattern.h"

using llvm::StringRef;
using onnx::NodeProto;
using onnx::TensorProto;

namespace hmcc::import {

/// The values the graph's outputs depend on differentiably.
static std::set<std::string> differentiableValues(const Model &model) {
  std::set<std::string> differentiable;
  for (const auto &out : model.proto.graph().output())
    differentiable.insert(out.name());
  const auto &nodes = model.proto.graph().node();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const NodeProto &node = *it;
    bool feedsLoss = false;
    for (const auto &out : node.output())
      feedsLoss |= differentiable.count(out) > 0;
    const OpDef *def = findOp(model, node);
    if (!feedsLoss || (def && !def->carriesGradient))
      continue;
    if (node.op_type() == "Cast" &&
        !HostTensor::isFloatType(static_cast<int32_t>(attrInt(node, "to", 0))))
      continue;
    for (int k = 0; k < node.input_size(); ++k)
      if (!def || !def->nonDifferentiable.count(k))
        differentiable.insert(node.input(k));
  }
  return differentiable;
}

/// The initializers that the --frozen patterns and those of the model's
/// `hmcc.frozen` entry match, each pattern checked to match some. (A
/// GlobPattern refers to its text, so the patterns do not outlive this.)
static std::set<std::string> frozenInitializers(const Model &model,
                                                const ImportOptions &options) {
  std::set<std::string> frozen;
  std::vector<std::string> frozenNames = options.frozen;
  for (const auto &prop : model.proto.metadata_props())
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
    for (const TensorProto &t : model.proto.graph().initializer())
      if (pattern->match(t.name())) {
        matches = true;
        frozen.insert(t.name());
      }
    if (!matches)
      fail("--frozen " + quote(name) + " matches no initializer of the model");
  }
  return frozen;
}

std::set<std::string> classifyInitializers(const Model &model, const ImportOptions &options,
                                           const TrainingInfo &training,
                                           const std::set<std::string> &boundInputs) {
  std::set<std::string> parameters;
  if (training.training) {
    // update_binding names the tensors that change; the rule is not needed.
    if (!options.frozen.empty())
      fail("--frozen does not apply to a model with training_info: its update_binding "
           "names the tensors that change");
    for (const auto &update : training.updates)
      parameters.insert(update.first);
    return parameters;
  }
  std::set<std::string> differentiable = differentiableValues(model);
  std::set<std::string> frozen = frozenInitializers(model, options);
  for (const TensorProto &t : model.proto.graph().initializer()) {
    bool isFrozen = frozen.count(t.name()) > 0;
    if (HostTensor::isFloatType(t.data_type()) && differentiable.count(t.name()) &&
        !isFrozen && !boundInputs.count(t.name()))
      parameters.insert(t.name());
  }
  return parameters;
}

} // namespace hmcc::import
