//===- TrainingInfo.cpp - ONNX training_info's algorithm as the step ------===//
//
// The importer turns a ModelProto's training_info into `@algorithm`: the
// inference graph and the algorithm graph together, returning the
// algorithm's outputs, with one tg.assign per update_binding. This pass
// gives it the interface of the training step that the runtime's driver
// calls (see tg-optimizer for the other way a step is made).
//
//===----------------------------------------------------------------------===//

#include "tg/Transforms/Passes.h"
#include "tg/IR/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace hmcc {
#define GEN_PASS_DEF_TGTRAININGINFO
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc::tg;

namespace {

bool isScalar(Type type, bool isFloat) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.getRank() == 0 &&
         (isFloat ? t.getElementType().isF32() : t.getElementType().isInteger(64));
}

struct TrainingInfoPass : hmcc::impl::TGTrainingInfoBase<TrainingInfoPass> {
  using TGTrainingInfoBase::TGTrainingInfoBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto step = module.lookupSymbol<func::FuncOp>("algorithm");
    if (!step) {
      module.emitError("tg-training-info: no @algorithm (the model has no training_info)");
      return signalPassFailure();
    }
    if (module.lookupSymbol("train_step")) {
      module.emitError("tg-training-info: @train_step exists already");
      return signalPassFailure();
    }
    Block &body = step.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder b(module.getContext());
    Location loc = step.getLoc();

    // The loss: what the Gradient ops differentiate.
    SmallVector<GradientOp> gradients(body.getOps<GradientOp>());
    Value loss;
    for (GradientOp g : gradients) {
      if (loss && g.getY() != loss) {
        g.emitError("tg-training-info: the algorithm differentiates more than one value; "
                    "hmcc reports one loss per step");
        return signalPassFailure();
      }
      loss = g.getY();
    }
    if (!loss)
      for (Value v : ret.getOperands())
        if (isScalar(v.getType(), /*isFloat=*/true)) {
          loss = v;
          break;
        }
    if (!loss || !isScalar(loss.getType(), true)) {
      step.emitError("tg-training-info: the algorithm needs a scalar f32 loss to report: "
                     "the y of its Gradient ops, or else a scalar f32 output");
      return signalPassFailure();
    }

    // The gradient norm, right after the last Gradient op.
    auto f32 = RankedTensorType::get({}, b.getF32Type());
    auto i64 = RankedTensorType::get({}, b.getI64Type());
    Value norm;
    if (!gradients.empty()) {
      SmallVector<Value> grads;
      for (GradientOp g : gradients)
        llvm::append_range(grads, g.getResults());
      b.setInsertionPointAfter(gradients.back());
      norm = gradientNorm(b, loc, grads);
    } else {
      b.setInsertionPoint(ret);
      norm = ConstantOp::create(b, loc, DenseElementsAttr::get(f32, 0.0f));
    }

    // step and lr arguments, and the data inputs they feed.
    auto role = [&](StringRef r) {
      return b.getDictionaryAttr(b.getNamedAttr("tg.role", b.getStringAttr(r)));
    };
    unsigned n = step.getNumArguments();
    (void)step.insertArgument(n, i64, role("step"), loc);
    (void)step.insertArgument(n + 1, f32, role("lr"), loc);
    Value stepArg = body.getArgument(n), lrArg = body.getArgument(n + 1);
    Value count; // step - 1, made on first use
    bool usesLr = false;
    llvm::BitVector drop(step.getNumArguments());
    for (unsigned k = 0; k < n; ++k) {
      Value arg = body.getArgument(k);
      bool asLr = false, asCount = false;
      for (Operation *user : arg.getUsers())
        if (auto opt = dyn_cast<OnnxOptimizerOp>(user)) {
          asLr |= opt.getLr() == arg;
          asCount |= opt.getStep() == arg;
        }
      if (asLr && isScalar(arg.getType(), true)) {
        arg.replaceAllUsesWith(lrArg);
        usesLr = true;
        drop.set(k);
      } else if (asCount && isScalar(arg.getType(), false)) {
        if (!count) {
          b.setInsertionPointToStart(&body);
          Value one = ConstantOp::create(b, loc, DenseElementsAttr::get(i64, int64_t(1)));
          count = SubOp::create(b, loc, i64, stepArg, one);
        }
        arg.replaceAllUsesWith(count);
        drop.set(k);
      }
    }
    if (failed(step.eraseArguments(drop)))
      return signalPassFailure();

    b.setInsertionPoint(ret);
    func::ReturnOp::create(b, ret.getLoc(), ValueRange{loss, norm});
    ret.erase();
    step.setSymName("train_step");
    step.setFunctionType(b.getFunctionType(body.getArgumentTypes(), {f32, f32}));
    step.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
    step.setResultAttr(0, "tg.output", b.getStringAttr("loss"));
    step.setResultAttr(1, "tg.output", b.getStringAttr("grad_norm"));
    SmallVector<NamedAttribute> hyper = {b.getNamedAttr("name", b.getStringAttr("onnx"))};
    if (usesLr)
      hyper.push_back(b.getNamedAttr("lr", b.getF32FloatAttr(lr)));
    module->setAttr("tg.optimizer", b.getDictionaryAttr(hyper));
  }
};

} // namespace
