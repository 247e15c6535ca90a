//===- Staging.cpp - updates of stored states through host staging -------===//
//
// plan-staging (see Passes.td): after placement, each optimizer update
// whose states plan-tiers homed in storage reads them into one of two
// staging buffers at the end of the host arena, updates them there and
// writes them back; the read for the next such update is issued right
// after this one, so that it overlaps the update in flight.
//
//===----------------------------------------------------------------------===//

#include "compiler/planner/Passes.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace hmcc {
#define GEN_PASS_DEF_PLANSTAGING
#include "compiler/planner/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;
using namespace hmcc::tg;

namespace {

/// The states an op names by symbol that live in storage.
SmallVector<StateOp> storedStates(Operation *op, SymbolTable &symbols) {
  SmallVector<StateOp> out;
  for (NamedAttribute attr : op->getAttrs())
    if (auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue()))
      if (auto state = symbols.lookup<StateOp>(ref.getValue()); state && hm::isStorageHomed(state))
        out.push_back(state);
  return out;
}

struct PlanStagingPass : hmcc::impl::PlanStagingBase<PlanStagingPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    hm::ArenaOp host = hm::arenaOfTier(module, "host");
    if (!hm::arenaOfTier(module, "storage"))
      return; // nothing stored
    if (!host) {
      module.emitError("plan-staging: states are stored, but there is no host arena to stage them");
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    // The updates of stored states, per function, and the staging bytes
    // one of them needs.
    SmallVector<std::pair<Operation *, SmallVector<StateOp>>> updates;
    int64_t slot = 0;
    for (auto fn : module.getOps<func::FuncOp>())
      for (Operation &op : fn.getBody().front()) {
        SmallVector<StateOp> states = storedStates(&op, symbols);
        if (states.empty())
          continue;
        if (!hm::isHostHomed(&op)) {
          op.emitError("plan-staging: an update of stored states does not run on the host");
          return signalPassFailure();
        }
        int64_t bytes = 0;
        for (StateOp s : states)
          bytes += hm::storageBlocks(tg::tensorBytes(s.getType()));
        slot = std::max(slot, bytes);
        updates.push_back({&op, std::move(states)});
      }
    if (updates.empty())
      return;
    // Two staging buffers after everything else in the host arena.
    int64_t base = hm::storageBlocks(host.getBytes());
    host.setSize(base + 2 * slot);

    OpBuilder b(module.getContext());
    Operation *previous = nullptr; // the update before, in the same block
    for (auto [k, entry] : llvm::enumerate(updates)) {
      auto &[update, states] = entry;
      int64_t at = base + int64_t(k % 2) * slot;
      SmallVector<NamedAttribute> staged;
      // Read in after the previous update (its buffer is the other one),
      // written back right after this one.
      if (previous && previous->getBlock() == update->getBlock())
        b.setInsertionPointAfter(previous);
      else
        b.setInsertionPoint(update);
      for (StateOp s : states) {
        hm::StageOp::create(b, update->getLoc(), "in", s.getSymName(), uint64_t(at),
                            s.getType());
        staged.push_back(b.getNamedAttr(s.getSymName(), b.getI64IntegerAttr(at)));
        at += hm::storageBlocks(tg::tensorBytes(s.getType()));
      }
      update->setAttr(hm::kStagedAttr, b.getDictionaryAttr(staged));
      b.setInsertionPointAfter(update);
      for (StateOp s : llvm::reverse(states)) {
        at -= hm::storageBlocks(tg::tensorBytes(s.getType()));
        hm::StageOp::create(b, update->getLoc(), "out", s.getSymName(), uint64_t(at),
                            s.getType());
      }
      previous = update;
    }
  }
};

} // namespace
