// The per-row LayerNorm steps shared by the CPU kernels (cpu/norm.cpp) and
// the CUDA backend's (cuda/cuda_kernels.cu), so that both compute the same
// bits (the sums of the forward pass are cpu/vec.h's reduce_sum, which the
// GPU mirrors lane for lane).
#ifndef HMRT_CORE_NORM_MATH_H
#define HMRT_CORE_NORM_MATH_H

#include <cstdint>

#include "core/float16.h"  // HMRT_HD

namespace hmrt {

// y = (x - m) * s * weight + bias over one row (weight, bias nullable).
HMRT_HD inline void layernorm_row(const float* xr, const float* weight, const float* bias,
                                  float m, float s, float* yr, int64_t cols) {
  for (int64_t c = 0; c < cols; ++c) {
    float v = (xr[c] - m) * s;
    if (weight) v *= weight[c];
    if (bias) v += bias[c];
    yr[c] = v;
  }
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * weight, over
// one row with its saved mean m and rstd s (weight nullable).
HMRT_HD inline void layernorm_dx_row(const float* dyr, const float* xr, const float* weight,
                                     float m, float s, float* dxr, int64_t cols) {
  float sum_g = 0.0f, sum_gx = 0.0f;
  for (int64_t c = 0; c < cols; ++c) {
    const float g = weight ? dyr[c] * weight[c] : dyr[c];
    sum_g += g;
    sum_gx += g * ((xr[c] - m) * s);
  }
  const float mean_g = sum_g / static_cast<float>(cols);
  const float mean_gx = sum_gx / static_cast<float>(cols);
  for (int64_t c = 0; c < cols; ++c) {
    const float g = weight ? dyr[c] * weight[c] : dyr[c];
    const float xhat = (xr[c] - m) * s;
    dxr[c] = s * (g - mean_g - xhat * mean_gx);
  }
}

}  // namespace hmrt

#endif  // HMRT_CORE_NORM_MATH_H
