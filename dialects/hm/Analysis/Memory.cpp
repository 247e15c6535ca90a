//===- Memory.cpp - what a scheduled program holds and does ---------------===//
#include "hm/Analysis/Memory.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "lib/support/Size.h"

#include "llvm/ADT/DenseSet.h"

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
  for (auto p : module.getOps<ParameterOp>())
    m.parameters += hm::arenaBytes(p.getType());
  for (auto s : module.getOps<StateOp>())
    m.states += hm::arenaBytes(s.getType());
  llvm::DenseSet<int64_t> inputOffsets;
  for (auto fn : module.getOps<func::FuncOp>()) {
    for (unsigned k = 0; k < fn.getNumArguments(); ++k)
      if (auto offset = fn.getArgAttrOfType<IntegerAttr>(k, hm::kOffsetAttr))
        if (inputOffsets.insert(offset.getInt()).second)
          m.inputs += hm::arenaBytes(fn.getArgument(k).getType());
    int64_t live = 0;
    for (Operation &op : fn.getBody().front()) {
      if (auto place = dyn_cast<hm::PlaceOp>(op))
        live += hm::arenaBytes(place.getValue().getType());
      else if (auto release = dyn_cast<hm::ReleaseOp>(op))
        for (Value v : release.getValues())
          live -= hm::arenaBytes(v.getType());
      m.activations = std::max(m.activations, live);
    }
  }
  return m;
}

std::string describeSplit(const ScheduleMemory &m) {
  return "parameters " + formatBytes(m.parameters) + ", optimizer states " +
         formatBytes(m.states) + ", inputs " + formatBytes(m.inputs) + ", activations " +
         formatBytes(m.activations) + " at their peak";
}

} // namespace hmcc
