// The CUDA backend's kernels for attention, fused elementwise programs,
// the one-op elementwise kernels, softmax and cross-entropy
// (cuda/nn_kernels.cu), as launchers that cuda/nn_ops_cuda.cpp calls after
// checking the arguments.  Plain C++, as cuda_kernels.h: every launcher
// queues its work on `stream` and returns the launch's cudaError_t as an
// int (0: success); the caller synchronizes.  Pointers are device
// addresses unless said otherwise.
//
// Per element the arithmetic is the CPU's (core/ew_math.h: exp and erf are
// vmath's polynomials, bit for bit); what differs from the CPU is the order
// of the sums over a row (softmax, log-sum-exp, attention's dot products),
// and tanh, log and pow, which come from the GPU's math library.
#ifndef HMRT_CUDA_NN_KERNELS_H
#define HMRT_CUDA_NN_KERNELS_H

#include <cstddef>
#include <cstdint>

#include "core/attention_layout.h"
#include "core/ew_math.h"
#include "core/host_device.h"
#include "cpu/fused_program.h"
#include "cpu/dropout_mask.h"
#include "hmrt/hmrt.h"
#include "hmrt/nn_ops.h"  // HMRT_MAX_RANK

namespace hmrt {
namespace cuda {

// y[i] = op(a[i], b[i]) for an hmrt_fused_op of one or two operands (b
// NULL for one).
int map(void* stream, int64_t op, const float* a, const float* b, float* y, int64_t n);

// n / d for 0 <= n < 2^31 by a multiply and a shift (Granlund and
// Montgomery): an integer division on the GPU costs tens of instructions,
// and every element of a broadcasting fused program needs one per dim.
struct FastDiv {
  uint32_t mul = 1, shift = 0;
};
// The constants for a divisor d >= 1: shift = ceil(log2 d),
// mul = floor(2^32 (2^shift - d) / d) + 1.
inline FastDiv fast_div(uint32_t d) {
  FastDiv f;
  while ((uint64_t{1} << f.shift) < d) ++f.shift;
  f.mul = uint32_t(((uint64_t{1} << 32) * ((uint64_t{1} << f.shift) - d)) / d + 1);
  return f;
}
HMRT_HD inline uint32_t divide(uint32_t n, FastDiv f) {
#ifdef __CUDA_ARCH__
  const uint32_t hi = __umulhi(n, f.mul);
#else
  const uint32_t hi = uint32_t((uint64_t(n) * f.mul) >> 32);
#endif
  return (hi + n) >> f.shift;  // hi <= n < 2^31: no overflow
}

// A fused program (hmrt_fused_f32) on the GPU: one thread per output
// element evaluates the program, its values in shared memory.
struct FusedHeader {
  int32_t rank, n_in, n_code;
  int32_t all_dense;  // every input in the output's shape: no index to find
  int32_t small;      // fewer than 2^31 elements: 32-bit index arithmetic
  int64_t dims[HMRT_MAX_RANK];
  FastDiv div[HMRT_MAX_RANK];  // by dims[d], where small
};
struct FusedOperand {
  const void* p;
  int32_t is_bool, dense;        // bool (uint8) input; in the output's shape
  int32_t splat;                 // one element, the same for every output element
  int64_t st[HMRT_MAX_RANK];     // element strides, 0 where broadcast
};
// The operand of a checked input (check_fused) at p.
inline FusedOperand fused_operand(const FusedInput& x, const void* p, int32_t rank) {
  FusedOperand o{};
  o.p = p;
  o.is_bool = x.u8 != nullptr;
  o.dense = x.kind == FusedInput::Dense;
  o.splat = x.kind == FusedInput::Splat;
  for (int d = 0; d < rank; ++d) o.st[d] = x.st[d];
  return o;
}
// The header of a program of n_code instructions over `operands` with an
// output of shape dims (n elements).
inline FusedHeader fused_header(int32_t rank, const int64_t* dims, int64_t n,
                                const FusedOperand* operands, int32_t n_in, int32_t n_code) {
  FusedHeader h{};
  h.rank = rank;
  h.n_in = n_in;
  h.n_code = n_code;
  h.all_dense = 1;
  for (int32_t j = 0; j < n_in; ++j) h.all_dense &= operands[j].dense;
  h.small = n < (int64_t{1} << 31);
  for (int d = 0; d < rank; ++d) {
    h.dims[d] = dims[d];
    if (h.small && dims[d] > 0) h.div[d] = fast_div(uint32_t(dims[d]));
  }
  return h;
}
// `operands` (n_in) and `code` (4 * n_code, as hmrt_fused_f32's) are in
// device memory; n_in + n_code <= kFusedSlots.
constexpr int kFusedSlots = 320;
// Element `off` of an input, as a float.
HMRT_HD inline float fused_load(const FusedOperand& x, int64_t off) {
  return x.is_bool ? (static_cast<const uint8_t*>(x.p)[off] ? 1.0f : 0.0f)
                   : static_cast<const float*>(x.p)[off];
}
// r[j] for each one-element (splat) input j: the same for every output
// element, so a GPU thread loads them once, before its elements.
template <class Slots>
HMRT_HD inline void fused_splats(const FusedHeader& h, const FusedOperand* operands, Slots r) {
  for (int j = 0; j < h.n_in; ++j)
    if (operands[j].splat) r[j] = fused_load(operands[j], 0);
}
// A count known at compile time, as an int (std::integral_constant's
// conversion is host code only).
template <int N>
struct FusedCount {
  HMRT_HD constexpr operator int() const { return N; }
};
// r[j] for each input j < n_in but the splat ones: its element for output
// element i, found through its strides.  NIn is int (the interpreter's
// h.n_in) or FusedCount<N> (a generated kernel's,
// cuda/fused_generated.h: its loops unroll, so that r stays in registers).
template <class NIn, class Slots>
HMRT_HD inline void fused_inputs(const FusedHeader& h, const FusedOperand* operands, int64_t i,
                                 Slots& r, NIn n_in) {
  if (h.all_dense) {
HMRT_UNROLL
    for (int j = 0; j < n_in; ++j) r[j] = fused_load(operands[j], i);
  } else if (h.small) {
    uint32_t idx[HMRT_MAX_RANK] = {};
    uint32_t rem = uint32_t(i);
HMRT_UNROLL
    for (int d = HMRT_MAX_RANK - 1; d >= 0; --d) {
      if (d >= h.rank) continue;
      const uint32_t q = divide(rem, h.div[d]);
      idx[d] = rem - q * uint32_t(h.dims[d]);
      rem = q;
    }
HMRT_UNROLL
    for (int j = 0; j < n_in; ++j) {
      const FusedOperand& x = operands[j];
      if (x.splat) continue;
      uint32_t off = uint32_t(i);
      if (!x.dense) {
        off = 0;
HMRT_UNROLL
        for (int d = 0; d < HMRT_MAX_RANK; ++d)
          if (d < h.rank) off += idx[d] * uint32_t(x.st[d]);
      }
      r[j] = fused_load(x, off);
    }
  } else {
    int64_t idx[HMRT_MAX_RANK];
    for (int64_t d = h.rank - 1, rem = i; d >= 0; --d) {
      idx[d] = rem % h.dims[d];
      rem /= h.dims[d];
    }
HMRT_UNROLL
    for (int j = 0; j < n_in; ++j) {
      const FusedOperand& x = operands[j];
      if (x.splat) continue;
      int64_t off = i;
      if (!x.dense) {
        off = 0;
        for (int d = 0; d < h.rank; ++d) off += idx[d] * x.st[d];
      }
      r[j] = fused_load(x, off);
    }
  }
}
// Output element i of the program, with r[j] (j < n_in + n_code) the
// inputs' and instructions' values: what one GPU thread computes (and a
// host-side test, on host memory), the splat inputs' values already in r
// (fused_splats).  Code is int64_t (hmrt_fused_f32's) or the kernel's
// int32_t copy; Slots is float* or the kernel's view of shared memory.
template <class Code, class Slots>
HMRT_HD inline float fused_element(const FusedHeader& h, const FusedOperand* operands,
                                   const Code* code, int64_t i, Slots r) {
  fused_inputs(h, operands, i, r, h.n_in);
  for (int c = 0; c < h.n_code; ++c) {
    const Code* ins = code + 4 * c;
    r[h.n_in + c] = ew::fused_apply(ins[0], r[int(ins[1])], ins[2] >= 0 ? r[int(ins[2])] : 0.0f,
                                    ins[3] >= 0 ? r[int(ins[3])] : 0.0f);
  }
  return r[h.n_in + h.n_code - 1];
}
int fused(void* stream, const FusedHeader& h, const FusedOperand* operands, const int64_t* code,
          float* y, int64_t n);
// The same with y rounded to bf16 (nearest even; hmrt_fused_f32_to_bf16).
int fused(void* stream, const FusedHeader& h, const FusedOperand* operands, const int64_t* code,
          uint16_t* y, int64_t n);

// Softmax (log: log-softmax) over the middle dim of (outer, n, inner), and
// its gradient (hmrt_softmax_axis_f32 / _backward_f32): one block per
// (outer, inner) column.
int softmax(void* stream, const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
            int log);
int softmax_backward(void* stream, const float* y, const float* dy, float* dx, int64_t outer,
                     int64_t n, int64_t inner, int log);

// SoftmaxCrossEntropyLoss over scores (N, C, D) (D: the dims after C),
// labels (N, D), E = N * D label positions.  skip: ignore_index applies.
// lse[e] = log sum_c exp(scores[n, c, d]), one block per position.
int sce_lse(void* stream, const float* scores, int64_t N, int64_t C, int64_t D, float* lse);
// per[e] = w[label] * (lse[e] - scores[n, label, d]) in double, 0 where the
// label is skipped; with loss != NULL also loss[e] = (float)per[e].
// log_prob (nullable) = scores - lse over every (n, c, d).
int sce_forward(void* stream, const float* scores, const int64_t* labels, const float* weights,
                const float* lse, int64_t N, int64_t C, int64_t D, int skip, int64_t ignore_index,
                double* per, float* loss, float* log_prob);
// dscores[n, c, d] = exp(scores - lse[e]) * coef[e] (minus coef[e] at the
// label), 0 where the label is skipped.
int sce_backward(void* stream, const float* scores, const int64_t* labels, const float* lse,
                 const float* coef, int64_t N, int64_t C, int64_t D, int skip,
                 int64_t ignore_index, float* dscores);
// The same with dscores rounded to bf16 (nearest even).
int sce_backward(void* stream, const float* scores, const int64_t* labels, const float* lse,
                 const float* coef, int64_t N, int64_t C, int64_t D, int skip,
                 int64_t ignore_index, uint16_t* dscores);

// Attention (hmrt_attention_forward / _backward): with bf16 products and
// a head_dim the tensor-core kernels take, those (cuda/attention_tc.h);
// else one block per query row and head for the output, lse and dq, and
// one block per key row and kv head for dk and dv, walking the group's
// query heads and rows in order, so the results do not depend on
// scheduling.  drop: null without dropout.  di:
// B * H * T floats of scratch (rowsum(dout * out)), written by the backward.
int attention_forward(void* stream, const AttnLayout& a, const DropoutMask* drop,
                      const float* q, const float* k, const float* v, const float* bias,
                      float* out, float* lse);
int attention_backward(void* stream, const AttnLayout& a, const DropoutMask* drop,
                       const float* q, const float* k, const float* v, const float* bias,
                       const float* out, const float* lse, const float* dout, float* dq,
                       float* dk, float* dv, float* di);

}  // namespace cuda
}  // namespace hmrt

#endif  // HMRT_CUDA_NN_KERNELS_H
