//===- Streams.cpp - events between the streams of a scheduled program ----===//
//
// plan-streams (see Passes.td): for each op in program order, the earlier
// ops of other streams it conflicts with (hm/Analysis/Streams.h); a wait
// for each that the op's stream does not already follow. What a stream
// follows is a vector clock: entry s is how many ops of stream s are known
// to have finished, advanced by the stream's own ops and joined with the
// clock of the op behind each event it waits for.
//
//===----------------------------------------------------------------------===//

#include "compiler/planner/Passes.h"
#include "hm/Analysis/Streams.h"
#include "hm/IR/HMOps.h"

#include "mlir/IR/Builders.h"

namespace hmcc {
#define GEN_PASS_DEF_PLANSTREAMS
#include "compiler/planner/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;

namespace {

using Clock = std::array<int, hm::kStreams.size()>;

void planFunction(func::FuncOp fn) {
  hm::StreamOps s = hm::streamOps(fn);
  hm::AccessMap map(fn);
  // Which op must follow which, per op.
  std::vector<SmallVector<unsigned, 2>> follows(s.ops.size());
  hm::forEachConflict(s, map, [&](unsigned j, unsigned i) { follows[j].push_back(i); });

  Builder b(fn.getContext());
  Clock zero;
  zero.fill(0);
  std::vector<Clock> streamClock(hm::kStreams.size(), zero);
  std::vector<Clock> after(s.ops.size()); // each op's stream's clock once it ran
  std::vector<int> seq(s.ops.size());     // its position in its stream, from 1
  std::vector<int> event(s.ops.size(), -1);
  int events = 0;
  for (unsigned j = 0; j < s.ops.size(); ++j) {
    unsigned t = s.streams[j];
    Clock &clock = streamClock[t];
    SmallVector<int64_t> waits;
    // Latest first: waiting for it may already cover the others.
    llvm::sort(follows[j], [](unsigned a, unsigned c) { return a > c; });
    for (unsigned i : follows[j]) {
      if (clock[s.streams[i]] >= seq[i])
        continue;
      if (event[i] < 0)
        event[i] = events++;
      waits.push_back(event[i]);
      for (unsigned k = 0; k < clock.size(); ++k)
        clock[k] = std::max(clock[k], after[i][k]);
    }
    seq[j] = ++clock[t];
    after[j] = clock;
    if (!waits.empty()) {
      llvm::sort(waits);
      s.ops[j]->setAttr(hm::kWaitAttr, b.getDenseI64ArrayAttr(waits));
    }
  }
  for (unsigned i = 0; i < s.ops.size(); ++i)
    if (event[i] >= 0)
      s.ops[i]->setAttr(hm::kEventAttr, b.getI64IntegerAttr(event[i]));
}

/// Breaks the first wait of `fn` as `fault` says (see Passes.td).
LogicalResult injectFault(func::FuncOp fn, StringRef fault) {
  Builder b(fn.getContext());
  Operation *waiter = nullptr, *recorder = nullptr;
  fn.walk([&](Operation *op) {
    if (!waiter && op->hasAttr(hm::kWaitAttr))
      waiter = op;
    if (!recorder && op->hasAttr(hm::kEventAttr))
      recorder = op;
  });
  if (!waiter)
    return success();
  if (fault == "drop-wait") {
    waiter->removeAttr(hm::kWaitAttr);
  } else if (fault == "unrecorded") {
    waiter->setAttr(hm::kWaitAttr, b.getDenseI64ArrayAttr({1000000}));
  } else if (fault == "twice") {
    waiter->setAttr(hm::kEventAttr, recorder->getAttr(hm::kEventAttr));
  } else {
    return fn.emitError() << "plan-streams: unknown test-fault '" << fault << "'";
  }
  return success();
}

struct PlanStreamsPass : hmcc::impl::PlanStreamsBase<PlanStreamsPass> {
  using PlanStreamsBase::PlanStreamsBase;
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.getOps<hm::PlaceOp>().empty())
        continue;
      planFunction(fn);
      if (!testFault.empty() && failed(injectFault(fn, testFault)))
        return signalPassFailure();
    }
  }
};

} // namespace
