//===- Storage.cpp - optimizer states and parameters homed in storage -----===//
//
// plan-storage (see Passes.td). The host arena's size is known exactly
// before anything moves: the program is placed once as it is; moving a
// state to storage takes its bytes out of the host arena (persistent
// tensors are packed first, the transient ones after them keep their
// layout) and adds the staging buffers plan-staging will put at its end.
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/TGToHM/PlaceBuffers.h"
#include "compiler/planner/CostModel.h"
#include "compiler/planner/PassOptions.h"
#include "compiler/planner/Passes.h"
#include "hm/Analysis/Memory.h"
#include "hm/IR/HMOps.h"
#include "tg/Analysis/Cost.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/StringSet.h"

namespace hmcc {
#define GEN_PASS_DEF_PLANSTORAGE
#include "compiler/planner/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;
using namespace hmcc::tg;

namespace {

/// Homes the parameters `names` (on the host, with their states in storage
/// or none) in storage, in `fn`: the device copies of one read a host copy
/// read from storage (a tg.identity homed on the host, on the storage_read
/// stream), one read shared by consecutive device copies while the compute
/// between them (`clockAt`: computeClock of `fn` or of the function it is a
/// copy of) is no longer than reading it again (`profile`); each read goes
/// right after the first device copy of the read before it, so that the
/// storage link reads one ahead.
void homeInStorage(ModuleOp module, func::FuncOp fn, const llvm::StringSet<> &names,
                   const planner::DeviceProfile &profile, ArrayRef<double> clockAt) {
  auto storage = StringAttr::get(module.getContext(), "storage");
  auto host = StringAttr::get(module.getContext(), "host");
  for (auto p : module.getOps<ParameterOp>())
    if (names.contains(p.getSymName()))
      p->setAttr(hm::kHomeAttr, storage);
  DenseMap<Operation *, double> clock;
  for (auto [op, at] : llvm::zip(fn.getBody().front(), clockAt))
    clock[&op] = at;
  OpBuilder b(module.getContext());
  SmallVector<Operation *> reads;
  for (auto param : llvm::make_early_inc_range(fn.getOps<ParamOp>())) {
    if (!names.contains(param.getName()))
      continue;
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : param.getResult().getUses())
      uses.push_back(&use);
    llvm::sort(uses, [](OpOperand *x, OpOperand *y) {
      return x->getOwner()->isBeforeInBlock(y->getOwner());
    });
    double again = profile.storageLatency +
                   planner::transferSeconds(tensorBytes(param.getType()), profile.storageRead);
    Value read;
    Operation *last = nullptr;
    for (OpOperand *use : uses) {
      Operation *fetch = use->getOwner();
      if (!read || clock.lookup(fetch) - clock.lookup(last) > again) {
        b.setInsertionPoint(fetch);
        auto copy = IdentityOp::create(b, fetch->getLoc(), param.getType(), param.getResult());
        copy->setAttr(hm::kHomeAttr, host);
        read = copy.getResult();
        reads.push_back(copy);
      }
      use->set(read);
      last = fetch;
    }
  }
  // One ahead, never above the parameter's tg.param.
  llvm::sort(reads, [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  Operation *previous = nullptr; // the first device copy of the read before
  for (Operation *read : reads) {
    Operation *def = read->getOperand(0).getDefiningOp();
    if (previous && def->isBeforeInBlock(previous))
      read->moveAfter(previous);
    else if (previous)
      read->moveAfter(def);
    previous = *llvm::min_element(read->getUsers(), [](Operation *x, Operation *y) {
      return x->isBeforeInBlock(y);
    });
  }
}

/// The parameters plan-tiers homed on the host that can live in storage:
/// read only by their device copies in `fn` (not returned, not read on the
/// host). Largest first.
SmallVector<std::pair<int64_t, StringRef>> storableParameters(ModuleOp module, func::FuncOp fn) {
  llvm::StringSet<> readElsewhere;
  for (auto param : fn.getOps<ParamOp>())
    for (Operation *user : param.getResult().getUsers())
      if (!isa<IdentityOp>(user) || hm::isHostHomed(user))
        readElsewhere.insert(param.getName());
  SmallVector<std::pair<int64_t, StringRef>> out;
  for (auto p : module.getOps<ParameterOp>())
    if (hm::isHostHomed(p) && !readElsewhere.contains(p.getSymName()))
      out.push_back({tensorBytes(p.getType()), p.getSymName()});
  llvm::stable_sort(out, [](auto &a, auto &b) { return a.first > b.first; });
  return out;
}

struct PlanStoragePass : hmcc::impl::PlanStorageBase<PlanStoragePass> {
  using PlanStorageBase::PlanStorageBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (force.empty() && forceParams.empty() && (ram.empty() || nvme.empty()))
      return;
    func::FuncOp fn = planner::trainingFunction(module);
    // The parameters on the host with states, largest first.
    llvm::StringMap<SmallVector<Operation *>> states;
    for (auto s : module.getOps<StateOp>())
      states[s.getParam()].push_back(s);
    // Not those updated on the device (plan-tiers' device updates), which
    // stage from the host.
    llvm::StringSet<> onDevice;
    if (fn)
      for (Operation &op : fn.getBody().front())
        if (auto [ref, grad] = optimizerUpdate(&op); ref && !hm::isHostHomed(&op))
          onDevice.insert(ref.getValue());
    SmallVector<std::pair<int64_t, StringRef>> sized;
    for (auto p : module.getOps<ParameterOp>())
      if (hm::isHostHomed(p) && states.count(p.getSymName()) && !onDevice.contains(p.getSymName()))
        sized.push_back({tensorBytes(p.getType()), p.getSymName()});
    llvm::stable_sort(sized, [](auto &a, auto &b) { return a.first > b.first; });
    SmallVector<std::pair<int64_t, StringRef>> storable;
    if (fn)
      for (auto entry : storableParameters(module, fn))
        if (!onDevice.contains(entry.second))
          storable.push_back(entry);

    auto chunkBytes = planner::budgetOption(module, "plan-storage", "chunk-size", chunkSize);
    auto profile = planner::profileOption(module, "plan-storage", deviceProfile);
    if (failed(chunkBytes) || failed(profile))
      return signalPassFailure();
    const int64_t chunk = *chunkBytes ? planner::chunkElements(**chunkBytes) : 0;
    // The states of the parameters `chosen` to storage in `m` (the module
    // or a copy).
    auto storeStates = [&](ModuleOp m, const llvm::StringSet<> &chosen) {
      auto storage = StringAttr::get(m.getContext(), "storage");
      for (auto s : m.getOps<StateOp>())
        if (chosen.contains(s.getParam()))
          s->setAttr(hm::kHomeAttr, storage);
    };

    if (!force.empty() || !forceParams.empty()) {
      llvm::StringSet<> chosen, params;
      if (failed(parseForce(module, "force", force, sized,
                            "a parameter on the host with optimizer states", chosen)) ||
          failed(parseForce(module, "force-params", forceParams, storable,
                            "a parameter on the host read only by its device copies", params)))
        return signalPassFailure();
      storeStates(module, chosen);
      if (!params.empty())
        homeInStorage(module, fn, params, *profile, planner::computeClock(fn, *profile));
      return;
    }

    auto parsed = planner::budgetOption(module, "plan-storage", "ram", ram);
    if (failed(parsed))
      return signalPassFailure();
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
    llvm::StringSet<> chosen;
    int64_t host = unmoved, slot = 0;
    for (auto &[bytes, name] : sized) {
      if (host == 0 || arenaWith(host, slot) <= budget)
        break;
      for (Operation *s : states.lookup(name))
        host -= hm::arenaBytes(hm::storedType(s));
      auto param = module.lookupSymbol<ParameterOp>(name);
      int64_t n = cast<RankedTensorType>(param.getType()).getNumElements();
      slot = std::max(slot, planner::stagingBytes(states.lookup(name), n, chunk, /*fromStorage=*/true));
      chosen.insert(name);
    }
    int64_t best = arenaWith(host, slot);
    if (best > budget && fn && chosen.size() == sized.size() && !storable.empty()) {
      // Every state is in storage and the host arena is still over: the
      // parameters follow, largest first, as few as fit (each count placed
      // for real: the host copies their fetches read take transient host
      // bytes), else all of them if that is smaller.
      const std::vector<double> clock = planner::computeClock(fn, *profile);
      auto arenaWithParams = [&](size_t count) -> std::optional<int64_t> {
        OwningOpRef<ModuleOp> copy(module.clone());
        storeStates(*copy, chosen);
        llvm::StringSet<> names;
        int64_t slots = slot;
        for (auto &[bytes, name] : ArrayRef(storable).take_front(count)) {
          names.insert(name);
          SmallVector<Operation *> stored = states.lookup(name);
          auto param = module.lookupSymbol<ParameterOp>(name);
          stored.push_back(param);
          int64_t n = cast<RankedTensorType>(param.getType()).getNumElements();
          slots = std::max(slots, planner::stagingBytes(stored, n, chunk, /*fromStorage=*/true));
        }
        homeInStorage(*copy, copy->lookupSymbol<func::FuncOp>(fn.getSymName()), names, *profile,
                      clock);
        std::optional<ScheduleMemory> m = placedMemory(*copy);
        if (!m)
          return std::nullopt;
        return arenaWith(m->hostArena, slots);
      };
      std::optional<int64_t> all = arenaWithParams(storable.size());
      if (!all)
        return signalPassFailure();
      size_t count = 0;
      if (*all <= budget) {
        // The fewest that fit: a bisection (more parameters in storage,
        // fewer host bytes).
        size_t lo = 0, hi = storable.size();
        while (lo + 1 < hi) {
          size_t mid = lo + (hi - lo) / 2;
          std::optional<int64_t> with = arenaWithParams(mid);
          if (!with)
            return signalPassFailure();
          (*with <= budget ? hi : lo) = mid;
        }
        count = hi;
      } else if (*all < best) {
        count = storable.size();
      }
      if (count) {
        llvm::StringSet<> names;
        for (auto &[bytes, name] : ArrayRef(storable).take_front(count))
          names.insert(name);
        storeStates(module, chosen);
        homeInStorage(module, fn, names, *profile, clock);
        return;
      }
    }
    // Over the budget even so: moving is worth it only if the arena shrank
    // (small states can grow it: storage moves whole pages).
    if (best > budget && best >= unmoved)
      chosen.clear();
    storeStates(module, chosen);
  }

  /// Parses `text` (option `option`: "all" or names separated by commas,
  /// each one of `candidates`, which are `what`) into `chosen`.
  LogicalResult parseForce(ModuleOp module, StringRef option, StringRef text,
                           ArrayRef<std::pair<int64_t, StringRef>> candidates, StringRef what,
                           llvm::StringSet<> &chosen) {
    if (text.empty())
      return success();
    SmallVector<StringRef> parts;
    text.split(parts, ',');
    for (StringRef part : parts) {
      part = part.trim();
      if (part != "all" && !llvm::is_contained(llvm::make_second_range(candidates), part))
        return module.emitError() << "plan-storage: " << option << ": '" << part << "' is not "
                                  << what;
      chosen.insert(part);
    }
    if (chosen.contains("all"))
      for (auto &[bytes, name] : candidates)
        chosen.insert(name);
    return success();
  }
};

} // namespace
