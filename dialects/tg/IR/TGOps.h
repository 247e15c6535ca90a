//===- TGOps.h - operations of the training-graph dialect -------*- C++ -*-===//
#ifndef HMCC_TG_TGOPS_H
#define HMCC_TG_TGOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tg/IR/TGDialect.h"

#define GET_OP_CLASSES
#include "tg/IR/TGOps.h.inc"

namespace hmcc::tg {

/// Whether `op` is a view: its one result holds the same bytes as its first
/// operand in the same order (reshape, flatten, squeeze, unsqueeze,
/// identity), so it may share the operand's memory.
bool isView(mlir::Operation *op);

/// 8-bit AdamW's moments (tg.adamw8bit_update): parameters of at least
/// kMin8bitElements elements have them (bitsandbytes' min_8bit_size), each
/// moment one ui8 code per element and one f32 absmax per k8bitBlock
/// elements.
constexpr int64_t kMin8bitElements = 4096;
constexpr int64_t k8bitBlock = 256;
mlir::RankedTensorType adamw8bitCodesType(mlir::RankedTensorType param);
mlir::RankedTensorType adamw8bitAbsmaxType(mlir::RankedTensorType param);

/// The parameter an optimizer update (sgd, adamw, adamw8bit) writes and its
/// gradient operand; a null symbol for other ops.
std::pair<mlir::FlatSymbolRefAttr, mlir::OpOperand *> optimizerUpdate(mlir::Operation *op);

/// The global L2 norm of `grads` (torch.nn.utils.clip_grad_norm_'s): a
/// running tg.sum_squares right after each gradient is made, in the order
/// they are made, so that it reads the gradient before the gradient moves
/// anywhere, and the tg.norm_of_sum of the last at `b`'s insertion point,
/// which must come after every gradient (a zero constant there without
/// gradients).
mlir::Value gradientNorm(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange grads);

/// The sizes of tg.attention (and its gradient) from q and k, whichever
/// layout (`bthd`: q is B x T x H x D, else B x H x T x D); of a packed one
/// (q, k and v one B x T x (H + 2 Hk) x D value), from q and the result.
struct AttentionDims {
  int64_t batch, heads, kvHeads, queries, keys, headDim;
};
AttentionDims attentionDims(mlir::RankedTensorType q, mlir::RankedTensorType k, bool bthd);
AttentionDims attentionDims(AttentionOp op);
AttentionDims attentionDims(AttentionGradOp op);

/// Gives every tg.dropout without one its mask `stream`, in program order,
/// after the streams already taken (by dropouts and by tg.attention that
/// drops). tg-fuse-attention and plan-recompute both call it, so a mask
/// does not depend on which of them numbered it.
void numberDropoutStreams(mlir::ModuleOp module);

/// The operand count of an op of tg.fused (`ops` entries: "add", "erf",
/// "where", ...); 0 for a name it does not know.
int fusedArity(llvm::StringRef name);

/// The arithmetic tg-precision chose for a tg.matmul, tg.gemm,
/// tg.attention or tg.attention_grad: `tg.math = "bf16"` is bf16 products
/// with fp32 sums (f32 operands are rounded to bf16 by the kernel, bf16
/// ones are read as they are); absent, fp32.
constexpr llvm::StringLiteral kMathAttr = "tg.math";
inline bool hasBf16Math(mlir::Operation *op) {
  auto math = op->getAttrOfType<mlir::StringAttr>(kMathAttr);
  return math && math.getValue() == "bf16";
}

/// A `tg.cast {nearest_even}` of f32 `v` to bf16 at `b`'s insertion point:
/// the rounding a bf16-math GEMM applies to an f32 operand as it reads it.
CastOp roundToBf16(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);

/// Whether `use` reads its value as bf16 anyway: a factor (operand 0 or 1)
/// of a bf16-math tg.matmul or tg.gemm, or a `tg.cast {nearest_even}` to
/// bf16.
bool readsRoundedToBf16(mlir::OpOperand &use);

/// The factors of bf16-math GEMM `gemm` that widen a bf16 value (exactly)
/// replaced by that value (the kernel would round them back to the same
/// bits); returns the widenings nothing else reads, for the caller to
/// erase. A bf16-math GEMM may multiply one bf16 and one f32 factor: the
/// kernel rounds the f32 one (hmrt_matmul_mixed_bf16).
llvm::SmallVector<mlir::Operation *, 2> readWidenedFactors(mlir::Operation *gemm);

} // namespace hmcc::tg

#endif // HMCC_TG_TGOPS_H
