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

StringRef streamOf(Operation &op) {
  if (auto copy = dyn_cast<IdentityOp>(op); copy && !hm::isAliasingView(&op)) {
    Operation *source = copy.getOperand().getDefiningOp();
    bool fromHost = source && hm::isHostHomed(source);
    if (auto param = dyn_cast_or_null<ParamOp>(source)) {
      Operation *decl = lookupDecl(&op, param.getNameAttr());
      fromHost = decl && hm::isHostHomed(decl);
      if (decl && hm::isStorageHomed(decl))
        return "storage_read"; // a parameter in storage, to the host
    }
    if (fromHost)
      return "host_to_device";
    if (hm::isHostHomed(&op))
      return "device_to_host";
  }
  // The host's threads: updates homed there, and a host parameter's
  // rounding to bf16 for its fetches (plan-tiers' bf16-fetches).
  if ((hm::isHostHomed(&op) && isa<SgdUpdateOp, AdamWUpdateOp, AdamW8bitUpdateOp>(op)) ||
      hm::isHostRounding(&op))
    return "host_optimizer";
  if (auto stage = dyn_cast<hm::StageOp>(op)) {
    bool in = stage.getDirection() == "in";
    Operation *decl = lookupDecl(&op, stage.getStateAttr());
    if (decl && hm::isHostHomed(decl)) // staged on the device
      return in ? "host_to_device" : "device_to_host";
    return in ? "storage_read" : "storage_write";
  }
  return "compute";
}

OpCost scheduledCost(Operation &op) {
  if (hm::isAliasingView(&op) || isa<hm::StageOp>(op))
    return OpCost{}; // no work on the device
  return opCost(&op);
}

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
  m.arena = hm::arenaOfTier(module, "device").getBytes();
  if (auto host = hm::arenaOfTier(module, "host"))
    m.hostArena = host.getBytes();
  if (auto storage = hm::arenaOfTier(module, "storage"))
    m.storageArena = storage.getBytes();
  for (const hm::PersistentTensor &t : hm::persistentTensors(module)) {
    bool host = t.tier == 1, stored = t.tier == 2;
    int64_t &sum = t.kind == "param"
                       ? (stored ? m.storageParameters : host ? m.hostParameters : m.parameters)
                   : t.kind == "state" ? (stored ? m.storageStates : host ? m.hostStates : m.states)
                                       : m.inputs;
    sum += hm::arenaBytes(t.type);
  }
  for (auto fn : module.getOps<func::FuncOp>()) {
    hm::FunctionLiveness live = hm::replayFunction(fn);
    m.activations = std::max(m.activations, live.peakBytes);
    m.hostTransient = std::max(m.hostTransient, live.hostPeakBytes);
  }
  return m;
}

std::string describeSplit(const ScheduleMemory &m) {
  return "parameters " + formatBytes(m.parameters) + ", optimizer states " +
         formatBytes(m.states) + ", inputs " + formatBytes(m.inputs) + ", activations " +
         formatBytes(m.activations) + " at their peak";
}

std::string describeHostSplit(const ScheduleMemory &m) {
  if (!m.hostArena)
    return "";
  std::string text = "parameters " + formatBytes(m.hostParameters) + ", optimizer states " +
                     formatBytes(m.hostStates) + ", gradients and copies " +
                     formatBytes(m.hostTransient) + " at their peak";
  if (m.storageArena)
    text += ", staging of stored tensors " +
            formatBytes(m.hostArena - m.hostParameters - m.hostStates - m.hostTransient);
  return text;
}

} // namespace hmcc
