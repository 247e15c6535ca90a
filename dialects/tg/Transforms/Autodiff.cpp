//===- Autodiff.cpp - tg-autodiff: the backward pass ----------------------===//
//
// Builds `@<output>` from `@<function>`: the same forward computation
// followed by its reverse sweep (ReverseMode.h), returning the loss and the
// gradient of the loss with respect to every parameter, in declaration order.
//
//===----------------------------------------------------------------------===//

#include "tg/IR/TGOps.h"
#include "tg/Transforms/Passes.h"
#include "tg/Transforms/ReverseMode.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"

namespace hmcc {
#define GEN_PASS_DEF_TGAUTODIFF
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc::tg;

namespace {

struct AutodiffPass : hmcc::impl::TGAutodiffBase<AutodiffPass> {
  using TGAutodiffBase::TGAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(function);
    if (!forward) {
      module.emitError() << "tg-autodiff: no function @" << function << " to differentiate";
      return signalPassFailure();
    }
    if (module.lookupSymbol(output)) {
      module.emitError() << "tg-autodiff: @" << output << " exists already";
      return signalPassFailure();
    }
    auto lossType =
        forward.getNumResults() < 1 || !forward.getBody().hasOneBlock()
            ? RankedTensorType()
            : dyn_cast<RankedTensorType>(
                  forward.getBody().front().getTerminator()->getOperand(0).getType());
    if (!lossType || lossType.getRank() != 0 || !isa<FloatType>(lossType.getElementType())) {
      forward.emitError() << "tg-autodiff: @" << function
                          << " must return a floating-point scalar loss as its first result";
      return signalPassFailure();
    }

    OpBuilder builder(module.getContext());
    builder.setInsertionPointAfter(forward);
    auto grad = cast<func::FuncOp>(builder.clone(*forward));
    grad.setSymName(output);
    Block &body = grad.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value loss = ret.getOperand(0);

    // The independent variables: every read of a parameter.
    SmallVector<Value> params;
    for (auto p : body.getOps<ParamOp>())
      params.push_back(p.getResult());
    auto adjoints = reverseSweep(builder, body, ret, params, loss);
    if (failed(adjoints))
      return signalPassFailure();
    DenseMap<Value, Value> adjointOf;
    for (auto [p, g] : llvm::zip(params, *adjoints))
      if (g)
        adjointOf[p] = g;

    // Results: the loss, then d loss / d parameter in declaration order.
    Location loc = grad.getLoc();
    SmallVector<Value> results = {loss};
    SmallVector<Type> types = {loss.getType()};
    SmallVector<Attribute> resultAttrs = {builder.getDictionaryAttr(
        builder.getNamedAttr("tg.output", builder.getStringAttr("loss")))};
    for (auto decl : module.getOps<ParameterOp>()) {
      Value total;
      for (auto use : body.getOps<ParamOp>())
        if (Value g = adjointOf.lookup(use.getResult()); g && use.getName() == decl.getSymName())
          total = total ? addGradients(builder, loc, total, g) : g;
      if (!total)
        total = zerosOf(builder, loc, cast<RankedTensorType>(decl.getType()));
      results.push_back(total);
      types.push_back(total.getType());
      resultAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
          "tg.grad_of", FlatSymbolRefAttr::get(decl.getSymNameAttr()))));
    }
    func::ReturnOp::create(builder, ret.getLoc(), results);
    ret.erase();
    grad.setFunctionType(builder.getFunctionType(grad.getArgumentTypes(), types));
    grad.setAllResultAttrs(resultAttrs);
  }
};

} // namespace
