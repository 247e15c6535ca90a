//===- ExpandGradients.cpp - tg-expand-gradients --------------------------===//
//
// ONNX's Gradient operator: each tg.gradient becomes the reverse sweep
// (ReverseMode.h) that computes it, inserted where the op was.
//
//===----------------------------------------------------------------------===//

#include "tg/IR/TGOps.h"
#include "tg/Transforms/Passes.h"
#include "tg/Transforms/ReverseMode.h"

#include "mlir/IR/Builders.h"

namespace hmcc {
#define GEN_PASS_DEF_TGEXPANDGRADIENTS
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc::tg;

namespace {

/// Replaces each tg.gradient by the reverse sweep that computes it.
struct ExpandGradientsPass : hmcc::impl::TGExpandGradientsBase<ExpandGradientsPass> {
  void runOnOperation() override {
    SmallVector<GradientOp> work;
    getOperation().walk([&](GradientOp op) { work.push_back(op); });
    OpBuilder builder(getOperation().getContext());
    for (GradientOp op : work) {
      SmallVector<Value> wrt(op.getXs());
      auto adjoints = reverseSweep(builder, *op->getBlock(), op, wrt, op.getY());
      if (failed(adjoints))
        return signalPassFailure();
      builder.setInsertionPoint(op);
      for (auto [x, g, result] : llvm::zip(op.getXs(), *adjoints, op.getResults()))
        result.replaceAllUsesWith(
            g ? g : zerosOf(builder, op.getLoc(), cast<RankedTensorType>(x.getType())));
      op.erase();
    }
  }
};

} // namespace
