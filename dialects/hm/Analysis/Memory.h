//===- Memory.h - what a scheduled program holds and does -------*- C++ -*-===//
#ifndef HMCC_HM_ANALYSIS_MEMORY_H
#define HMCC_HM_ANALYSIS_MEMORY_H

#include "tg/Analysis/Cost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>

namespace hmcc {

/// Where the memory of a scheduled program goes, in bytes (each tensor
/// rounded up to the arena's alignment).
struct ScheduleMemory {
  int64_t arena = 0;       ///< what the program allocates on the device
  int64_t parameters = 0, states = 0, inputs = 0; ///< homed on the device
  int64_t activations = 0; ///< the most that is live at once on the device
  /// The host arena (plan-tiers): its bytes, the parameters and states
  /// homed there, and the most of its transient values live at once.
  int64_t hostArena = 0, hostParameters = 0, hostStates = 0, hostTransient = 0;
  /// The storage arena: the parameters and optimizer states homed there.
  int64_t storageArena = 0, storageParameters = 0, storageStates = 0;
};
ScheduleMemory scheduleMemory(mlir::ModuleOp module);

/// "parameters 1.2 MiB, optimizer states ..., activations ... at their
/// peak": how the arena splits, as the summary and hm-check-budget say it.
std::string describeSplit(const ScheduleMemory &m);

/// "parameters ..., optimizer states ..., gradients and copies ... at
/// their peak": how the host arena splits (empty without one).
std::string describeHostSplit(const ScheduleMemory &m);

/// Whether `op` runs in the scheduled program: not the memory plan, a
/// parameter read, the return, or a small constant (static data).
bool runsInProgram(mlir::Operation &op);

/// The stream an op of a scheduled program belongs to: "host_to_device" (a
/// device copy of a tensor homed or placed on the host), "device_to_host"
/// (a copy placed on the host), "storage_read" (a host copy of a parameter
/// homed in storage, or an hm.stage "in"), "storage_write" (an hm.stage
/// "out"), "host_optimizer" (an update homed on the host) or "compute".
llvm::StringRef streamOf(mlir::Operation &op);

/// The work of `op` in the scheduled program (a view in its operand's own
/// bytes costs nothing).
OpCost scheduledCost(mlir::Operation &op);

/// The work of one call of a scheduled function: the sum of scheduledCost
/// over the ops that run.
OpCost functionCost(mlir::func::FuncOp fn);

} // namespace hmcc

#endif // HMCC_HM_ANALYSIS_MEMORY_H
