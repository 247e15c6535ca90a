// SLEEF's consistent (cinz) variants at three widths, picked once from what
// the CPU supports.  sleef.h declares each width only when the compiler
// targets it (-mavx512f ...); the runtime is built for baseline x86-64 and
// compiles each width's loop with a target attribute instead, so the few
// functions used are declared here.
#include "cpu/vmath.h"

#include <immintrin.h>

#include <cstring>

extern "C" {
__m128 Sleef_cinz_erff4_u10sse2(__m128);
__m128 Sleef_cinz_tanhf4_u10sse2(__m128);
__m128 Sleef_cinz_logf4_u10sse2(__m128);
__m256 Sleef_cinz_erff8_u10avx(__m256);
__m256 Sleef_cinz_tanhf8_u10avx(__m256);
__m256 Sleef_cinz_logf8_u10avx(__m256);
__m512 Sleef_cinz_erff16_u10avx512fnofma(__m512);
__m512 Sleef_cinz_tanhf16_u10avx512fnofma(__m512);
__m512 Sleef_cinz_logf16_u10avx512fnofma(__m512);
}

namespace hmrt::vmath {
namespace {

using MapFn = void (*)(const float*, float*, int64_t);

// One width: whole vectors, then the tail through a zero-padded vector, so
// every element goes through the same vector function.
#define HMRT_VMATH_MAP(NAME, TARGET, VEC, W, LOAD, STORE, FN)          \
  __attribute__((target(TARGET))) void NAME(const float* x, float* y,  \
                                            int64_t n) {               \
    int64_t i = 0;                                                     \
    for (; i + W <= n; i += W) STORE(y + i, FN(LOAD(x + i)));          \
    if (i < n) {                                                       \
      alignas(64) float t[W] = {};                                     \
      std::memcpy(t, x + i, size_t(n - i) * sizeof(float));            \
      STORE(t, FN(LOAD(t)));                                           \
      std::memcpy(y + i, t, size_t(n - i) * sizeof(float));            \
    }                                                                  \
  }

HMRT_VMATH_MAP(erf4, "sse2", __m128, 4, _mm_loadu_ps, _mm_storeu_ps, Sleef_cinz_erff4_u10sse2)
HMRT_VMATH_MAP(tanh4, "sse2", __m128, 4, _mm_loadu_ps, _mm_storeu_ps, Sleef_cinz_tanhf4_u10sse2)
HMRT_VMATH_MAP(log4, "sse2", __m128, 4, _mm_loadu_ps, _mm_storeu_ps, Sleef_cinz_logf4_u10sse2)
HMRT_VMATH_MAP(erf8, "avx", __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, Sleef_cinz_erff8_u10avx)
HMRT_VMATH_MAP(tanh8, "avx", __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, Sleef_cinz_tanhf8_u10avx)
HMRT_VMATH_MAP(log8, "avx", __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, Sleef_cinz_logf8_u10avx)
HMRT_VMATH_MAP(erf16, "avx512f", __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps,
               Sleef_cinz_erff16_u10avx512fnofma)
HMRT_VMATH_MAP(tanh16, "avx512f", __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps,
               Sleef_cinz_tanhf16_u10avx512fnofma)
HMRT_VMATH_MAP(log16, "avx512f", __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps,
               Sleef_cinz_logf16_u10avx512fnofma)
#undef HMRT_VMATH_MAP

struct Table {
  int width;
  const char* isa;
  MapFn erf, tanh, log;
};

Table choose() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return {16, "avx512f", erf16, tanh16, log16};
  if (__builtin_cpu_supports("avx"))
    return {8, "avx", erf8, tanh8, log8};
  return {4, "sse2", erf4, tanh4, log4};
}

const Table& table() {
  static const Table t = choose();
  return t;
}

}  // namespace

void erf(const float* x, float* y, int64_t n) { table().erf(x, y, n); }
void tanh(const float* x, float* y, int64_t n) { table().tanh(x, y, n); }
void log(const float* x, float* y, int64_t n) { table().log(x, y, n); }
int width() { return table().width; }
const char* isa() { return table().isa; }

}  // namespace hmrt::vmath
