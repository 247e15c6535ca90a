// Iteration plans of the generic tensor kernels: the dims of an iteration
// space and each operand's element strides in it, with broadcast dims at
// stride 0 and neighbouring dims merged where every operand allows.  The CPU
// kernels (cpu/tensor_ops.cpp) walk a plan in runs of its innermost dim
// (for_runs); the CUDA kernels compute each element's offsets on its own
// (offsets()), but for the sums that follow the CPU's runs.
#ifndef HMRT_CORE_PLAN_H
#define HMRT_CORE_PLAN_H

#include <cstdint>

#include "core/host_device.h"
#include "hmrt/tensor_ops.h"

namespace hmrt {

constexpr int kMaxRank = HMRT_MAX_RANK;
// A plan may carry one extra innermost dim of bytes (odd element sizes).
constexpr int kPlanRank = kMaxRank + 1;
constexpr int kMaxOps = 4;

// Dim d (of an output of rank ry) as seen by an operand of rank r aligned on
// the trailing dims: 1 for the missing leading dims.
HMRT_HD inline int64_t aligned_dim(int32_t r, const int64_t* s, int32_t ry, int d) {
  const int k = d - (ry - r);
  return k < 0 ? 1 : s[k];
}

struct Plan {
  int nops = 0;
  int rank = 0;
  int64_t total = 1;
  int64_t dims[kPlanRank];
  int64_t st[kMaxOps][kPlanRank];  // element strides per operand

  void set_dims(int r, const int64_t* d) {
    rank = r;
    total = 1;
    for (int i = 0; i < r; ++i) {
      dims[i] = d[i];
      total *= d[i];
    }
  }
  // Natural (row-major dense) strides of the iteration dims for operand k.
  void set_dense(int k) {
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; --d) {
      st[k][d] = s;
      s *= dims[d];
    }
  }
  // Operand k of shape (r, s) broadcast to the iteration dims.
  void set_broadcast(int k, int32_t r, const int64_t* s) {
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t e = aligned_dim(r, s, rank, d);
      st[k][d] = (e == 1) ? 0 : stride;
      stride *= e;
    }
  }
  // Appends an innermost dim of elem_size bytes: afterwards strides count
  // bytes for the operands with scale[k] (stride 1 in the new dim), and stay
  // as they are for the others (stride 0 in the new dim).
  void add_byte_dim(int64_t elem_size, const bool* scale) {
    for (int k = 0; k < nops; ++k) {
      for (int d = 0; d < rank; ++d)
        if (scale[k]) st[k][d] *= elem_size;
      st[k][rank] = scale[k] ? 1 : 0;
    }
    dims[rank++] = elem_size;
    total *= elem_size;
  }
  // Drops dims of size 1 and merges neighbours that are contiguous for every
  // operand.  Call with total > 0.
  void merge() {
    int r = 0;
    for (int d = 0; d < rank; ++d) {
      if (dims[d] == 1) continue;
      if (r > 0) {
        bool ok = true;
        for (int k = 0; k < nops; ++k)
          ok = ok && st[k][r - 1] == st[k][d] * dims[d];
        if (ok) {
          dims[r - 1] *= dims[d];
          for (int k = 0; k < nops; ++k) st[k][r - 1] = st[k][d];
          continue;
        }
      }
      dims[r] = dims[d];
      for (int k = 0; k < nops; ++k) st[k][r] = st[k][d];
      ++r;
    }
    rank = r;
  }
  // Operand k's element offsets at flat iteration index i (row-major over
  // dims), for kernels that compute each element on its own (a GPU thread):
  // with 32-bit divisions where the plan has fewer than 2^31 elements (a
  // 64-bit one costs a GPU several times as many instructions), else
  // 64-bit.  The loops over operands run to kMaxOps so that nvcc can keep
  // off[] in registers.
  HMRT_HD void offsets(int64_t i, int64_t* off) const {
    if (total < (int64_t{1} << 31))
      offsets_narrow(i, off);
    else
      offsets_wide(i, off);
  }
  HMRT_HD void offsets_narrow(int64_t i, int64_t* off) const {
    HMRT_UNROLL
    for (int k = 0; k < kMaxOps; ++k)
      if (k < nops) off[k] = 0;  // off has nops elements, no more
    uint32_t rest = uint32_t(i);
    for (int d = rank - 1; d >= 0; --d) {
      const uint32_t dim = uint32_t(dims[d]), q = rest / dim;
      const int64_t idx = int64_t(rest - q * dim);
      rest = q;
      HMRT_UNROLL
      for (int k = 0; k < kMaxOps; ++k)
        if (k < nops) off[k] += idx * st[k][d];
    }
  }
  HMRT_HD void offsets_wide(int64_t i, int64_t* off) const {
    HMRT_UNROLL
    for (int k = 0; k < kMaxOps; ++k)
      if (k < nops) off[k] = 0;  // off has nops elements, no more
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t idx = i % dims[d];
      i /= dims[d];
      HMRT_UNROLL
      for (int k = 0; k < kMaxOps; ++k)
        if (k < nops) off[k] += idx * st[k][d];
    }
  }
  HMRT_HD int64_t inner_stride(int k) const { return rank ? st[k][rank - 1] : 0; }
};

// Plan for y = f(inputs...) with y dense of shape (ry, sy) and input i
// broadcast from (ranks[i], shapes[i]).  Returns false if y is empty.
inline bool broadcast_plan(Plan& p, int nin, const int32_t* ranks,
                    const int64_t* const* shapes, int32_t ry,
                    const int64_t* sy) {
  p.nops = nin + 1;
  p.set_dims(ry, sy);
  if (p.total == 0) return false;
  p.set_dense(0);
  for (int i = 0; i < nin; ++i) p.set_broadcast(i + 1, ranks[i], shapes[i]);
  p.merge();
  return true;
}

// Calls seg(off, len) for the runs of the innermost dim that cover the flat
// iteration range [lo, hi), in order: off[k] is operand k's element offset
// at the run's start, and element i of the run is at off[k] + i *
// inner_stride(k).  A rank-0 plan is one run of one element.  The CPU
// kernels walk plans so, and the CUDA kernels that sum in the CPU's order
// (core/reduce_math.h) too.
template <class Seg>
HMRT_HD inline void for_runs(const Plan& p, int64_t lo, int64_t hi, Seg&& seg) {
  int64_t off[kMaxOps] = {};
  if (lo >= hi) return;
  if (p.rank == 0) {
    seg(static_cast<const int64_t*>(off), int64_t{1});
    return;
  }
  const int r = p.rank;
  const int nops = p.nops;
  int64_t idx[kPlanRank];
  int64_t rem = lo;
  for (int d = r - 1; d >= 0; --d) {
    idx[d] = rem % p.dims[d];
    rem /= p.dims[d];
  }
  for (int k = 0; k < nops; ++k)
    for (int d = 0; d < r; ++d) off[k] += idx[d] * p.st[k][d];
  const int64_t inner = p.dims[r - 1];
  int64_t pos = lo;
  while (pos < hi) {
    const int64_t left = inner - idx[r - 1];
    const int64_t len = left < hi - pos ? left : hi - pos;
    seg(static_cast<const int64_t*>(off), len);
    pos += len;
    if (pos >= hi) break;
    // The run ended at the end of the inner dim: carry into the outer dims.
    for (int k = 0; k < nops; ++k) off[k] -= idx[r - 1] * p.st[k][r - 1];
    idx[r - 1] = 0;
    for (int d = r - 2; d >= 0; --d) {
      ++idx[d];
      for (int k = 0; k < nops; ++k) off[k] += p.st[k][d];
      if (idx[d] < p.dims[d]) break;
      for (int k = 0; k < nops; ++k) off[k] -= p.dims[d] * p.st[k][d];
      idx[d] = 0;
    }
  }
}

// The plans of a sum of x (dense, shape sx) down to shape sy (hmrt_reduce_to_f32):
// p iterates x (operand 0, dense) and y (operand 1, stride 0 on the summed
// dims), merged; kept lists p's dims that y keeps, in order; rp iterates the
// summed dims alone with x's strides (operand 0).  Shapes must be checked
// and x not empty.
struct ReducePlan {
  Plan p, rp;
  int kept[kPlanRank];
  int nk = 0;

  ReducePlan(int32_t rx, const int64_t* sx, int32_t ry, const int64_t* sy) {
    p.nops = 2;
    p.set_dims(rx, sx);
    p.set_dense(0);
    p.set_broadcast(1, ry, sy);
    p.merge();
    int red[kPlanRank], nr = 0;
    for (int d = 0; d < p.rank; ++d) (p.st[1][d] ? kept[nk++] : red[nr++]) = d;
    rp.nops = 1;
    rp.rank = nr;
    rp.total = 1;
    for (int i = 0; i < nr; ++i) {
      rp.dims[i] = p.dims[red[i]];
      rp.st[0][i] = p.st[0][red[i]];
      rp.total *= rp.dims[i];
    }
  }
};

}  // namespace hmrt

#endif  // HMRT_CORE_PLAN_H
