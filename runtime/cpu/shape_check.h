// Shape checks shared by the generic tensor kernels (tensor_ops.cpp,
// fused.cpp, and the CUDA backend's): a shape's rank and dims are valid and
// its element count fits; shapes broadcast.
#ifndef HMRT_CPU_SHAPE_CHECK_H
#define HMRT_CPU_SHAPE_CHECK_H

#include <algorithm>
#include <cstdio>

#include "core/internal.h"
#include "core/plan.h"
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

// Multidirectional broadcasting of nin inputs; the output must be exactly
// their broadcast shape.  Shapes must already be checked.
inline hmrt_status check_broadcast(const char* fn, int nin, const char* const* names,
                            const int32_t* ranks, const int64_t* const* shapes,
                            int32_t ry, const int64_t* sy) {
  int32_t rmax = 0;
  for (int i = 0; i < nin; ++i) rmax = std::max(rmax, ranks[i]);
  int64_t bshape[kMaxRank];
  for (int d = 0; d < rmax; ++d) {
    int64_t v = 1;
    for (int i = 0; i < nin; ++i) {
      const int64_t e = aligned_dim(ranks[i], shapes[i], rmax, d);
      if (e == 1) continue;
      if (v != 1 && e != v) {
        if (nin == 2)
          return fail(HMRT_INVALID_ARGUMENT,
                      "%s: shapes %s (%s) and %s (%s) do not broadcast", fn,
                      HMRT_SHAPE(ranks[0], shapes[0]), names[0],
                      HMRT_SHAPE(ranks[1], shapes[1]), names[1]);
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: shapes %s (%s), %s (%s) and %s (%s) do not broadcast",
                    fn, HMRT_SHAPE(ranks[0], shapes[0]), names[0],
                    HMRT_SHAPE(ranks[1], shapes[1]), names[1],
                    HMRT_SHAPE(ranks[2], shapes[2]), names[2]);
      }
      v = e;
    }
    bshape[d] = v;
  }
  bool same = ry == rmax;
  for (int d = 0; same && d < rmax; ++d) same = sy[d] == bshape[d];
  HMRT_CHECK_ARG(same,
                 "%s: the output has shape %s but the inputs broadcast to %s",
                 fn, HMRT_SHAPE(ry, sy), HMRT_SHAPE(rmax, bshape));
  return HMRT_OK;
}

// Unidirectional: shape `from` must broadcast to shape `to`.
inline hmrt_status check_broadcast_to(const char* fn, const char* from_name,
                               int32_t rf, const int64_t* sf,
                               const char* to_name, int32_t rt,
                               const int64_t* st) {
  bool ok = rf <= rt;
  for (int d = 0; ok && d < rt; ++d) {
    const int64_t e = aligned_dim(rf, sf, rt, d);
    ok = e == 1 || e == st[d];
  }
  HMRT_CHECK_ARG(ok, "%s: %s shape %s does not broadcast to %s shape %s", fn,
                 from_name, HMRT_SHAPE(rf, sf), to_name, HMRT_SHAPE(rt, st));
  return HMRT_OK;
}

// Row-major element strides of a dense tensor.
inline void dense_strides(int32_t rank, const int64_t* dims, int64_t* st) {
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    st[d] = s;
    s *= dims[d];
  }
}

// A strided slice (hmrt_slice): the shapes, and every sliced index inside x.
inline hmrt_status check_slice(const char* fn, const void* x, int32_t rank,
                        const int64_t* shape, const int64_t* starts,
                        const int64_t* steps, const int64_t* out_shape,
                        const void* y, int64_t* nx, int64_t* ny) {
  hmrt_status st = check_shape(fn, "x", rank, shape, nx);
  if (st != HMRT_OK) return st;
  if ((st = check_shape(fn, "y", rank, out_shape, ny)) != HMRT_OK) return st;
  HMRT_CHECK_ARG(rank == 0 || (starts != nullptr && steps != nullptr),
                 "%s: starts or steps is NULL", fn);
  for (int d = 0; d < rank; ++d) {
    HMRT_CHECK_ARG(steps[d] != 0, "%s: steps[%d] is 0", fn, d);
    const int64_t n = out_shape[d];
    if (n == 0) continue;
    const int64_t dim = shape[d];
    int64_t span, last;
    const bool overflow = __builtin_mul_overflow(n - 1, steps[d], &span) ||
                          __builtin_add_overflow(starts[d], span, &last);
    if (starts[d] < 0 || starts[d] >= dim || overflow || last < 0 ||
        last >= dim)
      return fail(HMRT_OUT_OF_RANGE,
                  "%s: dim %d: %lld elements from start %lld with step %lld "
                  "leave [0, %lld)",
                  fn, d, (long long)n, (long long)starts[d],
                  (long long)steps[d], (long long)dim);
  }
  HMRT_CHECK_ARG(x != nullptr || !*ny || !*nx, "%s: x is NULL but has %lld elements", fn,
                 (long long)*nx);
  HMRT_CHECK_ARG(y != nullptr || !*ny, "%s: y is NULL but has %lld elements", fn,
                 (long long)*ny);
  return HMRT_OK;
}

// Element strides into x of one slice step per dim, and the start offset.
inline void slice_strides(int32_t rank, const int64_t* shape, const int64_t* starts,
                   const int64_t* steps, int64_t* st, int64_t* base) {
  int64_t xs[kMaxRank];
  dense_strides(rank, shape, xs);
  *base = 0;
  for (int d = 0; d < rank; ++d) {
    st[d] = steps[d] * xs[d];
    *base += starts[d] * xs[d];
  }
}

// perm is a permutation of 0..rank-1 (hmrt_transpose).
inline hmrt_status check_perm(const char* fn, int32_t rank, const int64_t* perm) {
  HMRT_CHECK_ARG(rank == 0 || perm != nullptr, "%s: perm is NULL", fn);
  bool seen[HMRT_MAX_RANK] = {};
  for (int d = 0; d < rank; ++d) {
    const bool ok = perm[d] >= 0 && perm[d] < rank && !seen[perm[d]];
    HMRT_CHECK_ARG(ok, "%s: perm %s is not a permutation of 0..%d", fn, HMRT_SHAPE(rank, perm),
                   (int)rank - 1);
    seen[perm[d]] = true;
  }
  return HMRT_OK;
}

// An axis in [-rank, rank), made non-negative.
inline hmrt_status normalize_axis(const char* fn, int32_t axis, int32_t rank,
                           int32_t* out) {
  HMRT_CHECK_ARG(axis >= -rank && axis < rank,
                 "%s: axis %d is out of range for rank %d", fn, (int)axis,
                 (int)rank);
  *out = axis < 0 ? axis + rank : axis;
  return HMRT_OK;
}

// Element j of an index tensor of int64 or int32 (host memory).
inline int64_t load_index(const void* idx, int32_t dt, int64_t j) {
  return dt == HMRT_DTYPE_I64 ? static_cast<const int64_t*>(idx)[j]
                              : static_cast<const int32_t*>(idx)[j];
}

// ONNX Gather's arguments (hmrt_gather): the shapes, the index type and
// every index (in host memory) within [-d, d) of the gathered axis; the
// element counts before and after the axis.
inline hmrt_status check_gather(const char* fn, const void* x, int32_t rank,
                         const int64_t* shape, int32_t axis, int32_t idx_dtype,
                         const void* idx, int64_t n_idx, const void* y,
                         int32_t* axis_out, int64_t* outer, int64_t* inner) {
  int64_t nx;
  hmrt_status st = check_shape(fn, "x", rank, shape, &nx);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_ARG(rank >= 1, "%s: x must have rank >= 1", fn);
  if ((st = normalize_axis(fn, axis, rank, axis_out)) != HMRT_OK) return st;
  HMRT_CHECK_ARG(idx_dtype == HMRT_DTYPE_I64 || idx_dtype == HMRT_DTYPE_I32,
                 "%s: idx_dtype must be HMRT_DTYPE_I64 (7) or HMRT_DTYPE_I32 "
                 "(6), got %d",
                 fn, (int)idx_dtype);
  HMRT_CHECK_SIZE(fn, n_idx);
  HMRT_CHECK_ARG(idx != nullptr || n_idx == 0, "%s: idx is NULL but has %lld elements", fn,
                 (long long)n_idx);
  int64_t o = 1, in = 1, ny;
  for (int d = 0; d < *axis_out; ++d) o *= shape[d];
  for (int d = *axis_out + 1; d < rank; ++d) in *= shape[d];
  HMRT_CHECK_ARG(!__builtin_mul_overflow(o * in, n_idx, &ny),
                 "%s: the output's element count overflows", fn);
  HMRT_CHECK_ARG(x != nullptr || nx == 0, "%s: x is NULL but has %lld elements", fn,
                 (long long)nx);
  HMRT_CHECK_ARG(y != nullptr || ny == 0, "%s: y is NULL but has %lld elements", fn,
                 (long long)ny);
  const int64_t dim = shape[*axis_out];
  for (int64_t j = 0; j < n_idx; ++j) {
    const int64_t v = load_index(idx, idx_dtype, j);
    if (v < -dim || v >= dim)
      return fail(HMRT_OUT_OF_RANGE,
                  "%s: index %lld at position %lld is out of range [-%lld, "
                  "%lld) for axis %d of shape %s",
                  fn, (long long)v, (long long)j, (long long)dim,
                  (long long)dim, (int)*axis_out, HMRT_SHAPE(rank, shape));
  }
  *outer = o;
  *inner = in;
  return HMRT_OK;
}

// Concat's arguments (hmrt_concat): n >= 1 inputs whose sizes along the
// axis sum to out_shape[axis]; the axis made non-negative, y's element
// count, and the counts before and after the axis.
inline hmrt_status check_concat(const char* fn, int32_t n, const void* const* inputs,
                                const int64_t* sizes, int32_t rank, const int64_t* out_shape,
                                int32_t* axis, int64_t* ny, int64_t* outer, int64_t* inner) {
  HMRT_CHECK_ARG(n >= 1, "%s: n must be >= 1, got %d", fn, (int)n);
  HMRT_CHECK_ARG(inputs != nullptr && sizes != nullptr,
                 "%s: inputs or sizes is NULL", fn);
  hmrt_status st = check_shape(fn, "y", rank, out_shape, ny);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_ARG(rank >= 1, "%s: rank must be >= 1", fn);
  if ((st = normalize_axis(fn, *axis, rank, axis)) != HMRT_OK) return st;
  int64_t o = 1, in = 1;
  for (int d = 0; d < *axis; ++d) o *= out_shape[d];
  for (int d = *axis + 1; d < rank; ++d) in *= out_shape[d];
  const int64_t total_axis = out_shape[*axis];
  int64_t acc = 0;
  for (int32_t i = 0; i < n; ++i) {
    HMRT_CHECK_ARG(sizes[i] >= 0 && sizes[i] <= total_axis - acc,
                   "%s: sizes[%d] = %lld: the sizes exceed out_shape[%d] = "
                   "%lld",
                   fn, (int)i, (long long)sizes[i], (int)*axis,
                   (long long)total_axis);
    acc += sizes[i];
    HMRT_CHECK_ARG(inputs[i] != nullptr || o * sizes[i] * in == 0,
                   "%s: inputs[%d] is NULL but has %lld elements", fn, (int)i,
                   (long long)(o * sizes[i] * in));
  }
  HMRT_CHECK_ARG(acc == total_axis,
                 "%s: the sizes sum to %lld but out_shape[%d] is %lld", fn,
                 (long long)acc, (int)*axis, (long long)total_axis);
  *outer = o;
  *inner = in;
  return HMRT_OK;
}

}  // namespace hmrt

#endif  // HMRT_CPU_SHAPE_CHECK_H
