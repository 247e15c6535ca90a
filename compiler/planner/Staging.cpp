//===- Staging.cpp - updates of stored states through host staging -------===//
//
// plan-staging (see Passes.td): after placement, each optimizer update
// whose states plan-tiers homed in storage reads them into one of two
// staging buffers at the end of the host arena, updates them there and
// writes them back; the read for the next such update is issued right
// after this one, so that it overlaps the update in flight. With a chunk
// size, the update of a large parameter runs chunk by chunk, each chunk's
// slices of the states staged in turn, so that staging takes two chunks'
// states rather than two whole parameters'.
//
//===----------------------------------------------------------------------===//

#include "compiler/planner/PassOptions.h"
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

/// The states and the parameter an update names by symbol that live in
/// storage (none for a parameter's read, which its host copy stages).
SmallVector<Operation *> storedTensors(Operation *op, SymbolTable &symbols) {
  SmallVector<Operation *> out;
  if (isa<ParamOp>(op))
    return out;
  for (NamedAttribute attr : op->getAttrs())
    if (auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue()))
      if (Operation *tensor = symbols.lookup(ref.getValue()); hm::isStoredTensor(tensor))
        out.push_back(tensor);
  return out;
}

/// Replaces `update` by one copy per chunk of planner::chunkRanges, each
/// marked with hm.chunk, and returns them in order; an update that runs
/// whole comes back alone.
SmallVector<Operation *> splitIntoChunks(Operation *update, ArrayRef<Operation *> states,
                                         int64_t chunk, SymbolTable &symbols) {
  auto ref = update->getAttrOfType<FlatSymbolRefAttr>("param");
  auto param = ref ? symbols.lookup<ParameterOp>(ref.getValue()) : ParameterOp();
  if (!param || !isa<AdamWUpdateOp, AdamW8bitUpdateOp, SgdUpdateOp>(update))
    return {update};
  auto ranges = planner::chunkRanges(
      states, cast<RankedTensorType>(param.getType()).getNumElements(), chunk);
  if (ranges.empty())
    return {update};
  SmallVector<Operation *> chunks;
  OpBuilder b(update);
  for (auto [lo, hi] : ranges) {
    Operation *c = b.clone(*update);
    c->setAttr(hm::kChunkAttr, b.getDenseI64ArrayAttr({lo, hi}));
    chunks.push_back(c);
  }
  update->erase();
  return chunks;
}

struct PlanStagingPass : hmcc::impl::PlanStagingBase<PlanStagingPass> {
  using PlanStagingBase::PlanStagingBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto chunkBytes = planner::budgetOption(module, "plan-staging", "chunk-size", chunkSize);
    if (failed(chunkBytes))
      return signalPassFailure();
    int64_t chunk = *chunkBytes ? planner::chunkElements(**chunkBytes) : 0;
    hm::ArenaOp host = hm::arenaOfTier(module, "host");
    if (!hm::arenaOfTier(module, "storage"))
      return; // nothing stored
    if (!host) {
      module.emitError("plan-staging: states are stored, but there is no host arena to stage them");
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    // The updates of stored states (chunk by chunk), per function, and the
    // staging bytes one of them needs.
    SmallVector<std::pair<Operation *, SmallVector<Operation *>>> updates;
    int64_t slot = 0;
    for (auto fn : module.getOps<func::FuncOp>())
      for (Operation &op : llvm::make_early_inc_range(fn.getBody().front())) {
        SmallVector<Operation *> states = storedTensors(&op, symbols);
        if (states.empty())
          continue;
        if (!hm::isHostHomed(&op)) {
          op.emitError("plan-staging: an update of stored states does not run on the host");
          return signalPassFailure();
        }
        for (Operation *part : splitIntoChunks(&op, states, chunk, symbols)) {
          int64_t bytes = 0;
          for (Operation *s : states)
            bytes += hm::stagedSlice(part, s).bytes;
          slot = std::max(slot, bytes);
          updates.push_back({part, states});
        }
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
      auto stage = [&](StringRef direction, Operation *s, int64_t offset) {
        auto op = hm::StageOp::create(b, update->getLoc(), direction, SymbolTable::getSymbolName(s),
                                      uint64_t(offset), hm::storedType(s));
        if (auto chunkAttr = update->getAttr(hm::kChunkAttr))
          op->setAttr(hm::kChunkAttr, chunkAttr);
      };
      for (Operation *s : states) {
        stage("in", s, at);
        staged.push_back(b.getNamedAttr(SymbolTable::getSymbolName(s), b.getI64IntegerAttr(at)));
        at += hm::stagedSlice(update, s).bytes;
      }
      update->setAttr(hm::kStagedAttr, b.getDictionaryAttr(staged));
      b.setInsertionPointAfter(update);
      for (Operation *s : llvm::reverse(states)) {
        at -= hm::stagedSlice(update, s).bytes;
        stage("out", s, at);
      }
      previous = update;
    }
  }
};

} // namespace
