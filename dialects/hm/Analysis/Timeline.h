//===- Timeline.h - a scheduled program's predicted timeline ----*- C++ -*-===//
//
// What the planner predicts for one call of a scheduled function (computed
// by compiler/planner/Timeline.h from a device profile; the data lives here
// so that the schedule dump can show it without depending on the planner):
// every op on a stream with a predicted start and end, the busy time of each
// resource per step, the step, and its lower bound.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_HM_ANALYSIS_TIMELINE_H
#define HMCC_HM_ANALYSIS_TIMELINE_H

#include "mlir/IR/Operation.h"

#include "llvm/ADT/DenseMap.h"

#include <map>
#include <string>

namespace hmcc::hm {

struct OpTiming {
  std::string stream; ///< "compute", "host_to_device", "device_to_host", "host_optimizer"
  double start = 0, end = 0; ///< seconds from the start of the call
};

struct Timeline {
  std::string profile; ///< the device profile's name
  llvm::DenseMap<mlir::Operation *, OpTiming> ops;
  /// Busy seconds per step of each resource: the streams, and "host" (the
  /// host's cores, which every stream uses when the device is the host).
  std::map<std::string, double> loads;
  double step = 0;       ///< predicted seconds of one call
  double lowerBound = 0; ///< LB: the largest load
  std::string binding;   ///< the resource whose load is LB
  /// Bytes moved per call over each link ("host_to_device", "device_to_host").
  std::map<std::string, int64_t> linkBytes;
  /// Seconds the compute stream waits idle for the events of each other
  /// stream (what keeps the step above compute's own load), and the seconds
  /// other streams run on after compute's last op.
  std::map<std::string, double> computeWaits;
  double afterCompute = 0;
};

} // namespace hmcc::hm

#endif // HMCC_HM_ANALYSIS_TIMELINE_H
