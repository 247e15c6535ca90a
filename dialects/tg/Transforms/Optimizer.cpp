//===- Optimizer.cpp - optimizer states and the training step -------------===//
//
// Turns `@forward_backward` (loss and gradients, from tg-autodiff) into
// `@train_step(inputs..., step, lr) -> (loss, grad_norm)`: the same
// computation, the global gradient norm, optional clipping, and one in-place
// update per parameter. Optimizer states are declared as tg.state symbols;
// with adamw8bit, a parameter of 4096 elements or more keeps 8-bit moments
// (decided per parameter, never per shard), a smaller one fp32 moments.
//
//===----------------------------------------------------------------------===//

#include "tg/Transforms/Passes.h"
#include "tg/IR/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace hmcc {
#define GEN_PASS_DEF_TGOPTIMIZER
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc::tg;

namespace {

struct OptimizerPass : hmcc::impl::TGOptimizerBase<OptimizerPass> {
  using TGOptimizerBase::TGOptimizerBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (optimizer != "sgd" && optimizer != "adamw" && optimizer != "adamw8bit") {
      module.emitError() << "tg-optimizer: unknown optimizer '" << optimizer
                         << "' (sgd, adamw or adamw8bit)";
      return signalPassFailure();
    }
    auto source = module.lookupSymbol<func::FuncOp>(function);
    if (!source) {
      module.emitError() << "tg-optimizer: no function @" << function
                         << " (run tg-autodiff first)";
      return signalPassFailure();
    }
    if (module.lookupSymbol(output)) {
      module.emitError() << "tg-optimizer: @" << output << " exists already";
      return signalPassFailure();
    }
    float wd = weightDecay >= 0 ? weightDecay : (optimizer == "sgd" ? 0.0f : 0.01f);

    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(source);
    auto step = cast<func::FuncOp>(b.clone(*source));
    step.setSymName(output);
    Block &body = step.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Location loc = ret.getLoc();

    auto f32 = RankedTensorType::get({}, b.getF32Type());
    auto i64 = RankedTensorType::get({}, b.getI64Type());
    unsigned n = step.getNumArguments();
    auto role = [&](StringRef r) {
      return b.getDictionaryAttr(b.getNamedAttr("tg.role", b.getStringAttr(r)));
    };
    (void)step.insertArgument(n, i64, role("step"), loc);
    (void)step.insertArgument(n + 1, f32, role("lr"), loc);
    Value stepArg = body.getArgument(n), lrArg = body.getArgument(n + 1);

    SmallVector<Value> grads(ret.getOperands().drop_front());
    b.setInsertionPoint(ret);
    Value norm = gradientNorm(b, loc, grads);
    if (clipNorm > 0) {
      Value coef = ClipCoefficientOp::create(b, loc, f32, norm, b.getF32FloatAttr(clipNorm));
      for (Value &g : grads)
        g = MulOp::create(b, loc, g.getType(), g, coef);
    }

    // States go after the parameter declarations.
    OpBuilder declBuilder(module.getContext());
    declBuilder.setInsertionPoint(module.lookupSymbol<func::FuncOp>(function));
    auto declare = [&](StringRef param, StringRef kind, Type type) {
      std::string name = (param + "." + kind).str();
      if (module.lookupSymbol(name)) {
        module.emitError() << "tg-optimizer: the state name @" << name << " is taken";
        signalPassFailure();
      }
      StateOp::create(declBuilder, loc, name, cast<RankedTensorType>(type), param, kind);
      return FlatSymbolRefAttr::get(b.getContext(), name);
    };

    unsigned k = 0;
    for (auto param : module.getOps<ParameterOp>()) {
      Value g = grads[k++];
      StringRef name = param.getSymName();
      Type type = param.getType();
      auto ref = FlatSymbolRefAttr::get(param.getSymNameAttr());
      if (optimizer == "sgd") {
        FlatSymbolRefAttr buffer = momentum != 0 ? declare(name, "momentum", type) : nullptr;
        SgdUpdateOp::create(b, loc, ref, g, lrArg, stepArg, b.getF32FloatAttr(momentum),
                            b.getF32FloatAttr(0.0f), b.getF32FloatAttr(wd), nullptr, buffer);
        continue;
      }
      auto tensor = cast<RankedTensorType>(type);
      if (optimizer == "adamw8bit" && tensor.getNumElements() >= kMin8bitElements) {
        auto codes = adamw8bitCodesType(tensor), absmax = adamw8bitAbsmaxType(tensor);
        auto m = declare(name, "exp_avg", codes);
        auto ma = declare(name, "exp_avg_absmax", absmax);
        auto v = declare(name, "exp_avg_sq", codes);
        auto va = declare(name, "exp_avg_sq_absmax", absmax);
        AdamW8bitUpdateOp::create(b, loc, ref, g, lrArg, stepArg, b.getF32FloatAttr(beta1),
                                  b.getF32FloatAttr(beta2), b.getF32FloatAttr(eps),
                                  b.getF32FloatAttr(wd), m, ma, v, va);
        continue;
      }
      auto m = declare(name, "exp_avg", type);
      auto v = declare(name, "exp_avg_sq", type);
      AdamWUpdateOp::create(b, loc, ref, g, lrArg, stepArg, b.getF32FloatAttr(beta1),
                            b.getF32FloatAttr(beta2), b.getF32FloatAttr(eps),
                            b.getF32FloatAttr(wd), m, v);
    }

    func::ReturnOp::create(b, loc, ValueRange{ret.getOperand(0), norm});
    ret.erase();
    SmallVector<Type> argTypes(body.getArgumentTypes());
    step.setFunctionType(b.getFunctionType(argTypes, {f32, f32}));
    step.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
    step.setResultAttr(0, "tg.output", b.getStringAttr("loss"));
    step.setResultAttr(1, "tg.output", b.getStringAttr("grad_norm"));
    // The hyper-parameters the generated program reports.
    module->setAttr("tg.optimizer",
                    b.getDictionaryAttr({b.getNamedAttr("name", b.getStringAttr(optimizer)),
                                         b.getNamedAttr("lr", b.getF32FloatAttr(lr)),
                                         b.getNamedAttr("beta1", b.getF32FloatAttr(beta1)),
                                         b.getNamedAttr("beta2", b.getF32FloatAttr(beta2)),
                                         b.getNamedAttr("eps", b.getF32FloatAttr(eps)),
                                         b.getNamedAttr("weight_decay", b.getF32FloatAttr(wd)),
                                         b.getNamedAttr("momentum", b.getF32FloatAttr(momentum)),
                                         b.getNamedAttr("clip_norm", b.getF32FloatAttr(clipNorm))}));
  }
};

} // namespace
