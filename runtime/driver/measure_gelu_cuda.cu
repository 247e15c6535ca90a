// hmrt-measure-cuda's fused program (driver/measure_gelu.h) as hmcc --target
// cuda would write it (compiler/target/cuda/FusedKernels.cpp), registered
// so that the backend runs it as programs run theirs: the measured `fused`
// efficiency is the generated kernels' (HMRT_CUDA_FUSED=interpreter
// measures the interpreter instead).
#include "cuda/fused_generated.h"
#include "measure_gelu.h"

namespace {

using hmrt::ew::fused_apply;

struct MeasureGelu {
  static constexpr int kInputs = int(hmrt::kMeasureGeluInputs);
  static constexpr int kInstructions = int(hmrt::kMeasureGeluInstructions);
  static constexpr const int64_t* kCode = hmrt::kMeasureGeluCode;
  static HMRT_FUSED_INLINE float eval(const float* r) {
    const float v5 = fused_apply(HMRT_FUSED_ADD, r[0], r[1], 0.0f);
    const float v6 = fused_apply(HMRT_FUSED_DIV, v5, r[2], 0.0f);
    const float v7 = fused_apply(HMRT_FUSED_ERF, v6, 0.0f, 0.0f);
    const float v8 = fused_apply(HMRT_FUSED_ADD, v7, r[3], 0.0f);
    const float v9 = fused_apply(HMRT_FUSED_MUL, v5, v8, 0.0f);
    return fused_apply(HMRT_FUSED_MUL, v9, r[4], 0.0f);
  }
};

const int kRegistered = hmrt::cuda::register_programs<MeasureGelu>();

}  // namespace
