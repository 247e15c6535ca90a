// Rotary position embedding, "rotate half" convention (GPT-NeoX, HF Llama):
//   y = x * cos + rotate_half(x) * sin,  rotate_half(x) = cat(-x2, x1)
// on the first rot_dim dims of each head vector; the rest pass through.
// The map is orthogonal per pair (i, i+h), so backward is the same rotation
// by the opposite angle: dx = dy * cos + rotate_half^T(dy * sin).
#include <algorithm>

#include "core/internal.h"
#include "hmrt/kernels.h"

namespace hmrt {
namespace {

hmrt_status check_rope(const char* fn, const float* in, const float* cos,
                       const float* sin, const float* out, int64_t outer,
                       int64_t seq, int64_t head_dim, int64_t rot_dim) {
  HMRT_CHECK_SIZE(fn, outer);
  HMRT_CHECK_SIZE(fn, seq);
  HMRT_CHECK_SIZE(fn, head_dim);
  HMRT_CHECK_SIZE(fn, rot_dim);
  HMRT_CHECK_ARG(rot_dim % 2 == 0 && rot_dim <= head_dim,
                 "%s: rot_dim = %lld must be even and <= head_dim = %lld", fn,
                 (long long)rot_dim, (long long)head_dim);
  HMRT_CHECK_PTR(fn, in, outer * seq * head_dim);
  HMRT_CHECK_PTR(fn, out, outer * seq * head_dim);
  HMRT_CHECK_PTR(fn, cos, seq * rot_dim);
  HMRT_CHECK_PTR(fn, sin, seq * rot_dim);
  return HMRT_OK;
}

// sign = +1: forward rotation, -1: its transpose (backward).
void rope(const float* in, const float* cos, const float* sin, float* out,
          int64_t outer, int64_t seq, int64_t head_dim, int64_t rot_dim,
          float sign) {
  const int64_t h = rot_dim / 2;
  const int64_t rows = outer * seq;
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(head_dim, 1));
  parallel_for(rows, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t t = r % seq;
      const float* x = in + r * head_dim;
      float* y = out + r * head_dim;
      const float* c = cos + t * rot_dim;
      const float* s = sin + t * rot_dim;
      for (int64_t i = 0; i < h; ++i) {
        const float x1 = x[i], x2 = x[i + h];
        // forward:  y1 = x1 c1 - x2 s1,  y2 = x2 c2 + x1 s2
        // backward: y1 = x1 c1 + x2 s2,  y2 = x2 c2 - x1 s1
        if (sign > 0) {
          y[i] = x1 * c[i] - x2 * s[i];
          y[i + h] = x2 * c[i + h] + x1 * s[i + h];
        } else {
          y[i] = x1 * c[i] + x2 * s[i + h];
          y[i + h] = x2 * c[i + h] - x1 * s[i];
        }
      }
      if (y != x)
        for (int64_t i = rot_dim; i < head_dim; ++i) y[i] = x[i];
    }
  });
}

}  // namespace
}  // namespace hmrt

extern "C" {

hmrt_status hmrt_rope_forward(const float* x, const float* cos,
                              const float* sin, float* y, int64_t outer,
                              int64_t seq, int64_t head_dim, int64_t rot_dim) {
  hmrt_status st = hmrt::check_rope("hmrt_rope_forward", x, cos, sin, y, outer,
                                    seq, head_dim, rot_dim);
  if (st != HMRT_OK) return st;
  hmrt::rope(x, cos, sin, y, outer, seq, head_dim, rot_dim, 1.0f);
  return HMRT_OK;
}

hmrt_status hmrt_rope_backward(const float* dy, const float* cos,
                               const float* sin, float* dx, int64_t outer,
                               int64_t seq, int64_t head_dim,
                               int64_t rot_dim) {
  hmrt_status st = hmrt::check_rope("hmrt_rope_backward", dy, cos, sin, dx,
                                    outer, seq, head_dim, rot_dim);
  if (st != HMRT_OK) return st;
  hmrt::rope(dy, cos, sin, dx, outer, seq, head_dim, rot_dim, -1.0f);
  return HMRT_OK;
}

}  // extern "C"
