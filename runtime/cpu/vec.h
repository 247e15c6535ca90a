// Small SIMD helpers for row reductions, written with GCC/Clang generic
// vectors (SSE on baseline x86-64, no -march needed).  Every reduction has a
// fixed summation order (8 interleaved partial sums, combined pairwise, then
// the tail), so results do not depend on threads or alignment.
#ifndef HMRT_CPU_VEC_H
#define HMRT_CPU_VEC_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace hmrt {

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

inline v4f vload(const float* p) {
  v4f v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void vstore(float* p, v4f v) { std::memcpy(p, &v, sizeof(v)); }
inline v4f vsplat(float x) { return v4f{x, x, x, x}; }
inline float vsum(v4f v) { return (v[0] + v[1]) + (v[2] + v[3]); }
inline v4f vmax(v4f a, v4f b) { return a > b ? a : b; }
// Lane-wise fabs: the sign bit cleared (NaNs keep their payload).
inline v4f vabs(v4f x) { return (v4f)((v4i)x & 0x7fffffff); }

// Lane-wise sqrt; GCC and Clang turn this into one vector instruction
// (sqrtps; needs -fno-math-errno) and it is correctly rounded like sqrtf.
inline v4f vsqrt(v4f x) {
  v4f r;
  for (int l = 0; l < 4; ++l) r[l] = std::sqrt(x[l]);
  return r;
}

// Lane-wise exp(x) with the Cephes expf polynomial, for a generic vector
// of floats VF and of int32 VI of any width: relative error below 2 ulp for
// normal results, gradual underflow to 0 below ~ -104, +inf above
// ln(FLT_MAX), NaN stays NaN.  Each lane's result depends only on that
// lane (no fused multiply-add: the runtime builds with -ffp-contract=off),
// so every width and the scalar form vexp1 give the same bits.
template <class VF, class VI>
__attribute__((always_inline)) inline VF vexp_any(VF x) {
  const VF hi = VF{} + 88.72283905206835f, lo = VF{} + -103.972084f;
  VF xc = x > hi ? hi : x;
  xc = xc < lo ? lo : xc;
  xc = xc == xc ? xc : VF{};  // NaN lanes: keep the integer math defined
  // n = floor(x / ln 2 + 1/2), r = x - n ln 2 in [-ln2/2, ln2/2]
  const VF fx = xc * 1.44269504088896341f + 0.5f;
  VI n = __builtin_convertvector(fx, VI);  // truncates toward zero
  n += (__builtin_convertvector(n, VF) > fx);  // true is -1: floor
  const VF nf = __builtin_convertvector(n, VF);
  const VF r = (xc - nf * 0.693359375f) - nf * -2.12194440e-4f;
  VF p = VF{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  // 2^n as two normal factors so that n in [-150, 128] needs no special case.
  const VI n1 = n >> 1, n2 = n - n1;
  const VI b1 = (n1 + 127) << 23, b2 = (n2 + 127) << 23;
  VF s1, s2;
  std::memcpy(&s1, &b1, sizeof(s1));
  std::memcpy(&s2, &b2, sizeof(s2));
  VF res = p * s1 * s2;
  res = x < lo ? VF{} : res;
  res = x > hi ? VF{} + HUGE_VALF : res;
  return x == x ? res : x;
}
inline v4f vexp(v4f x) { return vexp_any<v4f, v4i>(x); }
inline float vexp1(float x) { return vexp(vsplat(x))[0]; }

// y[i] = exp(x[i] - c) for i in [0, n), returning the sum of the y[i]
// (fixed order: 4 lanes over the body, then the tail).  y may alias x.
inline float exp_sub_sum(const float* x, float c, float* y, int64_t n) {
  const v4f vc = vsplat(c);
  v4f acc = vsplat(0.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const v4f e = vexp(vload(x + i) - vc);
    vstore(y + i, e);
    acc += e;
  }
  float s = vsum(acc);
  for (; i < n; ++i) s += (y[i] = vexp1(x[i] - c));
  return s;
}

// Like exp_sub_sum without storing: sum of exp(x[i] - c).
inline float sum_exp_sub(const float* x, float c, int64_t n) {
  const v4f vc = vsplat(c);
  v4f acc = vsplat(0.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) acc += vexp(vload(x + i) - vc);
  float s = vsum(acc);
  for (; i < n; ++i) s += vexp1(x[i] - c);
  return s;
}

// y[i] = exp(x[i] - c) * k; y may alias x.
inline void exp_sub_scale(const float* x, float c, float k, float* y,
                          int64_t n) {
  const v4f vc = vsplat(c);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vstore(y + i, vexp(vload(x + i) - vc) * k);
  for (; i < n; ++i) y[i] = vexp1(x[i] - c) * k;
}

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
