//===- DeviceProfile.h - what the target machine can do ---------*- C++ -*-===//
//
// The figures the planner's cost model reads: peak arithmetic per dtype,
// memory bandwidth, the bandwidth of every link a plan moves bytes over,
// the host optimizer's throughput and a fixed cost per op. Two profiles are
// built in (`cpu`, a small x86 host; `h200`, the measured H200 machine of
// the design brief); any other is a JSON file with the same fields, as
// `hmcc --measure-device` writes it (docs/device-profile.md).
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_PLANNER_DEVICEPROFILE_H
#define HMCC_PLANNER_DEVICEPROFILE_H

#include "llvm/ADT/StringRef.h"

#include <map>
#include <optional>
#include <string>

namespace hmcc::planner {

struct DeviceProfile {
  std::string name;
  /// Peak arithmetic, FLOP/s, by element type ("f32", "bf16", "f16").
  std::map<std::string, double> peakFlops;
  /// Device memory bandwidth (the host memory on the CPU target), bytes/s.
  double memoryBandwidth = 0;
  /// Link bandwidths, bytes/s.
  double hostToDevice = 0, deviceToHost = 0;
  double bothDirections = 0; ///< host<->device, both ways at once, in total
  double storageRead = 0, storageWrite = 0;
  /// Seconds each storage transfer takes besides its bytes (links.
  /// storage_latency; optional, 0 when absent).
  double storageLatency = 0;
  double hostCopy = 0;
  /// Host optimizer throughput, parameters/s, by state format ("f32",
  /// "8bit"), all host cores.
  std::map<std::string, double> hostOptimizer;
  /// Fixed cost of one op, seconds (a kernel launch on a GPU, a call and
  /// its thread fork on the CPU).
  double launchOverhead = 0;
  /// The fraction of peak an op kind reaches ("matmul", "elementwise",
  /// "transcendental", "reduction", "norm", "softmax", "data", "optimizer",
  /// "attention", "fused");
  /// 1 where absent.
  std::map<std::string, double> efficiency;
  /// Whether the device is the host (the CPU target): compute, copies and
  /// the host optimizer share the host's cores, so their loads add up.
  bool sharedHost = false;

  double flopsFor(llvm::StringRef dtype) const;
  double efficiencyOf(llvm::StringRef kind) const;
};

/// The built-in profile `name` ("cpu" or "h200"), if there is one.
std::optional<DeviceProfile> builtinProfile(llvm::StringRef name);

/// `spec` is "cpu", "h200" or the path of a JSON profile. On failure returns
/// nothing and sets `error` to one line naming the file and the field.
std::optional<DeviceProfile> loadDeviceProfile(llvm::StringRef spec, std::string &error);

/// The profile as JSON, in the form loadDeviceProfile reads.
std::string toJson(const DeviceProfile &profile);

} // namespace hmcc::planner

#endif // HMCC_PLANNER_DEVICEPROFILE_H
