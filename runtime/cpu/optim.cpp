// fp32 optimizer steps: AdamW and SGD with momentum, PyTorch semantics.
// Purely per element; split across threads in large pieces.
#include "core/internal.h"
#include "cpu/adamw_update.h"
#include "hmrt/kernels.h"

namespace {
constexpr int64_t kGrain = 1 << 14;
}

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
  HMRT_CHECK_ARG(step >= 1, "%s: step must be >= 1 (1-based), got %lld", fn,
                 (long long)step);
  HMRT_CHECK_ARG(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1,
                 "%s: betas must be in [0, 1), got %g and %g", fn, beta1,
                 beta2);
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
  HMRT_CHECK_ARG(!nesterov || (momentum > 0.0 && dampening == 0.0),
                 "%s: nesterov needs momentum > 0 and dampening == 0", fn);
  const float wd = static_cast<float>(weight_decay);
  const float mom = static_cast<float>(momentum);
  const float one_minus_damp = static_cast<float>(1.0 - dampening);
  const float neg_lr = static_cast<float>(-lr);
  const bool use_wd = weight_decay != 0.0, use_mom = momentum != 0.0;
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      float d = grad[i];
      if (use_wd) d = d + wd * param[i];  // grad.add(param, alpha=wd)
      if (use_mom) {
        float b = first_step ? d : momentum_buf[i] * mom + one_minus_damp * d;
        momentum_buf[i] = b;
        d = nesterov ? d + mom * b : b;
      }
      param[i] = param[i] + neg_lr * d;  // param.add_(d_p, alpha=-lr)
    }
  });
  return HMRT_OK;
}

}  // extern "C"
