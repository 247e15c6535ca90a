//===- Overlap.cpp - an order in which transfers and updates overlap ------===//
//
// plan-overlap (see Passes.td) moves two kinds of ops earlier:
//  - each optimizer update to just after the last op it depends on (its
//    gradient, and the last reader of its parameter), so that an update
//    running on the host overlaps the rest of the backward;
//  - each copy to the device (a fetch of a host parameter, the return of an
//    offloaded cut), put just before its reader, back by its prefetch
//    distance: the cost model's time for the copy and for the copies queued
//    after it on the same link, in compute it passes.
// First, a host parameter's fetches close together share one copy.
// The bytes a moved copy holds longer must fit the budget.
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/TGToHM/PlaceBuffers.h"
#include "compiler/planner/CostModel.h"
#include "compiler/planner/Timeline.h"
#include "compiler/planner/PassOptions.h"
#include "compiler/planner/Passes.h"
#include "hm/Analysis/Liveness.h"
#include "hm/Analysis/Memory.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace hmcc {
#define GEN_PASS_DEF_PLANOVERLAP
#include "compiler/planner/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;
using namespace hmcc::planner;

namespace {

/// Where each fetch of a function goes: the index of the op it is moved
/// before (its own index: it stays).
struct Moves {
  SmallVector<Operation *> fetches;
  SmallVector<unsigned> to;
  /// The copy time the compute between each fetch's place and its reader
  /// does not cover, summed: what compute would wait for them.
  double exposed = 0;
};

/// Whether `op` is a fetch: a copy to the device (of a host parameter, of
/// an offloaded cut).
bool isFetch(Operation *op) {
  return isa<tg::IdentityOp>(op) && streamOf(*op) == "host_to_device";
}

/// Where each fetch among `ops` (a block in order, `index` their positions)
/// could go (those of at most `maxBytes`; larger ones stay, or with a
/// `largeScale` move by their distances times that). The fetches
/// share one link and run on it one after another in
/// program order, so each must end before its reader starts and before the
/// next fetch has to start: from the last fetch back, each gets the latest
/// start that meets both (its copy time scaled by `scale`), on the clock of
/// the compute before each op (`clock`, computeClock's), and goes before the
/// last op compute reaches by then, never above what defines its operand.
Moves planMoves(const DeviceProfile &profile, double scale, int64_t maxBytes, double largeScale,
                ArrayRef<Operation *> ops, const DenseMap<Operation *, unsigned> &index,
                ArrayRef<double> clock) {
  Moves m;
  for (unsigned k = 0; k < ops.size(); ++k)
    if (isFetch(ops[k])) {
      m.fetches.push_back(ops[k]);
      m.to.push_back(k);
    }
  // The reader of fetch k is the first op after it that is not a fetch.
  double next = INFINITY; // when the next fetch must start on the link
  for (unsigned i = m.fetches.size(); i-- > 0;) {
    unsigned k = m.to[i];
    unsigned reader = k;
    while (reader < ops.size() && isFetch(ops[reader]))
      ++reader;
    int64_t bytes = tg::tensorBytes(m.fetches[i]->getResult(0).getType());
    double copy = transferSeconds(bytes, profile.hostToDevice);
    bool large = bytes > maxBytes;
    double start = std::min(clock[reader], next) - (large ? largeScale : scale) * copy;
    next = start;
    if (large && largeScale == 0) {
      m.exposed += copy;
      continue; // stays where it is
    }
    unsigned floor = 0;
    if (Operation *def = m.fetches[i]->getOperand(0).getDefiningOp())
      floor = index.lookup(def) + 1;
    unsigned to = k; // the last op that compute starts by `start`
    while (to > floor && clock[to] > start)
      --to;
    // Not before another fetch that moves itself (they take no compute).
    while (to < k && isFetch(ops[to]))
      ++to;
    m.to[i] = to;
    m.exposed += std::max(0.0, copy - (clock[reader] - clock[to]));
  }
  return m;
}

/// Moves the fetches of a block (`ops`, in order) as `m` says.
void applyMoves(ArrayRef<Operation *> ops, const Moves &m) {
  for (unsigned i = 0; i < m.fetches.size(); ++i)
    m.fetches[i]->moveBefore(ops[m.to[i]]);
}

/// Whether and how the ops of other streams than compute hold what they
/// read: hm.hold, hm.soft_hold (a preference of the placement) or not.
enum class Holds { None, Hard, Soft };

/// Whether `op` reads temporaries of the host arena (made by ops homed
/// there: a gradient's host copy, a parameter rounded on the host) and no
/// other temporary, so that holding them costs no device memory.
bool readsHostOnly(Operation *op) {
  bool host = false;
  for (Value v : op->getOperands()) {
    Operation *def = v.getDefiningOp();
    if (!def || isa<tg::ParamOp, tg::ConstantOp>(def))
      continue; // persistent: nothing to hold
    if (!hm::isHostHomed(def))
      return false;
    host = true;
  }
  return host;
}

/// Gives each op of `fn` on another stream than compute an hm.hold (or,
/// `soft`, an hm.soft_hold; with `none`, only those that read the host
/// arena alone, an hm.hold): the ops after it whose predicted compute
/// covers the time until it ends (scaled by `scale`), so that what it reads
/// is not reused before then. It ends after its own predicted time, from
/// when compute issues it or, if later, when the op before it on its
/// stream ends (copies queue on their link, the host's updates on its
/// threads: without a hold, a gradient's next copy to the host would wait
/// for the update reading the host bytes it is placed in).
void setHolds(func::FuncOp fn, const DeviceProfile &profile, double scale, Holds holds) {
  SymbolLookupScope symbols;
  SmallVector<Operation *> ops;
  for (Operation &op : fn.getBody().front())
    ops.push_back(&op);
  // The predicted compute time before each op, and each stream's end.
  const std::vector<double> clock = computeClock(fn, profile);
  llvm::StringMap<double> streamEnd;
  DenseMap<Operation *, double> endOf; // of the ops on other streams
  Builder b(fn.getContext());
  for (unsigned k = 0; k < ops.size(); ++k) {
    if (!runsInProgram(*ops[k]))
      continue;
    auto [stream, seconds] = streamSeconds(*ops[k], profile);
    if (stream == "compute")
      continue;
    // It starts once its stream is free, compute has issued it, and what
    // it reads from other streams is there (a host update waits for its
    // gradient's copy).
    double &end = streamEnd[stream];
    end = std::max(end, clock[k]);
    for (Value v : ops[k]->getOperands())
      if (Operation *def = v.getDefiningOp())
        end = std::max(end, endOf.lookup(def));
    end += seconds;
    endOf[ops[k]] = end;
    bool hostOnly = readsHostOnly(ops[k]);
    if (ops[k]->getNumOperands() == 0 || (holds == Holds::None && !hostOnly))
      continue;
    double until = clock[k] + scale * (end - clock[k]);
    unsigned j = k + 1;
    while (j + 1 < ops.size() && clock[j] < until)
      ++j;
    if (j > k + 1)
      ops[k]->setAttr(holds == Holds::Soft && !hostOnly ? hm::kSoftHoldAttr : hm::kHoldAttr,
                      b.getI64IntegerAttr(j - k - 1));
  }
}

/// The moves of the fetches of `fn` (those of at most `maxBytes`; larger
/// ones by `largeScale`) by their distances times `scale`; with `apply`,
/// made, and the ops of other streams given their holds as `holds` says.
Moves moveFetches(func::FuncOp fn, const DeviceProfile &profile, double scale, Holds holds,
                  int64_t maxBytes = INT64_MAX, bool apply = true, double largeScale = 0) {
  SmallVector<Operation *> ops;
  DenseMap<Operation *, unsigned> index;
  for (Operation &op : fn.getBody().front()) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  Moves m = planMoves(profile, scale, maxBytes, largeScale, ops, index, computeClock(fn, profile));
  if (!apply)
    return m;
  applyMoves(ops, m);
  setHolds(fn, profile, std::min(scale, 1.0), holds);
  return m;
}

/// Shares the device copies of host parameters in `fn`: a fetch of a
/// parameter whose first reader starts no later, in predicted compute,
/// than its copy time after the last reader of the parameter's copy before
/// it is dropped, its readers reading that copy instead (the parameter
/// changes only in its update, after every reader). So the LM head fetched
/// for the logits is not fetched again for its backward right after the
/// loss. Returns how many were dropped.
unsigned shareFetches(func::FuncOp fn, const DeviceProfile &profile) {
  DenseMap<Operation *, double> clock;
  for (auto [op, at] : llvm::zip(fn.getBody().front(), computeClock(fn, profile)))
    clock[&op] = at;
  struct Last {
    Value copy;
    double lastRead;
  };
  DenseMap<Value, Last> last; // by the parameter's tg.param
  unsigned shared = 0;
  for (Operation &op : llvm::make_early_inc_range(fn.getBody().front())) {
    // A parameter's fetch, or one of its bf16 copy (rounded on the host).
    if (!isFetch(&op))
      continue;
    Operation *from = op.getOperand(0).getDefiningOp();
    if (!isa_and_nonnull<tg::ParamOp>(from) && !hm::isHostRounding(from))
      continue;
    Value src = op.getOperand(0), copy = op.getResult(0);
    double firstRead = INFINITY, lastRead = 0;
    for (Operation *user : copy.getUsers()) {
      firstRead = std::min(firstRead, clock.lookup(user));
      lastRead = std::max(lastRead, clock.lookup(user));
    }
    auto it = last.find(src);
    double again = transferSeconds(tg::tensorBytes(copy.getType()), profile.hostToDevice);
    if (it != last.end() && firstRead - it->second.lastRead <= again) {
      copy.replaceAllUsesWith(it->second.copy);
      it->second.lastRead = std::max(it->second.lastRead, lastRead);
      op.erase();
      ++shared;
      continue;
    }
    last[src] = {copy, lastRead};
  }
  return shared;
}

/// Whether `fn` of `module`, after `change`, still fits `budget` (always,
/// without one): tried and placed on a copy.
bool fitsWith(ModuleOp module, func::FuncOp fn, std::optional<int64_t> budget,
              function_ref<void(func::FuncOp)> change) {
  if (!budget)
    return true;
  OwningOpRef<ModuleOp> copy(module.clone());
  change(copy->lookupSymbol<func::FuncOp>(fn.getSymName()));
  if (failed(placeBuffers(*copy, {fn.getSymName().str()})))
    return false;
  return scheduleMemory(*copy).arena <= *budget;
}

struct PlanOverlapPass : hmcc::impl::PlanOverlapBase<PlanOverlapPass> {
  using PlanOverlapBase::PlanOverlapBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (force == "none")
      return;
    if (!force.empty() && force != "max" && force != "fetches") {
      module.emitError() << "plan-overlap: force must be none, max or fetches, not '" << force
                         << "'";
      return signalPassFailure();
    }
    auto profile = profileOption(module, "plan-overlap", deviceProfile);
    auto budget = budgetOption(module, "plan-overlap", "vram", vram);
    if (failed(profile) || failed(budget))
      return signalPassFailure();
    std::optional<int64_t> room = *budget; // beside device updates' staging buffers
    if (room)
      *room -= deviceStaging(module);
    for (auto fn : llvm::to_vector(module.getOps<func::FuncOp>()))
      planFunction(module, fn, *profile, room);
  }

  /// Moves the updates of `fn` up, then its fetches by their distance,
  /// halved until the program still fits the budget (at worst they stay).
  void planFunction(ModuleOp module, func::FuncOp fn, const DeviceProfile &profile,
                    std::optional<int64_t> budget) {
    // Device copies shared where reading the parameter again would take
    // longer than the compute between them, when that fits.
    auto share = [&](func::FuncOp f) { shareFetches(f, profile); };
    if (shareFetchesOption && fitsWith(module, fn, budget, share))
      share(fn);
    // Updates on the host up as far as they can go, so that they overlap
    // compute sooner.
    auto moveUp = [](func::FuncOp f) {
      moveUpdates(f, [](Operation *op) { return streamOf(*op) == "host_optimizer"; });
    };
    if (force != "fetches" && fitsWith(module, fn, budget, moveUp))
      moveUp(fn);
    // With "max", as far as their operands allow. The holds first with the
    // full distances; then without, the distances halved until it fits.
    auto tryScale = [&](double scale, Holds holds) {
      auto change = [&](func::FuncOp f) { moveFetches(f, profile, scale, holds); };
      if (!fitsWith(module, fn, budget, change))
        return false;
      change(fn);
      return true;
    };
    double scale = force == "max" ? 1e30 : 1.0;
    if (tryScale(scale, Holds::Hard))
      return;
    // Not all at their distance: the candidates that fit are all of them
    // at shorter distances (the longest that fits), and the fetches up to
    // a size at the full, half and quarter distance (a bisection on the
    // size, so that a few large fetches do not keep every other one late),
    // the larger ones then at the longest shorter distance that fits; the
    // one whose copies compute would wait for least wins.
    struct Candidate {
      double scale;
      int64_t maxBytes;
      double exposed;
      double largeScale = 0;
    };
    std::optional<Candidate> best;
    auto consider = [&](double s, int64_t maxBytes, double large = 0) {
      double exposed =
          moveFetches(fn, profile, s, Holds::None, maxBytes, /*apply=*/false, large).exposed;
      if (!best || exposed < best->exposed)
        best = Candidate{s, maxBytes, exposed, large};
    };
    auto fits = [&](double s, int64_t maxBytes, double large = 0) {
      return fitsWith(module, fn, budget, [&](func::FuncOp f) {
        moveFetches(f, profile, s, Holds::None, maxBytes, /*apply=*/true, large);
      });
    };
    for (double s = scale; s >= scale / 32; s /= 2)
      if (fits(s, INT64_MAX)) {
        consider(s, INT64_MAX);
        break;
      }
    SmallVector<int64_t> sizes;
    for (Operation &op : fn.getBody().front())
      if (isFetch(&op))
        sizes.push_back(tg::tensorBytes(op.getResult(0).getType()));
    llvm::sort(sizes);
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    for (double s = 1.0; !sizes.empty() && s >= 1.0 / 4; s /= 2) {
      if (!fits(s, sizes[0]))
        continue;
      size_t lo = 0, hi = sizes.size(); // sizes[lo] fits; from hi on, not known to
      while (lo + 1 < hi) {
        size_t mid = lo + (hi - lo) / 2;
        (fits(s, sizes[mid]) ? lo : hi) = mid;
      }
      consider(s, sizes[lo]);
    }
    if (!best) { // every fetch stays; what reads only the host arena still holds it
      setHolds(fn, profile, 1.0, Holds::None);
      return;
    }
    if (best->maxBytes < INT64_MAX) {
      Candidate small = *best;
      for (double large = small.scale / 2; large >= small.scale / 32; large /= 2)
        if (fits(small.scale, small.maxBytes, large)) {
          consider(small.scale, small.maxBytes, large);
          break;
        }
    }
    // With the holds if they fit too, else as the placement's preference
    // if that fits.
    Holds holds = Holds::None;
    for (Holds h : {Holds::Hard, Holds::Soft})
      if (fitsWith(module, fn, budget, [&](func::FuncOp f) {
            moveFetches(f, profile, best->scale, h, best->maxBytes, /*apply=*/true,
                        best->largeScale);
          })) {
        holds = h;
        break;
      }
    moveFetches(fn, profile, best->scale, holds, best->maxBytes, /*apply=*/true,
                best->largeScale);
  }
};

} // namespace
