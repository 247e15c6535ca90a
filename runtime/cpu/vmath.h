// The elementwise ops of the runtime, vectorised at the widest width the
// CPU supports (AVX-512F, AVX or SSE2, chosen once at run time): the one-op
// kernels (hmrt_unary_f32) and the fused programs (hmrt_fused_f32) both
// compute through map(), so a fused chain has the bits of its ops one by
// one.  Every op is lane-wise with no fused multiply-add, so the result
// never depends on the width, on the host's instruction set or on how an
// array was split:
//  - add, sub, mul, div, neg, reciprocal, sqrt, abs, max, min, relu, sign,
//    where, relu_grad: IEEE, exact;
//  - exp: the Cephes polynomial (< 2 ulp; cpu/vec.h's vexp_any), sigmoid
//    1/(1+exp(-x)) from it;
//  - erf: x P(x^2) / Q(x^2) on [-4, 4] (the rational approximation XLA and
//    Eigen use for f32, a few ulp), +-1 beyond;
//  - tanh, log: SLEEF's consistent variants (Sleef_cinz_*, <= 1 ulp);
//  - pow: the C library's powf per element.
#ifndef HMRT_CPU_VMATH_H
#define HMRT_CPU_VMATH_H

#include <cstdint>

namespace hmrt::vmath {

// y[i] = op(a[i], b[i], c[i]) for i in [0, n), op an hmrt_fused_op (unary
// ops read a, binary ops a and b, where and relu_grad as documented in
// hmrt/tensor_ops.h).  y may alias any operand.
void map(int64_t op, const float* a, const float* b, const float* c, float* y,
         int64_t n);

// The vector width in use (16, 8 or 4 floats) and its instruction set.
int width();
const char* isa();

}  // namespace hmrt::vmath

#endif  // HMRT_CPU_VMATH_H
