//===- LrSchedule.cpp - tg-lr-schedule: the learning-rate schedule --------===//
#include "tg/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace hmcc {
#define GEN_PASS_DEF_TGLRSCHEDULE
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;

namespace {

struct LrSchedulePass : hmcc::impl::TGLrScheduleBase<LrSchedulePass> {
  using TGLrScheduleBase::TGLrScheduleBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (kind != "constant" && kind != "cosine") {
      module.emitError() << "tg-lr-schedule: kind '" << kind
                         << "' is unknown: use constant or cosine";
      return signalPassFailure();
    }
    Builder b(module.getContext());
    module->setAttr("tg.lr_schedule",
                    b.getDictionaryAttr({b.getNamedAttr("kind", b.getStringAttr(kind)),
                                         b.getNamedAttr("warmup_steps", b.getI64IntegerAttr(warmupSteps)),
                                         b.getNamedAttr("decay_steps", b.getI64IntegerAttr(decaySteps)),
                                         b.getNamedAttr("min_lr", b.getF32FloatAttr(minLr))}));
  }
};

} // namespace
