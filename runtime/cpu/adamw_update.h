// The per-element AdamW update shared by the fp32 and 8-bit optimizers.
#ifndef HMRT_CPU_ADAMW_UPDATE_H
#define HMRT_CPU_ADAMW_UPDATE_H

#include <cmath>
#include <cstdint>

#include "cpu/vec.h"

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
inline void adamw_update(const AdamWScalars& s, float g, float& p, float& m,
                         float& v) {
  p = p * s.decay;
  m = m * s.beta1 + s.one_minus_beta1 * g;
  v = v * s.beta2 + s.one_minus_beta2 * g * g;
  const float denom = std::sqrt(v) / s.bc2_sqrt + s.eps;
  p = p + s.neg_step_size * m / denom;
}

// The same operations on 4 lanes: bitwise the same results per element.
inline void adamw_update(const AdamWScalars& s, v4f g, v4f& p, v4f& m,
                         v4f& v) {
  p = p * s.decay;
  m = m * s.beta1 + s.one_minus_beta1 * g;
  v = v * s.beta2 + s.one_minus_beta2 * g * g;
  const v4f denom = vsqrt(v) / s.bc2_sqrt + s.eps;
  p = p + s.neg_step_size * m / denom;
}

// AdamW over n elements: vectors for the body, scalars for the tail.
inline void adamw_update_n(const AdamWScalars& s, const float* g, float* p,
                           float* m, float* v, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4f pv = vload(p + i), mv = vload(m + i), vv = vload(v + i);
    adamw_update(s, vload(g + i), pv, mv, vv);
    vstore(p + i, pv);
    vstore(m + i, mv);
    vstore(v + i, vv);
  }
  for (; i < n; ++i) adamw_update(s, g[i], p[i], m[i], v[i]);
}

}  // namespace hmrt

#endif  // HMRT_CPU_ADAMW_UPDATE_H
