//===- Staging.cpp - updates of states homed a tier below where they run -===//
//
// plan-staging (see Passes.td): after placement, each optimizer update
// on the host whose states plan-storage homed in storage, and each update
// on the device whose parameter and states plan-tiers homed on the host,
// reads them into one of two staging buffers at the end of the arena a
// tier up (the host's, the device's), updates them there and writes them
// back; the read for the next such update is issued right after this one,
// so that it overlaps the update in flight. With a chunk size, the update
// of a large parameter runs chunk by chunk, each chunk's slices of the
// states staged in turn, so that staging takes two chunks' states rather
// than two whole parameters'.
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

/// The states and the parameter `op` (an update) names by symbol that are
/// homed a tier below where it runs: in storage for an update on the host,
/// on the host for one on the device (none for a parameter's read, which
/// its host copy stages). Sets `misplaced` to one in storage named by an
/// op on the device, which nothing stages.
SmallVector<Operation *> stagedTensors(Operation *op, SymbolTable &symbols,
                                      Operation *&misplaced) {
  SmallVector<Operation *> out;
  if (isa<ParamOp>(op))
    return out;
  bool onHost = hm::isHostHomed(op);
  for (NamedAttribute attr : op->getAttrs())
    if (auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue())) {
      Operation *tensor = symbols.lookup(ref.getValue());
      if (!tensor || !isa<StateOp, ParameterOp>(tensor))
        continue;
      if (hm::isStorageHomed(tensor) && !onHost)
        misplaced = tensor;
      else if (hm::homeTier(tensor) == (onHost ? 2 : 1) && optimizerUpdate(op).first)
        out.push_back(tensor);
    }
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
    SymbolTable symbols(module);
    // The updates that stage (chunk by chunk), per function, by the tier
    // of their staging buffers (0 the device's, 1 the host's), and the
    // bytes one of them needs there.
    std::array<Kind, 2> kinds;
    for (auto fn : module.getOps<func::FuncOp>())
      for (Operation &op : llvm::make_early_inc_range(fn.getBody().front())) {
        Operation *misplaced = nullptr;
        SmallVector<Operation *> staged = stagedTensors(&op, symbols, misplaced);
        if (misplaced) {
          op.emitError("plan-staging: an op on the device names @")
              << SymbolTable::getSymbolName(misplaced).getValue() << ", which is in storage";
          return signalPassFailure();
        }
        if (staged.empty())
          continue;
        Kind &kind = kinds[hm::isHostHomed(&op) ? 1 : 0];
        for (Operation *part : splitIntoChunks(&op, staged, chunk, symbols)) {
          int64_t bytes = 0;
          for (Operation *s : staged)
            bytes += footprint(part, s);
          kind.slot = std::max(kind.slot, bytes);
          kind.updates.push_back({part, staged});
        }
      }
    for (int tier = 0; tier < 2; ++tier) {
      Kind &kind = kinds[tier];
      if (kind.updates.empty())
        continue;
      hm::ArenaOp arena = hm::arenaOfTier(module, tier ? "host" : "device");
      if (!arena) {
        module.emitError() << "plan-staging: updates stage states in the "
                           << (tier ? "host" : "device") << " arena, and there is none";
        return signalPassFailure();
      }
      // Two staging buffers after everything else in the arena.
      int64_t base = tier ? hm::storageBlocks(arena.getBytes()) : arena.getBytes();
      arena.setSize(base + 2 * kind.slot);
      stage(kind, base);
    }
  }

  /// The updates that stage in one tier's buffers, with what they stage,
  /// and the bytes of one buffer.
  struct Kind {
    SmallVector<std::pair<Operation *, SmallVector<Operation *>>> updates;
    int64_t slot = 0;
  };

  /// The bytes `update` takes in its staging buffer for `tensor`.
  static int64_t footprint(Operation *update, Operation *tensor) {
    return planner::stagingFootprint(hm::stagedSlice(update, tensor).bytes,
                                     hm::isStorageHomed(tensor));
  }

  /// Stages the updates of `kind` in turn through its two buffers from
  /// `base` on.
  void stage(const Kind &kind, int64_t base) {
    OpBuilder b(&getContext());
    Operation *previous = nullptr; // the update before, in the same block
    for (auto [k, entry] : llvm::enumerate(kind.updates)) {
      auto &[update, tensors] = entry;
      int64_t at = base + int64_t(k % 2) * kind.slot;
      SmallVector<NamedAttribute> staged;
      // Read in after the previous update (its buffer is the other one),
      // written back right after this one.
      if (previous && previous->getBlock() == update->getBlock())
        b.setInsertionPointAfter(previous);
      else
        b.setInsertionPoint(update);
      auto stageOp = [&](StringRef direction, Operation *s, int64_t offset) {
        auto op = hm::StageOp::create(b, update->getLoc(), direction, SymbolTable::getSymbolName(s),
                                      uint64_t(offset), hm::storedType(s));
        if (auto chunkAttr = update->getAttr(hm::kChunkAttr))
          op->setAttr(hm::kChunkAttr, chunkAttr);
      };
      for (Operation *s : tensors) {
        stageOp("in", s, at);
        staged.push_back(b.getNamedAttr(SymbolTable::getSymbolName(s), b.getI64IntegerAttr(at)));
        at += footprint(update, s);
      }
      update->setAttr(hm::kStagedAttr, b.getDictionaryAttr(staged));
      b.setInsertionPointAfter(update);
      for (Operation *s : llvm::reverse(tensors)) {
        at -= footprint(update, s);
        stageOp("out", s, at);
      }
      previous = update;
    }
  }
};

} // namespace
