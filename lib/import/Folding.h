//===- Folding.h - values known at import time ------------------*- C++ -*-===//
//
// The importer evaluates nodes whose inputs are all known at compile time
// (shape arithmetic, masks built from constants) instead of emitting them.
// ConstantTable holds what is known: constant initializers, decoded on first
// use, and the outputs of folded nodes. ShapeBinding.cpp folds to a fixpoint
// with ONNX's shape inference; the op conversion reads compile-time operands
// (shapes, axes, slice bounds) from here.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_IMPORT_FOLDING_H
#define HMCC_IMPORT_FOLDING_H

#include "lib/import/HostTensor.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace hmcc::import {

struct Model;

class ConstantTable {
public:
  /// Initializers named in `parameters` are not constants.
  ConstantTable(const Model &model, const std::set<std::string> &parameters)
      : model(model), parameters(parameters) {}

  /// Whether value `name` is known at compile time; the empty name (an
  /// absent optional input) is.
  bool isConstant(const std::string &name);
  /// The known value of `name`, or null when it has none yet.
  const HostTensor *find(const std::string &name) const;
  /// The value of `name` when it is a folded value or a constant
  /// initializer (decoded on first use); null otherwise.
  const HostTensor *value(const std::string &name);
  /// The value of a constant initializer, read (external data too) and
  /// decoded on first use.
  const HostTensor &initializerValue(const std::string &name);
  /// The static shape of a value, where known.
  std::optional<std::vector<int64_t>> staticShape(const std::string &name) const;

  /// Evaluates `node` when its inputs are known at compile time (Shape needs
  /// only a static input shape); on success its outputs become constants.
  bool tryFold(const onnx::NodeProto &node);

private:
  const Model &model;
  const std::set<std::string> &parameters;
  std::unordered_map<std::string, HostTensor> constants;
  /// Elements materialised by folding so far (bounded by kMaxFoldedTotal).
  int64_t foldedElements = 0;
};

/// The value of a Constant node.
HostTensor constantNodeValue(const Model &model, const onnx::NodeProto &node);

/// Writes `t` into `out` as an ONNX tensor called `name`.
void encodeTensor(const std::string &name, const HostTensor &t, onnx::TensorProto &out);

} // namespace hmcc::import

#endif // HMCC_IMPORT_FOLDING_H
