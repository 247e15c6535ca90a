//===- ParameterRule.h - which initializers are trained ---------*- C++ -*-===//
//
// Every initializer is either a trainable parameter (a tg.parameter, read
// with tg.param and updated by the training step) or a constant (folded or
// emitted as tg.constant).
//
// The rule: an initializer is a trainable parameter when it is
// floating-point and the loss depends on it differentiably, i.e. through some
// chain of operand positions that carry gradients (the op table says which
// do not: a Where condition, a Gather index, a Reshape shape, an Equal, ...;
// a cast to an integer type carries none either). Every other initializer is
// a constant. `--frozen NAME` (or the model metadata entry `hmcc.frozen`, a
// comma-separated list) makes a parameter a constant: buffers the rule
// cannot tell from weights, such as rotary tables that multiply
// activations, need it. With training_info, update_binding names the
// parameters instead and the rule is not used.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_IMPORT_PARAMETERRULE_H
#define HMCC_IMPORT_PARAMETERRULE_H

#include "lib/import/OnnxImporter.h"

#include <set>
#include <string>

namespace hmcc::import {

struct Model;
struct TrainingInfo;

/// The names of the initializers that are trainable parameters; data inputs
/// given values (`boundInputs`, now initializers) never are.
std::set<std::string> classifyInitializers(const Model &model, const ImportOptions &options,
                                           const TrainingInfo &training,
                                           const std::set<std::string> &boundInputs);

} // namespace hmcc::import

#endif // HMCC_IMPORT_PARAMETERRULE_H
