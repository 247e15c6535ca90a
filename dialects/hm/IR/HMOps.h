//===- HMOps.h - ops of the memory/schedule dialect -------------*- C++ -*-===//
#ifndef HMCC_HM_HMOPS_H
#define HMCC_HM_HMOPS_H

#include "hm/IR/HMDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cstdint>
#include <optional>

namespace hmcc::hm {

/// Offsets and sizes in an arena are multiples of this many bytes.
constexpr int64_t kAlignment = 64;

/// `bytes` rounded up to kAlignment (at least one unit).
int64_t alignedSize(int64_t bytes);

/// The arena bytes a tensor of `type` takes: its bytes, aligned.
int64_t arenaBytes(mlir::Type type);

/// The persistent offset attribute on tg.parameter, tg.state and inputs.
constexpr const char *kOffsetAttr = "hm.offset";
/// The events between streams (plan-streams): an op with hm.event = N
/// records event N once it has run; one with hm.wait = array<i64: N, ...>
/// runs only after those events.
constexpr const char *kEventAttr = "hm.event";
constexpr const char *kWaitAttr = "hm.wait";
/// On an op of another stream than compute (plan-overlap): its operands
/// stay in memory for this many ops after it, the compute the cost model
/// says the op takes, so that their bytes are not reused while it runs.
constexpr const char *kHoldAttr = "hm.hold";
/// The same as a preference where the holds do not fit the budget
/// (plan-overlap): the bytes an op with hm.soft_hold = N reads last are
/// freed after it as usual, but hm-place-buffers gives them to a new value
/// within the N ops after it only when no other free bytes fit.
constexpr const char *kSoftHoldAttr = "hm.soft_hold";
/// Where a tg.parameter or tg.state lives, and where the results of an op
/// are placed: "host" (the host arena), "storage" (the storage arena: only
/// tg.parameter and tg.state, set by plan-storage) or "device" (the
/// default, also when absent). Set by plan-tiers.
constexpr const char *kHomeAttr = "hm.home";
/// On a tg.parameter or tg.state that is a piece of a larger tensor: the
/// symbol name of the whole, as checkpoints, the initial state and the
/// program's descriptor name it. plan-tiers splits a parameter by rows
/// where its chunks have different homes; the pieces of one whole, with
/// their optimizer states split alike, are declared one after the other,
/// in order, and together hold its bytes in row-major order.
constexpr const char *kWholeAttr = "hm.whole";
/// On the module: where constants live, "static" (the program's static
/// data) or "arena" (placed like any value): hm-set-constants.
constexpr const char *kConstantsAttr = "hm.constants";
/// Whether `op` (a tg.parameter, tg.state or an op with results) has
/// hm.home = "host".
bool isHostHomed(mlir::Operation *op);
/// Whether `op` is a host parameter's bf16 copy rounded on the host
/// (plan-tiers' bf16-fetches: a tg.cast of a tg.param, homed there). Like
/// the parameter itself, it is read, not made, by the forward: no
/// activation.
bool isHostRounding(mlir::Operation *op);
/// Whether `op` (a tg.state or tg.parameter) has hm.home = "storage".
bool isStorageHomed(mlir::Operation *op);
/// The tier of `op`'s home: 0 device, 1 host, 2 storage.
int homeTier(mlir::Operation *op);
/// The tier of the staging copy of `decl` (a tg.state or tg.parameter
/// homed on the host or in storage; hm.stage, hm.staged): the one above
/// its home, the host's for storage and the device's for the host.
inline int stagingTier(mlir::Operation *decl) { return homeTier(decl) - 1; }
/// Offsets and sizes in the storage arena are multiples of this many bytes
/// (the block size of O_DIRECT transfers), and so are the host staging
/// buffers of stored states.
constexpr int64_t kStorageAlignment = 4096;
/// `bytes` rounded up to whole kStorageAlignment blocks.
inline int64_t storageBlocks(int64_t bytes) {
  return (bytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
}
/// On an optimizer update whose states (or parameter) are stored, or that
/// runs on the device while they are homed on the host: a dictionary from
/// each such tensor's symbol name to the offset of its staging copy in the
/// arena a tier up (stagingTier; plan-staging), where the update finds it.
constexpr const char *kStagedAttr = "hm.staged";
/// On the module, set by plan-tiers where updates run on the device for
/// parameters homed on the host: the device bytes (i64) of their two
/// staging buffers, which plan-staging adds at the end of the device arena;
/// plan-recompute and plan-overlap plan the rest under --vram less these.
constexpr const char *kDeviceStagingAttr = "hm.device_staging";
/// On an optimizer update of stored states and on the hm.stage ops that
/// move them: the elements [lo, hi) of the parameter it covers, an
/// array<i64: lo, hi> (plan-staging's chunks); absent: all of it.
constexpr const char *kChunkAttr = "hm.chunk";
/// Chunk boundaries are multiples of chunkGranularity() of every tensor
/// the update stages, so that each slice starts on a kStorageAlignment
/// boundary; this is the smallest (fp32 states and parameters).
constexpr int64_t kChunkElements = kStorageAlignment / 4;
/// The parameter elements whose slice of `state` (a tg.state, or the
/// tg.parameter itself) fills one kStorageAlignment block: 1024 for fp32
/// moments and parameters, 4096 for 8-bit codes, 262144 for the absmax of
/// 256-element blocks.
int64_t chunkGranularity(mlir::Operation *state);
/// The tensor type of `tensor`, a tg.state or a tg.parameter.
mlir::RankedTensorType storedType(mlir::Operation *tensor);
/// The chunk `op` covers ({lo, hi} of hm.chunk), if it has one.
std::optional<std::pair<int64_t, int64_t>> chunkOf(mlir::Operation *op);
/// The elements of `state` (a tg.state or tg.parameter) that parameter
/// elements [lo, hi) map to: the same range, or for a block-wise absmax
/// state ("..._absmax") the entries of the 256-element blocks they touch.
std::pair<int64_t, int64_t> stateElements(mlir::Operation *state, int64_t lo, int64_t hi);
/// The bytes of staged tensor `state` (a tg.state or tg.parameter homed in
/// storage or on the host) that `op` (an hm.stage, or an update
/// reading it through hm.staged) moves or touches: [begin, begin + bytes)
/// of its bytes at home, whole kStorageAlignment blocks in storage, the
/// bytes themselves on the host; the whole state when `op` has no hm.chunk.
struct Slice {
  int64_t begin = 0, bytes = 0;
};
Slice stagedSlice(mlir::Operation *op, mlir::Operation *state);
/// The same for parameter elements `chunk` ({lo, hi}; none: all), in whole
/// kStorageAlignment blocks (as storage moves them) or not.
Slice stateSlice(mlir::Operation *state, std::optional<std::pair<int64_t, int64_t>> chunk,
                 bool wholeBlocks);
/// The recompute planner's chain and decision, on the module
/// (plan-recompute).
constexpr const char *kRecomputeAttr = "hm.recompute";
/// When no plan fits --vram: the smallest --vram that does, in bytes (an
/// i64 on the module, set by plan-recompute with its error).
constexpr const char *kSmallestVramAttr = "hm.smallest_vram";

/// The arena offset of `v`, if an hm.place stores it.
std::optional<int64_t> placedOffset(mlir::Value v);

/// Whether `op` is a view (tg::isView) placed in its operand's own bytes, so
/// that no copy runs.
bool isAliasingView(mlir::Operation *op);

/// The operand whose bytes `op`'s kernel may write its result over (the
/// runtime's "in place OK"), if any: the scores of an f32 loss gradient.
/// (The runtime allows it for more ops, fused elementwise programs and the
/// binaries among them; taking their operands' bytes placed the bundled
/// demo's smallest budget 7% larger, first fit fragmenting the arena.)
std::optional<unsigned> inPlaceOperand(mlir::Operation *op);

/// The operand whose bytes `op`'s result is placed in, if any: that of an
/// aliasing view, or its in-place operand (inPlaceOperand) placed at the
/// result's offset in the same arena, whose bytes the op then overwrites.
mlir::Value bytesTakenFrom(mlir::Operation *op);

} // namespace hmcc::hm

#define GET_OP_CLASSES
#include "hm/IR/HMOps.h.inc"

namespace hmcc::hm {
/// The arena of `tier` ("device", "host" or "storage") in `module`, if there
/// is one.
ArenaOp arenaOfTier(mlir::ModuleOp module, llvm::StringRef tier);
/// The slice of its state an hm.stage moves (stagedSlice of its state).
Slice stagedSlice(StageOp stage);
/// Whether `decl` is a tg.state or tg.parameter homed in storage (false for
/// null).
bool isStoredTensor(mlir::Operation *decl);
} // namespace hmcc::hm

#endif // HMCC_HM_HMOPS_H
