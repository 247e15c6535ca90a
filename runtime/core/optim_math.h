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

// ONNX's Adagrad (ai.onnx.preview.training), its scalars rounded to float.
struct OnnxAdagradScalars {
  float nc, rate, eps;
  OnnxAdagradScalars(double r, int64_t t, double norm_coefficient, double decay_factor,
                     double epsilon)
      : nc(static_cast<float>(norm_coefficient)),
        rate(static_cast<float>(r / (1.0 + double(t) * decay_factor))),
        eps(static_cast<float>(epsilon)) {}
};
// One element: reads x, g, h; returns the new x and h.
HMRT_HD inline void onnx_adagrad_update(const OnnxAdagradScalars& s, float x, float g, float h,
                                        float& x_new, float& h_new) {
  const float gr = s.nc * x + g;
  h_new = h + gr * gr;
  x_new = x - s.rate * gr / (std::sqrt(h_new) + s.eps);
}

// ONNX's Momentum (standard or Nesterov).
struct OnnxMomentumScalars {
  float nc, a, b, rate;
  bool nesterov;
  OnnxMomentumScalars(double r, int64_t t, double norm_coefficient, double alpha, double beta,
                      int nesterov_)
      : nc(static_cast<float>(norm_coefficient)),
        a(static_cast<float>(alpha)),
        b(t > 0 ? static_cast<float>(beta) : 1.0f),
        rate(static_cast<float>(r)),
        nesterov(nesterov_ != 0) {}
};
HMRT_HD inline void onnx_momentum_update(const OnnxMomentumScalars& s, float x, float g, float v,
                                         float& x_new, float& v_new) {
  const float gr = s.nc * x + g;
  v_new = s.a * v + s.b * gr;
  x_new = x - s.rate * (s.nesterov ? gr + s.a * v_new : v_new);
}

// ONNX's Adam.
struct OnnxAdamScalars {
  float nc, a, one_minus_a, b, one_minus_b, rate, keep, eps;
  OnnxAdamScalars(double r, int64_t t, double norm_coefficient, double norm_coefficient_post,
                  double alpha, double beta, double epsilon)
      : nc(static_cast<float>(norm_coefficient)),
        a(static_cast<float>(alpha)),
        one_minus_a(static_cast<float>(1.0 - alpha)),
        b(static_cast<float>(beta)),
        one_minus_b(static_cast<float>(1.0 - beta)),
        rate(static_cast<float>(t > 0 ? r * std::sqrt(1.0 - std::pow(beta, double(t))) /
                                            (1.0 - std::pow(alpha, double(t)))
                                      : r)),
        keep(static_cast<float>(1.0 - norm_coefficient_post)),
        eps(static_cast<float>(epsilon)) {}
};
HMRT_HD inline void onnx_adam_update(const OnnxAdamScalars& s, float x, float g, float v, float h,
                                     float& x_new, float& v_new, float& h_new) {
  const float gr = s.nc * x + g;
  v_new = s.a * v + s.one_minus_a * gr;
  h_new = s.b * h + s.one_minus_b * gr * gr;
  x_new = s.keep * (x - s.rate * (v_new / (std::sqrt(h_new) + s.eps)));
}

// torch.nn.utils.clip_grad_norm_'s coefficient, in float like PyTorch's
// tensor arithmetic: min(max_norm / (total_norm + 1e-6), 1); NaN stays NaN.
HMRT_HD inline float clip_coefficient(float total_norm, float max_norm) {
  const float c = max_norm / (total_norm + 1e-6f);
  return c > 1.0f ? 1.0f : c;
}

}  // namespace hmrt

#endif  // HMRT_CORE_OPTIM_MATH_H
