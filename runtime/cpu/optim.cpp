// fp32 optimizer steps: AdamW and SGD with momentum with PyTorch semantics,
// and ONNX's preview-training Adagrad, Momentum and Adam. Purely per
// element; split across threads in large pieces.
#include <cmath>

#include "core/internal.h"
#include "cpu/adamw_update.h"
#include "cpu/arg_checks.h"
#include "hmrt/kernels.h"

namespace {
constexpr int64_t kGrain = 1 << 14;

}  // namespace

extern "C" {

hmrt_status hmrt_adamw_step(float* param, const float* grad, float* exp_avg,
                            float* exp_avg_sq, int64_t n, double lr,
                            double beta1, double beta2, double eps,
                            double weight_decay, int64_t step) {
  using namespace hmrt;
  const char* fn = "hmrt_adamw_step";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_PTR(fn, param, n);
  HMRT_CHECK_PTR(fn, grad, n);
  HMRT_CHECK_PTR(fn, exp_avg, n);
  HMRT_CHECK_PTR(fn, exp_avg_sq, n);
  hmrt_status st = check_adamw_args(fn, step, beta1, beta2);
  if (st != HMRT_OK) return st;
  const AdamWScalars s(lr, beta1, beta2, eps, weight_decay, step);
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    adamw_update_n(s, grad + lo, param + lo, exp_avg + lo, exp_avg_sq + lo,
                   hi - lo);
  });
  return HMRT_OK;
}

hmrt_status hmrt_sgd_step(float* param, const float* grad,
                          float* momentum_buf, int64_t n, double lr,
                          double momentum, double dampening,
                          double weight_decay, int nesterov, int first_step) {
  using namespace hmrt;
  const char* fn = "hmrt_sgd_step";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_PTR(fn, param, n);
  HMRT_CHECK_PTR(fn, grad, n);
  if (momentum != 0.0) HMRT_CHECK_PTR(fn, momentum_buf, n);
  hmrt_status st = check_sgd_args(fn, momentum, dampening, nesterov);
  if (st != HMRT_OK) return st;
  const SgdScalars s(lr, momentum, dampening, weight_decay, nesterov, first_step);
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      sgd_update(s, grad[i], param[i], momentum_buf == nullptr ? nullptr : momentum_buf + i);
  });
  return HMRT_OK;
}

// The ONNX optimizers read an element before writing it back at the same
// index, so outputs may be the inputs' buffers.
hmrt_status hmrt_onnx_adagrad(const float* x, const float* g, const float* h,
                              float* x_new, float* h_new, int64_t n, double r,
                              int64_t t, double norm_coefficient,
                              double decay_factor, double epsilon) {
  using namespace hmrt;
  const char* fn = "hmrt_onnx_adagrad";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_PTR(fn, x, n);
  HMRT_CHECK_PTR(fn, g, n);
  HMRT_CHECK_PTR(fn, h, n);
  HMRT_CHECK_PTR(fn, x_new, n);
  HMRT_CHECK_PTR(fn, h_new, n);
  if (hmrt_status st = check_update_count(fn, t)) return st;
  const OnnxAdagradScalars s(r, t, norm_coefficient, decay_factor, epsilon);
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) onnx_adagrad_update(s, x[i], g[i], h[i], x_new[i], h_new[i]);
  });
  return HMRT_OK;
}

hmrt_status hmrt_onnx_momentum(const float* x, const float* g, const float* v,
                               float* x_new, float* v_new, int64_t n, double r,
                               int64_t t, double norm_coefficient, double alpha,
                               double beta, int nesterov) {
  using namespace hmrt;
  const char* fn = "hmrt_onnx_momentum";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_PTR(fn, x, n);
  HMRT_CHECK_PTR(fn, g, n);
  HMRT_CHECK_PTR(fn, v, n);
  HMRT_CHECK_PTR(fn, x_new, n);
  HMRT_CHECK_PTR(fn, v_new, n);
  if (hmrt_status st = check_update_count(fn, t)) return st;
  const OnnxMomentumScalars s(r, t, norm_coefficient, alpha, beta, nesterov);
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) onnx_momentum_update(s, x[i], g[i], v[i], x_new[i], v_new[i]);
  });
  return HMRT_OK;
}

hmrt_status hmrt_onnx_adam(const float* x, const float* g, const float* v,
                           const float* h, float* x_new, float* v_new,
                           float* h_new, int64_t n, double r, int64_t t,
                           double norm_coefficient, double norm_coefficient_post,
                           double alpha, double beta, double epsilon) {
  using namespace hmrt;
  const char* fn = "hmrt_onnx_adam";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_PTR(fn, x, n);
  HMRT_CHECK_PTR(fn, g, n);
  HMRT_CHECK_PTR(fn, v, n);
  HMRT_CHECK_PTR(fn, h, n);
  HMRT_CHECK_PTR(fn, x_new, n);
  HMRT_CHECK_PTR(fn, v_new, n);
  HMRT_CHECK_PTR(fn, h_new, n);
  if (hmrt_status st = check_update_count(fn, t)) return st;
  const OnnxAdamScalars s(r, t, norm_coefficient, norm_coefficient_post, alpha, beta, epsilon);
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      onnx_adam_update(s, x[i], g[i], v[i], h[i], x_new[i], v_new[i], h_new[i]);
  });
  return HMRT_OK;
}

}  // extern "C"
