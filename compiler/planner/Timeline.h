//===- Timeline.h - predicting a scheduled program's step -------*- C++ -*-===//
//
// The cost model applied to a scheduled function: each op's predicted time
// on its stream (compute ops: CostModel.h; a device copy of a host tensor:
// host_to_device; a host copy of a device value: device_to_host; an update
// homed on the host: host_optimizer at the profile's rate for its state
// format; a staging copy: the storage links). Each stream runs its ops in
// program order, an op that waits for events after the ops recording them;
// the predicted step is when the last op ends. The lower bound LB is the
// largest load of any resource; resources that share hardware add up (a
// profile whose device is the host, like `cpu`, runs every stream on the
// same cores), and the prediction is never below it.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_PLANNER_TIMELINE_H
#define HMCC_PLANNER_TIMELINE_H

#include "compiler/planner/DeviceProfile.h"
#include "hm/Analysis/Timeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace hmcc::planner {

/// The stream `op` runs on (hm::streamOf) and its predicted seconds there.
std::pair<llvm::StringRef, double> streamSeconds(mlir::Operation &op,
                                                 const DeviceProfile &profile);

/// The predicted timeline of one call of the scheduled function `fn`.
hm::Timeline predictTimeline(mlir::func::FuncOp fn, const DeviceProfile &profile);

/// The timeline as a Chrome trace (chrome://tracing, Perfetto): one track
/// per stream, one complete event per op, times in microseconds.
void writeChromeTrace(mlir::func::FuncOp fn, const hm::Timeline &timeline,
                      llvm::raw_ostream &os);

} // namespace hmcc::planner

#endif // HMCC_PLANNER_TIMELINE_H
