//===- VerifyStreams.cpp - the streams of a scheduled program never race ---===//
//
// hm-verify-streams (see Passes.td). The order it proves comes only from
// the program: ops of one stream in program order, and the events named by
// hm.event / hm.wait. Which pairs must be ordered comes from the bytes the
// ops touch (hm/Analysis/Streams.h), never from the planner.
//
//===----------------------------------------------------------------------===//

#include "hm/Analysis/Streams.h"
#include "hm/IR/HMOps.h"
#include "hm/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace hmcc {
#define GEN_PASS_DEF_HMVERIFYSTREAMS
#include "hm/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;

namespace {

using Clock = std::array<int, hm::kStreams.size()>;

std::string describe(Operation *op, unsigned stream) {
  std::string text = op->getName().getStringRef().str();
  if (auto node = dyn_cast<NameLoc>(op->getLoc()))
    text += " (" + node.getName().str() + ")";
  return text + " on stream " + hm::kStreams[stream];
}

LogicalResult verifyFunction(func::FuncOp fn) {
  hm::StreamOps s = hm::streamOps(fn);
  Clock zero;
  zero.fill(0);
  std::vector<Clock> streamClock(hm::kStreams.size(), zero);
  std::vector<Clock> before(s.ops.size()); // the op's stream's clock as it starts
  std::vector<int> seq(s.ops.size());
  DenseMap<int64_t, unsigned> recorder; // event -> the op that records it
  for (unsigned j = 0; j < s.ops.size(); ++j) {
    Operation *op = s.ops[j];
    unsigned t = s.streams[j];
    if (t >= hm::kStreams.size())
      return op->emitError() << "hm-verify-streams: " << op->getName() << " is on no known stream";
    Clock &clock = streamClock[t];
    if (auto waits = op->getAttrOfType<DenseI64ArrayAttr>(hm::kWaitAttr))
      for (int64_t e : waits.asArrayRef()) {
        auto it = recorder.find(e);
        if (it == recorder.end())
          return op->emitError() << "hm-verify-streams: " << describe(op, t)
                                 << " waits for event " << e << ", which no earlier op records";
        // The recorder's stream had reached its own position, and whatever
        // it had seen, when the event completed.
        const Clock &seen = before[it->second];
        for (unsigned k = 0; k < clock.size(); ++k)
          clock[k] = std::max(clock[k], seen[k]);
        unsigned r = s.streams[it->second];
        clock[r] = std::max(clock[r], seq[it->second]);
      }
    before[j] = clock;
    seq[j] = ++clock[t];
    if (auto event = op->getAttrOfType<IntegerAttr>(hm::kEventAttr))
      if (!recorder.try_emplace(event.getInt(), j).second)
        return op->emitError() << "hm-verify-streams: event " << event.getInt()
                               << " is recorded twice";
  }
  hm::AccessMap map(fn);
  LogicalResult result = success();
  hm::forEachConflict(s, map, [&](unsigned j, unsigned i) {
    if (failed(result) || before[j][s.streams[i]] >= seq[i])
      return;
    result = s.ops[j]->emitError()
             << "hm-verify-streams: in @" << fn.getSymName() << ": "
             << describe(s.ops[j], s.streams[j]) << " touches bytes that "
             << describe(s.ops[i], s.streams[i])
             << " (earlier) writes or reads, and no event orders them";
  });
  return result;
}

struct VerifyStreamsPass : hmcc::impl::HMVerifyStreamsBase<VerifyStreamsPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (!fn.isExternal() && failed(verifyFunction(fn)))
        return signalPassFailure();
  }
};

} // namespace
