// Block-wise 8-bit quantisation's maps and nearest-code search (after
// bitsandbytes' dynamic maps), shared by the CPU's 8-bit AdamW
// (cpu/quant8.cpp) and the CUDA backend's: one definition of how a value
// is coded, so that both backends write the same codes.
#ifndef HMRT_CORE_QUANT8_MATH_H
#define HMRT_CORE_QUANT8_MATH_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/host_device.h"

namespace hmrt {

// The 256 entries of create_dynamic_map(is_signed), ascending (cpu/quant8.cpp).
void build_map(bool is_signed, float* out);

// Start points for the nearest-entry search.  A float |y| <= 1 is put in a
// bucket by its exponent and top kMantBits mantissa bits (exponents below
// kMinExp share the first bucket, which reaches down to 0); start[sign][b]
// is the largest map index whose entry is below every value of the bucket
// (or 0).  A bucket is narrower than twice the smallest gap of the maps in
// its octave, so the scan from there is a few steps.
constexpr int kMantBits = 5;
constexpr uint32_t kMinExp = 102;  // 2^-25: below the smallest entry / 2
constexpr uint32_t kMaxExp = 127;  // 2^0: |y| < 2
constexpr uint32_t kFirstKey = kMinExp << kMantBits;
constexpr int kBuckets = (kMaxExp - kMinExp + 1) << kMantBits;

HMRT_HD inline uint32_t float_bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}
HMRT_HD inline float bits_float(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof(x));
  return x;
}
HMRT_HD inline int bucket_of(uint32_t bits) {
  uint32_t key = (bits & 0x7fffffffu) >> (23 - kMantBits);
  key = key < kFirstKey ? kFirstKey : key;
  key = key > kFirstKey + kBuckets - 1 ? kFirstKey + kBuckets - 1 : key;
  return static_cast<int>(key - kFirstKey);
}

struct QuantMap {
  float map[257];              // the map, then +inf as a sentinel
  uint8_t zero;                // code of 0.0
  int steps = 0;               // most entries in one bucket
  uint8_t start[2][kBuckets];  // [sign bit][bucket]

  explicit QuantMap(bool is_signed) {
    build_map(is_signed, map);
    map[256] = HUGE_VALF;
    zero = static_cast<uint8_t>(std::find(map, map + 256, 0.0f) - map);
    for (int b = 0; b < kBuckets; ++b) {
      // Magnitudes of bucket b lie in [lo, hi).
      const uint32_t key = kFirstKey + b;
      const float lo = b == 0 ? 0.0f : bits_float(key << (23 - kMantBits));
      const float hi = bits_float((key + 1) << (23 - kMantBits));
      start[0][b] = below(lo);
      start[1][b] = below(-hi);
      steps = std::max(steps, count_in(lo, hi));
      steps = std::max(steps, count_in(-hi, -lo));
    }
  }
  // Entries in [lo, hi]: the most the scan in nearest() can pass.
  int count_in(float lo, float hi) const {
    return static_cast<int>(std::count_if(
        map, map + 256, [&](float v) { return v >= lo && v <= hi; }));
  }
  // Largest index with map[i] < v, or 0.
  uint8_t below(float v) const {
    int i = 0;
    while (i < 255 && map[i + 1] < v) ++i;
    return static_cast<uint8_t>(i);
  }
  // Index of the entry nearest to y; ties go to the larger entry.  pos is
  // the largest i with map[i] <= y (or 0), then pos or pos + 1 is nearest.
  // Branch-free: a fixed number of steps, the sentinel stops at 255.
  HMRT_HD uint8_t nearest(float y) const {
    const uint32_t bits = float_bits(y);
    int pos = start[bits >> 31][bucket_of(bits)];
    for (int k = 0; k < steps; ++k) pos += map[pos + 1] <= y;
    pos += map[pos + 1] - y <= y - map[pos];
    return static_cast<uint8_t>(pos);
  }
};

// The signed (first moment) and unsigned (second moment) maps, built once.
const QuantMap& quant_map(bool is_signed);

// One step of a block's absmax: max(m, |x|), NaN winning and then staying.
HMRT_HD inline float absmax_step(float m, float x) {
  const float a = std::fabs(x);
  return (a > m || a != a) ? a : m;
}

}  // namespace hmrt

#endif  // HMRT_CORE_QUANT8_MATH_H
