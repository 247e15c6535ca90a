// Softmax cross-entropy with integer targets and mean reduction over the
// rows whose target is not ignore_index (torch.nn.functional.cross_entropy).
// The loss is summed in double over fixed chunks of rows, then over chunks
// in order, so it does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/internal.h"
#include "cpu/vec.h"
#include "hmrt/kernels.h"

namespace hmrt {
namespace {

constexpr int64_t kChunk = 32;  // rows per partial sum

hmrt_status check_loss(const char* fn, const float* logits,
                       const int64_t* targets, const float* out, int64_t rows,
                       int64_t classes, int64_t ignore_index,
                       int64_t* counted) {
  HMRT_CHECK_SIZE(fn, rows);
  HMRT_CHECK_SIZE(fn, classes);
  HMRT_CHECK_PTR(fn, logits, rows * classes);
  HMRT_CHECK_PTR(fn, targets, rows);
  HMRT_CHECK_PTR(fn, out, rows * classes);
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (targets[r] == ignore_index) continue;
    if (targets[r] < 0 || targets[r] >= classes)
      return fail(HMRT_OUT_OF_RANGE,
                  "%s: targets[%lld] = %lld is outside [0, %lld) and is not "
                  "ignore_index %lld",
                  fn, (long long)r, (long long)targets[r], (long long)classes,
                  (long long)ignore_index);
    ++count;
  }
  *counted = count;
  return HMRT_OK;
}

float row_lse(const float* x, int64_t n) {
  const float m = hmrt::max(x, n);
  return m + std::log(sum_exp_sub(x, m, n));
}

}  // namespace
}  // namespace hmrt

extern "C" {

hmrt_status hmrt_cross_entropy_forward(const float* logits,
                                       const int64_t* targets, float* loss,
                                       float* lse, int64_t rows,
                                       int64_t classes, int64_t ignore_index) {
  using namespace hmrt;
  const char* fn = "hmrt_cross_entropy_forward";
  HMRT_CHECK_ARG(loss != nullptr, "%s: loss is NULL", fn);
  int64_t count = 0;
  hmrt_status st = check_loss(fn, logits, targets, logits, rows, classes,
                              ignore_index, &count);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_ARG(classes > 0 || rows == 0, "%s: classes must be >= 1", fn);

  const int64_t chunks = ceil_div(rows, kChunk);
  double* partial =
      static_cast<double*>(std::malloc(std::max<int64_t>(chunks, 1) * sizeof(double)));
  if (partial == nullptr)
    return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate partial sums", fn);
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(classes * kChunk, 1));
  parallel_for(chunks, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t ch = lo; ch < hi; ++ch) {
      double acc = 0.0;
      for (int64_t r = ch * kChunk; r < std::min(rows, (ch + 1) * kChunk); ++r) {
        const float* x = logits + r * classes;
        const float l = row_lse(x, classes);
        if (lse) lse[r] = l;
        if (targets[r] != ignore_index) acc += double(l) - double(x[targets[r]]);
      }
      partial[ch] = acc;
    }
  });
  double total = 0.0;
  for (int64_t ch = 0; ch < chunks; ++ch) total += partial[ch];
  std::free(partial);
  *loss = count > 0 ? static_cast<float>(total / double(count))
                    : std::numeric_limits<float>::quiet_NaN();
  return HMRT_OK;
}

hmrt_status hmrt_cross_entropy_backward(const float* logits,
                                        const int64_t* targets,
                                        const float* lse, const float* dloss,
                                        float* dlogits, int64_t rows,
                                        int64_t classes, int64_t ignore_index) {
  using namespace hmrt;
  const char* fn = "hmrt_cross_entropy_backward";
  HMRT_CHECK_ARG(dloss != nullptr, "%s: dloss is NULL", fn);
  int64_t count = 0;
  hmrt_status st = check_loss(fn, logits, targets, dlogits, rows, classes,
                              ignore_index, &count);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_ARG(classes > 0 || rows == 0, "%s: classes must be >= 1", fn);
  // With no counted row every row is ignored and its gradient is zero.
  const float g = count > 0 ? static_cast<float>(double(*dloss) / double(count))
                            : 0.0f;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(classes, 1));
  parallel_for(rows, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const float* x = logits + r * classes;
      float* d = dlogits + r * classes;
      const int64_t t = targets[r];
      if (t == ignore_index) {
        std::fill(d, d + classes, 0.0f);
        continue;
      }
      const float l = lse ? lse[r] : row_lse(x, classes);
      exp_sub_scale(x, l, g, d, classes);
      d[t] -= g;
    }
  });
  return HMRT_OK;
}

}  // extern "C"
