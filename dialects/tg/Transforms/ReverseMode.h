//===- ReverseMode.h - the reverse sweep shared by tg passes ----*- C++ -*-===//
//
// Reverse-mode differentiation inside one block, used by tg-autodiff (the
// gradient of the loss) and tg-expand-gradients (ONNX's Gradient operator).
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_TG_TRANSFORMS_REVERSEMODE_H
#define HMCC_TG_TRANSFORMS_REVERSEMODE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"

namespace hmcc::tg {

/// Differentiates `y` (seeded with ones: for a scalar loss, d loss/d loss =
/// 1; for a tensor, the gradient of its sum) through the ops of `body`
/// before `end`, with respect to `sources` and everything that depends on
/// them; the sweep is inserted before `end`. Returns the adjoint of each
/// source, null where nothing flowed back; fails (after a diagnostic) on an
/// op without a gradient rule.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
reverseSweep(mlir::OpBuilder &builder, mlir::Block &body, mlir::Operation *end,
             llvm::ArrayRef<mlir::Value> sources, mlir::Value y);

/// `a + b` for two gradients of the same type.
mlir::Value addGradients(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value a,
                         mlir::Value b);

/// A tensor of zeros: the gradient of a value nothing flowed back to.
mlir::Value zerosOf(mlir::OpBuilder &builder, mlir::Location loc, mlir::RankedTensorType type);

} // namespace hmcc::tg

#endif // HMCC_TG_TRANSFORMS_REVERSEMODE_H
