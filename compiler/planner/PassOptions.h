//===- PassOptions.h - the planner passes' shared options ------*- C++ -*-===//
//
// Every planning pass takes budgets (vram, ram) as sizes and most take a
// device profile; these read them the same way, with one message naming the
// pass and the option when they are malformed. Also what several passes
// look up alike: the training function, the chunks of an update, the room
// left for prefetching; and plan-tiers' order of candidates for the host,
// here so that unit tests reach it.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_PLANNER_PASSOPTIONS_H
#define HMCC_PLANNER_PASSOPTIONS_H

#include "compiler/planner/DeviceProfile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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

/// The training function of `module`: the one with optimizer updates, when
/// every parameter is updated by one (not by the model's own algorithm);
/// null when there is none.
mlir::func::FuncOp trainingFunction(mlir::ModuleOp module);

/// The device bytes plan-tiers and plan-recompute keep free, when
/// parameters must live on the host, for plan-overlap to fetch them ahead
/// of their readers: the largest parameter's bytes (the largest fetch).
/// None on a profile whose device is the host (the copies share its cores:
/// prefetching gains little there). Each falls back to the whole budget
/// where nothing fits without it.
int64_t prefetchHeadroom(mlir::ModuleOp module, const DeviceProfile &profile);

/// The order in which plan-tiers considers the parameters of `module` for
/// the host (it homes the fewest first ones that fit): largest first,
/// except that those whose slack is shorter than their own host round trip
/// (gradient to the host, host update, fetch back, on `profile`) come after
/// all others. A parameter's slack is the predicted compute of the training
/// function `fn` before its first reader plus that after its gradient is
/// made: the window in which its update and the fetch for the next step can
/// run beside compute. An embedding, read first and differentiated last,
/// has next to none: homed on the host, its update would run after compute
/// ends.
llvm::SmallVector<llvm::StringRef> hostCandidates(mlir::ModuleOp module, mlir::func::FuncOp fn,
                                                  const DeviceProfile &profile);

/// The fewest `n` in [0, total] for which `meets(n)` holds, where it holds
/// for `total` (never asked) and for every count above one that meets it:
/// a galloping search from `guess` (at most `total`; steps 1, 2, 4, ... away
/// from it) for a count that fails below one that meets it, then a
/// bisection between them; each count asked once at most. A guess
/// close to the answer takes a few calls of `meets` where a bisection over
/// the whole range takes log2(total).
size_t fewestFrom(size_t guess, size_t total, llvm::function_ref<bool(size_t)> meets);

/// Parameter elements per chunk for a chunk size of `bytes` (fp32
/// parameter bytes): rounded down to a multiple of hm::kChunkElements (4
/// KiB of parameter), and at least that.
int64_t chunkElements(int64_t bytes);
/// The element ranges [lo, hi) in which the update of a parameter of `n`
/// elements with `states` runs for chunks of `chunk` elements, rounded up
/// to the states' granularity (hm::chunkGranularity: 1 MiB of parameter
/// with 8-bit states); none (one whole update) without a chunk size or
/// when the parameter is no larger than one chunk.
llvm::SmallVector<std::pair<int64_t, int64_t>> chunkRanges(llvm::ArrayRef<mlir::Operation *> states,
                                                            int64_t n, int64_t chunk);

/// The bytes a staged slice of `sliceBytes` takes in a staging buffer:
/// itself from storage (whole 4096-byte blocks already), else aligned as the
/// device arena's values are.
int64_t stagingFootprint(int64_t sliceBytes, bool fromStorage);

/// The bytes one staging buffer (plan-staging) takes for the update of
/// `staged` (states, and the parameter where it is staged too; `n`
/// parameter elements) in chunks of `chunk` elements (chunkRanges; whole
/// without): the largest sum of their slices over the chunks, in whole
/// 4096-byte blocks from storage (`fromStorage`), else each aligned as the
/// device arena's values (staged from the host).
int64_t stagingBytes(llvm::ArrayRef<mlir::Operation *> staged, int64_t n, int64_t chunk,
                     bool fromStorage);

/// Moves each optimizer update of `fn` for which `which` holds to just
/// after the last op it must follow (what defines its operands, and every
/// reader of its parameter, through views of it): up where that op comes
/// before it (`down` false), down where it comes after it (`down` true).
void moveUpdates(mlir::func::FuncOp fn, llvm::function_ref<bool(mlir::Operation *)> which,
                 bool down = false);

/// The bytes hm::kDeviceStagingAttr reserves on `module`; 0 without.
int64_t deviceStaging(mlir::ModuleOp module);

} // namespace hmcc::planner

#endif // HMCC_PLANNER_PASSOPTIONS_H
