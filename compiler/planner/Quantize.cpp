//===- Quantize.cpp - 8-bit optimizer states where the budget needs them --===//
//
// plan-quantize (see Passes.td). `always` is tg-optimizer's adamw8bit rule,
// applied when the optimizer is built; this pass is `auto`: it turns the
// AdamW updates of the largest parameters homed on the host into 8-bit
// AdamW while the host arena exceeds --ram. Host states are packed first in
// the host arena, so each conversion takes exactly the bytes it saves out of
// the arena, which one trial placement measures beforehand.
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/TGToHM/PlaceBuffers.h"
#include "compiler/planner/PassOptions.h"
#include "compiler/planner/Passes.h"
#include "hm/Analysis/Memory.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/IR/Builders.h"

namespace hmcc {
#define GEN_PASS_DEF_PLANQUANTIZE
#include "compiler/planner/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;
using namespace hmcc::tg;

namespace {

/// The bytes of a parameter of `type`'s two 8-bit moments.
int64_t quantizedBytes(RankedTensorType type) {
  return 2 * (hm::arenaBytes(adamw8bitCodesType(type)) + hm::arenaBytes(adamw8bitAbsmaxType(type)));
}

/// Replaces `update` by 8-bit AdamW: its fp32 moments by codes and absmax
/// states of the names tg-optimizer gives them, in the same home.
void quantize(ModuleOp module, AdamWUpdateOp update) {
  OpBuilder b(module.getContext());
  auto param = module.lookupSymbol<ParameterOp>(update.getParam());
  auto m = module.lookupSymbol<StateOp>(update.getExpAvg());
  auto v = module.lookupSymbol<StateOp>(update.getExpAvgSq());
  auto type = cast<RankedTensorType>(param.getType());
  auto codes = adamw8bitCodesType(type), absmax = adamw8bitAbsmaxType(type);
  Attribute home = m->getAttr(hm::kHomeAttr);
  // The new states take the old ones' names and place.
  Operation *next = m->getNextNode();
  while (next == m.getOperation() || next == v.getOperation())
    next = next->getNextNode();
  m.erase();
  v.erase();
  b.setInsertionPoint(next);
  auto declare = [&](StringRef kind, RankedTensorType t) {
    std::string name = (param.getSymName() + "." + kind).str();
    auto s = StateOp::create(b, m.getLoc(), name, t, param.getSymName(), kind);
    if (home)
      s->setAttr(hm::kHomeAttr, home);
    return FlatSymbolRefAttr::get(b.getContext(), name);
  };
  auto ma = declare("exp_avg", codes), maa = declare("exp_avg_absmax", absmax);
  auto va = declare("exp_avg_sq", codes), vaa = declare("exp_avg_sq_absmax", absmax);
  b.setInsertionPoint(update);
  auto q = AdamW8bitUpdateOp::create(b, update.getLoc(), update.getParamAttr(), update.getGrad(),
                                     update.getLr(), update.getStep(), update.getBeta1Attr(),
                                     update.getBeta2Attr(), update.getEpsAttr(),
                                     update.getWeightDecayAttr(), ma, maa, va, vaa);
  for (NamedAttribute attr : update->getDiscardableAttrs())
    q->setAttr(attr.getName(), attr.getValue());
  update.erase();
}

struct PlanQuantizePass : hmcc::impl::PlanQuantizeBase<PlanQuantizePass> {
  using PlanQuantizeBase::PlanQuantizeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (mode == "never" || mode == "always")
      return; // always: tg-optimizer built 8-bit AdamW already
    if (mode != "auto" && mode != "host") {
      module.emitError() << "plan-quantize: mode must be never, auto or always, not '" << mode
                         << "'";
      return signalPassFailure();
    }
    auto budget = planner::budgetOption(module, "plan-quantize", "ram", ram);
    if (failed(budget))
      return signalPassFailure();
    // The AdamW updates of parameters on the host, largest first.
    SmallVector<AdamWUpdateOp> updates;
    module.walk([&](AdamWUpdateOp u) {
      auto param = module.lookupSymbol<ParameterOp>(u.getParam());
      auto type = cast<RankedTensorType>(param.getType());
      if (hm::isHostHomed(param) && type.getNumElements() >= kMin8bitElements)
        updates.push_back(u);
    });
    auto size = [&](AdamWUpdateOp u) {
      return tensorBytes(module.lookupSymbol<ParameterOp>(u.getParam()).getType());
    };
    llvm::stable_sort(updates, [&](AdamWUpdateOp a, AdamWUpdateOp c) { return size(a) > size(c); });
    if (updates.empty())
      return;
    if (mode == "host") { // for tests: every state on the host
      for (AdamWUpdateOp u : updates)
        quantize(module, u);
      return;
    }
    if (!*budget)
      return;
    std::optional<ScheduleMemory> placed = placedMemory(module);
    if (!placed)
      return signalPassFailure();
    int64_t host = placed->hostArena;
    SmallVector<AdamWUpdateOp> chosen;
    for (AdamWUpdateOp u : updates) {
      if (host <= **budget)
        break;
      auto type = cast<RankedTensorType>(module.lookupSymbol<ParameterOp>(u.getParam()).getType());
      host -= 2 * hm::arenaBytes(type) - quantizedBytes(type);
      chosen.push_back(u);
    }
    for (AdamWUpdateOp u : chosen)
      quantize(module, u);
  }
};

} // namespace
