// hmrt-measure-cuda's fused program (driver/measure_gelu.h) as hmcc --target
// cuda writes a program's fused programs (compiler/target/cuda/
// FusedKernels.cpp), for measure_gelu_cuda.cu to register; plan_test.cpp
// checks it against the CPU kernel on the host.
#ifndef HMRT_DRIVER_MEASURE_GELU_KERNEL_H
#define HMRT_DRIVER_MEASURE_GELU_KERNEL_H

#include "cuda/fused_generated.h"
#include "driver/measure_gelu.h"

namespace hmrt {

struct MeasureGelu {
  static constexpr int kInputs = int(kMeasureGeluInputs);
  static constexpr int kInstructions = int(kMeasureGeluInstructions);
  static constexpr const int64_t* kCode = kMeasureGeluCode;
  static HMRT_FUSED_INLINE float eval(const float* r) {
    using ew::fused_apply;
    const float v5 = fused_apply(HMRT_FUSED_ADD, r[0], r[1], 0.0f);
    const float v6 = fused_apply(HMRT_FUSED_DIV, v5, r[2], 0.0f);
    const float v7 = fused_apply(HMRT_FUSED_ERF, v6, 0.0f, 0.0f);
    const float v8 = fused_apply(HMRT_FUSED_ADD, v7, r[3], 0.0f);
    const float v9 = fused_apply(HMRT_FUSED_MUL, v5, v8, 0.0f);
    return fused_apply(HMRT_FUSED_MUL, v9, r[4], 0.0f);
  }
};

}  // namespace hmrt

#endif  // HMRT_DRIVER_MEASURE_GELU_KERNEL_H
