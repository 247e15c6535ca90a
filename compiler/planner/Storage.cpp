//===- Storage.cpp - optimizer states homed in storage --------------------===//
//
// plan-storage (see Passes.td). The host arena's size is known exactly
// before anything moves: the program is placed once as it is; moving a
// state to storage takes its bytes out of the host arena (persistent
// tensors are packed first, the transient ones after them keep their
// layout) and adds the staging buffers plan-staging will put at its end.
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/TGToHM/PlaceBuffers.h"
#include "compiler/planner/PassOptions.h"
#include "compiler/planner/Passes.h"
#include "hm/Analysis/Memory.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "llvm/ADT/StringSet.h"

namespace hmcc {
#define GEN_PASS_DEF_PLANSTORAGE
#include "compiler/planner/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;
using namespace hmcc::tg;

namespace {

/// The staging bytes the update of `states` (of a parameter of `n`
/// elements) needs: the largest sum of its states' slices over its chunks
/// (planner::chunkRanges; the whole states without), as plan-staging lays
/// them out.
int64_t stagingBytes(ArrayRef<StateOp> states, int64_t n, int64_t chunk) {
  auto bytesOf = [&](std::optional<std::pair<int64_t, int64_t>> part) {
    int64_t bytes = 0;
    for (StateOp s : states)
      bytes += hm::stateSlice(s, part).bytes;
    return bytes;
  };
  auto ranges = planner::chunkRanges(states, n, chunk);
  int64_t most = ranges.empty() ? bytesOf(std::nullopt) : 0;
  for (auto range : ranges)
    most = std::max(most, bytesOf(range));
  return most;
}

struct PlanStoragePass : hmcc::impl::PlanStorageBase<PlanStoragePass> {
  using PlanStorageBase::PlanStorageBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (force.empty() && (ram.empty() || nvme.empty()))
      return;
    // The parameters on the host with states, largest first.
    llvm::StringMap<SmallVector<StateOp>> states;
    for (auto s : module.getOps<StateOp>())
      states[s.getParam()].push_back(s);
    SmallVector<std::pair<int64_t, StringRef>> sized;
    for (auto p : module.getOps<ParameterOp>())
      if (hm::isHostHomed(p) && states.count(p.getSymName()))
        sized.push_back({tensorBytes(p.getType()), p.getSymName()});
    llvm::stable_sort(sized, [](auto &a, auto &b) { return a.first > b.first; });

    llvm::StringSet<> chosen;
    if (!force.empty()) {
      SmallVector<StringRef> parts;
      StringRef(force).split(parts, ',');
      for (StringRef part : parts) {
        part = part.trim();
        if (part != "all" && !llvm::is_contained(llvm::make_second_range(sized), part)) {
          module.emitError() << "plan-storage: force: '" << part
                             << "' is not a parameter on the host with optimizer states";
          return signalPassFailure();
        }
        chosen.insert(part);
      }
      if (chosen.contains("all"))
        for (auto &[bytes, name] : sized)
          chosen.insert(name);
    } else {
      auto parsed = planner::budgetOption(module, "plan-storage", "ram", ram);
      auto chunkBytes = planner::budgetOption(module, "plan-storage", "chunk-size", chunkSize);
      if (failed(parsed) || failed(chunkBytes))
        return signalPassFailure();
      const int64_t chunk = *chunkBytes ? planner::chunkElements(**chunkBytes) : 0;
      const int64_t budget = **parsed; // set: checked on entry
      std::optional<ScheduleMemory> placed = placedMemory(module);
      if (!placed)
        return signalPassFailure();
      // The host arena with the states moved so far (staging buffers after
      // the rest, page-aligned, once anything is moved).
      const int64_t unmoved = placed->hostArena;
      auto arenaWith = [&](int64_t host, int64_t slot) {
        return slot == 0 ? host : hm::storageBlocks(host) + 2 * slot;
      };
      int64_t host = unmoved, slot = 0;
      for (auto &[bytes, name] : sized) {
        if (host == 0 || arenaWith(host, slot) <= budget)
          break;
        for (StateOp s : states.lookup(name))
          host -= hm::arenaBytes(s.getType());
        auto param = module.lookupSymbol<ParameterOp>(name);
        int64_t n = cast<RankedTensorType>(param.getType()).getNumElements();
        slot = std::max(slot, stagingBytes(states.lookup(name), n, chunk));
        chosen.insert(name);
      }
      // Over the budget even so: moving is worth it only if the arena shrank
      // (small states can grow it: storage moves whole pages).
      if (arenaWith(host, slot) > budget && arenaWith(host, slot) >= unmoved)
        chosen.clear();
    }
    auto storage = StringAttr::get(module.getContext(), "storage");
    for (auto &[bytes, name] : sized)
      if (chosen.contains(name))
        for (StateOp s : states.lookup(name))
          s->setAttr(hm::kHomeAttr, storage);
  }
};

} // namespace
