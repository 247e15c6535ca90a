// The fused program hmrt-measure times for the profile's `fused`
// efficiency: bias + GELU (erf), 6 ops per element, as tg-fuse-elementwise
// makes it (inputs: bias, x, sqrt(2), 1, 1/2).  On a GPU it runs as a
// kernel compiled for it (measure_gelu_kernel.h, registered by
// measure_gelu_cuda.cu), as the fused programs of programs do.
#ifndef HMRT_DRIVER_MEASURE_GELU_H
#define HMRT_DRIVER_MEASURE_GELU_H

#include <cstdint>

#include "hmrt/tensor_ops.h"

namespace hmrt {

constexpr int64_t kMeasureGeluInputs = 5, kMeasureGeluInstructions = 6;
constexpr int64_t kMeasureGeluCode[4 * kMeasureGeluInstructions] = {
    HMRT_FUSED_ADD, 0, 1,  -1, HMRT_FUSED_DIV, 5, 2, -1, HMRT_FUSED_ERF, 6, -1, -1,
    HMRT_FUSED_ADD, 7, 3, -1, HMRT_FUSED_MUL, 5, 8, -1, HMRT_FUSED_MUL, 9, 4, -1};

}  // namespace hmrt

#endif  // HMRT_DRIVER_MEASURE_GELU_H
