// Shape checks shared by the generic tensor kernels (tensor_ops.cpp,
// fused.cpp): a shape's rank and dims are valid and its element count fits.
#ifndef HMRT_CPU_SHAPE_CHECK_H
#define HMRT_CPU_SHAPE_CHECK_H

#include <cstdio>

#include "core/internal.h"
#include "hmrt/tensor_ops.h"

namespace hmrt {

// "[2,3,4]" for messages.
struct ShapeText {
  char s[128];
  ShapeText(int32_t rank, const int64_t* dims) {
    int p = std::snprintf(s, sizeof(s), "[");
    for (int32_t d = 0; d < rank && p < (int)sizeof(s); ++d)
      p += std::snprintf(s + p, sizeof(s) - p, d ? ",%lld" : "%lld",
                         (long long)dims[d]);
    if (p < (int)sizeof(s)) std::snprintf(s + p, sizeof(s) - p, "]");
  }
};
#define HMRT_SHAPE(r, d) (::hmrt::ShapeText((r), (d)).s)

inline hmrt_status check_shape(const char* fn, const char* name, int32_t rank,
                               const int64_t* dims, int64_t* numel) {
  *numel = 0;  // set on every path, failures included
  HMRT_CHECK_ARG(rank >= 0 && rank <= HMRT_MAX_RANK,
                 "%s: rank of %s must be in [0, %d], got %d", fn, name,
                 HMRT_MAX_RANK, (int)rank);
  HMRT_CHECK_ARG(rank == 0 || dims != nullptr,
                 "%s: shape of %s is NULL but its rank is %d", fn, name,
                 (int)rank);
  // The product of the nonzero dims must fit, so that any partial product
  // of the dims does too.
  int64_t n = 1;
  bool empty = false;
  for (int32_t d = 0; d < rank; ++d) {
    HMRT_CHECK_ARG(dims[d] >= 0, "%s: %s has a negative dim: shape %s", fn,
                   name, HMRT_SHAPE(rank, dims));
    if (dims[d] == 0) {
      empty = true;
      continue;
    }
    HMRT_CHECK_ARG(!__builtin_mul_overflow(n, dims[d], &n),
                   "%s: the element count of %s overflows: shape %s", fn,
                   name, HMRT_SHAPE(rank, dims));
  }
  *numel = empty ? 0 : n;
  return HMRT_OK;
}

}  // namespace hmrt

#endif  // HMRT_CPU_SHAPE_CHECK_H
