// Small SIMD helpers for row reductions, written with GCC/Clang generic
// vectors (SSE on baseline x86-64, no -march needed).  Every reduction has a
// fixed summation order (8 interleaved partial sums, combined pairwise, then
// the tail), so results do not depend on threads or alignment.
#ifndef HMRT_CPU_VEC_H
#define HMRT_CPU_VEC_H

#include <cstdint>
#include <cstring>

namespace hmrt {

typedef float v4f __attribute__((vector_size(16)));

inline v4f vload(const float* p) {
  v4f v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void vstore(float* p, v4f v) { std::memcpy(p, &v, sizeof(v)); }
inline v4f vsplat(float x) { return v4f{x, x, x, x}; }
inline float vsum(v4f v) { return (v[0] + v[1]) + (v[2] + v[3]); }
inline v4f vmax(v4f a, v4f b) { return a > b ? a : b; }

// sum_i f(i) over i in [0, n) where f loads vectors at offset i for the
// 8-wide body and scalars for the tail.
template <class FV, class FS>
inline float reduce_sum(int64_t n, FV fv, FS fs) {
  v4f a0 = vsplat(0.0f), a1 = vsplat(0.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    a0 += fv(i);
    a1 += fv(i + 4);
  }
  float s = vsum(a0 + a1);
  for (; i < n; ++i) s += fs(i);
  return s;
}

inline float sum(const float* x, int64_t n) {
  return reduce_sum(
      n, [&](int64_t i) { return vload(x + i); },
      [&](int64_t i) { return x[i]; });
}

inline float dot(const float* x, const float* y, int64_t n) {
  return reduce_sum(
      n, [&](int64_t i) { return vload(x + i) * vload(y + i); },
      [&](int64_t i) { return x[i] * y[i]; });
}

// sum (x - c)^2
inline float sum_sq_dev(const float* x, float c, int64_t n) {
  const v4f vc = vsplat(c);
  return reduce_sum(
      n,
      [&](int64_t i) {
        v4f d = vload(x + i) - vc;
        return d * d;
      },
      [&](int64_t i) {
        float d = x[i] - c;
        return d * d;
      });
}

inline float max(const float* x, int64_t n) {
  float m = x[0];
  int64_t i = 0;
  if (n >= 8) {
    v4f m0 = vload(x), m1 = vload(x + 4);
    for (i = 8; i + 8 <= n; i += 8) {
      m0 = vmax(m0, vload(x + i));
      m1 = vmax(m1, vload(x + i + 4));
    }
    m0 = vmax(m0, m1);
    m = m0[0];
    for (int l = 1; l < 4; ++l) m = m0[l] > m ? m0[l] : m;
  }
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

}  // namespace hmrt

#endif  // HMRT_CPU_VEC_H
