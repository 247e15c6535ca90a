//===- PlaceBuffers.h - the placement as a function -------------*- C++ -*-===//
//
// What hm-place-buffers does, callable on a module of one's own: the
// planner places trial copies of the program to learn their exact arena.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_CONVERSION_TGTOHM_PLACEBUFFERS_H
#define HMCC_CONVERSION_TGTOHM_PLACEBUFFERS_H

#include "hm/Analysis/Memory.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>

#include <string>

namespace hmcc {

/// Places `module` as hm-place-buffers does (every function when
/// `functions` is empty); errors are emitted on the module.
mlir::LogicalResult placeBuffers(mlir::ModuleOp module, llvm::ArrayRef<std::string> functions);

/// What `module` needs in each arena once placed, learned by placing a copy
/// (`module` is left as it is); nothing when the placement fails, which
/// emits why.
std::optional<ScheduleMemory> placedMemory(mlir::ModuleOp module);

} // namespace hmcc

#endif // HMCC_CONVERSION_TGTOHM_PLACEBUFFERS_H
