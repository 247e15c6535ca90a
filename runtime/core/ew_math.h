// Scalar forms of cpu/vmath's elementwise ops, for the CUDA backend's
// kernels (fused programs, one-op kernels, softmax, cross-entropy and
// attention), the CPU's broadcasting binary kernel (max, min) and the
// host-side tests that check them against vmath.
//
// exp_f32 and erf_f32 are vmath's polynomials written for one element,
// operation for operation, so with no fused multiply-add (the CUDA build's
// --fmad=false) they have vmath's bits on every element; so do the IEEE ops
// and the NaN rules of max, min, relu and sign.  tanh, log and pow are the
// exceptions: the CPU takes them from SLEEF and glibc, a GPU from its own
// math library (tanhf, logf, powf: within 2 ulp), so results through them
// are close, not equal.
#ifndef HMRT_CORE_EW_MATH_H
#define HMRT_CORE_EW_MATH_H

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/host_device.h"
#include "hmrt/tensor_ops.h"

namespace hmrt::ew {

HMRT_HD inline float bits_to_float(int32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}

// cpu/vec.h's vexp_any for one lane: the Cephes polynomial (< 2 ulp).
HMRT_HD inline float exp_f32(float x) {
  const float hi = 88.72283905206835f, lo = -103.972084f;
  float xc = x > hi ? hi : x;
  xc = xc < lo ? lo : xc;
  xc = xc == xc ? xc : 0.0f;
  const float fx = xc * 1.44269504088896341f + 0.5f;
  int32_t n = static_cast<int32_t>(fx);  // truncates toward zero
  if (static_cast<float>(n) > fx) n -= 1;  // floor
  const float nf = static_cast<float>(n);
  const float r = (xc - nf * 0.693359375f) - nf * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  const int32_t n1 = n >> 1, n2 = n - n1;
  float res = p * bits_to_float((n1 + 127) << 23) * bits_to_float((n2 + 127) << 23);
  if (x < lo) res = 0.0f;
  if (x > hi) res = HUGE_VALF;
  return x == x ? res : x;
}

// cpu/vmath's erf: x P(x^2) / Q(x^2) on [-4, 4], +-1 beyond.
HMRT_HD inline float erf_f32(float x) {
  x = x > 4.0f ? 4.0f : x;
  x = x < -4.0f ? -4.0f : x;  // NaN passes through both
  const float x2 = x * x;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 + -2.10102402082508e-06f;
  p = p * x2 + -5.69250639462346e-05f;
  p = p * x2 + -7.34990630326855e-04f;
  p = p * x2 + -2.95459980854025e-03f;
  p = p * x2 + -1.60960333262415e-02f;
  float q = -1.45660718464996e-05f;
  q = q * x2 + -2.13374055278905e-04f;
  q = q * x2 + -1.68282697438203e-03f;
  q = q * x2 + -7.37332916720468e-03f;
  q = q * x2 + -1.42647390514189e-02f;
  return x * p / q;
}

#if defined(__CUDA_ARCH__)
__device__ inline float tanh_f32(float x) { return tanhf(x); }
__device__ inline float log_f32(float x) { return logf(x); }
__device__ inline float pow_f32(float x, float y) { return powf(x, y); }
#else
inline float tanh_f32(float x) { return std::tanh(x); }
inline float log_f32(float x) { return std::log(x); }
inline float pow_f32(float x, float y) { return std::pow(x, y); }
#endif

// max and min with NaN propagating (either operand NaN: NaN).
HMRT_HD inline float max(float u, float v) { return u > v || u != u ? u : v; }
HMRT_HD inline float min(float u, float v) { return u < v || u != u ? u : v; }

// int64 arithmetic as hmrt_binary_i64 and hmrt_neg_i64 define it: two's
// complement wrapping, division truncating (b != 0; INT64_MIN / -1 wraps),
// powers by squaring (e >= 0).
HMRT_HD inline int64_t wrap_add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
HMRT_HD inline int64_t wrap_sub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
HMRT_HD inline int64_t wrap_mul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }
HMRT_HD inline int64_t div_i64(int64_t a, int64_t b) { return b == -1 ? wrap_sub(0, a) : a / b; }
HMRT_HD inline int64_t ipow(int64_t a, int64_t e) {
  uint64_t r = 1, base = uint64_t(a);
  for (uint64_t k = uint64_t(e); k; k >>= 1) {
    if (k & 1) r *= base;
    base *= base;
  }
  return int64_t(r);
}
// y = a op b for an hmrt_binary_op.
HMRT_HD inline int64_t binary_i64(int op, int64_t a, int64_t b) {
  switch (op) {
    case HMRT_BINARY_ADD: return wrap_add(a, b);
    case HMRT_BINARY_SUB: return wrap_sub(a, b);
    case HMRT_BINARY_MUL: return wrap_mul(a, b);
    case HMRT_BINARY_DIV: return div_i64(a, b);
    case HMRT_BINARY_POW: return ipow(a, b);
    case HMRT_BINARY_MAX: return a > b ? a : b;
    default: return a < b ? a : b;
  }
}

// Operands an hmrt_fused_op reads (1, 2 or 3), -1 for an unknown op.
HMRT_HD inline int fused_arity(int64_t op) {
  switch (op) {
    case HMRT_FUSED_ADD: case HMRT_FUSED_SUB: case HMRT_FUSED_MUL:
    case HMRT_FUSED_DIV: case HMRT_FUSED_POW: case HMRT_FUSED_MAX:
    case HMRT_FUSED_MIN: case HMRT_FUSED_RELU_GRAD:
      return 2;
    case HMRT_FUSED_WHERE:
      return 3;
    case HMRT_FUSED_EXP: case HMRT_FUSED_LOG: case HMRT_FUSED_SQRT:
    case HMRT_FUSED_NEG: case HMRT_FUSED_RECIPROCAL: case HMRT_FUSED_TANH:
    case HMRT_FUSED_SIGMOID: case HMRT_FUSED_ERF: case HMRT_FUSED_RELU:
    case HMRT_FUSED_ABS: case HMRT_FUSED_SIGN:
      return 1;
    default:
      return -1;
  }
}

// op(a, b, c) for one element, as cpu/vmath's map computes each lane.
HMRT_HD inline float fused_apply(int64_t op, float a, float b, float c) {
  switch (op) {
    case HMRT_FUSED_ADD: return a + b;
    case HMRT_FUSED_SUB: return a - b;
    case HMRT_FUSED_MUL: return a * b;
    case HMRT_FUSED_DIV: return a / b;
    case HMRT_FUSED_POW: return pow_f32(a, b);
    case HMRT_FUSED_MAX: return max(a, b);
    case HMRT_FUSED_MIN: return min(a, b);
    case HMRT_FUSED_EXP: return exp_f32(a);
    case HMRT_FUSED_LOG: return log_f32(a);
    case HMRT_FUSED_SQRT: return sqrtf(a);
    case HMRT_FUSED_NEG: return -a;
    case HMRT_FUSED_RECIPROCAL: return 1.0f / a;
    case HMRT_FUSED_TANH: return tanh_f32(a);
    case HMRT_FUSED_SIGMOID: return 1.0f / (1.0f + exp_f32(-a));
    case HMRT_FUSED_ERF: return erf_f32(a);
    case HMRT_FUSED_RELU: return a > 0.0f || a != a ? a : 0.0f;
    case HMRT_FUSED_ABS: {
      int32_t bits;
      std::memcpy(&bits, &a, sizeof(bits));
      return bits_to_float(bits & 0x7fffffff);
    }
    case HMRT_FUSED_SIGN: return a > 0.0f ? 1.0f : (a < 0.0f ? -1.0f : a);
    case HMRT_FUSED_WHERE: return a != 0.0f ? b : c;
    case HMRT_FUSED_RELU_GRAD: return a > 0.0f ? b : 0.0f;
    default: return a;
  }
}

// The hmrt_fused_op of an hmrt_unary_op, -1 for identity (a copy) and for
// an unknown op.
inline int64_t fused_of_unary(int op) {
  switch (op) {
    case HMRT_UNARY_EXP: return HMRT_FUSED_EXP;
    case HMRT_UNARY_LOG: return HMRT_FUSED_LOG;
    case HMRT_UNARY_SQRT: return HMRT_FUSED_SQRT;
    case HMRT_UNARY_NEG: return HMRT_FUSED_NEG;
    case HMRT_UNARY_RECIPROCAL: return HMRT_FUSED_RECIPROCAL;
    case HMRT_UNARY_TANH: return HMRT_FUSED_TANH;
    case HMRT_UNARY_SIGMOID: return HMRT_FUSED_SIGMOID;
    case HMRT_UNARY_ERF: return HMRT_FUSED_ERF;
    case HMRT_UNARY_RELU: return HMRT_FUSED_RELU;
    case HMRT_UNARY_ABS: return HMRT_FUSED_ABS;
    case HMRT_UNARY_SIGN: return HMRT_FUSED_SIGN;
    default: return -1;
  }
}

}  // namespace hmrt::ew

#endif  // HMRT_CORE_EW_MATH_H
