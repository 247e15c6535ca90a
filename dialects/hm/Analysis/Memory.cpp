//===- Memory.cpp - what a scheduled program holds and does ---------------===//
#include "hm/Analysis/Memory.h"
#include "hm/Analysis/Liveness.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "lib/support/Size.h"

#include <algorithm>

using namespace mlir;
using namespace hmcc::tg;

namespace hmcc {

bool runsInProgram(Operation &op) {
  if (isa<hm::PlaceOp, hm::ReleaseOp, ParamOp, func::ReturnOp>(op))
    return false;
  if (isa<ConstantOp>(op))
    return hm::placedOffset(op.getResult(0)).has_value();
  return true;
}

OpCost scheduledCost(Operation &op) { return hm::isAliasingView(&op) ? OpCost{} : opCost(&op); }

OpCost functionCost(func::FuncOp fn) {
  OpCost total;
  for (Operation &op : fn.getBody().front())
    if (runsInProgram(op)) {
      OpCost c = scheduledCost(op);
      total.flops += c.flops;
      total.bytes += c.bytes;
    }
  return total;
}

ScheduleMemory scheduleMemory(ModuleOp module) {
  ScheduleMemory m;
  m.arena = (*module.getOps<hm::ArenaOp>().begin()).getBytes();
  for (const hm::PersistentTensor &t : hm::persistentTensors(module)) {
    int64_t &sum = t.kind == "param" ? m.parameters : t.kind == "state" ? m.states : m.inputs;
    sum += hm::arenaBytes(t.type);
  }
  for (auto fn : module.getOps<func::FuncOp>())
    m.activations = std::max(m.activations, hm::replayFunction(fn).peakBytes);
  return m;
}

std::string describeSplit(const ScheduleMemory &m) {
  return "parameters " + formatBytes(m.parameters) + ", optimizer states " +
         formatBytes(m.states) + ", inputs " + formatBytes(m.inputs) + ", activations " +
         formatBytes(m.activations) + " at their peak";
}

} // namespace hmcc
