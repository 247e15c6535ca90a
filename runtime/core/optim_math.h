// The per-element optimizer updates shared by the CPU kernels
// (cpu/optim.cpp, cpu/quant8.cpp) and the CUDA backend's
// (cuda/cuda_kernels.cu): one definition of each element's operations and
// their order, so that every backend computes the same bits (the CPU build
// has -ffp-contract=off, the CUDA one --fmad=false).
#ifndef HMRT_CORE_OPTIM_MATH_H
#define HMRT_CORE_OPTIM_MATH_H

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace hmrt {

// Scalars of one AdamW step, combined in double exactly as PyTorch's Python
// code does, then rounded to float for the per-element float arithmetic.
struct AdamWScalars {
  float decay;         // 1 - lr * weight_decay
  float beta1, one_minus_beta1;
  float beta2, one_minus_beta2;
  float neg_step_size;  // -lr / (1 - beta1^step)
  float bc2_sqrt;       // sqrt(1 - beta2^step)
  float eps;

  AdamWScalars(double lr, double b1, double b2, double e, double wd,
               int64_t step) {
    decay = static_cast<float>(1.0 - lr * wd);
    beta1 = static_cast<float>(b1);
    one_minus_beta1 = static_cast<float>(1.0 - b1);
    beta2 = static_cast<float>(b2);
    one_minus_beta2 = static_cast<float>(1.0 - b2);
    const double bc1 = 1.0 - std::pow(b1, static_cast<double>(step));
    const double bc2 = 1.0 - std::pow(b2, static_cast<double>(step));
    neg_step_size = static_cast<float>(-(lr / bc1));
    bc2_sqrt = static_cast<float>(std::sqrt(bc2));
    eps = static_cast<float>(e);
  }
};

// torch.optim.AdamW, _single_tensor_adamw (PyTorch 1.13; 2.x writes the
// first line as exp_avg.lerp_(grad, 1 - beta1), equal up to rounding):
//   param.mul_(1 - lr * weight_decay)
//   exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
//   exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
//   denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
//   param.addcdiv_(exp_avg, denom, value=-step_size)
HMRT_HD inline void adamw_update(const AdamWScalars& s, float g, float& p,
                                 float& m, float& v) {
  p = p * s.decay;
  m = m * s.beta1 + s.one_minus_beta1 * g;
  v = v * s.beta2 + s.one_minus_beta2 * g * g;
  const float denom = std::sqrt(v) / s.bc2_sqrt + s.eps;
  p = p + s.neg_step_size * m / denom;
}

// Scalars of one SGD step (torch.optim.SGD), rounded to float.
struct SgdScalars {
  float wd, mom, one_minus_damp, neg_lr;
  bool use_wd, use_mom, nesterov, first_step;

  SgdScalars(double lr, double momentum, double dampening, double weight_decay,
             int nesterov_, int first_step_)
      : wd(static_cast<float>(weight_decay)),
        mom(static_cast<float>(momentum)),
        one_minus_damp(static_cast<float>(1.0 - dampening)),
        neg_lr(static_cast<float>(-lr)),
        use_wd(weight_decay != 0.0),
        use_mom(momentum != 0.0),
        nesterov(nesterov_ != 0),
        first_step(first_step_ != 0) {}
};

// torch.optim.SGD's _single_tensor_sgd for one element; `buf` is the
// momentum buffer's element (unused without momentum).
HMRT_HD inline void sgd_update(const SgdScalars& s, float g, float& p, float* buf) {
  float d = g;
  if (s.use_wd) d = d + s.wd * p;  // grad.add(param, alpha=wd)
  if (s.use_mom) {
    const float b = s.first_step ? d : *buf * s.mom + s.one_minus_damp * d;
    *buf = b;
    d = s.nesterov ? d + s.mom * b : b;
  }
  p = p + s.neg_lr * d;  // param.add_(d_p, alpha=-lr)
}

}  // namespace hmrt

#endif  // HMRT_CORE_OPTIM_MATH_H
