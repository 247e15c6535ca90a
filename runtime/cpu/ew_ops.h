// The per-element functions of the elementwise ops, shared by the one-op
// kernels (hmrt_unary_f32, hmrt_binary_f32, hmrt_relu_backward) and the
// fused programs (hmrt_fused_f32), so that a fused chain computes the same
// bits as the ops one by one.  Array maps (the transcendental ones) work on
// any length: every element goes through the same vector code.
#ifndef HMRT_CPU_EW_OPS_H
#define HMRT_CPU_EW_OPS_H

#include <cmath>
#include <cstdint>

#include "cpu/vec.h"
#include "cpu/vmath.h"

namespace hmrt::ew {

inline float relu(float v) { return v > 0.0f || v != v ? v : 0.0f; }
inline float sign(float v) { return v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : v); }
inline float max(float u, float v) { return u > v || u != u ? u : v; }
inline float min(float u, float v) { return u < v || u != u ? u : v; }
inline float relu_grad(float x, float g) { return x > 0.0f ? g : 0.0f; }

inline v4f vsigmoid(v4f v) { return 1.0f / (1.0f + vexp(-v)); }

// y[i] = f(x[i]) with f on 4-lane vectors; the tail runs f on a splatted
// scalar, so every element gets the same bits wherever an array starts.
template <class F>
inline void vmap(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vstore(y + i, f(vload(x + i)));
  for (; i < n; ++i) y[i] = f(vsplat(x[i]))[0];
}

inline void exp(const float* x, float* y, int64_t n) {
  vmap(x, y, n, [](v4f v) { return vexp(v); });
}
inline void sigmoid(const float* x, float* y, int64_t n) { vmap(x, y, n, vsigmoid); }
inline void erf(const float* x, float* y, int64_t n) { vmath::erf(x, y, n); }
inline void tanh(const float* x, float* y, int64_t n) { vmath::tanh(x, y, n); }
inline void log(const float* x, float* y, int64_t n) { vmath::log(x, y, n); }

}  // namespace hmrt::ew

#endif  // HMRT_CPU_EW_OPS_H
