// The per-element AdamW update shared by the fp32 and 8-bit optimizers on
// 4 lanes (the scalar form and the step's scalars: core/optim_math.h).
#ifndef HMRT_CPU_ADAMW_UPDATE_H
#define HMRT_CPU_ADAMW_UPDATE_H

#include <cstdint>

#include "core/optim_math.h"
#include "cpu/vec.h"

namespace hmrt {

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
