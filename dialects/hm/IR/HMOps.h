//===- HMOps.h - ops of the memory/schedule dialect -------------*- C++ -*-===//
#ifndef HMCC_HM_HMOPS_H
#define HMCC_HM_HMOPS_H

#include "hm/IR/HMDialect.h"

#include "mlir/IR/BuiltinOps.h"
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
/// Where a tg.parameter or tg.state lives, and where the results of an op
/// are placed: "host" (the host arena) or "device" (the default, also when
/// absent). Set by plan-tiers.
constexpr const char *kHomeAttr = "hm.home";
/// Whether `op` (a tg.parameter, tg.state or an op with results) has
/// hm.home = "host".
bool isHostHomed(mlir::Operation *op);
/// The recompute planner's chain and decision, on the module
/// (plan-recompute).
constexpr const char *kRecomputeAttr = "hm.recompute";

/// The arena offset of `v`, if an hm.place stores it.
std::optional<int64_t> placedOffset(mlir::Value v);

/// Whether `op` is a view (tg::isView) placed in its operand's own bytes, so
/// that no copy runs.
bool isAliasingView(mlir::Operation *op);

} // namespace hmcc::hm

#define GET_OP_CLASSES
#include "hm/IR/HMOps.h.inc"

namespace hmcc::hm {
/// The arena of `tier` ("device" or "host") in `module`, if there is one.
ArenaOp arenaOfTier(mlir::ModuleOp module, llvm::StringRef tier);
} // namespace hmcc::hm

#endif // HMCC_HM_HMOPS_H
