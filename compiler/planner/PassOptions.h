//===- PassOptions.h - the planner passes' shared options ------*- C++ -*-===//
//
// Every planning pass takes budgets (vram, ram) as sizes and most take a
// device profile; these read them the same way, with one message naming the
// pass and the option when they are malformed.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_PLANNER_PASSOPTIONS_H
#define HMCC_PLANNER_PASSOPTIONS_H

#include "compiler/planner/DeviceProfile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <optional>

namespace hmcc::tg {
class StateOp;
} // namespace hmcc::tg

namespace hmcc::planner {

/// The byte budget a size option (`text`, e.g. "24G") gives: nothing when
/// it is empty. Malformed: failure, after an error on `module` such as
/// "plan-overlap: vram: invalid size ...".
mlir::FailureOr<std::optional<int64_t>> budgetOption(mlir::ModuleOp module, llvm::StringRef pass,
                                                     llvm::StringRef option, llvm::StringRef text);

/// The device profile `spec` (cpu, h200 or a JSON file) names; failure,
/// after an error on `module` naming `pass`, when it cannot be loaded.
mlir::FailureOr<DeviceProfile> profileOption(mlir::ModuleOp module, llvm::StringRef pass,
                                             llvm::StringRef spec);

/// Parameter elements per chunk for a chunk size of `bytes` (fp32
/// parameter bytes): rounded down to a multiple of hm::kChunkElements (4
/// KiB of parameter), and at least that.
int64_t chunkElements(int64_t bytes);
/// `chunk` elements rounded up to the granularity of the update of
/// `states` (hm::chunkGranularity: 1 MiB of parameter with 8-bit states).
int64_t chunkFor(llvm::ArrayRef<tg::StateOp> states, int64_t chunk);

} // namespace hmcc::planner

#endif // HMCC_PLANNER_PASSOPTIONS_H
