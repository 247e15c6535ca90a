//===- FoldRounding.cpp - ops that write their bf16 copy themselves -------===//
//
// tg-fold-rounding (see Passes.td): a `tg.cast {nearest_even}` that is the
// only reader of a value made by an op that can write bf16 becomes that
// op's result type.
//
//===----------------------------------------------------------------------===//

#include "tg/IR/TGOps.h"
#include "tg/Transforms/Passes.h"

namespace hmcc {
#define GEN_PASS_DEF_TGFOLDROUNDING
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc::tg;

namespace {

/// Whether `v` comes from an op whose kernel can write it in bf16.
bool writableInBf16(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !cast<RankedTensorType>(v.getType()).getElementType().isF32())
    return false;
  if (auto norm = dyn_cast<LayerNormOp>(def))
    return v == norm.getResult();
  return isa<FusedOp, SoftmaxCrossEntropyLossGradOp>(def);
}

struct FoldRoundingPass : hmcc::impl::TGFoldRoundingBase<FoldRoundingPass> {
  void runOnOperation() override {
    SmallVector<CastOp> casts;
    getOperation().walk([&](CastOp c) {
      Value x = c.getX();
      if (c.getNearestEven() && c.getType().getElementType().isBF16() && x.hasOneUse() &&
          writableInBf16(x))
        casts.push_back(c);
    });
    for (CastOp c : casts) {
      Value x = c.getX();
      x.setType(c.getType());
      c.getResult().replaceAllUsesWith(x);
      c.erase();
    }
  }
};

} // namespace
