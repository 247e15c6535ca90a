// The CUDA backend's kernels for attention, fused programs, the one-op
// elementwise kernels, softmax and cross-entropy (cuda/nn_kernels.h).
//
// Row reductions (max, sums) run over a block: each thread folds a strided
// share of the row, then the warps combine with shuffles and the warps'
// results are folded in warp order, so a result depends only on the block
// size, never on scheduling.
#include <cuda_runtime.h>

#include <cmath>

#include "cuda/attention_tc.h"
#include "cuda/launch.cuh"
#include "core/ew_math.h"
#include "core/float16.h"
#include "cuda/nn_kernels.h"

namespace hmrt {
namespace cuda {
namespace {

constexpr int kRowThreads = 128;   // row reductions, attention
constexpr int kWarps = kRowThreads / 32;
constexpr int kTile = kRowThreads;  // attention keys (or queries) per step

// ---- block reductions (blockDim.x == kRowThreads) ----------------------------

struct MaxOp {
  __device__ float operator()(float a, float b) const { return ew::max(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// Every thread gets op over the block's v; `red` is kWarps floats of
// shared memory, free again when this returns.
template <class Op>
__device__ float block_reduce(float v, float* red, Op op) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();  // an earlier reduction's readers are done with red
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  float r = red[0];
  for (int w = 1; w < kWarps; ++w) r = op(r, red[w]);
  return r;
}

__device__ float dot(const float* a, const float* b, int64_t n) {
  float s = 0.0f;
  for (int64_t d = 0; d < n; ++d) s += a[d] * b[d];
  return s;
}

// x, or with bf16 products (HMRT_ATTENTION_BF16) x rounded to bf16.
__device__ float rd(float x, bool bf16) { return bf16 ? round_to_bf16(x) : x; }

// The dot product of attention's factors: of their bf16 values with bf16.
__device__ float dot(const float* a, const float* b, int64_t n, bool bf16) {
  if (!bf16) return dot(a, b, n);
  float s = 0.0f;
  for (int64_t d = 0; d < n; ++d) s += round_to_bf16(a[d]) * round_to_bf16(b[d]);
  return s;
}

// ---- elementwise -------------------------------------------------------------

__global__ void map_kernel(int64_t op, const float* a, const float* b, float* y, int64_t n) {
  HMRT_GRID_LOOP(i, n) { y[i] = ew::fused_apply(op, a[i], b ? b[i] : 0.0f, 0.0f); }
}

// A thread's values in the block's shared memory: value j of thread t at
// base[j * blockDim.x + t], so that a warp's accesses fall in distinct banks
// (an array indexed at run time would live in local memory instead).
struct SharedSlots {
  float* base;
  int stride;
  __device__ float& operator[](int j) const { return base[j * stride]; }
};

// The shared memory of a block of `threads` for a program: its code as
// int32_t, then each thread's values.
inline size_t fused_shm(const FusedHeader& h, int threads) {
  return size_t(4 * h.n_code) * sizeof(int32_t) +
         size_t(h.n_in + h.n_code) * size_t(threads) * sizeof(float);
}

// y in fp32, or rounded to bf16 (Out = uint16_t).
template <class Out>
__global__ void fused_kernel(FusedHeader h, const FusedOperand* operands, const int64_t* code,
                             Out* y, int64_t n) {
  extern __shared__ __align__(16) unsigned char fused_shared[];
  int32_t* prog = reinterpret_cast<int32_t*>(fused_shared);
  for (int e = threadIdx.x; e < 4 * h.n_code; e += blockDim.x) prog[e] = int32_t(code[e]);
  __syncthreads();
  const SharedSlots r{reinterpret_cast<float*>(prog + 4 * h.n_code) + threadIdx.x,
                      int(blockDim.x)};
  fused_splats(h, operands, r);
  HMRT_GRID_LOOP(i, n) { store_result(y + i, fused_element(h, operands, prog, i, r)); }
}

// ---- softmax -----------------------------------------------------------------

// Column (o, j) of (outer, n, inner): element c at base + c * inner.
__global__ void softmax_kernel(const float* x, float* y, int64_t n, int64_t inner, int log) {
  __shared__ float red[kWarps];
  const int64_t col = blockIdx.x, o = col / inner, j = col % inner;
  const float* xc = x + o * n * inner + j;
  float* yc = y + o * n * inner + j;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < n; c += blockDim.x) m = ew::max(m, xc[c * inner]);
  m = block_reduce(m, red, MaxOp());
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < n; c += blockDim.x) s += ew::exp_f32(xc[c * inner] - m);
  s = block_reduce(s, red, SumOp());
  if (log) {
    const float lse = m + logf(s);
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) yc[c * inner] = xc[c * inner] - lse;
  } else {
    const float inv = 1.0f / s;
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x)
      yc[c * inner] = ew::exp_f32(xc[c * inner] - m) * inv;
  }
}

__global__ void softmax_backward_kernel(const float* y, const float* dy, float* dx, int64_t n,
                                        int64_t inner, int log) {
  __shared__ float red[kWarps];
  const int64_t col = blockIdx.x, o = col / inner, j = col % inner;
  const int64_t base = o * n * inner + j;
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < n; c += blockDim.x) {
    const int64_t e = base + c * inner;
    s += log ? dy[e] : dy[e] * y[e];
  }
  s = block_reduce(s, red, SumOp());
  for (int64_t c = threadIdx.x; c < n; c += blockDim.x) {
    const int64_t e = base + c * inner;
    dx[e] = log ? dy[e] - ew::exp_f32(y[e]) * s : y[e] * (dy[e] - s);
  }
}

// ---- cross-entropy -----------------------------------------------------------

__global__ void sce_lse_kernel(const float* scores, int64_t C, int64_t D, float* lse) {
  __shared__ float red[kWarps];
  const int64_t e = blockIdx.x, nn = e / D, d = e % D;
  const float* x = scores + nn * C * D + d;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) m = ew::max(m, x[c * D]);
  m = block_reduce(m, red, MaxOp());
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) s += ew::exp_f32(x[c * D] - m);
  s = block_reduce(s, red, SumOp());
  if (threadIdx.x == 0) lse[e] = m + logf(s);
}

__global__ void sce_forward_kernel(const float* scores, const int64_t* labels,
                                   const float* weights, const float* lse, int64_t C, int64_t D,
                                   int64_t E, int skip, int64_t ignore_index, double* per,
                                   float* loss) {
  HMRT_GRID_LOOP(e, E) {
    const int64_t t = labels[e];
    double l = 0.0;
    if (!(skip && t == ignore_index)) {
      const int64_t nn = e / D, d = e % D;
      const double w = weights ? double(weights[t]) : 1.0;
      l = w * (double(lse[e]) - double(scores[(nn * C + t) * D + d]));
    }
    per[e] = l;
    if (loss) loss[e] = static_cast<float>(l);
  }
}

__global__ void log_prob_kernel(const float* scores, const float* lse, int64_t C, int64_t D,
                                int64_t count, float* log_prob) {
  HMRT_GRID_LOOP(i, count) {
    const int64_t d = i % D, nn = i / (C * D);
    log_prob[i] = scores[i] - lse[nn * D + d];
  }
}

template <class Out>
__global__ void sce_backward_kernel(const float* scores, const int64_t* labels, const float* lse,
                                    const float* coef, int64_t C, int64_t D, int64_t count,
                                    int skip, int64_t ignore_index, Out* dscores) {
  HMRT_GRID_LOOP(i, count) {
    const int64_t d = i % D, c = (i / D) % C, nn = i / (C * D);
    const int64_t e = nn * D + d, t = labels[e];
    if (skip && t == ignore_index) {
      store_result(dscores + i, 0.0f);
      continue;
    }
    float g = ew::exp_f32(scores[i] - lse[e]) * coef[e];
    if (c == t) g -= coef[e];
    store_result(dscores + i, g);
  }
}

// ---- attention ---------------------------------------------------------------

// The dropped probability: p kept and scaled, or 0.
__device__ float drop_prob(const DropoutMask* drop, float p, uint64_t index) {
  return drop->keep(index) ? p * drop->scale : 0.0f;
}

// Shared memory: the query row (D), the output accumulator (D), one tile
// of probabilities (kTile).
__global__ void attention_forward_kernel(AttnLayout a, DropoutMask mask, int has_drop,
                                         const float* q, const float* k, const float* v,
                                         const float* bias, float* out, float* lse) {
  extern __shared__ float shm[];
  __shared__ float red[kWarps];
  float* sq = shm;
  float* acc = sq + a.D;
  float* sp = acc + a.D;
  const int64_t i = blockIdx.x, head = blockIdx.y, b = head / a.H, h = head % a.H;
  const int t = threadIdx.x;
  const float* qrow = q + a.q_off(b, h) + i * a.ldq();
  const float* kh = k + a.kv_off(b, h / a.group);
  const float* vh = v + a.kv_off(b, h / a.group);
  const int64_t ldk = a.ldk();
  for (int64_t d = t; d < a.D; d += blockDim.x) {
    sq[d] = rd(qrow[d], a.bf16);
    acc[d] = 0.0f;
  }
  __syncthreads();
  const int64_t nvis = a.causal ? i + 1 : a.S;
  float m = -INFINITY, l = 0.0f;
  for (int64_t j0 = 0; j0 < nvis; j0 += kTile) {
    const int64_t kn = nvis - j0 < kTile ? nvis - j0 : kTile;
    float s = -INFINITY;
    if (t < kn) {
      const int64_t j = j0 + t;
      s = a.scale * dot(sq, kh + j * ldk, a.D, a.bf16);
      if (bias) s += bias[a.bias_off(b, h, i, j)];
    }
    const float mn = ew::max(m, block_reduce(s, red, MaxOp()));
    if (mn == -INFINITY) continue;  // nothing seen yet (the whole block agrees)
    float p = t < kn ? ew::exp_f32(s - mn) : 0.0f;
    const float corr = ew::exp_f32(m - mn);  // 0 on the first visible tile
    l = l * corr + block_reduce(p, red, SumOp());
    if (has_drop && t < kn) p = drop_prob(&mask, p, a.prob_index(head, i, j0 + t));
    sp[t] = rd(p, a.bf16);
    __syncthreads();
    for (int64_t d = t; d < a.D; d += blockDim.x) {
      float o = 0.0f;
      for (int64_t u = 0; u < kn; ++u) o += sp[u] * rd(vh[(j0 + u) * ldk + d], a.bf16);
      acc[d] = acc[d] * corr + o;
    }
    m = mn;
    __syncthreads();  // sp is rewritten by the next tile
  }
  const float inv = 1.0f / l;
  float* orow = out + a.o_off(b, h) + i * a.ldo();
  for (int64_t d = t; d < a.D; d += blockDim.x) orow[d] = acc[d] * inv;
  if (lse && t == 0) lse[head * a.T + i] = m + logf(l);
}

// dS of one probability: P' dP - P di with dropout, P (dP - di) without;
// with bf16 products P (dP' - di) (the CPU kernel's order), rounded.
__device__ float dscore(const DropoutMask* drop, int has_drop, bool bf16, float p, float dp,
                        float di, uint64_t index) {
  if (bf16) return round_to_bf16(p * ((has_drop ? drop_prob(drop, dp, index) : dp) - di));
  if (!has_drop) return p * (dp - di);
  return drop_prob(drop, p, index) * dp - p * di;
}

// dq for query row i of a head, and di = rowsum(dout * out) of the row.
// Shared memory: q row, dout row, dq accumulator (D each), a tile of dS.
__global__ void attention_dq_kernel(AttnLayout a, DropoutMask mask, int has_drop, const float* q,
                                    const float* k, const float* v, const float* bias,
                                    const float* out, const float* lse, const float* dout,
                                    float* dq, float* di_out) {
  extern __shared__ float shm[];
  __shared__ float red[kWarps];
  float* sq = shm;
  float* sdo = sq + a.D;
  float* acc = sdo + a.D;
  float* sds = acc + a.D;
  const int64_t i = blockIdx.x, head = blockIdx.y, b = head / a.H, h = head % a.H;
  const int t = threadIdx.x;
  const int64_t row = a.q_off(b, h) + i * a.ldq(), orow = a.o_off(b, h) + i * a.ldo();
  const float* kh = k + a.kv_off(b, h / a.group);
  const float* vh = v + a.kv_off(b, h / a.group);
  const int64_t ldk = a.ldk();
  float part = 0.0f;
  for (int64_t d = t; d < a.D; d += blockDim.x) {
    sq[d] = rd(q[row + d], a.bf16);
    sdo[d] = rd(dout[orow + d], a.bf16);
    acc[d] = 0.0f;
    part += dout[orow + d] * out[orow + d];
  }
  const float di = block_reduce(part, red, SumOp());  // syncs: sq, sdo are there
  if (t == 0) di_out[head * a.T + i] = di;
  const float L = lse[head * a.T + i];
  const int64_t nvis = a.causal ? i + 1 : a.S;
  for (int64_t j0 = 0; j0 < nvis; j0 += kTile) {
    const int64_t kn = nvis - j0 < kTile ? nvis - j0 : kTile;
    if (t < kn) {
      const int64_t j = j0 + t;
      float s = a.scale * dot(sq, kh + j * ldk, a.D, a.bf16);
      if (bias) s += bias[a.bias_off(b, h, i, j)];
      const float p = ew::exp_f32(s - L);
      const float dp = dot(sdo, vh + j * ldk, a.D, a.bf16);
      sds[t] = dscore(&mask, has_drop, a.bf16, p, dp, di, a.prob_index(head, i, j));
    }
    __syncthreads();
    for (int64_t d = t; d < a.D; d += blockDim.x) {
      float g = 0.0f;
      for (int64_t u = 0; u < kn; ++u) g += sds[u] * rd(kh[(j0 + u) * ldk + d], a.bf16);
      acc[d] += g;
    }
    __syncthreads();
  }
  for (int64_t d = t; d < a.D; d += blockDim.x) dq[row + d] = a.scale * acc[d];
}

// dk and dv for key row j of a kv head, over the group's query heads and
// the query rows that see the key, in order.  Shared memory: k row, v row,
// dk and dv accumulators (D each), a tile of P' and one of dS.
__global__ void attention_dkv_kernel(AttnLayout a, DropoutMask mask, int has_drop,
                                     const float* q, const float* k, const float* v,
                                     const float* bias, const float* lse, const float* dout,
                                     const float* di, float* dk, float* dv) {
  extern __shared__ float shm[];
  float* sk = shm;
  float* sv = sk + a.D;
  float* adk = sv + a.D;
  float* adv = adk + a.D;
  float* sp = adv + a.D;
  float* sds = sp + kTile;
  const int64_t j = blockIdx.x, task = blockIdx.y, b = task / a.Hk, kvh = task % a.Hk;
  const int t = threadIdx.x;
  const int64_t krow = a.kv_off(b, kvh) + j * a.ldk();
  const int64_t ldq = a.ldq(), ldo = a.ldo();
  for (int64_t d = t; d < a.D; d += blockDim.x) {
    sk[d] = rd(k[krow + d], a.bf16);
    sv[d] = rd(v[krow + d], a.bf16);
    adk[d] = 0.0f;
    adv[d] = 0.0f;
  }
  __syncthreads();
  for (int64_t h = kvh * a.group; h < (kvh + 1) * a.group; ++h) {
    const int64_t head = b * a.H + h;
    const float* qh = q + a.q_off(b, h);
    const float* doh = dout + a.o_off(b, h);
    for (int64_t i0 = a.causal ? j : 0; i0 < a.T; i0 += kTile) {
      const int64_t qn = a.T - i0 < kTile ? a.T - i0 : kTile;
      if (t < qn) {
        const int64_t i = i0 + t;
        float s = a.scale * dot(qh + i * ldq, sk, a.D, a.bf16);
        if (bias) s += bias[a.bias_off(b, h, i, j)];
        const float p = ew::exp_f32(s - lse[head * a.T + i]);
        const float dp = dot(doh + i * ldo, sv, a.D, a.bf16);
        const uint64_t index = a.prob_index(head, i, j);
        sp[t] = rd(has_drop ? drop_prob(&mask, p, index) : p, a.bf16);
        sds[t] = dscore(&mask, has_drop, a.bf16, p, dp, di[head * a.T + i], index);
      }
      __syncthreads();
      for (int64_t d = t; d < a.D; d += blockDim.x) {
        float gv = 0.0f, gk = 0.0f;
        for (int64_t u = 0; u < qn; ++u) {
          gv += sp[u] * rd(doh[(i0 + u) * ldo + d], a.bf16);
          gk += sds[u] * rd(qh[(i0 + u) * ldq + d], a.bf16);
        }
        adv[d] += gv;
        adk[d] += gk;
      }
      __syncthreads();
    }
  }
  for (int64_t d = t; d < a.D; d += blockDim.x) {
    dk[krow + d] = a.scale * adk[d];
    dv[krow + d] = adv[d];
  }
}

DropoutMask no_mask() { return DropoutMask(0.0f, 0, 0); }

}  // namespace

int map(void* stream, int64_t op, const float* a, const float* b, float* y, int64_t n) {
  map_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(op, a, b, y, n);
  return launched();
}

template <class Out>
int fused_to(void* stream, const FusedHeader& h, const FusedOperand* operands, const int64_t* code,
             Out* y, int64_t n) {
  // As many threads a block (a multiple of 32, at most kThreads) as the
  // 48 KiB of shared memory a block gets without asking hold.
  int threads = kThreads;
  while (threads > 32 && fused_shm(h, threads) > 48 * 1024) threads -= 32;
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  fused_kernel<<<unsigned(blocks), threads, fused_shm(h, threads), as_stream(stream)>>>(
      h, operands, code, y, n);
  return launched();
}

int fused(void* stream, const FusedHeader& h, const FusedOperand* operands, const int64_t* code,
          float* y, int64_t n) {
  return fused_to(stream, h, operands, code, y, n);
}

int fused(void* stream, const FusedHeader& h, const FusedOperand* operands, const int64_t* code,
          uint16_t* y, int64_t n) {
  return fused_to(stream, h, operands, code, y, n);
}

int softmax(void* stream, const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
            int log) {
  softmax_kernel<<<unsigned(outer * inner), kRowThreads, 0, as_stream(stream)>>>(x, y, n, inner,
                                                                                 log);
  return launched();
}

int softmax_backward(void* stream, const float* y, const float* dy, float* dx, int64_t outer,
                     int64_t n, int64_t inner, int log) {
  softmax_backward_kernel<<<unsigned(outer * inner), kRowThreads, 0, as_stream(stream)>>>(
      y, dy, dx, n, inner, log);
  return launched();
}

int sce_lse(void* stream, const float* scores, int64_t N, int64_t C, int64_t D, float* lse) {
  sce_lse_kernel<<<unsigned(N * D), kRowThreads, 0, as_stream(stream)>>>(scores, C, D, lse);
  return launched();
}

int sce_forward(void* stream, const float* scores, const int64_t* labels, const float* weights,
                const float* lse, int64_t N, int64_t C, int64_t D, int skip, int64_t ignore_index,
                double* per, float* loss, float* log_prob) {
  cudaStream_t s = as_stream(stream);
  const int64_t E = N * D;
  sce_forward_kernel<<<blocks_for(E), kThreads, 0, s>>>(scores, labels, weights, lse, C, D, E,
                                                        skip, ignore_index, per, loss);
  if (log_prob) {
    const int e = launched();
    if (e != 0) return e;
    log_prob_kernel<<<blocks_for(E * C), kThreads, 0, s>>>(scores, lse, C, D, E * C, log_prob);
  }
  return launched();
}

template <class Out>
int sce_backward_to(void* stream, const float* scores, const int64_t* labels, const float* lse,
                    const float* coef, int64_t N, int64_t C, int64_t D, int skip,
                    int64_t ignore_index, Out* dscores) {
  const int64_t count = N * C * D;
  sce_backward_kernel<<<blocks_for(count), kThreads, 0, as_stream(stream)>>>(
      scores, labels, lse, coef, C, D, count, skip, ignore_index, dscores);
  return launched();
}

int sce_backward(void* stream, const float* scores, const int64_t* labels, const float* lse,
                 const float* coef, int64_t N, int64_t C, int64_t D, int skip,
                 int64_t ignore_index, float* dscores) {
  return sce_backward_to(stream, scores, labels, lse, coef, N, C, D, skip, ignore_index, dscores);
}

int sce_backward(void* stream, const float* scores, const int64_t* labels, const float* lse,
                 const float* coef, int64_t N, int64_t C, int64_t D, int skip,
                 int64_t ignore_index, uint16_t* dscores) {
  return sce_backward_to(stream, scores, labels, lse, coef, N, C, D, skip, ignore_index, dscores);
}

int attention_forward(void* stream, const AttnLayout& a, const DropoutMask* drop,
                      const float* q, const float* k, const float* v, const float* bias,
                      float* out, float* lse) {
  if (tc_attention_supported(a))
    return tc_attention_forward(stream, a, drop, q, k, v, bias, out, lse);
  const size_t shm = size_t(2 * a.D + kTile) * sizeof(float);
  const dim3 grid(unsigned(a.T), unsigned(a.B * a.H));
  attention_forward_kernel<<<grid, kRowThreads, shm, as_stream(stream)>>>(
      a, drop ? *drop : no_mask(), drop != nullptr, q, k, v, bias, out, lse);
  return launched();
}

int attention_backward(void* stream, const AttnLayout& a, const DropoutMask* drop,
                       const float* q, const float* k, const float* v, const float* bias,
                       const float* out, const float* lse, const float* dout, float* dq,
                       float* dk, float* dv, float* di) {
  if (tc_attention_supported(a))
    return tc_attention_backward(stream, a, drop, q, k, v, bias, out, lse, dout, dq, dk, dv, di);
  cudaStream_t s = as_stream(stream);
  const DropoutMask mask = drop ? *drop : no_mask();
  if (a.T > 0) {
    const size_t shm = size_t(3 * a.D + kTile) * sizeof(float);
    attention_dq_kernel<<<dim3(unsigned(a.T), unsigned(a.B * a.H)), kRowThreads, shm, s>>>(
        a, mask, drop != nullptr, q, k, v, bias, out, lse, dout, dq, di);
    const int e = launched();
    if (e != 0) return e;
  }
  const size_t shm = size_t(4 * a.D + 2 * kTile) * sizeof(float);
  attention_dkv_kernel<<<dim3(unsigned(a.S), unsigned(a.B * a.Hk)), kRowThreads, shm, s>>>(
      a, mask, drop != nullptr, q, k, v, bias, lse, dout, di, dk, dv);
  return launched();
}

}  // namespace cuda
}  // namespace hmrt
