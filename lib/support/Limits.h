//===- Limits.h - checked size arithmetic and hmcc's size limits -*- C++ -*-===//
//
// Every element count and byte size that comes from a model (a dimension, a
// shape, a tensor's bytes) goes through these checks before it is used, so
// that no size arithmetic overflows and nothing is allocated without bound.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_SUPPORT_LIMITS_H
#define HMCC_SUPPORT_LIMITS_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>

namespace hmcc {

/// The largest tensor hmcc accepts, in bytes: 2^48 (256 TiB), far beyond any
/// memory it could be placed in; a few thousand such sizes still add up
/// without overflowing 64 bits (the arena sums are checked as well).
constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

/// The most bytes a placed program may hold in all, summed over every tensor
/// it places (2^60): offsets and arena sizes below it cannot overflow.
constexpr int64_t kMaxArenaBytes = int64_t(1) << 60;

/// a * b, or nullopt when it overflows int64 or an operand is negative.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// a + b, or nullopt when it overflows int64 or an operand is negative.
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// The number of elements of `shape`, or nullopt when a dimension is
/// negative or the count exceeds `limit`.
inline std::optional<int64_t> checkedElementCount(llvm::ArrayRef<int64_t> shape,
                                                  int64_t limit = kMaxTensorBytes) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d == 0)
      n = 0;
  }
  for (int64_t d : shape) {
    if (n == 0)
      return 0;
    auto m = checkedMul(n, d);
    if (!m || *m > limit)
      return std::nullopt;
    n = *m;
  }
  return n;
}

/// The bytes of a tensor of `shape` with `elementBytes` per element, or
/// nullopt when a dimension is negative or it exceeds kMaxTensorBytes.
inline std::optional<int64_t> checkedTensorBytes(llvm::ArrayRef<int64_t> shape,
                                                 int64_t elementBytes) {
  auto n = checkedElementCount(shape);
  if (!n)
    return std::nullopt;
  auto bytes = checkedMul(*n, elementBytes);
  if (!bytes || *bytes > kMaxTensorBytes)
    return std::nullopt;
  return bytes;
}

} // namespace hmcc

#endif // HMCC_SUPPORT_LIMITS_H
