//===- Recompute.cpp - plan-recompute: keep or recompute, under a budget --===//
//
// See the pass description in Passes.td. The pieces, in order:
//  - analyzeChain: the forward ops, the cut points, the stages and what each
//    saves for the backward;
//  - profileChain: the bytes live at each op of the unplanned program (from
//    a trial placement) and each stage's predicted time;
//  - solve: the dynamic program over segments (kept, recomputed, recomputed
//    with the input cut offloaded);
//  - applyDecision: the copies of recomputed segments, the backward rewired
//    to them, offloaded cuts sent to the host and back;
//  - RecomputeSearch: trial placements of decisions, the fit under a budget
//    and the smallest budget (plan-tiers uses it too);
//  - the pass: dropout streams, the budget, the error when nothing fits, the
//    record of the chain.
//
//===----------------------------------------------------------------------===//

#include "compiler/planner/Recompute.h"
#include "compiler/conversion/TGToHM/PlaceBuffers.h"
#include "compiler/planner/CostModel.h"
#include "compiler/planner/PassOptions.h"
#include "compiler/planner/Passes.h"
#include "hm/Analysis/Liveness.h"
#include "hm/Analysis/Memory.h"
#include "hm/IR/HMOps.h"
#include "lib/support/Size.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

namespace hmcc {
#define GEN_PASS_DEF_PLANRECOMPUTE
#include "compiler/planner/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;
using namespace hmcc::tg;

namespace hmcc::planner {

namespace {

/// Whether `op` reads a parameter (or its bf16 copy on the host) or a
/// constant: no work of the forward's.
bool readsParameter(Operation *op) {
  return isa<ParamOp, ConstantOp>(op) || hm::isHostRounding(op);
}

/// Values that take memory of their own in the program: results of ops
/// other than parameter reads and constants.
bool isActivation(Value v) {
  Operation *def = v.getDefiningOp();
  return def && !readsParameter(def);
}

int64_t bytesOf(Value v) { return hm::arenaBytes(v.getType()); }

/// Whether `op` is cheap to run again: one pass over its operands
/// (elementwise, a fused elementwise program, a layer norm), no GEMM,
/// attention or loss. Views share their operand's bytes: nothing to free.
bool cheapToRepeat(Operation *op) {
  if (isView(op) || op->getNumRegions())
    return false;
  StringRef kind = opKind(op);
  return kind == "elementwise" || kind == "fused" || kind == "transcendental" ||
         isa<LayerNormOp>(op);
}

/// The function's loss: the result named "loss", else none.
Value lossOf(func::FuncOp fn) {
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    if (auto name = fn.getResultAttrOfType<StringAttr>(i, "tg.output"))
      if (name.getValue() == "loss")
        return ret.getOperand(i);
  return {};
}

/// Whether `user` is a backward op of `chain` (not the forward's, not the
/// return).
bool readsInBackward(const Chain &chain, Operation *user) {
  return !chain.isForward.contains(user) && !isa<func::ReturnOp>(user);
}

} // namespace

Chain analyzeChain(func::FuncOp fn) {
  Chain chain;
  Block &body = fn.getBody().front();
  for (Operation &op : body) {
    chain.index[&op] = chain.ops.size();
    chain.ops.push_back(&op);
  }
  Value loss = lossOf(fn);
  if (!loss || !loss.getDefiningOp())
    return chain;

  // The forward: every op of the block the loss depends on.
  llvm::SetVector<Operation *> slice;
  SmallVector<Operation *> work{loss.getDefiningOp()};
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (op->getBlock() != &body || !slice.insert(op))
      continue;
    for (Value x : op->getOperands())
      if (Operation *def = x.getDefiningOp())
        work.push_back(def);
  }
  for (Operation &op : body)
    if (slice.contains(&op)) {
      chain.isForward.insert(&op);
      if (!readsParameter(&op))
        chain.forward.push_back(&op);
    }
  if (chain.forward.empty())
    return chain;
  DenseMap<Operation *, unsigned> position;
  for (auto [k, op] : llvm::enumerate(chain.forward))
    position[op] = k;
  chain.lastForwardIndex = chain.index[chain.forward.back()];

  // Cut points: positions k after which exactly one activation computed at
  // or before k is read by a forward op after k.
  SmallVector<SmallVector<Value>> dyingAt(chain.forward.size());
  SmallVector<SmallVector<Value>> bornAt(chain.forward.size());
  for (auto [k, op] : llvm::enumerate(chain.forward))
    for (Value r : op->getResults()) {
      unsigned last = k;
      for (Operation *user : r.getUsers())
        if (auto it = position.find(user); it != position.end())
          last = std::max(last, it->second);
      if (last > k) {
        bornAt[k].push_back(r);
        dyingAt[last].push_back(r);
      }
    }
  llvm::SetVector<Value> crossing;
  SmallVector<std::pair<unsigned, Value>> cuts;
  for (unsigned k = 0; k + 1 < chain.forward.size(); ++k) {
    for (Value v : dyingAt[k])
      crossing.remove(v);
    for (Value v : bornAt[k])
      crossing.insert(v);
    if (crossing.size() == 1)
      cuts.push_back({k, crossing.front()});
  }

  // Stages between the cuts.
  unsigned first = 0;
  auto addStage = [&](unsigned last, Value output) {
    Stage s;
    s.first = first;
    s.last = last;
    s.output = output;
    chain.stages.push_back(s);
    first = last + 1;
  };
  for (auto [k, v] : cuts)
    addStage(k, v);
  addStage(chain.forward.size() - 1, Value());

  // What each stage saves for the backward, and where its backward starts.
  auto backwardReader = [&](Operation *user) { return readsInBackward(chain, user); };
  for (auto [n, s] : llvm::enumerate(chain.stages)) {
    s.number = n + 1;
    for (unsigned k = s.first; k <= s.last; ++k)
      for (Value r : chain.forward[k]->getResults()) {
        if (r == s.output || !isActivation(r))
          continue;
        bool saved = false;
        for (Operation *user : r.getUsers()) {
          if (!backwardReader(user))
            continue;
          saved = true;
          s.backwardStart = std::min(s.backwardStart, chain.index[user]);
        }
        if (saved) {
          s.saved.push_back(r);
          s.savedBytes += bytesOf(r);
        }
      }
    // What the backward's values are made of, within the stage; the rest
    // makes only the output.
    DenseSet<Operation *> madeForSaved;
    SmallVector<Operation *> work;
    for (Value v : s.saved)
      work.push_back(v.getDefiningOp());
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      auto it = chain.index.find(op);
      if (!op || it == chain.index.end() || it->second < chain.index[chain.forward[s.first]] ||
          !madeForSaved.insert(op).second)
        continue;
      for (Value x : op->getOperands())
        work.push_back(x.getDefiningOp());
    }
    for (unsigned k = s.first; k <= s.last; ++k)
      if (!madeForSaved.contains(chain.forward[k]))
        s.outputOnly.push_back(chain.forward[k]);
    if (s.output) {
      s.outputBytes = bytesOf(s.output);
      for (Operation *user : s.output.getUsers())
        if (backwardReader(user))
          s.outputBackwardStart = std::min(s.outputBackwardStart, chain.index[user]);
    }
  }
  for (auto [n, s] : llvm::enumerate(chain.stages)) {
    if (n == 0 || !chain.stages[n - 1].output)
      continue;
    Value input = chain.stages[n - 1].output;
    s.inputBytes = bytesOf(input);
    s.inputReadByBackward = llvm::any_of(input.getUsers(), backwardReader);
  }

  // Each stage's light ops: cheap ones whose saved results the backward
  // first reads at some point where each of their operands is there
  // anyway (persistent, or read at or after it), and none made by
  // another light op (whose value would then live on for this one).
  for (Stage &s : chain.stages) {
    DenseSet<Value> saved(s.saved.begin(), s.saved.end());
    DenseSet<Operation *> light;
    for (unsigned k = s.first; k <= s.last; ++k) {
      Operation *op = chain.forward[k];
      if (!cheapToRepeat(op))
        continue;
      unsigned first = Stage::kNone;
      int64_t bytes = 0;
      for (Value r : op->getResults()) {
        if (!saved.contains(r))
          continue;
        bytes += bytesOf(r);
        for (Operation *user : r.getUsers())
          if (backwardReader(user))
            first = std::min(first, chain.index[user]);
      }
      if (first == Stage::kNone)
        continue;
      bool there = llvm::all_of(op->getOperands(), [&](Value x) {
        Operation *def = x.getDefiningOp();
        if (!def)
          return true;
        if (readsParameter(def))
          return true;
        if (light.contains(def))
          return false;
        return llvm::any_of(x.getUsers(), [&](Operation *user) {
          return user != op && chain.index.lookup(user) >= first;
        });
      });
      if (!there)
        continue;
      light.insert(op);
      s.light.push_back({op, first});
      s.lightBytes += bytes;
    }
  }
  return chain;
}

/// A copy of `module` with `fn`'s function planned by `decision`, placed;
/// what it needs, or nothing when the placement fails. With `liveAt` (for
/// the empty decision), the device bytes live at (and born at) each op of
/// the function before placement.
static std::optional<Trial> placeTrial(ModuleOp module, StringRef fnName, const Decision &decision,
                                std::vector<int64_t> *liveAt = nullptr,
                                std::vector<int64_t> *bornAt = nullptr) {
  OwningOpRef<ModuleOp> copy(module.clone());
  auto fn = copy->lookupSymbol<func::FuncOp>(fnName);
  Chain chain = analyzeChain(fn);
  applyDecision(chain, decision);
  if (failed(placeBuffers(*copy, {fnName.str()})))
    return std::nullopt;
  ScheduleMemory m = scheduleMemory(*copy);
  Trial t;
  t.arena = m.arena;
  t.persistent = m.parameters + m.states + m.inputs;
  t.activations = m.activations;
  if (liveAt) {
    // Per op of the unplanned block; what the placement inserted counts as
    // the op before it.
    assert(decision.recomputed.empty() && "a profile is of the unplanned program");
    hm::FunctionLiveness live = hm::replayFunction(fn);
    liveAt->assign(chain.ops.size(), 0);
    bornAt->assign(chain.ops.size(), 0);
    unsigned last = 0;
    for (const hm::LiveStep &step : live.steps) {
      auto it = chain.index.find(step.op);
      unsigned k = it != chain.index.end() ? it->second : last;
      last = k;
      (*liveAt)[k] = std::max((*liveAt)[k], step.liveBytes);
      for (Value v : step.born)
        (*bornAt)[k] += bytesOf(v);
    }
  }
  return t;
}

/// Sends the cut `x` to the host after its last forward reader and brings
/// it back just before `anchor`: readers from there on (and the copies made
/// there, through `map` where given) read what comes back.
static void offloadCut(Chain &chain, Value x, Operation *anchor, IRMapping *map = nullptr) {
  Operation *lastForward = x.getDefiningOp();
  for (Operation *user : x.getUsers())
    if (chain.isForward.contains(user) && lastForward->isBeforeInBlock(user))
      lastForward = user;
  OpBuilder b(lastForward->getContext());
  b.setInsertionPointAfter(lastForward);
  auto host = IdentityOp::create(b, x.getLoc(), x.getType(), x);
  host->setAttr(hm::kHomeAttr, b.getStringAttr("host"));
  b.setInsertionPoint(anchor);
  auto back = IdentityOp::create(b, x.getLoc(), x.getType(), host.getResult());
  x.replaceUsesWithIf(back.getResult(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    return user != host && user != back && !user->isBeforeInBlock(anchor);
  });
  if (map)
    map->map(x, back.getResult());
}

/// The predicted time of `decision`'s copies over the links: its
/// offloaded cuts' and stored stages' saved values, to the host and back.
static double copySeconds(const Chain &chain, const Decision &decision) {
  double seconds = 0;
  for (auto [s, t] : decision.recomputed)
    if (decision.offloaded.count(s))
      seconds += chain.stages[s - 1].inputTransferSeconds;
  for (unsigned n : decision.stored)
    seconds += chain.stages[n - 1].savedTransferSeconds;
  return seconds;
}

double segmentSeconds(const Chain &chain, unsigned s, unsigned t) {
  double seconds = -chain.stages[t - 1].outputOnlySeconds;
  for (unsigned k = s; k <= t; ++k)
    seconds += chain.stages[k - 1].forwardSeconds;
  return seconds;
}

void applyDecision(Chain &chain, const Decision &decision) {
  // Stored: each saved value to the host after its last forward reader,
  // back just before its first backward reader; the backward reads what
  // comes back.
  for (unsigned n : decision.stored)
    for (Value v : chain.stages[n - 1].saved) {
      Operation *first = nullptr;
      for (Operation *user : v.getUsers())
        if (readsInBackward(chain, user) && (!first || user->isBeforeInBlock(first)))
          first = user;
      if (first)
        offloadCut(chain, v, first);
    }
  // Kept light: each light op copied just before the first backward op
  // that reads what it saves; the backward reads the copy.
  for (unsigned n : decision.light)
    for (auto [op, at] : chain.stages[n - 1].light) {
      OpBuilder b(chain.ops[at]);
      Operation *copy = b.clone(*op);
      for (auto [r, c] : llvm::zip(op->getResults(), copy->getResults()))
        r.replaceUsesWithIf(c, [&](OpOperand &use) {
          return use.getOwner() != copy && readsInBackward(chain, use.getOwner());
        });
    }
  for (auto [s, t] : decision.recomputed) {
    // The values the backward reads, the segment's ops that compute them,
    // and the first backward op that reads one.
    DenseSet<Value> needed;
    unsigned at = Stage::kNone;
    for (unsigned n = s; n <= t; ++n) {
      const Stage &stage = chain.stages[n - 1];
      needed.insert(stage.saved.begin(), stage.saved.end());
      at = std::min(at, stage.backwardStart);
      if (n < t && stage.outputBackwardStart != Stage::kNone) {
        needed.insert(stage.output);
        at = std::min(at, stage.outputBackwardStart);
      }
    }
    if (needed.empty())
      continue;
    unsigned first = chain.stages[s - 1].first, last = chain.stages[t - 1].last;
    DenseSet<Operation *> inSegment;
    for (unsigned k = first; k <= last; ++k)
      inSegment.insert(chain.forward[k]);
    DenseSet<Operation *> copy;
    SmallVector<Operation *> work;
    for (Value v : needed)
      work.push_back(v.getDefiningOp());
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      if (!inSegment.contains(op) || !copy.insert(op).second)
        continue;
      for (Value x : op->getOperands())
        if (Operation *def = x.getDefiningOp())
          work.push_back(def);
    }
    // (Positions are those of the unplanned block: copies inserted for an
    // earlier segment do not move the ops they were taken at.)
    assert(at < chain.ops.size() && "a saved value has a backward reader");
    Operation *anchor = chain.ops[at];
    OpBuilder b(anchor);
    IRMapping map;
    if (decision.offloaded.count(s) && s > 1)
      offloadCut(chain, chain.stages[s - 2].output, anchor, &map);
    for (unsigned k = first; k <= last; ++k)
      if (copy.contains(chain.forward[k]))
        b.clone(*chain.forward[k], map);
    for (Value v : needed)
      v.replaceUsesWithIf(map.lookup(v),
                          [&](OpOperand &use) { return !use.getOwner()->isBeforeInBlock(anchor); });
  }
  // An update that plan-updates moved up before a copy that reads its
  // parameter (one whose read adds nothing to the parameter's gradient)
  // goes after it again: the copy reads the value the first computation read.
  if (!chain.ops.empty() &&
      (!decision.recomputed.empty() || !decision.light.empty() || !decision.stored.empty()))
    moveUpdates(chain.ops.front()->getParentOfType<func::FuncOp>(),
                [](Operation *op) { return static_cast<bool>(optimizerUpdate(op).first); },
                /*down=*/true);
}

void profileChain(Chain &chain, ArrayRef<int64_t> liveAt, ArrayRef<int64_t> bornAt,
                  const DeviceProfile &profile) {
  SymbolLookupScope symbols;
  unsigned n = chain.stages.size();
  // Forward: the stages' ops and whatever runs among them.
  for (Stage &s : chain.stages) {
    unsigned lo = chain.index[chain.forward[s.first]], hi = chain.index[chain.forward[s.last]];
    int64_t before = lo > 0 ? liveAt[lo - 1] : 0;
    for (unsigned q = lo; q <= hi; ++q)
      s.forwardPeak = std::max(s.forwardPeak, liveAt[q]);
    s.forwardGrowth = std::max<int64_t>(0, s.forwardPeak - before);
    for (unsigned k = s.first; k <= s.last; ++k)
      s.forwardSeconds += predictSeconds(chain.forward[k], profile);
    for (Operation *op : s.outputOnly)
      s.outputOnlySeconds += predictSeconds(op, profile);
    for (const Stage::LightOp &light : s.light)
      s.lightSeconds += predictSeconds(light.op, profile);
    s.inputTransferSeconds = transferSeconds(s.inputBytes, profile.deviceToHost) +
                             transferSeconds(s.inputBytes, profile.hostToDevice);
    s.savedTransferSeconds = transferSeconds(s.savedBytes, profile.deviceToHost) +
                             transferSeconds(s.savedBytes, profile.hostToDevice);
  }
  // Backward: op q belongs to the first stage whose backward has started by
  // q (stages start their backward in reverse order); before any, to the
  // loss's tail.
  for (unsigned q = chain.lastForwardIndex + 1; q < chain.ops.size(); ++q) {
    Operation &op = *chain.ops[q];
    unsigned owner = n; // the tail
    for (unsigned k = 0; k < n; ++k)
      if (chain.stages[k].backwardStart <= q) {
        owner = k;
        break;
      }
    int64_t &peak = owner == n ? chain.tailPeak : chain.stages[owner].backwardPeak;
    peak = std::max(peak, liveAt[q]);
    if (owner < n)
      chain.stages[owner].backwardSeconds += predictSeconds(&op, profile);
  }
  for (Stage &s : chain.stages)
    if (s.backwardStart != Stage::kNone) {
      unsigned q = s.backwardStart;
      s.liveAtBackward = liveAt[q] - bornAt[q];
    }
}

namespace {

/// What solve reads of a chain, with the budget and the mode: equal keys
/// have equal answers. Doubles are kept by their bits.
std::vector<int64_t> solveKey(const Chain &chain, int64_t budget, bool offload) {
  auto bits = [](double x) {
    int64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
  };
  std::vector<int64_t> key{budget, offload, chain.tailPeak};
  key.reserve(key.size() + 15 * chain.stages.size());
  for (const Stage &s : chain.stages)
    key.insert(key.end(), {s.forwardPeak, s.backwardPeak, s.forwardGrowth, s.liveAtBackward,
                           s.inputBytes, s.outputBytes, s.savedBytes, s.inputReadByBackward,
                           s.backwardStart != Stage::kNone, s.outputBackwardStart != Stage::kNone,
                           bits(s.forwardSeconds), bits(s.outputOnlySeconds),
                           bits(s.inputTransferSeconds), s.lightBytes, bits(s.lightSeconds)});
  return key;
}

std::optional<Decision> solveUncached(const Chain &chain, int64_t budget, bool offload);

} // namespace

std::optional<Decision> solve(const Chain &chain, int64_t budget, bool offload) {
  // The planning passes (and plan-recompute's fit, round by round) ask the
  // same questions of the same chain: each is answered once per process.
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, std::optional<Decision>> answers;
  std::vector<int64_t> key = solveKey(chain, budget, offload);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = answers.find(key); it != answers.end())
      return it->second;
  }
  std::optional<Decision> answer = solveUncached(chain, budget, offload);
  std::lock_guard<std::mutex> lock(mutex);
  return answers.emplace(std::move(key), answer).first->second;
}

namespace {

std::optional<Decision> solveUncached(const Chain &chain, int64_t budget, bool offload) {
  // How a point's last segment was planned.
  enum Kind { Kept, Light, Recomputed, Offloaded };
  struct Point {
    double seconds;
    int64_t freed;
    int parent;        // index into points of the stage before, -1 at the start
    unsigned from, to; // the segment that led here (the start: 1, 0)
    Kind kind;
    int64_t slack; // the least bytes to spare over any stage's need on the way
  };
  unsigned n = chain.stages.size();
  std::vector<std::vector<Point>> front(n + 1);
  front[0].push_back({0.0, 0, -1, 1, 0, Kept, std::numeric_limits<int64_t>::max()});
  // Segment s..t recomputed (its input offloaded or not), after a point
  // that freed S bytes: its saved values and the cuts inside it (when the
  // backward reads them) are freed after their forward; while stage t runs
  // forward, the cut before it is still read. Every stage of the segment
  // stays within the budget when S is `least` or more; the segment then
  // adds `seconds` and frees `gain` more.
  //
  // The cut before the segment is kept on the device until the segment is
  // recomputed (`extra` bytes the unplanned program would have freed, when
  // the backward does not read it), or, offloaded, on the host from its
  // last forward reader until then (`held` is then negative when the
  // backward reads it: bytes freed). Recomputing needs it on the device.
  struct Segment {
    int64_t least;
    double seconds;
    int64_t gain;
  };
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  std::vector<Segment> segments(2 * n * n, {kNever, 0.0, 0});
  auto segment = [&](unsigned s, int off, unsigned t) -> Segment & {
    return segments[(off * n + s - 1) * n + t - 1];
  };
  for (unsigned s = 1; s <= n; ++s) {
    const Stage &first = chain.stages[s - 1];
    int64_t extra = first.inputReadByBackward ? 0 : first.inputBytes;
    bool canOffload = offload && s > 1 && first.inputBytes > 0;
    for (int off = 0; off <= int(canOffload); ++off) {
      int64_t held = off ? (first.inputReadByBackward ? -first.inputBytes : 0) : extra;
      double seconds = off ? first.inputTransferSeconds : 0;
      int64_t saved = 0, growth = 0, cut = 0;
      int64_t least = std::numeric_limits<int64_t>::min();
      for (unsigned t = s; t <= n; ++t) {
        const Stage &st = chain.stages[t - 1];
        least = std::max({least, st.forwardPeak - saved + (t > s ? held : 0) - budget,
                          st.backwardPeak + extra - budget});
        seconds += st.forwardSeconds;
        saved += st.savedBytes + cut;
        cut = st.outputBackwardStart != Stage::kNone ? st.outputBytes : 0;
        growth = std::max(growth, st.forwardGrowth);
        int64_t need = least;
        if (st.backwardStart != Stage::kNone)
          need = std::max(need, st.liveAtBackward + extra + growth - budget);
        // segmentSeconds(s, t), accumulated, and the offload's copies
        segment(s, off, t) = {need, seconds - st.outputOnlySeconds, saved - held};
      }
    }
  }
  // Each stage's front, the Pareto front of its points (least time first,
  // each keeping more bytes freed than any faster one), among equals the
  // one with the most slack, then the first in the order of the segments'
  // first stages, then of the points before, kept before kept light
  // before recomputed before offloaded. A point before leads here through
  // a segment when its bytes freed meet the segment's `least`: a suffix of
  // the front before, where time and bytes freed both grow. So each (first
  // stage, kind) is a run of points in time order, and the front is their
  // merge in that order, skipping in each run the points that free no more
  // than the last kept.
  struct Run {
    const std::vector<Point> *before;
    unsigned k, s; // the next point before, and the segment's first stage
    Kind kind;
    int64_t least, gain;
    double seconds;
    Point next; // what the point before at k leads to
    /// Moves onto the last of the points from k on that take as long as
    /// k's (the sums may round to equal times: it frees the most of them),
    /// and makes `next` of it.
    void settle() {
      const std::vector<Point> &b = *before;
      while (k + 1 < b.size() && b[k + 1].seconds + seconds == b[k].seconds + seconds)
        ++k;
      const Point &p = b[k];
      next = {p.seconds + seconds, p.freed + gain, int(k), s, 0, kind,
              std::min(p.slack, p.freed - least)};
    }
  };
  // Whether run a's next point comes after run b's.
  auto later = [](const Run &a, const Run &b) {
    const Point &x = a.next, &y = b.next;
    if (x.seconds != y.seconds)
      return x.seconds > y.seconds;
    if (x.freed != y.freed)
      return x.freed < y.freed;
    if (x.slack != y.slack)
      return x.slack < y.slack;
    return std::tie(a.s, a.k, a.kind) > std::tie(b.s, b.k, b.kind);
  };
  // Bytes freed that meet every need there is: past a point that frees
  // that many, slower points lead only to slower decisions than its own,
  // which every continuation fits.
  int64_t enough = chain.tailPeak - budget;
  for (unsigned t = 1; t <= n; ++t) {
    const Stage &st = chain.stages[t - 1];
    enough = std::max(enough, std::max(st.forwardPeak, st.backwardPeak) - budget);
    for (unsigned s = 1; s <= t; ++s)
      for (int off = 0; off < 2; ++off)
        if (int64_t least = segment(s, off, t).least; least != kNever)
          enough = std::max(enough, least);
  }
  std::vector<Run> heap;
  for (unsigned t = 1; t <= n; ++t) {
    heap.clear();
    auto start = [&](unsigned s, Kind kind, int64_t least, double seconds, int64_t gain) {
      if (least == kNever)
        return;
      const std::vector<Point> &before = front[s - 1];
      auto from = std::lower_bound(before.begin(), before.end(), least,
                                   [](const Point &p, int64_t x) { return p.freed < x; });
      if (from == before.end())
        return;
      heap.push_back(
          {&before, unsigned(from - before.begin()), s, kind, least, gain, seconds, Point()});
      heap.back().settle();
    };
    for (unsigned s = 1; s <= t; ++s) {
      const Stage &first = chain.stages[s - 1];
      if (s == t) {
        // Kept, or kept light: what the light ops save is freed after the
        // forward and made again for the backward, where the stage's
        // backward peak had it live anyway.
        int64_t least = std::max(first.forwardPeak, first.backwardPeak) - budget;
        start(s, Kept, least, 0.0, 0);
        if (first.lightBytes > 0)
          start(s, Light, least, first.lightSeconds, first.lightBytes);
      }
      const Segment &local = segment(s, 0, t), &offloaded = segment(s, 1, t);
      start(s, Recomputed, local.least, local.seconds, local.gain);
      start(s, Offloaded, offloaded.least, offloaded.seconds, offloaded.gain);
    }
    std::make_heap(heap.begin(), heap.end(), later);
    // The run at the top moved on: restores the heap below it in one pass
    // (a pop and a push would take two). The order is total, so the points
    // come out in the same order either way.
    auto siftTop = [&] {
      size_t i = 0, size = heap.size();
      while (true) {
        size_t first = i, l = 2 * i + 1, r = l + 1;
        if (l < size && later(heap[first], heap[l]))
          first = l;
        if (r < size && later(heap[first], heap[r]))
          first = r;
        if (first == i)
          return;
        std::swap(heap[i], heap[first]);
        i = first;
      }
    };
    std::vector<Point> &kept = front[t];
    while (!heap.empty()) {
      Run &run = heap.front();
      Point p = run.next;
      p.to = t;
      if (kept.empty() || p.freed > kept.back().freed) {
        kept.push_back(p);
        if (p.freed >= enough)
          break;
        ++run.k;
      } else {
        // The run's points up to the last kept's bytes freed are no better.
        int64_t past = kept.back().freed - run.gain;
        run.k = std::upper_bound(run.before->begin() + run.k, run.before->end(), past,
                                 [](int64_t x, const Point &q) { return x < q.freed; }) -
                run.before->begin();
      }
      if (run.k < run.before->size()) {
        run.settle();
        siftTop();
      } else {
        std::pop_heap(heap.begin(), heap.end(), later);
        heap.pop_back();
      }
    }
  }
  for (auto [k, p] : llvm::enumerate(front[n])) {
    if (chain.tailPeak - p.freed > budget)
      continue;
    Decision d;
    d.seconds = p.seconds;
    const Point *q = &p;
    unsigned stage = n;
    while (q->parent >= 0) {
      if (q->kind >= Recomputed)
        d.recomputed.push_back({q->from, q->to});
      if (q->kind == Offloaded)
        d.offloaded.insert(q->from);
      if (q->kind == Light)
        d.light.insert(q->from);
      stage = q->from - 1;
      q = &front[stage][q->parent];
    }
    std::reverse(d.recomputed.begin(), d.recomputed.end());
    return d;
  }
  return std::nullopt;
}

} // namespace

RecomputeSearch::RecomputeSearch(ModuleOp module, func::FuncOp fn, const DeviceProfile &profile)
    : module(module), name(fn.getSymName().str()) {
  chain = analyzeChain(fn);
  if (llvm::all_of(chain.stages, [](const Stage &s) {
        return s.saved.empty() && s.outputBackwardStart == Stage::kNone;
      }))
    return; // no backward: nothing to recompute
  std::vector<int64_t> liveAt, bornAt;
  auto trial = placeTrial(module, name, Decision(), &liveAt, &bornAt);
  if (!trial) {
    failed = true;
    return;
  }
  base = *trial;
  profileChain(chain, liveAt, bornAt, profile);
  planned = true;
}

int64_t RecomputeSearch::leastActivations() const {
  int64_t lo = 0, hi = base.activations; // solve fails at lo, succeeds at hi
  while (lo + int64_t(hm::kAlignment) < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    (solve(chain, mid, /*offload=*/true) ? hi : lo) = mid;
  }
  return hi;
}

std::optional<Decision> RecomputeSearch::fit(int64_t budget, bool thorough) {
  if (base.arena <= budget)
    return Decision();
  // Without offload and with: the model may overrate what an offload
  // frees (the copies are placed too), so both are tried.
  std::optional<Decision> found;
  for (bool offload : {false, true}) {
    // Each round that still overshoots takes twice the step of the round
    // before: where the placement's gaps do not shrink with the target,
    // rounds of the same small overshoot would each cost a solve.
    int64_t target = budget - base.persistent;
    for (int round = 0; round < 8 && target > 0; ++round) {
      auto d = solve(chain, target, offload);
      if (!d)
        break;
      auto trial = placeTrial(module, name, *d);
      if (!trial)
        return std::nullopt;
      if (trial->arena <= budget) {
        if (!found || d->seconds < found->seconds)
          found = d;
        break;
      }
      target -= std::max<int64_t>(trial->arena - budget, int64_t(hm::kAlignment)) << round;
    }
  }
  if (found || !thorough)
    return found;
  const Candidate *best = nullptr;
  for (const Candidate &c : candidates())
    if (c.trial.arena <= budget && (!best || c.decision.seconds < best->decision.seconds))
      best = &c;
  return best ? std::optional<Decision>(best->decision) : std::nullopt;
}

const std::vector<Candidate> &RecomputeSearch::candidates() {
  if (!cache.empty())
    return cache;
  cache.push_back({Decision(), base});
  int64_t hi = leastActivations();
  // Evenly over the range, and finer over its lowest eighth, where the
  // placement's fragmentation decides the smallest budget.
  auto add = [&](int64_t target) {
    for (bool offload : {false, true})
      if (auto d = solve(chain, target, offload))
        if (auto trial = placeTrial(module, name, *d))
          cache.push_back({*d, *trial});
  };
  constexpr int kSteps = 24;
  int64_t range = base.activations - hi;
  for (int k = 0; k <= kSteps; ++k) {
    add(hi + range * k / kSteps);
    add(hi + range * k / (8 * kSteps));
  }
  extendSmallest();
  return cache;
}

void RecomputeSearch::extendSmallest() {
  constexpr int kTrials = 16; // placements at most
  const unsigned n = chain.stages.size();
  int trials = 0;
  for (bool improved = true; improved && trials < kTrials;) {
    improved = false;
    const Candidate best = smallest(); // a copy: the cache grows below
    std::set<unsigned> recomputed;
    for (auto [s, t] : best.decision.recomputed)
      for (unsigned k = s; k <= t; ++k)
        recomputed.insert(k);
    for (auto [s, t] : best.decision.recomputed) {
      for (unsigned k : {s - 1, t + 1}) {
        if (k < 1 || k > n || recomputed.count(k) || chain.stages[k - 1].savedBytes == 0 ||
            trials >= kTrials)
          continue;
        const Stage &stage = chain.stages[k - 1];
        Decision d = best.decision;
        d.recomputed.push_back({k, k});
        llvm::sort(d.recomputed);
        d.offloaded.insert(k);
        d.seconds += segmentSeconds(chain, k, k) + stage.inputTransferSeconds;
        ++trials;
        auto trial = placeTrial(module, name, d);
        if (trial && trial->arena < best.trial.arena) {
          cache.push_back({d, *trial});
          improved = true;
          break;
        }
      }
      if (improved)
        break;
    }
  }
}

const Candidate &RecomputeSearch::smallest() {
  const Candidate *best = nullptr;
  for (const Candidate &c : candidates())
    if (!best || c.trial.arena < best->trial.arena ||
        (c.trial.arena == best->trial.arena && c.decision.seconds < best->decision.seconds))
      best = &c;
  return *best;
}

std::optional<Decision> parseDecision(StringRef text, unsigned stages, std::string &error) {
  Decision d;
  if (text == "none")
    return d;
  if (text == "all") {
    for (unsigned s = 1; s <= stages; ++s)
      d.recomputed.push_back({s, s});
    return d;
  }
  SmallVector<StringRef> parts;
  text.split(parts, ',');
  unsigned next = 1;
  for (StringRef part : parts) {
    bool kept = false; // a kept stage's mode, not a segment
    for (StringRef mode : {"light", "store"})
      if (part.consume_back((":" + mode).str())) {
        unsigned stage = 0;
        if (part.trim().getAsInteger(10, stage) || stage < next || stage > stages) {
          error = "'" + part.str() + ":" + mode.str() + "' is not a stage in order within 1.." +
                  std::to_string(stages);
          return std::nullopt;
        }
        (mode == "light" ? d.light : d.stored).insert(stage);
        next = stage + 1;
        kept = true;
        break;
      }
    if (kept)
      continue;
    bool offload = part.consume_back(":offload");
    auto [a, b] = part.split('-');
    unsigned from = 0, to = 0;
    bool range = part.contains('-');
    if (a.trim().getAsInteger(10, from) ||
        (range ? b.trim().getAsInteger(10, to) : (to = from, false)) || from < next || to < from ||
        to > stages) {
      error = "segment '" + part.str() + "' is not a range of stages in order within 1.." +
              std::to_string(stages);
      return std::nullopt;
    }
    d.recomputed.push_back({from, to});
    if (offload) {
      if (from == 1) {
        error = "segment '" + part.str() + "' starts the forward: it has no cut to offload";
        return std::nullopt;
      }
      d.offloaded.insert(from);
    }
    next = to + 1;
  }
  return d;
}

} // namespace hmcc::planner

namespace {

using namespace hmcc::planner;

struct PlanRecomputePass : hmcc::impl::PlanRecomputeBase<PlanRecomputePass> {
  using PlanRecomputeBase::PlanRecomputeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto profile = profileOption(module, "plan-recompute", deviceProfile);
    auto vramBudget = budgetOption(module, "plan-recompute", "vram", vram);
    if (failed(profile) || failed(vramBudget))
      return signalPassFailure();
    std::optional<uint64_t> budget;
    if (*vramBudget) { // beside device updates' staging buffers (plan-tiers)
      userBudget = **vramBudget;
      budget = uint64_t(std::max<int64_t>(0, userBudget - deviceStaging(module)));
    }
    numberDropoutStreams(module);
    for (auto fn : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (failed(planFunction(module, fn, *profile, budget)))
        return signalPassFailure();
  }

  LogicalResult planFunction(ModuleOp module, func::FuncOp fn, const DeviceProfile &profile,
                             std::optional<uint64_t> budget) {
    RecomputeSearch search(module, fn, profile);
    if (search.failed)
      return failure(); // the placement failed, and said why
    if (!search.planned)
      return success(); // no backward: nothing to recompute
    Chain &chain = search.chain;

    Decision decision;
    if (!force.empty()) {
      std::string error;
      auto forced = parseDecision(force, chain.stages.size(), error);
      if (!forced)
        return module.emitError() << "plan-recompute: force (hmcc --recompute): " << error;
      decision = *forced;
      for (auto [s, t] : decision.recomputed)
        decision.seconds += segmentSeconds(chain, s, t);
      for (unsigned n : decision.stored)
        if (chain.stages[n - 1].saved.empty())
          return module.emitError() << "plan-recompute: force (hmcc --recompute): stage " << n
                                    << " has nothing to store (the backward reads nothing it "
                                       "computes)";
      decision.seconds += copySeconds(chain, decision);
      for (unsigned n : decision.light) {
        if (chain.stages[n - 1].light.empty())
          return module.emitError() << "plan-recompute: force (hmcc --recompute): stage " << n
                                    << " has nothing to keep light (no cheap op whose saved "
                                       "result can be made again)";
        decision.seconds += chain.stages[n - 1].lightSeconds;
      }
    } else if (budget) {
      // With parameters on the host, room for their fetches to move ahead
      // first (prefetchHeadroom), where that fits.
      std::optional<Decision> found;
      int64_t room = llvm::any_of(module.getOps<tg::ParameterOp>(),
                                  [](tg::ParameterOp p) { return hm::isHostHomed(p); })
                         ? prefetchHeadroom(module, profile)
                         : 0;
      if (room > 0 && uint64_t(room) < *budget)
        found = search.fit(int64_t(*budget) - room, /*thorough=*/false);
      if (!found)
        found = search.fit(int64_t(*budget));
      if (!found)
        return refuse(module, search);
      decision = *found;
    }
    record(module, chain, decision, budget);
    applyDecision(chain, decision);
    return success();
  }

  /// The error when no decision fits: the smallest budget that does, with
  /// the cheapest decision there.
  LogicalResult refuse(ModuleOp module, RecomputeSearch &search) {
    const Candidate *best = &search.smallest();
    const Chain &chain = search.chain;
    const Trial &t = best->trial;
    unsigned stages = 0;
    for (auto [s, e] : best->decision.recomputed)
      stages += e - s + 1;
    int64_t activations = t.arena - t.persistent;
    size_t offloaded = best->decision.offloaded.size();
    std::string recomputed =
        stages ? std::to_string(stages) + " of " + std::to_string(chain.stages.size()) +
                     " forward stages recomputed" +
                     (offloaded ? " (" + std::to_string(offloaded) +
                                      (offloaded == 1 ? " cut" : " cuts") +
                                      " offloaded to the host)"
                                : "") +
                     ", " + formatSeconds(best->decision.seconds) +
                     " of recompute per step predicted"
               : "nothing recomputed";
    // The messages name the user's --vram: the arena's budget and the
    // runtime's reserve beside it (vram-reserve).
    const int64_t reserve = vramReserve + deviceStaging(module),
                  smallest = t.arena + reserve;
    module->setAttr(hm::kSmallestVramAttr,
                    IntegerAttr::get(IntegerType::get(module.getContext(), 64), smallest));
    return module.emitError() << "the program does not fit --vram "
                              << formatBytes(uint64_t(userBudget + vramReserve))
                              << ": the smallest budget that fits is --vram " << smallest << " ("
                              << formatBytes(smallest)
                              << (vramReserve ? ", " + formatBytes(vramReserve) +
                                                    " of it the runtime's"
                                              : std::string())
                              << (deviceStaging(module)
                                      ? ", " + formatBytes(deviceStaging(module)) +
                                            " of it staging buffers for device updates"
                                      : std::string())
                              << "), mostly "
                              << (t.persistent >= activations
                                      ? "parameters, optimizer states and inputs"
                                      : "activations")
                              << " (" << formatBytes(t.persistent) << " persistent, "
                              << formatBytes(activations) << " for activations with " << recomputed
                              << ")";
  }

  /// The vram option: the arena's budget, staging buffers included.
  int64_t userBudget = 0;

  /// The chain and the decision, for the schedule dump and the summary.
  void record(ModuleOp module, const Chain &chain, const Decision &decision,
              std::optional<uint64_t> budget) {
    Builder b(module.getContext());
    SmallVector<Attribute> stages;
    for (const Stage &s : chain.stages) {
      bool recomputed = llvm::any_of(decision.recomputed, [&](auto seg) {
        return seg.first <= s.number && s.number <= seg.second;
      });
      StringRef kept = decision.light.count(s.number)    ? "keep light"
                       : decision.stored.count(s.number) ? "store"
                                                         : "keep";
      stages.push_back(b.getDictionaryAttr({
          b.getNamedAttr("ops", b.getI64IntegerAttr(s.last - s.first + 1)),
          b.getNamedAttr("forward_seconds", b.getF64FloatAttr(s.forwardSeconds)),
          b.getNamedAttr("backward_seconds", b.getF64FloatAttr(s.backwardSeconds)),
          b.getNamedAttr("cut_bytes", b.getI64IntegerAttr(s.outputBytes)),
          b.getNamedAttr("saved_bytes", b.getI64IntegerAttr(s.savedBytes)),
          b.getNamedAttr("light_bytes", b.getI64IntegerAttr(s.lightBytes)),
          b.getNamedAttr("decision", b.getStringAttr(recomputed ? "recompute" : kept)),
          b.getNamedAttr("offload_input", b.getBoolAttr(decision.offloaded.count(s.number))),
      }));
    }
    SmallVector<NamedAttribute> fields{
        b.getNamedAttr("stages", b.getArrayAttr(stages)),
        b.getNamedAttr("recompute_seconds", b.getF64FloatAttr(decision.seconds)),
        b.getNamedAttr("copy_seconds", b.getF64FloatAttr(copySeconds(chain, decision))),
        b.getNamedAttr("forced", b.getBoolAttr(!force.empty())),
    };
    if (budget)
      fields.push_back(b.getNamedAttr("budget", b.getI64IntegerAttr(int64_t(*budget))));
    module->setAttr(hm::kRecomputeAttr, b.getDictionaryAttr(fields));
  }
};

} // namespace
