// hmrt_reduce_to_f32's sums element by element, in the CPU kernel's order
// (cpu/tensor_ops.cpp): what one GPU thread computes for one element of y,
// and what a host test checks bit for bit against the CPU kernel.
#ifndef HMRT_CORE_REDUCE_MATH_H
#define HMRT_CORE_REDUCE_MATH_H

#include <cstdint>

#include "core/host_device.h"
#include "core/plan.h"

namespace hmrt {

// The offsets in x (operand 0) and y (operand 1) of flat index `flat` over
// p's dims `which` (cpu/tensor_ops.cpp's unravel_offsets).
HMRT_HD inline void unravel_xy(const Plan& p, const int* which, int n, int64_t flat, int64_t* xo,
                        int64_t* yo) {
  *xo = 0;
  *yo = 0;
  for (int i = n - 1; i >= 0; --i) {
    const int d = which[i];
    const int64_t id = flat % p.dims[d];
    flat /= p.dims[d];
    *xo += id * p.st[0][d];
    *yo += id * p.st[1][d];
  }
}

// cpu/tensor_ops.cpp's sum_run.
HMRT_HD inline double sum_run(const float* x, int64_t len) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= len; i += 4) {
    s0 += x[i];
    s1 += x[i + 1];
    s2 += x[i + 2];
    s3 += x[i + 3];
  }
  for (; i < len; ++i) s0 += x[i];
  return (s0 + s1) + (s2 + s3);
}

// When y keeps x's inner dim, each element of y sums the reduced index
// space in chunks of kReduceRowChunk indices: within a chunk, each run of
// the innermost reduced dim (cut at the chunk's ends) four elements at a
// time, pairwise, in double, from zero; then the chunks' sums in order.
// The CPU sums whole rows of y so (cpu/tensor_ops.cpp); a GPU sums the
// chunks on threads of their own.
constexpr int64_t kReduceRowChunk = 256;

HMRT_HD inline int64_t reduce_to_row_chunks(const ReducePlan& plan) {
  return (plan.rp.total + kReduceRowChunk - 1) / kReduceRowChunk;
}

// Where y's element e (inner dim kept) and the first x element it sums are.
HMRT_HD inline void reduce_to_row_offsets(const ReducePlan& plan, int64_t e, int64_t* xo,
                                          int64_t* yo) {
  const Plan& p = plan.p;
  const int64_t L = p.dims[p.rank - 1];
  unravel_xy(p, plan.kept, plan.nk - 1, e / L, xo, yo);
  *xo += e % L;
  *yo += e % L;
}

// Chunk k's sum for the element whose first summed x element is x[0].
HMRT_HD inline double reduce_to_row_chunk(const ReducePlan& plan, const float* x, int64_t k) {
  const Plan& rp = plan.rp;
  const int64_t lo = k * kReduceRowChunk;
  const int64_t hi = lo + kReduceRowChunk < rp.total ? lo + kReduceRowChunk : rp.total;
  const int64_t stride = rp.inner_stride(0);
  double acc = 0.0;
  for_runs(rp, lo, hi, [&](const int64_t* off, int64_t len) {
    const float* base = x + off[0];
    int64_t i = 0;
    for (; i + 4 <= len; i += 4)
      acc += (double(base[i * stride]) + double(base[(i + 1) * stride])) +
             (double(base[(i + 2) * stride]) + double(base[(i + 3) * stride]));
    for (; i < len; ++i) acc += base[i * stride];
  });
  return acc;
}

// y's element e when y keeps x's inner dim: its chunks' sums in order,
// each summed here, or read from partials[k * ny + e] when given.
HMRT_HD inline void reduce_to_row_element(const ReducePlan& plan, const float* x, int64_t e,
                                          float* y, const double* partials = nullptr,
                                          int64_t ny = 0) {
  int64_t xo, yo;
  reduce_to_row_offsets(plan, e, &xo, &yo);
  double total = 0.0;
  const int64_t chunks = reduce_to_row_chunks(plan);
  for (int64_t k = 0; k < chunks; ++k)
    total += partials ? partials[k * ny + e] : reduce_to_row_chunk(plan, x + xo, k);
  y[yo] = static_cast<float>(total);
}

// When x's inner dim is summed, each element of y sums the reduced index
// space in blocks of kReduceRunBlock (the CPU's blocks, cpu/tensor_ops.cpp):
// within a block, its runs (sum_run each) in order, from zero; then the
// blocks' sums in order.
constexpr int64_t kReduceRunBlock = int64_t{1} << 16;

HMRT_HD inline int64_t reduce_to_run_blocks(const ReducePlan& plan) {
  return (plan.rp.total + kReduceRunBlock - 1) / kReduceRunBlock;
}

// Block b's sum for the element whose first summed x element is x[0]
// (unravel_xy over the kept dims gives where that is, and where y's is).
HMRT_HD inline double reduce_to_run_block(const ReducePlan& plan, const float* x, int64_t b) {
  const Plan& rp = plan.rp;
  const int64_t lo = b * kReduceRunBlock;
  const int64_t hi = lo + kReduceRunBlock < rp.total ? lo + kReduceRunBlock : rp.total;
  double s = 0.0;
  for_runs(rp, lo, hi, [&](const int64_t* off, int64_t len) { s += sum_run(x + off[0], len); });
  return s;
}

// y's element yi when x's inner dim is summed: its blocks' sums in order,
// each summed here, or read from partials[b * ny + yi] when given.
HMRT_HD inline void reduce_to_run_element(const ReducePlan& plan, const float* x, int64_t yi,
                                          float* y, const double* partials = nullptr,
                                          int64_t ny = 0) {
  int64_t xo, yo;
  unravel_xy(plan.p, plan.kept, plan.nk, yi, &xo, &yo);
  double total = 0.0;
  const int64_t blocks = reduce_to_run_blocks(plan);
  for (int64_t b = 0; b < blocks; ++b)
    total += partials ? partials[b * ny + yi] : reduce_to_run_block(plan, x + xo, b);
  y[yo] = static_cast<float>(total);
}

}  // namespace hmrt

#endif  // HMRT_CORE_REDUCE_MATH_H
