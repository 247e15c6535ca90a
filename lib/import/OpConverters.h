//===- OpConverters.h - the table of supported ONNX operators ---*- C++ -*-===//
//
// One registry says everything hmcc knows about an ONNX operator: its domain
// and opset range, the tg op it becomes, which operands must be known at
// compile time, which carry no gradient, and how it converts. Most ops
// convert through one generic path driven by the entry (operands, result
// types, attributes copied with defaults); the others name a hand-written
// converter. supportedOnnxOps, supportedPreviewTrainingOps and
// needsCompileTimeValue (OnnxImporter.h) read this table too.
//
// To add an op: add its tg op (dialects/), then one entry to the table in
// OpConverters.cpp. Only when operands or attributes need more than the
// generic mapping, write a converter in SpecialConverters.cpp, declare it in
// NodeConverter.h and name it in the entry with .special().
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_IMPORT_OPCONVERTERS_H
#define HMCC_IMPORT_OPCONVERTERS_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include "onnx/onnx_pb.h"

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace hmcc::import {

struct Model;
class GraphBuilder;
class NodeConverter;

/// An ONNX input (or output) position the generic path maps to an operand
/// (or result); `ifPresent` ones only when the node gives (names) them.
struct Slot {
  Slot(int index, bool ifPresent = false) : index(index), ifPresent(ifPresent) {}
  int index;
  bool ifPresent;
};
inline Slot ifPresent(int index) { return Slot(index, true); }

/// An ONNX attribute the generic path copies to the tg op.
struct AttrMap {
  enum Kind {
    F32,          ///< a float, `number` when absent
    Flag,         ///< a unit attribute when the int (`number` when absent) is nonzero
    String,       ///< a string, `text` when absent
    IntIfPresent, ///< an int, only when the node has it
    Axis,         ///< an axis (`number` when absent), checked against input 0's rank
                  ///< and made non-negative
  };
  Kind kind;
  std::string name;
  double number = 0;
  std::string text;
};

/// How the results of the tg op stand for the node's outputs.
enum class ResultMap {
  Named,      ///< in order, skipping the outputs the node leaves unnamed
  Positional, ///< result k is output k, named or not (Dropout's mask, LayerNorm's statistics)
  Every,      ///< result k is output k, for every output
};

/// A hand-written conversion: fills the converter's operation state.
using ConvertFn = void (*)(NodeConverter &);

/// One entry of the op table.
struct OpDef {
  std::string domain; ///< "" for the default ONNX domain
  std::string opType;
  int64_t minOpset = std::numeric_limits<int64_t>::min();
  int64_t maxOpset = std::numeric_limits<int64_t>::max();
  /// The tg op it becomes ("tg." + mnemonic); empty for ops that are always
  /// evaluated at compile time and never reach the graph.
  std::string mnemonic;
  std::vector<Slot> operands{Slot(0)}; ///< generic path: the ONNX inputs passed, in order
  bool allInputs = false;        ///< generic path: every input is passed instead
  std::vector<Slot> results{Slot(0)};  ///< generic path: the ONNX outputs typed, in order
  std::vector<AttrMap> attrs;    ///< generic path: the attributes copied, in order
  ResultMap resultMap = ResultMap::Named;
  ConvertFn convert = nullptr;     ///< hand-written converter; null: the generic path
  std::set<int> compileTime;       ///< inputs whose values must be known at compile time
  std::set<int> nonDifferentiable; ///< inputs that carry no gradient
  bool carriesGradient = true;     ///< false: no input does

  OpDef &in(std::vector<Slot> s) { operands = std::move(s); return *this; }
  OpDef &inAll() { allInputs = true; return *this; }
  OpDef &out(std::vector<Slot> s) { results = std::move(s); return *this; }
  OpDef &attr(AttrMap a) { attrs.push_back(std::move(a)); return *this; }
  OpDef &since(int64_t v) { minOpset = v; return *this; }
  OpDef &until(int64_t v) { maxOpset = v; return *this; }
  OpDef &special(ConvertFn f) { convert = f; return *this; }
  OpDef &resultsBy(ResultMap m) { resultMap = m; return *this; }
  /// Inputs that must be known at compile time (shapes, axes, bounds); as
  /// constants they carry no gradient either.
  OpDef &constInputs(const std::set<int> &s) {
    compileTime.insert(s.begin(), s.end());
    return noGradientAt(s);
  }
  OpDef &noGradientAt(const std::set<int> &s) {
    nonDifferentiable.insert(s.begin(), s.end());
    return *this;
  }
  OpDef &noGradient() { carriesGradient = false; return *this; }
};

/// Every op hmcc supports.
const std::vector<OpDef> &opTable();

/// The entry for `node` at the opset its domain is imported with, or null.
const OpDef *findOp(const Model &model, const onnx::NodeProto &node);

/// Fails on the first node whose domain or op hmcc does not support.
void checkOperators(const Model &model);

/// Converts `node` into one tg op at the builder's insertion point and
/// records the values of its outputs.
mlir::Operation *convertNode(GraphBuilder &graph, const onnx::NodeProto &node,
                             mlir::Location loc);

} // namespace hmcc::import

#endif // HMCC_IMPORT_OPCONVERTERS_H
