// binary16 and bfloat16 conversions, bit by bit: hmrt_cast on the CPU
// (cpu/tensor_ops.cpp) and the CUDA backend's cast kernel
// (cuda/cuda_kernels.cu) share them, so both give the same bits.
#ifndef HMRT_CORE_FLOAT16_H
#define HMRT_CORE_FLOAT16_H

#include <cstdint>
#include <cstring>

#include "core/host_device.h"

namespace hmrt {

// Exact: every binary16 value is a float.
HMRT_HD inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf, NaN keeps its payload
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);  // rebias 15 -> 127
  } else {
    // Zero or subnormal: mant * 2^-24, exact in float.
    const float m = float(mant) * 0x1p-24f;
    return sign ? -m : m;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Round to nearest, ties to even: binary64 to binary16, directly (no double
// rounding through float).  NaN stays NaN (quiet, sign and top payload bits
// kept); magnitudes >= 65520 become inf; results below 2^-14 are subnormal.
HMRT_HD inline uint16_t double_to_half(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  const uint16_t sign = uint16_t((b >> 48) & 0x8000u);
  const uint64_t a = b & 0x7FFFFFFFFFFFFFFFull;
  if (a >= 0x7FF0000000000000ull) {
    if (a == 0x7FF0000000000000ull) return sign | 0x7C00u;
    return uint16_t(sign | 0x7E00u | ((a >> 42) & 0x3FFu));
  }
  const int exp = int(a >> 52);  // biased; 0 for zero and subnormal doubles
  if (exp < 1023 - 25) return sign;  // below half the smallest subnormal
  const uint64_t mant = (a & 0xFFFFFFFFFFFFFull) | (1ull << 52);
  // The result's significand has its last bit at 2^max(e - 10, -24), e =
  // exp - 1023: drop shift = 52 - 10 bits (normal) or more (subnormal).
  const int shift = exp >= 1023 - 14 ? 42 : 42 + (1023 - 14 - exp);
  uint64_t q = mant >> shift;
  const uint64_t rem = mant & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  if (exp < 1023 - 14) return uint16_t(sign | q);  // subnormal (or 2^-14)
  if (exp > 1023 + 15) return sign | 0x7C00u;
  // q in [2^10, 2^11]: a carry out of the significand bumps the exponent
  // (2^11 at the top exponent gives 0x7C00, inf).
  return uint16_t(sign | ((uint32_t(exp - 1023 + 15) << 10) + uint32_t(q) - 1024));
}

HMRT_HD inline float bf16_to_float(uint16_t h) {
  const uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Truncation (round toward zero): the top 16 bits, as ONNX's backend test
// data for Cast FLOAT -> BFLOAT16 (onnx 1.12) expects; NaN stays a quiet NaN.
HMRT_HD inline uint16_t float_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((bits >> 16) | 0x0040u);
  return uint16_t(bits >> 16);
}

// Round to nearest, ties to even (what GPUs do converting GEMM operands to
// bf16; hmrt_round_bf16); NaN stays a quiet NaN.
HMRT_HD inline uint16_t float_to_bf16_rne(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((bits >> 16) | 0x0040u);
  return uint16_t((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// f rounded to bf16 (nearest even) and widened back: the value a bf16
// product multiplies by.
HMRT_HD inline float round_to_bf16(float f) { return bf16_to_float(float_to_bf16_rne(f)); }

// Stores an fp32 result as is, or rounded to bf16 (nearest even): the
// kernels whose output is either (hmrt_*_f32 and hmrt_*_f32_to_bf16).
HMRT_HD inline void store_result(float* p, float v) { *p = v; }
HMRT_HD inline void store_result(uint16_t* p, float v) { *p = float_to_bf16_rne(v); }

}  // namespace hmrt

#endif  // HMRT_CORE_FLOAT16_H
