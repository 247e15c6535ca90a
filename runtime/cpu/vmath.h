// Vectorised transcendental maps over float arrays, from SLEEF's
// "consistent" variants (Sleef_cinz_*: no fused multiply-add, the same bits
// at every vector width), at the widest width the CPU supports: AVX-512F,
// AVX or SSE2, chosen once at run time.  So a result never depends on the
// host's instruction set, on how an array was split across threads, or on
// whether the map ran alone or inside a fused kernel.
//
// Maximum error 1.0 ulp (SLEEF's u10 functions).
#ifndef HMRT_CPU_VMATH_H
#define HMRT_CPU_VMATH_H

#include <cstdint>

namespace hmrt::vmath {

// y[i] = f(x[i]) for i in [0, n); y may alias x.
void erf(const float* x, float* y, int64_t n);
void tanh(const float* x, float* y, int64_t n);
void log(const float* x, float* y, int64_t n);

// The vector width in use (16, 8 or 4 floats) and its name, for reports.
int width();
const char* isa();

}  // namespace hmrt::vmath

#endif  // HMRT_CPU_VMATH_H
