// QuantMap::nearest() by table lookup, for the CPU's 8-bit kernels: the same
// code for every float, without nearest()'s scan.
//
// A float is put in a bucket by its sign, its exponent and the top kBits bits
// of its mantissa (as QuantMap does with fewer bits; exponents below kMinExp
// share the first bucket, above kMaxExp the last).  nearest() never falls as
// its argument grows (the entries are sorted, and which of two neighbours is
// nearer flips once between them), and with kBits = 7 it changes at most once
// within a bucket: at the bucket's threshold, the least float there whose
// code is one more.  So code(y) = base + (y >= threshold), two loads and a
// comparison.  The table is built from nearest() itself; where a bucket's
// codes would differ by more than one (not so for the maps hmcc uses), it is
// marked inexact and the kernels call nearest() instead.  A unit test checks
// code() against nearest() for every float of magnitude 2^-24 to 2 and
// beyond (quant8_test.cpp).
#ifndef HMRT_CPU_QUANT8_TABLE_H
#define HMRT_CPU_QUANT8_TABLE_H

#include <cmath>
#include <cstdint>

#include "core/quant8_math.h"

namespace hmrt {

class CodeTable {
 public:
  static constexpr int kBits = 7;

  explicit CodeTable(const QuantMap& qm) {
    for (int sign = 0; sign < 2; ++sign)
      for (int b = 0; b < kCount; ++b) fill(qm, sign, b);
  }

  // QuantMap::nearest(y), for any y that is not NaN.
  uint8_t code(float y) const {
    const int i = index(float_bits(y));
    return static_cast<uint8_t>(base_[i] + (y >= threshold_[i]));
  }

  // out[i] = code(x[i] * inv) for i < n (the products rounded as floats),
  // eight at a time where the CPU has AVX2 (cpu/quant8.cpp).
  void codes(const float* x, int64_t n, float inv, uint8_t* out) const;

  // Whether code() is nearest() for every float (else use nearest()).
  bool exact() const { return exact_; }

 private:
  void codes_avx2(const float* x, int64_t n, float inv, uint8_t* out) const;

  static constexpr uint32_t kFirst = kMinExp << kBits;
  static constexpr int kCount = (kMaxExp - kMinExp + 1) << kBits;
  static constexpr uint32_t kMaxFinite = 0x7f7fffffu;

  static int index(uint32_t bits) {
    uint32_t key = (bits & 0x7fffffffu) >> (23 - kBits);
    key = key < kFirst ? kFirst : key;
    key = key > kFirst + kCount - 1 ? kFirst + kCount - 1 : key;
    return static_cast<int>((bits >> 31) * kCount + (key - kFirst));
  }

  // Bucket b of `sign`: its magnitudes' bit patterns [lo, hi], its codes at
  // its least and greatest value, and the flip between them.
  void fill(const QuantMap& qm, int sign, int b) {
    const uint32_t key = kFirst + b;
    const uint32_t lo = b == 0 ? 0 : key << (23 - kBits);
    const uint32_t hi = b == kCount - 1 ? kMaxFinite : ((key + 1) << (23 - kBits)) - 1;
    const int i = sign * kCount + b;
    // The value of magnitude pattern u; y grows with u for sign 0 and falls
    // for sign 1.
    auto value = [&](uint32_t u) { return bits_float(u | uint32_t(sign) << 31); };
    const uint8_t least = qm.nearest(value(sign ? hi : lo));
    const uint8_t most = qm.nearest(value(sign ? lo : hi));
    base_[i] = least;
    threshold_[i] = HUGE_VALF;
    if (most == least) return;
    if (most != least + 1) {
      exact_ = false;
      return;
    }
    // The least y with code `most`: for sign 0 the least such u, for sign
    // 1 the greatest (codes are monotone in y, so a bisection finds it).
    uint32_t a = lo, z = hi;  // the flip lies in [a, z]
    while (a < z) {
      if (sign == 0) {
        const uint32_t mid = a + (z - a) / 2;
        if (qm.nearest(value(mid)) == most)
          z = mid;
        else
          a = mid + 1;
      } else {
        const uint32_t mid = a + (z - a + 1) / 2;
        if (qm.nearest(value(mid)) == most)
          a = mid;
        else
          z = mid - 1;
      }
    }
    threshold_[i] = value(a);
  }

  float threshold_[2 * kCount];
  uint8_t base_[2 * kCount + 3];  // + 3: a 4-byte gather at the last entry
  bool exact_ = true;
};

}  // namespace hmrt

#endif  // HMRT_CPU_QUANT8_TABLE_H
