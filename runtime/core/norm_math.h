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

// cpu/vec.h's reduce_sum, in three parts that a group of eight GPU threads
// can share (cuda/cuda_kernels.cu's group8_sum): lane l's accumulator sums
// f(i + l) over the whole groups of eight in order (sum8_lane); the lanes
// combine as ((a0 + a4) + (a1 + a5)) + ((a2 + a6) + (a3 + a7))
// (sum8_combine);
// then the tail in order.
template <class F>
HMRT_HD inline float sum8_lane(int64_t n, int l, F f) {
  float a = 0.0f;
  for (int64_t i = 0; i + 8 <= n; i += 8) a += f(i + l);
  return a;
}
HMRT_HD inline float sum8_combine(const float a[8]) {
  float b[4];
  for (int l = 0; l < 4; ++l) b[l] = a[l] + a[l + 4];
  return (b[0] + b[1]) + (b[2] + b[3]);
}
template <class F>
HMRT_HD inline float reduce_sum8(int64_t n, F f) {
  float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // the eight sum8_lane, interleaved
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) a[l] += f(i + l);
  float s = sum8_combine(a);
  for (; i < n; ++i) s += f(i);
  return s;
}
struct ReduceSum8 {
  template <class F>
  HMRT_HD float operator()(int64_t n, F f) const {
    return reduce_sum8(n, f);
  }
};

// One element of a LayerNorm row: (x - m) * s * weight + bias (weight,
// bias nullable).
HMRT_HD inline float layernorm_element(const float* xr, const float* weight, const float* bias,
                                       float m, float s, int64_t c) {
  float v = (xr[c] - m) * s;
  if (weight) v *= weight[c];
  if (bias) v += bias[c];
  return v;
}

// y = (x - m) * s * weight + bias over one row (weight, bias nullable).
HMRT_HD inline void layernorm_row(const float* xr, const float* weight, const float* bias,
                                  float m, float s, float* yr, int64_t cols) {
  for (int64_t c = 0; c < cols; ++c) yr[c] = layernorm_element(xr, weight, bias, m, s, c);
}

// A row's rstd from the sum of its squared deviations from its mean.
HMRT_HD inline float layernorm_rstd(float sum_sq_dev, int64_t cols, float eps) {
  return 1.0f / sqrtf(sum_sq_dev / static_cast<float>(cols) + eps);
}

// The forward over one row from scratch, the sums as reduce_sum8 (the CPU's
// hmrt::sum and sum_sq_dev), what a host test checks bit for bit against
// hmrt_layernorm_forward.
HMRT_HD inline void layernorm_forward_row(const float* xr, const float* weight, const float* bias,
                                          float eps, float* yr, float* mean, float* rstd,
                                          int64_t cols) {
  const float m = reduce_sum8(cols, [&](int64_t c) { return xr[c]; }) / static_cast<float>(cols);
  const float s = layernorm_rstd(reduce_sum8(cols,
                                             [&](int64_t c) {
                                               const float d = xr[c] - m;
                                               return d * d;
                                             }),
                                 cols, eps);
  layernorm_row(xr, weight, bias, m, s, yr, cols);
  if (mean) *mean = m;
  if (rstd) *rstd = s;
}

// The backward's g = dy * weight at column c (weight nullable).
HMRT_HD inline float layernorm_g(const float* dyr, const float* weight, int64_t c) {
  return weight ? dyr[c] * weight[c] : dyr[c];
}

// Its sums over a row, as reduce_sum8: of g, and of g * xhat.
struct LayerNormDxSums {
  float g = 0.0f, gx = 0.0f;
};
template <class Sum>
HMRT_HD inline LayerNormDxSums layernorm_dx_sums(const float* dyr, const float* xr,
                                                 const float* weight, float m, float s,
                                                 int64_t cols, Sum sum) {
  LayerNormDxSums out;
  out.g = sum(cols, [&](int64_t c) { return layernorm_g(dyr, weight, c); });
  out.gx = sum(cols, [&](int64_t c) { return layernorm_g(dyr, weight, c) * ((xr[c] - m) * s); });
  return out;
}

// dx at column c: rstd * (g - mean(g) - xhat * mean(g * xhat)).
HMRT_HD inline float layernorm_dx_element(const float* dyr, const float* xr,
                                          const float* weight, float m, float s,
                                          LayerNormDxSums sums, int64_t cols, int64_t c) {
  const float mean_g = sums.g / static_cast<float>(cols);
  const float mean_gx = sums.gx / static_cast<float>(cols);
  const float xhat = (xr[c] - m) * s;
  return s * (layernorm_g(dyr, weight, c) - mean_g - xhat * mean_gx);
}

// dx over one row with its saved mean m and rstd s (weight nullable).
HMRT_HD inline void layernorm_dx_row(const float* dyr, const float* xr, const float* weight,
                                     float m, float s, float* dxr, int64_t cols) {
  const LayerNormDxSums sums = layernorm_dx_sums(dyr, xr, weight, m, s, cols, ReduceSum8());
  for (int64_t c = 0; c < cols; ++c)
    dxr[c] = layernorm_dx_element(dyr, xr, weight, m, s, sums, cols, c);
}

// The weight and bias gradients are column sums over the rows in double:
// each chunk of kNormRowChunk rows summed in row order from zero, then the
// chunks' sums in order (so that a GPU sums the chunks in parallel).
constexpr int64_t kNormRowChunk = 256;

HMRT_HD inline int64_t norm_row_chunks(int64_t rows) {
  return (rows + kNormRowChunk - 1) / kNormRowChunk;
}

// LayerNorm's weight and bias gradient sums over chunk k of the rows for
// column c (mean and rstd saved by the forward).
HMRT_HD inline void layernorm_dparams_chunk(const float* dy, const float* x, const float* mean,
                                            const float* rstd, int64_t rows, int64_t cols,
                                            int64_t k, int64_t c, double* dweight,
                                            double* dbias) {
  double w = 0.0, b = 0.0;
  const int64_t end = (k + 1) * kNormRowChunk < rows ? (k + 1) * kNormRowChunk : rows;
  for (int64_t r = k * kNormRowChunk; r < end; ++r) {
    const float d = dy[r * cols + c];
    w += d * ((x[r * cols + c] - mean[r]) * rstd[r]);
    b += d;
  }
  *dweight = w;
  *dbias = b;
}

}  // namespace hmrt

#endif  // HMRT_CORE_NORM_MATH_H
