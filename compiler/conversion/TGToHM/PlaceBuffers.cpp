//===- PlaceBuffers.cpp - tg entry functions to the scheduled program -----===//
//
// hm-place-buffers: static arena offsets for every tensor, written as hm ops
// (see the pass description in Passes.td). One tier, program order, no
// planning: the planner will decide tiers, recompute and prefetch on top of
// the same form.
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/TGToHM/PlaceBuffers.h"
#include "compiler/conversion/Passes.h"
#include "hm/Analysis/Liveness.h"
#include "hm/Analysis/Memory.h"
#include "hm/IR/HMOps.h"
#include "lib/support/Limits.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>

namespace hmcc {
#define GEN_PASS_DEF_HMPLACEBUFFERS
#define GEN_PASS_DEF_HMSETCONSTANTS
#include "compiler/conversion/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;
using namespace hmcc::tg;

namespace {

/// Constants are static arrays in the generated code, except splats of
/// more than this many elements (zero gradients, say), which are filled in
/// the arena instead.
constexpr int64_t kMaxStaticSplat = 4096;

/// Whether `v` needs arena memory of its own (a parameter read is the
/// parameter's memory; small constants are static data, unless
/// `constantsInArena`).
bool needsMemory(Value v, bool constantsInArena = false) {
  Operation *def = v.getDefiningOp();
  if (!def || isa<ParamOp>(def))
    return false;
  if (auto c = dyn_cast<ConstantOp>(def))
    return constantsInArena || (isa<SplatElementsAttr>(c.getValue()) &&
                                cast<RankedTensorType>(c.getType()).getNumElements() >
                                    kMaxStaticSplat);
  return true;
}

/// First fit over [base, ...) with a free list, or with `bestFit` the end
/// of the smallest fitting block (what is left of a block then stays
/// beside the bytes freed before it); each free block remembers the step at
/// which its bytes were last released, and the step until which a reader on
/// another stream may still read them (hm.soft_hold).
class Allocator {
public:
  Allocator(int64_t base, bool bestFit) : top(base), bestFit(bestFit) {}
  /// With `leastRecent`, the fitting block released longest ago instead of
  /// the first (for a copy on another stream: bytes just released may still
  /// be read by the op before it, which the copy would then wait for). The
  /// offset is a multiple of `align` (a power of two, a multiple of the
  /// arena's alignment); the bytes skipped to get there stay free. Blocks
  /// still busy at step `now` are taken only when no other fits.
  int64_t allocate(int64_t size, bool leastRecent = false, int64_t align = hm::kAlignment,
                   int64_t now = 0) {
    auto alignUp = [&](int64_t at) { return (at + align - 1) / align * align; };
    auto pick = free.end(), busy = free.end();
    for (auto it = free.begin(); it != free.end(); ++it) {
      if (alignUp(it->first) + size > it->first + it->second.size)
        continue;
      if (it->second.busyUntil > now) {
        if (busy == free.end())
          busy = it;
        continue;
      }
      if (pick == free.end() || (leastRecent && it->second.freedAt < pick->second.freedAt) ||
          (!leastRecent && bestFit && it->second.size < pick->second.size))
        pick = it;
      if (!leastRecent && !bestFit)
        break;
    }
    if (pick == free.end())
      pick = busy;
    if (pick != free.end()) {
      int64_t start = pick->first, offset = alignUp(start);
      if (bestFit && !leastRecent)
        offset = std::max(offset, (start + pick->second.size - size) / align * align);
      int64_t rest = start + pick->second.size - (offset + size);
      Block left = pick->second;
      free.erase(pick);
      if (offset > start)
        free[start] = {offset - start, left.freedAt, left.busyUntil};
      if (rest)
        free[offset + size] = {rest, left.freedAt, left.busyUntil};
      return offset;
    }
    // Out of free blocks that fit: grow from the last free block when it
    // ends at the top, else from the top.
    int64_t start = top;
    Block last{0, 0, 0};
    if (!free.empty() && free.rbegin()->first + free.rbegin()->second.size == top) {
      start = free.rbegin()->first;
      last = free.rbegin()->second;
      free.erase(std::prev(free.end()));
    }
    int64_t offset = alignUp(start);
    if (offset > start)
      free[start] = {offset - start, last.freedAt, last.busyUntil};
    top = offset + size;
    return offset;
  }
  void release(int64_t offset, int64_t size, int64_t when = 0, int64_t busyUntil = 0) {
    auto it = free.emplace(offset, Block{size, when, busyUntil}).first;
    auto merge = [](Block &into, const Block &other) {
      into.size += other.size;
      into.freedAt = std::max(into.freedAt, other.freedAt);
      into.busyUntil = std::max(into.busyUntil, other.busyUntil);
    };
    auto next = std::next(it);
    if (next != free.end() && it->first + it->second.size == next->first) {
      merge(it->second, next->second);
      free.erase(next);
    }
    if (it != free.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second.size == it->first) {
        merge(prev->second, it->second);
        free.erase(it);
      }
    }
  }
  int64_t top;

private:
  struct Block {
    int64_t size, freedAt, busyUntil;
  };
  bool bestFit;
  std::map<int64_t, Block> free;
};

/// The placement of one module (what the pass does).
class Placer {
public:
  explicit Placer(StringRef testFault) : testFault(testFault) {}

  LogicalResult run(ModuleOp module, ArrayRef<std::string> functions) {
    if (!llvm::is_contained({"", "overlap", "early-release", "no-release"}, testFault))
      return module.emitError() << "hm-place-buffers: unknown test-fault '" << testFault << "'";
    auto constants = module->getAttrOfType<StringAttr>(hm::kConstantsAttr);
    inArena = constants && constants.getValue() == "arena";
    if (!module.getOps<hm::ArenaOp>().empty())
      return module.emitError("hm-place-buffers: the module is placed already");
    SmallVector<func::FuncOp> entries;
    for (auto fn : module.getOps<func::FuncOp>())
      if (functions.empty() || llvm::is_contained(functions, fn.getSymName().str()))
        entries.push_back(fn);
    for (const std::string &name : functions)
      if (!module.lookupSymbol<func::FuncOp>(name))
        return module.emitError() << "hm-place-buffers: no function @" << name;

    // Every offset below is at most the sum of all the sizes placed; when
    // that sum fits kMaxArenaBytes, no offset arithmetic can overflow.
    int64_t total = 0;
    bool fits = true;
    auto count = [&](Type type) {
      if (auto t = dyn_cast<RankedTensorType>(type)) {
        auto sum = checkedAdd(total, hm::arenaBytes(t));
        fits = fits && sum && *sum <= kMaxArenaBytes;
        total = fits ? *sum : total;
      }
    };
    for (auto p : module.getOps<ParameterOp>())
      count(p.getType());
    for (auto st : module.getOps<StateOp>())
      count(st.getType());
    for (func::FuncOp fn : entries) {
      for (Type t : fn.getArgumentTypes())
        count(t);
      fn.walk([&](Operation *op) {
        for (Type t : op->getResultTypes())
          count(t);
      });
    }
    if (!fits)
      return module.emitError() << "hm-place-buffers: the program's tensors add up to more than "
                                   "2^60 bytes, beyond what any memory can hold";

    OpBuilder b(module.getContext());
    b.setInsertionPointToStart(module.getBody());
    auto arena = hm::ArenaOp::create(b, module.getLoc(), "arena", "device", 0);
    // The host arena, when plan-tiers homed anything there.
    bool anyHost = false;
    module.walk([&](Operation *op) { anyHost |= hm::isHostHomed(op); });
    hm::ArenaOp host;
    if (anyHost)
      host = hm::ArenaOp::create(b, module.getLoc(), "host", "host", 0);
    // The storage arena, when plan-tiers homed optimizer states there.
    bool anyStored = false;
    module.walk([&](Operation *op) { anyStored |= hm::isStorageHomed(op); });
    hm::ArenaOp storage;
    if (anyStored)
      storage = hm::ArenaOp::create(b, module.getLoc(), "storage", "storage", 0);
    Arenas refs{FlatSymbolRefAttr::get(arena.getSymNameAttr()),
                host ? FlatSymbolRefAttr::get(host.getSymNameAttr()) : FlatSymbolRefAttr()};

    // Persistent tensors: parameters, states, then inputs by ONNX name,
    // each in the arena of its home (in storage, in whole blocks).
    int64_t tops[2] = {0, 0}; // device, host
    int64_t stored = 0;
    int64_t &top = tops[0];
    auto place = [&](Operation *op, Type type) {
      bool inStorage = hm::isStorageHomed(op);
      int64_t &t = inStorage ? stored : tops[hm::isHostHomed(op)];
      op->setAttr(hm::kOffsetAttr, b.getI64IntegerAttr(t));
      t += inStorage ? hm::storageBlocks(hm::arenaBytes(type)) : hm::arenaBytes(type);
    };
    for (auto p : module.getOps<ParameterOp>())
      place(p, p.getType());
    for (auto s : module.getOps<StateOp>())
      place(s, s.getType());
    llvm::StringMap<std::pair<int64_t, Type>> inputs; // offset and type by ONNX name
    for (func::FuncOp fn : entries)
      for (unsigned k = 0; k < fn.getNumArguments(); ++k) {
        auto name = fn.getArgAttrOfType<StringAttr>(k, "tg.input");
        if (!name)
          continue; // step and lr are passed by value
        Type type = fn.getArgument(k).getType();
        auto [it, inserted] = inputs.try_emplace(name.getValue(), top, type);
        if (inserted) {
          top += hm::arenaBytes(fn.getArgument(k).getType());
        } else if (it->second.second != type) {
          return fn.emitError() << "hm-place-buffers: input '" << name.getValue() << "' is " << type
                                << " here and " << it->second.second << " elsewhere";
        }
        fn.setArgAttr(k, hm::kOffsetAttr, b.getI64IntegerAttr(it->second.first));
      }

    int64_t ends[2] = {tops[0], tops[1]};
    for (func::FuncOp fn : entries) {
      scheduleLifetimes(fn, refs);
      auto [device, hostEnd] = packFunction(fn, tops);
      ends[0] = std::max(ends[0], device);
      ends[1] = std::max(ends[1], hostEnd);
    }
    arena.setSize(ends[0]);
    if (host)
      host.setSize(ends[1]);
    if (storage)
      storage.setSize(stored);
    return success();
  }

private:
  StringRef testFault;
  bool inArena = false; ///< hm.constants = "arena"

  /// The device arena and the host arena (null without one).
  struct Arenas {
    FlatSymbolRefAttr device, host;
  };

  /// The operand of `op` whose bytes its result may take: the one its
  /// kernel may overwrite (hm::inPlaceOperand), when `op` reads it for the
  /// last time (it is among `dying`) and the result needs memory.
  Value operandToOverwrite(Operation &op, ArrayRef<Value> dying) {
    std::optional<unsigned> k = hm::inPlaceOperand(&op);
    if (!k || !needsMemory(op.getResult(0), inArena) ||
        !llvm::is_contained(dying, op.getOperand(*k)))
      return {};
    return op.getOperand(*k);
  }

  /// Writes when each value of `fn` is in memory: an hm.place right after
  /// the op that defines it (in the host arena when the op is homed there),
  /// an hm.release right after its last reader. The offsets are
  /// provisional (packFunction sets them), except that a view of a value
  /// read for the last time, or a result written in place of one, is
  /// placed in that value's bytes.
  void scheduleLifetimes(func::FuncOp fn, Arenas arenas) {
    Block &body = fn.getBody().front();
    OpBuilder b(fn.getContext());
    // Results without memory of their own get a placed copy, made before
    // any write-back (tg.assign) so that it sees the value of this step.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    auto assigns = body.getOps<AssignOp>();
    b.setInsertionPoint(assigns.empty() ? ret.getOperation() : (*assigns.begin()).getOperation());
    for (OpOperand &operand : ret->getOpOperands())
      if (!needsMemory(operand.get(), inArena))
        operand.set(IdentityOp::create(b, ret.getLoc(), operand.get().getType(), operand.get()));

    // The last reader of each value (a reader with hm.hold holds it that
    // many ops longer); results live to the end.
    DenseMap<Operation *, unsigned> index;
    SmallVector<Operation *> ops;
    for (Operation &op : body) {
      index[&op] = ops.size();
      ops.push_back(&op);
    }
    auto until = [&](Operation *user) {
      auto hold = user->getAttrOfType<IntegerAttr>(hm::kHoldAttr);
      int64_t end = int64_t(index[user]) + (hold ? hold.getInt() : 0);
      return ops[std::min<int64_t>(end, int64_t(ops.size()) - 1)];
    };
    DenseMap<Operation *, SmallVector<Value>> dying;
    for (Operation &op : body)
      for (Value r : op.getResults()) {
        if (!needsMemory(r, inArena))
          continue;
        Operation *last = &op; // an unread result dies at once
        for (Operation *user : r.getUsers())
          if (Operation *end = until(user); index[end] > index[last])
            last = end;
        if (!isa<func::ReturnOp>(last))
          dying[last].push_back(r);
      }

    // Provisional offsets, distinct but for a view in its operand's bytes
    // (the replay tells such views by their equal offsets).
    int64_t next = 0;
    DenseMap<Value, int64_t> offsets;
    DenseMap<Value, FlatSymbolRefAttr> arenaOf;
    for (Operation &op : llvm::make_early_inc_range(body)) {
      b.setInsertionPointAfter(&op);
      auto it = dying.find(&op);
      FlatSymbolRefAttr arena = hm::isHostHomed(&op) ? arenas.host : arenas.device;
      // A view (reshape and its kin) of a value read for the last time takes
      // over its memory, in the same arena: release the operand, place the
      // result there. The copy it stands for becomes a no-op.
      if (isView(&op) && it != dying.end() && it->second.size() == 1 &&
          it->second[0] == op.getOperand(0) && arenaOf.lookup(op.getOperand(0)) == arena) {
        Value x = op.getOperand(0), r = op.getResult(0);
        hm::ReleaseOp::create(b, op.getLoc(), ValueRange{x});
        arenaOf[r] = arena;
        offsets[r] = offsets[x];
        hm::PlaceOp::create(b, op.getLoc(), r, arena, b.getI64IntegerAttr(offsets[x]));
        continue;
      }
      // So does the result of an op whose kernel may write it over an
      // operand read for the last time here (hm::inPlaceOperand); the
      // op's other dying values are released after it.
      if (Value x = operandToOverwrite(op, it == dying.end() ? ArrayRef<Value>() : it->second);
          x && arenaOf.lookup(x) == arena) {
        Value r = op.getResult(0);
        hm::ReleaseOp::create(b, op.getLoc(), ValueRange{x});
        arenaOf[r] = arena;
        offsets[r] = offsets[x];
        hm::PlaceOp::create(b, op.getLoc(), r, arena, b.getI64IntegerAttr(offsets[x]));
        SmallVector<Value> others(
            llvm::make_filter_range(it->second, [&](Value v) { return v != x; }));
        if (!others.empty())
          hm::ReleaseOp::create(b, op.getLoc(), others);
        continue;
      }
      for (Value r : op.getResults()) {
        if (!needsMemory(r, inArena))
          continue;
        arenaOf[r] = arena;
        offsets[r] = next;
        next += hm::arenaBytes(r.getType());
        hm::PlaceOp::create(b, op.getLoc(), r, arena, b.getI64IntegerAttr(offsets[r]));
      }
      if (it != dying.end())
        hm::ReleaseOp::create(b, op.getLoc(), it->second);
    }
  }

  /// The offsets of the values of `fn` with bytes of their own, and the
  /// high-water mark of each arena.
  struct Packing {
    DenseMap<Value, int64_t> offsets;
    std::pair<int64_t, int64_t> tops; // device, host
  };

  /// Gives the values of `fn` their offsets in program order as the replay
  /// (hm::replayFunction) has them live: the results of an op get memory
  /// first, so they never share it with the op's operands; the bytes of
  /// values freed after the op are free for the next. Each arena has its
  /// allocator, starting at bases[0] (device) and bases[1] (host). First fit
  /// and best fit each leave holes the other may not (a first fit of the
  /// GPT-2 fixture with bf16 storage is 8% over its peak of live bytes); the
  /// packing with the smaller device arena (then host arena) is kept, first
  /// fit on a tie.
  /// Returns the high-water marks.
  std::pair<int64_t, int64_t> packFunction(func::FuncOp fn, const int64_t bases[2]) {
    hm::FunctionLiveness liveness = hm::replayFunction(fn);
    assert(!liveness.broken && "hm-place-buffers wrote a broken schedule");
    Packing packing = pack(liveness, bases, /*bestFit=*/false);
    Packing other = pack(liveness, bases, /*bestFit=*/true);
    if (other.tops < packing.tops)
      packing = std::move(other);
    DenseMap<Value, int64_t> &offsets = packing.offsets;
    if (testFault == "overlap")
      // Test fault: the first value computed from a placed operand goes in
      // that operand's bytes, which are live while it is written.
      for (const hm::LiveStep &step : liveness.steps) {
        OperandRange operands = step.op->getOperands();
        auto placed = llvm::find_if(operands, [&](Value x) { return liveness.lifetimes.count(x); });
        if (step.born.empty() || placed == operands.end())
          continue;
        offsets[step.born.front()] = offsets[liveness.lifetimes.lookup(*placed).owner];
        break;
      }

    OpBuilder b(fn.getContext());
    for (auto place : fn.getOps<hm::PlaceOp>()) {
      Value owner = liveness.lifetimes.lookup(place.getValue()).owner;
      place.setOffsetAttr(b.getI64IntegerAttr(offsets[owner]));
    }
    if (testFault == "no-release")
      // Test fault: the memory is reused but the program never says that
      // its values are dead.
      for (auto release : llvm::make_early_inc_range(fn.getOps<hm::ReleaseOp>()))
        release.erase();
    return packing.tops;
  }

  /// One packing of `liveness`, first fit or best fit.
  Packing pack(const hm::FunctionLiveness &liveness, const int64_t bases[2], bool bestFit) {
    Allocator allocs[2] = {Allocator(bases[0], bestFit), Allocator(bases[1], bestFit)};
    auto allocOf = [&](Value v) -> Allocator & { return allocs[liveness.inHost.contains(v)]; };
    Packing packing;
    DenseMap<Value, int64_t> &offsets = packing.offsets;
    int64_t now = 0; // the step being placed (from 1)
    // A reader with hm.soft_hold may read for that many steps after its own.
    DenseMap<Operation *, int64_t> stepOf;
    for (auto [i, step] : llvm::enumerate(liveness.steps))
      stepOf[step.op] = int64_t(i) + 1;
    auto busyUntil = [&](Value v) {
      int64_t until = 0;
      for (Operation *user : v.getUsers())
        if (auto soft = user->getAttrOfType<IntegerAttr>(hm::kSoftHoldAttr))
          until = std::max(until, stepOf.lookup(user) + soft.getInt());
      return until;
    };
    auto releaseFreed = [&](const hm::LiveStep &step) {
      for (Value v : step.freed)
        allocOf(v).release(offsets[v], hm::arenaBytes(v.getType()), now, busyUntil(v));
    };
    bool earlyRelease = testFault == "early-release";
    for (const hm::LiveStep &step : liveness.steps) {
      ++now;
      if (earlyRelease) // test fault: an op's results may reuse its operands
        releaseFreed(step);
      // A copy to the device runs on its own stream: give it the bytes
      // released longest ago, not those the compute op before it may still
      // be reading.
      // A parameter read from storage lands on a whole block, so that
      // the runtime can read it with O_DIRECT; like a copy to the device,
      // it runs on its own stream.
      StringRef stream = streamOf(*step.op);
      bool copy = stream == "host_to_device" || stream == "storage_read";
      int64_t align = stream == "storage_read" ? hm::kStorageAlignment : hm::kAlignment;
      for (Value v : step.born)
        offsets[v] = allocOf(v).allocate(hm::arenaBytes(v.getType()), copy, align, now);
      if (!earlyRelease)
        releaseFreed(step);
    }
    packing.tops = {allocs[0].top, allocs[1].top};
    return packing;
  }
};

struct PlaceBuffersPass : hmcc::impl::HMPlaceBuffersBase<PlaceBuffersPass> {
  using HMPlaceBuffersBase::HMPlaceBuffersBase;

  void runOnOperation() override {
    if (failed(Placer(testFault).run(getOperation(), functions)))
      signalPassFailure();
  }
};

struct SetConstantsPass : hmcc::impl::HMSetConstantsBase<SetConstantsPass> {
  using HMSetConstantsBase::HMSetConstantsBase;

  void runOnOperation() override {
    if (placement != "static" && placement != "arena") {
      getOperation().emitError() << "hm-set-constants: placement must be static or arena, not '"
                                 << placement << "'";
      return signalPassFailure();
    }
    getOperation()->setAttr(hm::kConstantsAttr, StringAttr::get(&getContext(), placement));
  }
};

} // namespace

LogicalResult hmcc::placeBuffers(ModuleOp module, ArrayRef<std::string> functions) {
  return Placer("").run(module, functions);
}

std::optional<ScheduleMemory> hmcc::placedMemory(ModuleOp module) {
  OwningOpRef<ModuleOp> copy(module.clone());
  if (failed(placeBuffers(*copy, {})))
    return std::nullopt;
  return scheduleMemory(*copy);
}
