//===- Liveness.cpp - what is live where in a scheduled program -----------===//
#include "hm/Analysis/Liveness.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace mlir;

namespace hmcc::hm {

SmallVector<PersistentTensor> persistentTensors(ModuleOp module) {
  SmallVector<PersistentTensor> tensors;
  auto offsetOf = [](Operation *op) {
    auto offset = op->getAttrOfType<IntegerAttr>(kOffsetAttr);
    return offset ? offset.getInt() : -1;
  };
  auto wholeOf = [](Operation *op) {
    auto whole = op->getAttrOfType<StringAttr>(kWholeAttr);
    return whole ? whole.getValue() : StringRef();
  };
  for (auto p : module.getOps<tg::ParameterOp>())
    tensors.push_back({"param", p.getSymName(), cast<RankedTensorType>(p.getType()), offsetOf(p),
                       homeTier(p), wholeOf(p)});
  for (auto s : module.getOps<tg::StateOp>())
    tensors.push_back({"state", s.getSymName(), cast<RankedTensorType>(s.getType()), offsetOf(s),
                       homeTier(s), wholeOf(s)});
  llvm::DenseSet<int64_t> inputOffsets;
  for (auto fn : module.getOps<func::FuncOp>())
    for (unsigned k = 0; k < fn.getNumArguments(); ++k) {
      auto offset = fn.getArgAttrOfType<IntegerAttr>(k, kOffsetAttr);
      if (!offset || !inputOffsets.insert(offset.getInt()).second)
        continue;
      auto name = fn.getArgAttrOfType<StringAttr>(k, "tg.input");
      tensors.push_back({"input", name ? name.getValue() : StringRef(),
                         cast<RankedTensorType>(fn.getArgument(k).getType()), offset.getInt()});
    }
  return tensors;
}

namespace {

/// Walks the body once; see replayFunction.
class Replay {
public:
  /// `hostArenas`: the symbols of the module's host-tier arenas.
  Replay(FunctionLiveness &live, llvm::DenseSet<StringRef> hostArenas)
      : live(live), hostArenas(std::move(hostArenas)) {}

  /// Handles one op of the body; false where the replay has to stop.
  bool visit(Operation &op) {
    if (auto place = dyn_cast<PlaceOp>(op))
      return placed(place, place.getValue());
    if (auto release = dyn_cast<ReleaseOp>(op)) {
      for (Value v : release.getValues())
        if (!released(release, v))
          return false;
      return true;
    }
    live.steps.push_back({&op});
    // A view in its operand's bytes, or a result written over its operand's
    // (in place), holds them from the op on: the operand may be released
    // before the result is placed.
    if (Value x = bytesTakenFrom(&op)) {
      auto it = live.lifetimes.find(x);
      if (it != live.lifetimes.end() && it->second.end == Lifetime::kNever) {
        views[op.getResult(0)] = it->second.owner;
        ++holders[it->second.owner];
      }
    }
    return true;
  }

private:
  FunctionLiveness &live;
  llvm::DenseSet<StringRef> hostArenas;
  /// Per value owning bytes, the values in them not released yet.
  DenseMap<Value, unsigned> holders;
  /// The result of each aliasing view, to the owner of its operand.
  DenseMap<Value, Value> views;

  unsigned current() const { return live.steps.size() - 1; }

  bool stop(Operation *op, Value v) {
    live.broken = op;
    live.brokenValue = v;
    return false;
  }

  bool placed(PlaceOp place, Value v) {
    if (live.steps.empty() || live.lifetimes.count(v))
      return stop(place, v);
    Value owner = views.lookup(v);
    if (!owner) {
      owner = v;
      ++holders[v];
      live.steps.back().born.push_back(v);
      if (hostArenas.contains(place.getArena()))
        live.inHost.insert(v);
    }
    live.lifetimes[v] = Lifetime{current(), Lifetime::kNever, owner};
    return true;
  }

  bool released(ReleaseOp release, Value v) {
    auto it = live.lifetimes.find(v);
    if (it == live.lifetimes.end() || it->second.end != Lifetime::kNever)
      return stop(release, v);
    it->second.end = current();
    if (--holders[it->second.owner] == 0)
      live.steps.back().freed.push_back(it->second.owner);
    return true;
  }
};

} // namespace

FunctionLiveness replayFunction(func::FuncOp fn) {
  FunctionLiveness live;
  // The host arenas, found once (not per placement: a symbol lookup walks
  // the module).
  llvm::DenseSet<StringRef> hostArenas;
  if (auto module = fn->getParentOfType<ModuleOp>())
    for (auto arena : module.getOps<ArenaOp>())
      if (arena.getTier() == "host")
        hostArenas.insert(arena.getSymName());
  Replay replay(live, std::move(hostArenas));
  for (Operation &op : fn.getBody().front())
    if (!replay.visit(op))
      break;
  int64_t bytes[2] = {0, 0}; // device, host: held once the previous step has run
  for (LiveStep &step : live.steps) {
    for (Value v : step.born)
      bytes[live.inHost.contains(v)] += arenaBytes(v.getType());
    step.liveBytes = bytes[0];
    step.hostLiveBytes = bytes[1];
    live.peakBytes = std::max(live.peakBytes, bytes[0]);
    live.hostPeakBytes = std::max(live.hostPeakBytes, bytes[1]);
    for (Value v : step.freed)
      bytes[live.inHost.contains(v)] -= arenaBytes(v.getType());
  }
  return live;
}

} // namespace hmcc::hm
