// Softmax and log-softmax along the last axis, forward and backward.
// Rows are independent and split across threads.
#include <algorithm>
#include <cmath>

#include "core/internal.h"
#include "cpu/vec.h"
#include "hmrt/kernels.h"

namespace hmrt {
namespace {

int64_t row_grain(int64_t cols) {
  return std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(cols, 1));
}

hmrt_status check_rows(const char* fn, const void* a, const void* b,
                       const void* c, int64_t rows, int64_t cols) {
  HMRT_CHECK_SIZE(fn, rows);
  HMRT_CHECK_SIZE(fn, cols);
  HMRT_CHECK_ARG(cols > 0 || rows == 0, "%s: cols must be >= 1", fn);
  HMRT_CHECK_PTR(fn, a, rows * cols);
  HMRT_CHECK_PTR(fn, b, rows * cols);
  HMRT_CHECK_PTR(fn, c, rows * cols);
  return HMRT_OK;
}

}  // namespace
}  // namespace hmrt

extern "C" {

hmrt_status hmrt_softmax_forward(const float* x, float* y, int64_t rows,
                                 int64_t cols) {
  using namespace hmrt;
  hmrt_status st = check_rows("hmrt_softmax_forward", x, y, y, rows, cols);
  if (st != HMRT_OK) return st;
  parallel_for(rows, row_grain(cols), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      const float m = hmrt::max(xr, cols);
      const float inv = 1.0f / exp_sub_sum(xr, m, yr, cols);
      for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
    }
  });
  return HMRT_OK;
}

hmrt_status hmrt_softmax_backward(const float* y, const float* dy, float* dx,
                                  int64_t rows, int64_t cols) {
  using namespace hmrt;
  hmrt_status st = check_rows("hmrt_softmax_backward", y, dy, dx, rows, cols);
  if (st != HMRT_OK) return st;
  parallel_for(rows, row_grain(cols), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const float* yr = y + r * cols;
      const float* dyr = dy + r * cols;
      float* dxr = dx + r * cols;
      const float d = dot(dyr, yr, cols);
      for (int64_t c = 0; c < cols; ++c) dxr[c] = yr[c] * (dyr[c] - d);
    }
  });
  return HMRT_OK;
}

hmrt_status hmrt_log_softmax_forward(const float* x, float* y, int64_t rows,
                                     int64_t cols) {
  using namespace hmrt;
  hmrt_status st = check_rows("hmrt_log_softmax_forward", x, y, y, rows, cols);
  if (st != HMRT_OK) return st;
  parallel_for(rows, row_grain(cols), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      const float m = hmrt::max(xr, cols);
      const float lse = m + std::log(sum_exp_sub(xr, m, cols));
      for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] - lse;
    }
  });
  return HMRT_OK;
}

hmrt_status hmrt_log_softmax_backward(const float* y, const float* dy,
                                      float* dx, int64_t rows, int64_t cols) {
  using namespace hmrt;
  hmrt_status st =
      check_rows("hmrt_log_softmax_backward", y, dy, dx, rows, cols);
  if (st != HMRT_OK) return st;
  parallel_for(rows, row_grain(cols), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const float* yr = y + r * cols;
      const float* dyr = dy + r * cols;
      float* dxr = dx + r * cols;
      const float s = hmrt::sum(dyr, cols);
      const v4f vs = vsplat(s);
      int64_t c = 0;
      for (; c + 4 <= cols; c += 4)
        vstore(dxr + c, vload(dyr + c) - vexp(vload(yr + c)) * vs);
      for (; c < cols; ++c) dxr[c] = dyr[c] - vexp1(yr[c]) * s;
    }
  });
  return HMRT_OK;
}

}  // extern "C"
