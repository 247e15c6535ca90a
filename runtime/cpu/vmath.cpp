// cpu/vmath at three widths, each compiled for its instruction set with a
// target pragma (the runtime itself is built for baseline x86-64), and the
// widest one the CPU supports picked once.  sleef.h declares each width's
// functions only when the compiler targets it, so the four used are
// declared here.
#include "cpu/vmath.h"

// The lambdas of vmath_impl.inc pass wide vectors by value; GCC warns that
// their ABI differs from a build without the instruction set, which cannot
// matter here: they are called only inside this file, at their own width.
#pragma GCC diagnostic ignored "-Wpsabi"

#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "cpu/vec.h"
#include "hmrt/tensor_ops.h"

extern "C" {
__m128 Sleef_cinz_tanhf4_u10sse2(__m128);
__m128 Sleef_cinz_logf4_u10sse2(__m128);
__m256 Sleef_cinz_tanhf8_u10avx(__m256);
__m256 Sleef_cinz_logf8_u10avx(__m256);
__m512 Sleef_cinz_tanhf16_u10avx512fnofma(__m512);
__m512 Sleef_cinz_logf16_u10avx512fnofma(__m512);
}

namespace hmrt::vmath {

#pragma GCC push_options
#pragma GCC target("avx512f")
#define HMRT_VMATH_NS w16
#define HMRT_VMATH_W 16
#define HMRT_VMATH_NATIVE __m512
#define HMRT_SLEEF(f) Sleef_cinz_##f##f16_u10avx512fnofma
#include "cpu/vmath_impl.inc"
#undef HMRT_VMATH_NS
#undef HMRT_VMATH_W
#undef HMRT_VMATH_NATIVE
#undef HMRT_SLEEF
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx")
#define HMRT_VMATH_NS w8
#define HMRT_VMATH_W 8
#define HMRT_VMATH_NATIVE __m256
#define HMRT_SLEEF(f) Sleef_cinz_##f##f8_u10avx
#include "cpu/vmath_impl.inc"
#undef HMRT_VMATH_NS
#undef HMRT_VMATH_W
#undef HMRT_VMATH_NATIVE
#undef HMRT_SLEEF
#pragma GCC pop_options

#define HMRT_VMATH_NS w4
#define HMRT_VMATH_W 4
#define HMRT_VMATH_NATIVE __m128
#define HMRT_SLEEF(f) Sleef_cinz_##f##f4_u10sse2
#include "cpu/vmath_impl.inc"
#undef HMRT_VMATH_NS
#undef HMRT_VMATH_W
#undef HMRT_VMATH_NATIVE
#undef HMRT_SLEEF

namespace {

using MapFn = void (*)(int64_t, const float*, const float*, const float*,
                       float*, int64_t);
struct Table {
  int width;
  const char* isa;
  MapFn map;
};

Table choose() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {16, "avx512f", w16::map};
  if (__builtin_cpu_supports("avx")) return {8, "avx", w8::map};
  return {4, "sse2", w4::map};
}

const Table& table() {
  static const Table t = choose();
  return t;
}

}  // namespace

void map(int64_t op, const float* a, const float* b, const float* c, float* y,
         int64_t n) {
  table().map(op, a, b, c, y, n);
}
int width() { return table().width; }
const char* isa() { return table().isa; }

}  // namespace hmrt::vmath
