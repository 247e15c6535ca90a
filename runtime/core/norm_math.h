// The per-row LayerNorm steps shared by the CPU kernels (cpu/norm.cpp) and
// the CUDA backend's (cuda/cuda_kernels.cu), so that both compute the same
// bits (the forward pass's sums are cpu/vec.h's reduce_sum on the CPU and
// reduce_sum8, its lane-for-lane mirror, on the GPU).
#ifndef HMRT_CORE_NORM_MATH_H
#define HMRT_CORE_NORM_MATH_H

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace hmrt {

// cpu/vec.h's reduce_sum: lanes l and l + 4 of two 4-lane accumulators,
// combined lane-wise, then (b0 + b1) + (b2 + b3), then the tail in order.
template <class F>
HMRT_HD inline float reduce_sum8(int64_t n, F f) {
  float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) a[l] += f(i + l);
  float b[4];
  for (int l = 0; l < 4; ++l) b[l] = a[l] + a[l + 4];
  float s = (b[0] + b[1]) + (b[2] + b[3]);
  for (; i < n; ++i) s += f(i);
  return s;
}

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

// The forward over one row from scratch, the sums as reduce_sum8 (the CPU's
// hmrt::sum and sum_sq_dev): what a GPU thread computes per row, and what a
// host test checks bit for bit against hmrt_layernorm_forward.
HMRT_HD inline void layernorm_forward_row(const float* xr, const float* weight, const float* bias,
                                          float eps, float* yr, float* mean, float* rstd,
                                          int64_t cols) {
  const float m = reduce_sum8(cols, [&](int64_t c) { return xr[c]; }) / static_cast<float>(cols);
  const float var = reduce_sum8(cols, [&](int64_t c) {
                      const float d = xr[c] - m;
                      return d * d;
                    }) /
                    static_cast<float>(cols);
  const float s = 1.0f / sqrtf(var + eps);
  layernorm_row(xr, weight, bias, m, s, yr, cols);
  if (mean) *mean = m;
  if (rstd) *rstd = s;
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
