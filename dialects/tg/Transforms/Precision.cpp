//===- Precision.cpp - the arithmetic of the GEMMs ------------------------===//
//
// tg-precision (see Passes.td): marks the GEMMs' arithmetic, and with
// bf16-storage keeps the operands only GEMMs read in bf16.
//
//===----------------------------------------------------------------------===//

#include "tg/Transforms/Passes.h"
#include "tg/IR/TGOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace hmcc {
#define GEN_PASS_DEF_TGPRECISION
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc::tg;

namespace {

/// The operands of a GEMM that multiply: the first two (not Gemm's c).
SmallVector<OpOperand *, 2> factors(Operation *op) {
  return {&op->getOpOperand(0), &op->getOpOperand(1)};
}

/// The value whose bytes `v` is a view of (itself if it is none).
Value viewRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isView(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// Calls `f` on each use of `v` and of the views of it that is not a view.
void forEachReader(Value v, function_ref<void(OpOperand &)> f) {
  for (OpOperand &use : v.getUses()) {
    if (isView(use.getOwner()))
      forEachReader(use.getOwner()->getResult(0), f);
    else
      f(use);
  }
}

/// Gives `v`'s views (transitively) element type bf16: they view `v`'s
/// bf16 copy now.
void retypeViews(Value v) {
  for (OpOperand &use : v.getUses())
    if (isView(use.getOwner())) {
      Value view = use.getOwner()->getResult(0);
      auto type = cast<RankedTensorType>(view.getType());
      view.setType(type.clone(BFloat16Type::get(type.getContext())));
      retypeViews(view);
    }
}

bool isF32Gemm(Operation *op) {
  return isa<MatMulOp, GemmOp>(op) &&
         cast<RankedTensorType>(op->getOperand(0).getType()).getElementType().isF32();
}

struct PrecisionPass : hmcc::impl::TGPrecisionBase<PrecisionPass> {
  using TGPrecisionBase::TGPrecisionBase;

  void runOnOperation() override {
    if (precision != "fp32" && precision != "bf16") {
      getOperation().emitError() << "tg-precision: precision must be fp32 or bf16, not '"
                                 << precision << "'";
      return signalPassFailure();
    }
    bool bf16 = precision == "bf16";
    SmallVector<Operation *> gemms;
    StringAttr math = StringAttr::get(&getContext(), "bf16");
    getOperation().walk([&](Operation *op) {
      if (!isa<MatMulOp, GemmOp, AttentionOp, AttentionGradOp>(op))
        return;
      if (bf16)
        op->setAttr(kMathAttr, math);
      else
        op->removeAttr(kMathAttr);
      if (isF32Gemm(op))
        gemms.push_back(op);
    });
    if (bf16 && bf16Storage)
      keepOperandsInBf16(gemms);
  }

  /// The bf16 storage of GEMM operands (see Passes.td).
  void keepOperandsInBf16(ArrayRef<Operation *> gemms) {
    auto isFactor = [](OpOperand &use) {
      return isF32Gemm(use.getOwner()) && use.getOperandNumber() < 2;
    };
    // The values whose bytes GEMMs multiply (through views or not), and
    // whether only GEMMs read those bytes.
    llvm::MapVector<Value, bool> onlyFactors;
    for (Operation *op : gemms)
      for (OpOperand *use : factors(op))
        onlyFactors.insert({viewRoot(use->get()), true});
    for (auto &[v, only] : onlyFactors)
      forEachReader(v, [&](OpOperand &use) { only &= isFactor(use); });

    OpBuilder b(&getContext());
    // A value made here whose bytes only GEMMs read is rounded once, where
    // it is made, and its views view the bf16 copy, which replaces it.
    for (auto &[v, only] : onlyFactors) {
      Operation *def = v.getDefiningOp();
      if (!only || !def || isa<ParamOp>(def))
        continue;
      b.setInsertionPointAfter(def);
      CastOp c = roundToBf16(b, v.getLoc(), v);
      v.replaceAllUsesExcept(c.getResult(), c);
      retypeViews(c.getResult());
    }
    // A GEMM left with one bf16 and one f32 operand (a parameter or an
    // argument, which lives throughout, or a value something else reads
    // too) rounds the f32 one as it reads it, as it rounds two.
    for (Operation *op : gemms)
      for (Operation *unused : readWidenedFactors(op))
        unused->erase();
  }
};

} // namespace
