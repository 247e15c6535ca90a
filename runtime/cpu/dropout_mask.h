// The counter-based dropout mask, shared by hmrt_dropout_f32 and the
// attention kernel (which draws the mask of its probabilities in the
// forward and again in the backward, the same bits as hmrt_dropout_f32
// gives the (batch, heads, q_len, kv_len) tensor they form), and the CUDA
// backend's dropout kernels.
#ifndef HMRT_CPU_DROPOUT_MASK_H
#define HMRT_CPU_DROPOUT_MASK_H

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace hmrt {

HMRT_HD inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// Output j of the splitmix64 stream seeded with s.
HMRT_HD inline uint64_t splitmix(uint64_t s, uint64_t j) {
  return mix64(s + (j + 1) * 0x9E3779B97F4A7C15ull);
}

// What a kept element is multiplied by: 1 / (1 - ratio), 0 when everything
// drops.
HMRT_HD inline float dropout_scale(float ratio) {
  return ratio < 1.0f ? 1.0f / (1.0f - ratio) : 0.0f;
}

// Element i of a dropout of `ratio` keyed by (seed, counter) is kept iff
// its draw, (bits >> 11) * 2^-53, is at least ratio.
struct DropoutMask {
  uint64_t key, threshold;
  float scale;  // 1 / (1 - ratio), 0 when everything drops
  DropoutMask(float ratio, uint64_t seed, uint64_t counter)
      : key(splitmix(seed, counter)),
        // (bits >> 11) >= ceil(ratio * 2^53); ratio * 2^53 is exact.
        threshold(uint64_t(std::ceil(double(ratio) * 0x1p53))),
        scale(dropout_scale(ratio)) {}
  HMRT_HD bool keep(uint64_t i) const { return (splitmix(key, i) >> 11) >= threshold; }
};

}  // namespace hmrt

#endif  // HMRT_CPU_DROPOUT_MASK_H
