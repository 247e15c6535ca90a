// LayerNorm and RMSNorm over the last axis, forward and backward.
// Rows are independent and split across threads; the parameter gradients
// are column sums over all rows, each column summed in double in chunks of
// kNormRowChunk rows, each in row order, then the chunks in order
// (cpu/ordered_sums.h: deterministic, on every thread, and what the CUDA
// backend sums in parallel).
#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>
#include <vector>

#include "core/float16.h"
#include "core/internal.h"
#include "core/norm_math.h"
#include "cpu/nn_ops_shared.h"
#include "cpu/ordered_sums.h"
#include "cpu/vec.h"
#include "hmrt/kernels.h"

namespace hmrt {
namespace {

// Rows per thread at least, for a row of `cols` floats (~16k elements).
int64_t row_grain(int64_t cols) {
  return std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(cols, 1));
}

hmrt_status check_shape(const char* fn, int64_t rows, int64_t cols) {
  HMRT_CHECK_SIZE(fn, rows);
  HMRT_CHECK_SIZE(fn, cols);
  HMRT_CHECK_ARG(cols > 0 || rows == 0, "%s: cols must be >= 1", fn);
  return HMRT_OK;
}

// dst[j][c] += the sum over rows r of term j at (r, c), for each of the K
// terms and every c in [0, cols), summed in double as core/norm_math.h
// says (chunks of kNormRowChunk rows; cpu/ordered_sums.h), a task per tile
// of columns. term(r, c0, c1, acc) adds row r's terms for columns [c0, c1)
// into acc[j][0 .. c1-c0). False when the sums' memory cannot be had.
template <int K, class Term>
bool column_sums(int64_t rows, int64_t cols, std::array<float*, K> dst, Term term) {
  constexpr int64_t kTile = 256;
  std::vector<double> total;
  auto tile = [&](int64_t t, int64_t k, double* acc) {
    const int64_t c0 = t * kTile, c1 = std::min(cols, c0 + kTile);
    double* accs[K];
    for (int j = 0; j < K; ++j) accs[j] = acc + j * kTile;
    for (int64_t r = k * kNormRowChunk; r < std::min(rows, (k + 1) * kNormRowChunk); ++r)
      term(r, c0, c1, accs);
  };
  if (!ordered_chunk_sums(ceil_div(cols, kTile), norm_row_chunks(rows), K * kTile, &total, tile))
    return false;
  for (int j = 0; j < K; ++j)
    for (int64_t c = 0; c < cols; ++c)
      dst[j][c] += static_cast<float>(total[size_t((c / kTile * K + j) * kTile + c % kTile)]);
  return true;
}

// LayerNorm forward over rows: y in fp32, or in bf16 (each row computed in
// fp32 into a row of scratch, then rounded to nearest even).
template <class Out>
hmrt_status layernorm_rows(const char* fn, const float* x, const float* weight,
                           const float* bias, Out* y, float* mean, float* rstd, int64_t rows,
                           int64_t cols, float eps) {
  constexpr bool kF32 = std::is_same_v<Out, float>;
  hmrt_status st = check_shape(fn, rows, cols);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_PTR(fn, x, rows * cols);
  HMRT_CHECK_PTR(fn, y, rows * cols);
  parallel_for(rows, row_grain(cols), [&](int64_t lo, int64_t hi) {
    std::vector<float> row(kF32 ? 0 : static_cast<size_t>(cols));
    for (int64_t r = lo; r < hi; ++r) {
      const float* xr = x + r * cols;
      float* yr;
      if constexpr (kF32)
        yr = y + r * cols;
      else
        yr = row.data();
      const float m = hmrt::sum(xr, cols) / static_cast<float>(cols);
      const float var = sum_sq_dev(xr, m, cols) / static_cast<float>(cols);
      const float s = 1.0f / std::sqrt(var + eps);
      layernorm_row(xr, weight, bias, m, s, yr, cols);
      if constexpr (!kF32)
        for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = float_to_bf16_rne(yr[c]);
      if (mean) mean[r] = m;
      if (rstd) rstd[r] = s;
    }
  });
  return HMRT_OK;
}

// hmrt_layer_norm_f32 and its bf16 twin: x's dims from `axis` on
// normalised, the dims before it the rows.
template <class Out>
hmrt_status layer_norm_nd(const char* fn, const float* x, int32_t rank, const int64_t* shape,
                          int32_t axis, const float* scale, const float* bias, float eps, Out* y,
                          float* mean, float* rstd) {
  int64_t outer, cols;
  hmrt_status st = check_layer_norm_forward(fn, rank, shape, axis, eps, &outer, &cols);
  if (st != HMRT_OK) return st;
  return layernorm_rows(fn, x, scale, bias, y, mean, rstd, outer, cols, eps);
}

}  // namespace
}  // namespace hmrt

extern "C" {

hmrt_status hmrt_layernorm_forward(const float* x, const float* weight,
                                   const float* bias, float* y, float* mean,
                                   float* rstd, int64_t rows, int64_t cols,
                                   float eps) {
  return hmrt::layernorm_rows("hmrt_layernorm_forward", x, weight, bias, y, mean, rstd, rows,
                              cols, eps);
}

hmrt_status hmrt_layer_norm_f32(const float* x, int32_t rank, const int64_t* shape,
                                int32_t axis, const float* scale, const float* bias, float eps,
                                float* y, float* mean, float* rstd) {
  return hmrt::layer_norm_nd("hmrt_layer_norm_f32", x, rank, shape, axis, scale, bias, eps, y,
                             mean, rstd);
}

hmrt_status hmrt_layer_norm_f32_to_bf16(const float* x, int32_t rank, const int64_t* shape,
                                        int32_t axis, const float* scale, const float* bias,
                                        float eps, uint16_t* y, float* mean, float* rstd) {
  return hmrt::layer_norm_nd("hmrt_layer_norm_f32_to_bf16", x, rank, shape, axis, scale, bias,
                             eps, y, mean, rstd);
}

hmrt_status hmrt_layernorm_backward(const float* dy, const float* x,
                                    const float* weight, const float* mean,
                                    const float* rstd, float* dx,
                                    float* dweight, float* dbias, int64_t rows,
                                    int64_t cols) {
  using namespace hmrt;
  const char* fn = "hmrt_layernorm_backward";
  hmrt_status st = check_shape(fn, rows, cols);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_PTR(fn, dy, rows * cols);
  HMRT_CHECK_PTR(fn, x, rows * cols);
  HMRT_CHECK_PTR(fn, mean, rows);
  HMRT_CHECK_PTR(fn, rstd, rows);
  HMRT_CHECK_PTR(fn, dx, rows * cols);

  // dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * weight.
  parallel_for(rows, row_grain(cols), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const float* xr = x + r * cols;
      const float* dyr = dy + r * cols;
      float* dxr = dx + r * cols;
      layernorm_dx_row(dyr, xr, weight, mean[r], rstd[r], dxr, cols);
    }
  });
  // The weight's and the bias's gradients, in one pass over dy where both
  // are wanted.
  auto weight_term = [&](int64_t r, int64_t c0, int64_t c1, double* acc) {
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    const float m = mean[r], s = rstd[r];
    for (int64_t c = c0; c < c1; ++c) acc[c - c0] += dyr[c] * ((xr[c] - m) * s);
  };
  auto bias_term = [&](int64_t r, int64_t c0, int64_t c1, double* acc) {
    const float* dyr = dy + r * cols;
    for (int64_t c = c0; c < c1; ++c) acc[c - c0] += dyr[c];
  };
  bool summed = true;
  if (dweight && dbias)
    summed = column_sums<2>(rows, cols, {dweight, dbias},
                            [&](int64_t r, int64_t c0, int64_t c1, double* const* acc) {
                              weight_term(r, c0, c1, acc[0]);
                              bias_term(r, c0, c1, acc[1]);
                            });
  else if (dweight || dbias)
    summed = column_sums<1>(rows, cols, {dweight ? dweight : dbias},
                            [&](int64_t r, int64_t c0, int64_t c1, double* const* acc) {
                              dweight ? weight_term(r, c0, c1, acc[0])
                                      : bias_term(r, c0, c1, acc[0]);
                            });
  if (!summed) return fail(HMRT_OUT_OF_MEMORY, "%s: out of memory", fn);
  return HMRT_OK;
}

hmrt_status hmrt_rmsnorm_forward(const float* x, const float* weight, float* y,
                                 float* rstd, int64_t rows, int64_t cols,
                                 float eps) {
  using namespace hmrt;
  const char* fn = "hmrt_rmsnorm_forward";
  hmrt_status st = check_shape(fn, rows, cols);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_PTR(fn, x, rows * cols);
  HMRT_CHECK_PTR(fn, y, rows * cols);
  parallel_for(rows, row_grain(cols), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      const float ms = dot(xr, xr, cols) / static_cast<float>(cols);
      const float s = 1.0f / std::sqrt(ms + eps);
      for (int64_t c = 0; c < cols; ++c)
        yr[c] = weight ? xr[c] * s * weight[c] : xr[c] * s;
      if (rstd) rstd[r] = s;
    }
  });
  return HMRT_OK;
}

hmrt_status hmrt_rmsnorm_backward(const float* dy, const float* x,
                                  const float* weight, const float* rstd,
                                  float* dx, float* dweight, int64_t rows,
                                  int64_t cols) {
  using namespace hmrt;
  const char* fn = "hmrt_rmsnorm_backward";
  hmrt_status st = check_shape(fn, rows, cols);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_PTR(fn, dy, rows * cols);
  HMRT_CHECK_PTR(fn, x, rows * cols);
  HMRT_CHECK_PTR(fn, rstd, rows);
  HMRT_CHECK_PTR(fn, dx, rows * cols);

  // dx = rstd * g - x * rstd^3 * mean(g * x), g = dy * weight.
  parallel_for(rows, row_grain(cols), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const float* xr = x + r * cols;
      const float* dyr = dy + r * cols;
      float* dxr = dx + r * cols;
      const float s = rstd[r];
      float sum_gx = 0.0f;
      for (int64_t c = 0; c < cols; ++c)
        sum_gx += (weight ? dyr[c] * weight[c] : dyr[c]) * xr[c];
      const float k = s * s * s * sum_gx / static_cast<float>(cols);
      for (int64_t c = 0; c < cols; ++c) {
        const float g = weight ? dyr[c] * weight[c] : dyr[c];
        dxr[c] = s * g - xr[c] * k;
      }
    }
  });
  if (dweight &&
      !column_sums<1>(rows, cols, {dweight},
                      [&](int64_t r, int64_t c0, int64_t c1, double* const* acc) {
                        const float* xr = x + r * cols;
                        const float* dyr = dy + r * cols;
                        const float s = rstd[r];
                        for (int64_t c = c0; c < c1; ++c) acc[0][c - c0] += dyr[c] * (xr[c] * s);
                      }))
    return fail(HMRT_OUT_OF_MEMORY, "%s: out of memory", fn);
  return HMRT_OK;
}

}  // extern "C"
