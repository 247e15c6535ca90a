//===- CostModel.h - predicted time of tg ops on a device -------*- C++ -*-===//
//
// A roofline per op: its FLOPs and bytes (tg/Analysis/Cost.h) against the
// profile's peak for its element type and its memory bandwidth, each scaled
// by the efficiency of the op's kind, plus the fixed cost of one op:
//
//   time = launch + max(flops / (peak(dtype) * eff), bytes / (bandwidth * eff))
//
// Ops that only give a tensor a new shape (reshape and its kin) cost the
// launch alone when they alias (the placement decides; the model assumes
// they do). Leaves (parameters, constants) cost nothing.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_PLANNER_COSTMODEL_H
#define HMCC_PLANNER_COSTMODEL_H

#include "compiler/planner/DeviceProfile.h"
#include "tg/Analysis/Cost.h" // SymbolLookupScope for loops over a program

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"

#include <vector>

namespace hmcc::planner {

/// The kind whose efficiency applies to `op`: "matmul", "attention"
/// (tg.attention and its gradient), "fused" (tg.fused), "elementwise",
/// "transcendental" (exp, log, erf, tanh, sigmoid, pow), "reduction",
/// "norm", "softmax", "data", "optimizer" or "" for leaves.
llvm::StringRef opKind(mlir::Operation *op);

/// Predicted seconds of one op on `profile`. Loops over a program's ops
/// keep a SymbolLookupScope alive around them: the updates' parameters and
/// states are found by name.
double predictSeconds(mlir::Operation *op, const DeviceProfile &profile);

/// The predicted compute time (`profile`) before each op of `fn`'s body, by
/// the op's position, and after the last one (ops + 1 entries): the sum of
/// the times of the ops before it that run on the compute stream.
std::vector<double> computeClock(mlir::func::FuncOp fn, const DeviceProfile &profile);

/// The share of its parameter an optimizer update covers: (hi - lo) / its
/// elements for a chunk (hm.chunk), else 1.
double chunkShare(mlir::Operation *op);

/// Seconds the host optimizer takes for `elements` parameter elements with
/// states of `format` ("f32" or "8bit"), at the profile's rate for it.
double hostUpdateSeconds(double elements, llvm::StringRef format, const DeviceProfile &profile);

/// Seconds to move `bytes` over a link of `bandwidth` bytes/s.
inline double transferSeconds(int64_t bytes, double bandwidth) {
  return bandwidth > 0 ? double(bytes) / bandwidth : 0.0;
}

} // namespace hmcc::planner

#endif // HMCC_PLANNER_COSTMODEL_H
