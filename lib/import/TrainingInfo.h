//===- TrainingInfo.h - ONNX training_info merged into the graph -*- C++ -*-===//
//
// A model with `training_info` (ONNX's training extension) brings its own
// training step: the algorithm graph extends the inference graph (their
// lists are concatenated, as ONNX specifies), `update_binding` names the
// initializers that change (they become the parameters, whatever their type)
// and the values they take after each step, and the initialization graph,
// evaluated at compile time, gives initializers their starting values.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_IMPORT_TRAININGINFO_H
#define HMCC_IMPORT_TRAININGINFO_H

#include "lib/import/HostTensor.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hmcc::import {

struct Model;

/// What the merged training_info says; empty without one.
struct TrainingInfo {
  bool training = false;
  std::set<std::string> inferenceInputs; ///< the inference graph's own inputs
  std::set<std::string> algorithmValues; ///< values the algorithm's nodes define
  std::vector<std::string> inferenceOutputs, algorithmOutputs;
  std::vector<std::pair<std::string, std::string>> updates; ///< initializer <- value
  std::map<std::string, HostTensor> initialValues;          ///< from the initialization graph
};

/// Appends the algorithm graph to the inference graph, checks the bindings,
/// and evaluates the initialization graph into the initializers it binds.
TrainingInfo mergeTrainingInfo(Model &model);

} // namespace hmcc::import

#endif // HMCC_IMPORT_TRAININGINFO_H
