//===- Timeline.cpp - predicting a scheduled program's step ---------------===//
#include "compiler/planner/Timeline.h"
#include "compiler/planner/CostModel.h"
#include "hm/Analysis/Memory.h"
#include "hm/Analysis/Streams.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cassert>

using namespace mlir;
using namespace hmcc::tg;

namespace hmcc::planner {

std::pair<StringRef, double> streamSeconds(Operation &op, const DeviceProfile &p) {
  StringRef stream = streamOf(op);
  if (auto stage = dyn_cast<hm::StageOp>(op)) {
    int64_t bytes = hm::stagedSlice(stage).bytes;
    if (stream == "host_to_device" || stream == "device_to_host") // staged on the device
      return {stream, transferSeconds(bytes, stream == "host_to_device" ? p.hostToDevice
                                                                          : p.deviceToHost)};
    return {stream, p.storageLatency + transferSeconds(bytes, stage.getDirection() == "in"
                                                                  ? p.storageRead
                                                                  : p.storageWrite)};
  }
  if (stream == "host_to_device" || stream == "device_to_host") {
    int64_t bytes = tensorBytes(op.getResult(0).getType());
    return {stream, transferSeconds(bytes, stream == "host_to_device" ? p.hostToDevice
                                                                        : p.deviceToHost)};
  }
  if (stream == "storage_read") // a parameter in storage, read to the host
    return {stream, p.storageLatency +
                        transferSeconds(tensorBytes(op.getResult(0).getType()), p.storageRead)};
  if (hm::isHostRounding(&op)) // rounding f32 to bf16 on the host:
    // 4 bytes read and 2 written an element, a copy of 3 (host_copy is a
    // copy's bytes per second, each read once and written once)
    return {stream, transferSeconds(3 * cast<RankedTensorType>(op.getOperand(0).getType())
                                            .getNumElements(),
                                    p.hostCopy)};
  if (stream == "host_optimizer") {
    double elements = double(cast<RankedTensorType>(op.getOperand(0).getType()).getNumElements());
    return {stream, hostUpdateSeconds(elements * chunkShare(&op),
                                      isa<AdamW8bitUpdateOp>(op) ? "8bit" : "f32", p)};
  }
  if (hm::isAliasingView(&op))
    return {stream, 0.0};
  return {stream, predictSeconds(&op, p)};
}

hm::Timeline predictTimeline(func::FuncOp fn, const DeviceProfile &profile) {
  SymbolLookupScope symbols;
  hm::Timeline t;
  t.profile = profile.name;
  // Each stream runs its ops in program order, an op with hm.wait after the
  // ops recording those events. On a shared host (the CPU target) the
  // thread that computes also issues every other stream's work, in program
  // order, so an op of another stream starts no earlier than compute has
  // got to it.
  std::array<double, hm::kStreams.size()> free{};
  DenseMap<int64_t, double> eventEnd;
  DenseMap<int64_t, std::string> eventStream;
  double makespan = 0;
  for (Operation &op : fn.getBody().front()) {
    if (!runsInProgram(op))
      continue;
    auto [stream, seconds] = streamSeconds(op, profile);
    unsigned k = hm::streamIndex(stream);
    assert(k < free.size() && "hm::streamOf names a stream of hm::kStreams");
    double start = free[k];
    if (profile.sharedHost)
      start = std::max(start, free[0]);
    std::string waitedOn; // the stream of the event that started it, if one did
    if (auto waits = op.getAttrOfType<DenseI64ArrayAttr>(hm::kWaitAttr))
      for (int64_t e : waits.asArrayRef())
        if (eventEnd.lookup(e) > start) {
          start = eventEnd.lookup(e);
          waitedOn = eventStream.lookup(e);
        }
    if (k == 0 && start > free[0] && !waitedOn.empty())
      t.computeWaits[waitedOn] += start - free[0];
    double end = start + seconds;
    free[k] = end;
    makespan = std::max(makespan, end);
    if (auto event = op.getAttrOfType<IntegerAttr>(hm::kEventAttr)) {
      eventEnd[event.getInt()] = end;
      eventStream[event.getInt()] = stream.str();
    }
    t.ops[&op] = {stream.str(), start, end};
    t.loads[stream.str()] += seconds;
    if (auto stage = dyn_cast<hm::StageOp>(op))
      t.linkBytes[stream.str()] += hm::stagedSlice(stage).bytes;
    else if (stream != "compute" && stream != "host_optimizer")
      t.linkBytes[stream.str()] += tensorBytes(op.getResult(0).getType());
  }
  for (auto &[resource, seconds] : t.loads)
    if (seconds > t.lowerBound) {
      t.lowerBound = seconds;
      t.binding = resource;
    }
  if (profile.sharedHost) {
    // Every stream runs on the host's cores: their loads add up, and they
    // bind; the streams' overlap cannot take the step below that.
    double host = 0;
    for (auto &[stream, seconds] : t.loads)
      host += seconds;
    t.loads["host"] = host;
    t.lowerBound = host;
    t.binding = "host";
  }
  t.step = std::max(makespan, t.lowerBound);
  t.afterCompute = makespan - free[0];
  return t;
}

void writeChromeTrace(func::FuncOp fn, const hm::Timeline &timeline, llvm::raw_ostream &os) {
  const auto &kStreams = hm::kStreams;
  llvm::json::OStream j(os, 1);
  j.object([&] {
    j.attributeArray("traceEvents", [&] {
      for (unsigned tid = 0; tid < std::size(kStreams); ++tid)
        j.object([&] {
          j.attribute("name", "thread_name");
          j.attribute("ph", "M");
          j.attribute("pid", 1);
          j.attribute("tid", tid);
          j.attributeObject("args", [&] { j.attribute("name", kStreams[tid]); });
        });
      for (Operation &op : fn.getBody().front()) {
        auto it = timeline.ops.find(&op);
        if (it == timeline.ops.end())
          continue;
        const hm::OpTiming &t = it->second;
        unsigned tid = std::find(std::begin(kStreams), std::end(kStreams), t.stream) -
                       std::begin(kStreams);
        std::string name = op.getName().getStringRef().str();
        if (auto node = dyn_cast<NameLoc>(op.getLoc()))
          name += " " + node.getName().str();
        j.object([&] {
          j.attribute("name", name);
          j.attribute("ph", "X");
          j.attribute("pid", 1);
          j.attribute("tid", tid);
          j.attribute("ts", t.start * 1e6);
          j.attribute("dur", (t.end - t.start) * 1e6);
        });
      }
    });
    j.attribute("displayTimeUnit", "ms");
    j.attributeObject("otherData", [&] {
      j.attribute("profile", timeline.profile);
      j.attribute("predicted_step_seconds", timeline.step);
      j.attribute("lower_bound_seconds", timeline.lowerBound);
      j.attribute("binding", timeline.binding);
    });
  });
}

} // namespace hmcc::planner
