// Global L2 norm of the gradients and the clipping coefficient, as
// torch.nn.utils.clip_grad_norm_ (norm_type 2).  Sums of squares are
// accumulated in double over fixed 4096-element chunks, then over chunks in
// order, so the norm is the same for any thread count.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/internal.h"
#include "core/optim_math.h"
#include "hmrt/kernels.h"

namespace hmrt {
namespace {

constexpr int64_t kChunk = 4096;

// Sum of squares of x[0, n) into *out; false if scratch allocation failed.
bool sum_squares(const float* x, int64_t n, double* out) {
  const int64_t chunks = ceil_div(n, kChunk);
  if (chunks <= 1) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += double(x[i]) * double(x[i]);
    *out = s;
    return true;
  }
  double* partial = static_cast<double*>(std::malloc(chunks * sizeof(double)));
  if (partial == nullptr) return false;
  parallel_for(chunks, 4, [&](int64_t lo, int64_t hi) {
    for (int64_t c = lo; c < hi; ++c) {
      // Four interleaved accumulators: independent dependency chains.
      double a[4] = {0, 0, 0, 0};
      const int64_t i0 = c * kChunk, i1 = std::min(n, i0 + kChunk);
      int64_t i = i0;
      for (; i + 4 <= i1; i += 4)
        for (int l = 0; l < 4; ++l) a[l] += double(x[i + l]) * double(x[i + l]);
      for (; i < i1; ++i) a[0] += double(x[i]) * double(x[i]);
      partial[c] = (a[0] + a[1]) + (a[2] + a[3]);
    }
  });
  double s = 0.0;
  for (int64_t c = 0; c < chunks; ++c) s += partial[c];
  std::free(partial);
  *out = s;
  return true;
}

// hmrt_sum_of_squares and its running form, checked under the name `fn`.
hmrt_status checked_sum(const char* fn, const float* x, int64_t n, const double* acc,
                        double* out) {
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_PTR(fn, x, n);
  HMRT_CHECK_ARG(out != nullptr, "%s: out is NULL", fn);
  double s = 0.0;
  if (!sum_squares(x, n, &s))
    return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate partial sums", fn);
  *out = (acc != nullptr ? *acc : 0.0) + s;
  return HMRT_OK;
}

}  // namespace
}  // namespace hmrt

extern "C" {

hmrt_status hmrt_sum_of_squares(const float* x, int64_t n, double* out) {
  return hmrt::checked_sum("hmrt_sum_of_squares", x, n, nullptr, out);
}

hmrt_status hmrt_add_sum_of_squares(const float* x, int64_t n,
                                    const double* acc, double* out) {
  return hmrt::checked_sum("hmrt_add_sum_of_squares", x, n, acc, out);
}

hmrt_status hmrt_global_norm(const float* const* buffers, const int64_t* sizes,
                             int64_t count, float* out) {
  using namespace hmrt;
  const char* fn = "hmrt_global_norm";
  HMRT_CHECK_SIZE(fn, count);
  HMRT_CHECK_PTR(fn, buffers, count);
  HMRT_CHECK_PTR(fn, sizes, count);
  HMRT_CHECK_ARG(out != nullptr, "%s: out is NULL", fn);
  for (int64_t b = 0; b < count; ++b) {
    HMRT_CHECK_ARG(sizes[b] >= 0, "%s: sizes[%lld] = %lld is negative", fn,
                   (long long)b, (long long)sizes[b]);
    HMRT_CHECK_ARG(buffers[b] != nullptr || sizes[b] == 0,
                   "%s: buffers[%lld] is NULL", fn, (long long)b);
  }
  double total = 0.0;
  for (int64_t b = 0; b < count; ++b) {
    double s = 0.0;
    if (!sum_squares(buffers[b], sizes[b], &s))
      return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate partial sums", fn);
    total += s;
  }
  *out = static_cast<float>(std::sqrt(total));
  return HMRT_OK;
}

hmrt_status hmrt_norm_of_sum(const double* sum, float* out) {
  HMRT_CHECK_ARG(sum != nullptr && out != nullptr, "hmrt_norm_of_sum: sum or out is NULL");
  *out = static_cast<float>(std::sqrt(*sum));
  return HMRT_OK;
}

hmrt_status hmrt_clip_coefficient(float total_norm, float max_norm,
                                  float* coef) {
  HMRT_CHECK_ARG(coef != nullptr, "hmrt_clip_coefficient: coef is NULL");
  *coef = hmrt::clip_coefficient(total_norm, max_norm);
  return HMRT_OK;
}

hmrt_status hmrt_scale(float* x, int64_t n, float s) {
  using namespace hmrt;
  HMRT_CHECK_SIZE("hmrt_scale", n);
  HMRT_CHECK_PTR("hmrt_scale", x, n);
  parallel_for(n, 1 << 14, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) x[i] *= s;
  });
  return HMRT_OK;
}

}  // extern "C"
