// Scalar forms of the elementwise ops whose NaN and zero handling is not a
// plain IEEE operation, for the one-op kernels that walk broadcast plans
// (hmrt_binary_f32); cpu/vmath's vector forms (used by hmrt_unary_f32,
// hmrt_relu_backward and hmrt_fused_f32) compute the same values lane by
// lane; the CUDA backend's binary kernel calls these.
#ifndef HMRT_CPU_EW_OPS_H
#define HMRT_CPU_EW_OPS_H

#include <cmath>
#include <cstdint>

#include "core/host_device.h"


namespace hmrt::ew {

HMRT_HD inline float max(float u, float v) { return u > v || u != u ? u : v; }
HMRT_HD inline float min(float u, float v) { return u < v || u != u ? u : v; }

}  // namespace hmrt::ew

#endif  // HMRT_CPU_EW_OPS_H
