//===- NodeConverter.h - what an op converter works with --------*- C++ -*-===//
//
// A converter (OpConverters.h) turns one ONNX node into the state of one tg
// op: operands, result types, attributes. NodeConverter gives it the node,
// that state, and the helpers every converter needs: values of inputs,
// inferred result types, compile-time inputs, axis normalisation. The
// hand-written converters (SpecialConverters.cpp) are declared here for
// the op table.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_IMPORT_NODECONVERTER_H
#define HMCC_IMPORT_NODECONVERTER_H

#include "lib/import/HostTensor.h"
#include "lib/import/OpConverters.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OperationSupport.h"

#include <string>
#include <vector>

namespace hmcc::import {

class NodeConverter {
public:
  NodeConverter(GraphBuilder &graph, const OpDef *def, const onnx::NodeProto &node,
                mlir::Location loc);

  GraphBuilder &graph;
  const OpDef *def; ///< null for an op the table lacks (conversion then fails)
  const onnx::NodeProto &node;
  mlir::OpBuilder &builder;
  mlir::OperationState state;
  int64_t rank = 0; ///< of input 0 (default-domain ops)

  [[noreturn]] void fail(const std::string &message);

  bool hasInput(int k) const { return k < node.input_size() && !node.input(k).empty(); }
  bool hasOutput(int k) const { return k < node.output_size() && !node.output(k).empty(); }

  /// Passes input `k` as the next operand.
  void operand(int k);
  /// Types the next result as ONNX inferred output `k`.
  void result(int k);
  mlir::RankedTensorType lastResultType() const {
    return mlir::cast<mlir::RankedTensorType>(state.types.back());
  }
  /// The last result's type, which must have the input's rank (the file's
  /// declared types need not agree with the op).
  mlir::RankedTensorType lastResultOfInputRank() {
    mlir::RankedTensorType type = lastResultType();
    if (type.getRank() != rank)
      fail("its output has rank " + std::to_string(type.getRank()) + ", its input rank " +
           std::to_string(rank));
    return type;
  }
  void addAttr(llvm::StringRef name, mlir::Attribute value) { state.addAttribute(name, value); }

  mlir::RankedTensorType typeOfInput(int k);
  /// The value of input `k`, which must be known at compile time (the
  /// table lists it); `what` names it in messages.
  const HostTensor &constantInput(int k, const char *what);
  static std::vector<int64_t> ints(const HostTensor &t);

  /// Normalises, sorts and checks a list of axes.
  std::vector<int64_t> axesOf(std::vector<int64_t> axes, int64_t rank);
  int64_t axisOf(int64_t axis, int64_t rank) { return axesOf({axis}, rank).front(); }
  /// The axes of Squeeze, Unsqueeze and the reductions: input 1 from
  /// opset 13 (18 for some reductions), the `axes` attribute before.
  std::vector<int64_t> axesInputOrAttr();
};

/// Copies one attribute as the generic path does.
void applyAttr(NodeConverter &cx, const AttrMap &a);

// The hand-written converters (SpecialConverters.cpp).
void convertTranspose(NodeConverter &cx);
void convertFlatten(NodeConverter &cx);
void convertSqueeze(NodeConverter &cx);
void convertUnsqueeze(NodeConverter &cx);
void convertSplit(NodeConverter &cx);
void convertSlice(NodeConverter &cx);
void convertTrilu(NodeConverter &cx);
void convertConstantOfShape(NodeConverter &cx);
void convertReduce(NodeConverter &cx);
void convertSoftmax(NodeConverter &cx);
void convertSoftmaxBefore13(NodeConverter &cx);
void convertLayerNorm(NodeConverter &cx);
void convertDropout(NodeConverter &cx);
void convertAdagrad(NodeConverter &cx);
void convertMomentum(NodeConverter &cx);
void convertAdam(NodeConverter &cx);
void convertGradient(NodeConverter &cx);

} // namespace hmcc::import

#endif // HMCC_IMPORT_NODECONVERTER_H
