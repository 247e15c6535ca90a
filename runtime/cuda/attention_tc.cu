// Attention with bf16 products and fp32 sums on tensor cores
// (HMRT_ATTENTION_BF16; cuda/attention_tc.h), flash-style: the (q_len x
// kv_len) probabilities live a (64 x 64) tile at a time in shared memory.
//
// A block has 4 warps and a tile of 64 query rows (the forward and dq) or
// of 64 keys (dk and dv); each warp owns 16 rows of it. Tiles of q, k, v
// and dout are rounded to bf16 (nearest even) as they are loaded, and
// zero-filled past the sequence and past head_dim up to Dp, the next
// multiple of 16, so zeros add nothing. The products run as 16x16x16 WMMA
// tiles accumulating in fp32; everything else (scores' scale and bias,
// softmax, dropout, dS) is fp32 elementwise work on those tiles, in the
// CPU kernel's order of operations (cpu/attention.cpp):
//   forward: S = Q K^T, s = scale * S + bias; per row the running max m and
//     sum l, P = exp(s - m) summed before the dropout, O = O * corr + P' V
//     with P' rounded; out = O / l, lse = m + log l.
//   dq: P = exp(s - lse), dP = dO V^T, dS = P (dP' - di) rounded,
//     dq = scale * sum over key tiles of dS K.
//   dk, dv: the same P and dS per (query tile, key tile), walking the
//     group's query heads and their tiles in order: dv += P'^T dO,
//     dk += dS^T Q, dk *= scale at the end.
// di = rowsum(dout * out) comes first, one thread per row, in fp32.
// No atomics: every sum is taken in a fixed order, so results do not
// depend on scheduling.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cmath>

#include "core/ew_math.h"
#include "cuda/attention_tc.h"
#include "cuda/launch.cuh"

namespace hmrt {
namespace cuda {
namespace {

using namespace nvcuda;
using bf16 = __nv_bfloat16;

constexpr int kRows = 64;            // query rows or keys per tile
constexpr int kWarpsTc = 4;          // warps per block, 16 rows each
constexpr int kThreadsTc = 32 * kWarpsTc;
constexpr int kF = 16;               // WMMA tile side

using FragA = wmma::fragment<wmma::matrix_a, kF, kF, kF, bf16, wmma::row_major>;
using FragAT = wmma::fragment<wmma::matrix_a, kF, kF, kF, bf16, wmma::col_major>;
using FragB = wmma::fragment<wmma::matrix_b, kF, kF, kF, bf16, wmma::row_major>;
using FragBT = wmma::fragment<wmma::matrix_b, kF, kF, kF, bf16, wmma::col_major>;
using FragC = wmma::fragment<wmma::accumulator, kF, kF, kF, float>;

__host__ __device__ constexpr size_t align128(size_t n) { return (n + 127) / 128 * 128; }

// Carves a block's dynamic shared memory into 128-byte aligned arrays.
struct Carve {
  unsigned char* base;
  size_t used = 0;
  template <class T>
  __device__ T* take(size_t count) {
    T* p = reinterpret_cast<T*>(base + used);
    used += align128(count * sizeof(T));
    return p;
  }
};

// Rows [r0, r0 + 64) of a (rows x D) operand whose row r starts at
// x + r * ld, as bf16 in dst (64 x Dp): rounded, zero past `rows` and D.
__device__ void load_tile(bf16* dst, const float* x, int64_t ld, int64_t r0, int64_t rows,
                          int64_t D, int Dp) {
  for (int e = threadIdx.x; e < kRows * Dp; e += blockDim.x) {
    const int r = e / Dp, d = e % Dp;
    const int64_t row = r0 + r;
    dst[e] = __float2bfloat16_rn(row < rows && d < D ? x[row * ld + d] : 0.0f);
  }
}

// C (16 x 16*nc, ldc) = A (16 x 16*kc, row-major, lda) B, where B is
// (16*kc x 16*nc): `bt` false reads it row-major from b (ldb), true reads
// it as the transpose of a row-major (16*nc x 16*kc) matrix at b.
template <bool kTransB>
__device__ void warp_gemm(const bf16* a, int lda, const bf16* b, int ldb, int kc, int nc,
                          float* c, int ldc) {
  for (int n = 0; n < nc; ++n) {
    FragC acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < kc; ++k) {
      FragA fa;
      wmma::load_matrix_sync(fa, a + k * kF, lda);
      if (kTransB) {
        FragBT fb;  // element (kk, nn) at b[(n*16 + nn) * ldb + k*16 + kk]
        wmma::load_matrix_sync(fb, b + n * kF * ldb + k * kF, ldb);
        wmma::mma_sync(acc, fa, fb, acc);
      } else {
        FragB fb;
        wmma::load_matrix_sync(fb, b + k * kF * ldb + n * kF, ldb);
        wmma::mma_sync(acc, fa, fb, acc);
      }
    }
    wmma::store_matrix_sync(c + n * kF, acc, ldc, wmma::mem_row_major);
  }
}

// C (16 x 16*nc, ldc, fp32, accumulated into) += A^T B: A is the
// row-major (64 x 16) column block at a (lda) read transposed, so rows
// w*16.. of C are A's columns; B (64 x 16*nc) row-major at b (ldb).
__device__ void warp_gemm_at_acc(const bf16* a, int lda, const bf16* b, int ldb, int nc,
                                 float* c, int ldc) {
  for (int n = 0; n < nc; ++n) {
    FragC acc;
    wmma::load_matrix_sync(acc, c + n * kF, ldc, wmma::mem_row_major);
    for (int k = 0; k < kRows / kF; ++k) {
      FragAT fa;  // element (i, kk) at a[(k*16 + kk) * lda + i]
      wmma::load_matrix_sync(fa, a + k * kF * lda, lda);
      FragB fb;
      wmma::load_matrix_sync(fb, b + k * kF * ldb + n * kF, ldb);
      wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + n * kF, acc, ldc, wmma::mem_row_major);
  }
}

// The masked score of query i and key j (S = q.k of the bf16 values), or
// -inf where the key is past the sequence or masked by causality.
__device__ float score(const AttnLayout& a, const float* bias, int64_t b, int64_t h, int64_t i,
                       int64_t j, float qk) {
  if (j >= a.S || i >= a.T || (a.causal && j > i)) return -INFINITY;
  float s = a.scale * qk;
  if (bias) s += bias[a.bias_off(b, h, i, j)];
  return s;
}

__device__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = ew::max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// ---- forward -------------------------------------------------------------------

size_t forward_shm(int Dp) {
  return 3 * align128(size_t(kRows) * Dp * sizeof(bf16)) +        // q, k, v tiles
         align128(size_t(kRows) * kRows * sizeof(float)) +        // scores
         align128(size_t(kRows) * kRows * sizeof(bf16)) +         // P'
         2 * align128(size_t(kRows) * Dp * sizeof(float)) +       // O, P'V
         3 * align128(kRows * sizeof(float));                     // m, l, corr
}

// grid: (query tiles, batch * heads)
__global__ void __launch_bounds__(kThreadsTc)
    tc_forward_kernel(AttnLayout a, DropoutMask mask, int has_drop, int Dp, const float* q,
                      const float* k, const float* v, const float* bias, float* out,
                      float* lse) {
  extern __shared__ __align__(128) unsigned char shm[];
  Carve cv{shm};
  bf16* sq = cv.take<bf16>(kRows * Dp);
  bf16* sk = cv.take<bf16>(kRows * Dp);
  bf16* sv = cv.take<bf16>(kRows * Dp);
  float* ss = cv.take<float>(kRows * kRows);
  bf16* sp = cv.take<bf16>(kRows * kRows);
  float* so = cv.take<float>(kRows * Dp);
  float* spv = cv.take<float>(kRows * Dp);
  float* sm = cv.take<float>(kRows);
  float* sl = cv.take<float>(kRows);
  float* scorr = cv.take<float>(kRows);

  const int64_t head = blockIdx.y, b = head / a.H, h = head % a.H;
  const int64_t i0 = int64_t(blockIdx.x) * kRows;
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32, r0 = w * kF;
  const int64_t ldq = a.ldq(), ldk = a.ldk();
  load_tile(sq, q + a.q_off(b, h), ldq, i0, a.T, a.D, Dp);
  for (int e = threadIdx.x; e < kRows * Dp; e += blockDim.x) so[e] = 0.0f;
  if (threadIdx.x < kRows) {
    sm[threadIdx.x] = -INFINITY;
    sl[threadIdx.x] = 0.0f;
  }
  const int64_t i1 = i0 + kRows < a.T ? i0 + kRows : a.T;
  const int64_t kend = a.causal ? (a.S < i1 ? a.S : i1) : a.S;
  const float* kh = k + a.kv_off(b, h / a.group);
  const float* vh = v + a.kv_off(b, h / a.group);
  for (int64_t j0 = 0; j0 < kend; j0 += kRows) {
    __syncthreads();  // the last tile's readers of sk, sv are done
    load_tile(sk, kh, ldk, j0, a.S, a.D, Dp);
    load_tile(sv, vh, ldk, j0, a.S, a.D, Dp);
    __syncthreads();
    // The warp's 16 rows of scores: Q_w K^T.
    warp_gemm<true>(sq + r0 * Dp, Dp, sk, Dp, Dp / kF, kRows / kF, ss + r0 * kRows, kRows);
    __syncwarp();
    // Online softmax, one row at a time, each lane holding keys lane and
    // lane + 32 of it.
    for (int r = r0; r < r0 + kF; ++r) {
      const int64_t i = i0 + r;
      float s[2], p[2];
      for (int c = 0; c < 2; ++c) {
        const int jj = lane + 32 * c;
        s[c] = score(a, bias, b, h, i, j0 + jj, ss[r * kRows + jj]);
      }
      const float mo = sm[r];
      const float mn = ew::max(mo, warp_max(ew::max(s[0], s[1])));
      float corr = 1.0f;
      if (mn == -INFINITY) {  // nothing seen yet
        p[0] = p[1] = 0.0f;
      } else {
        for (int c = 0; c < 2; ++c) p[c] = s[c] == -INFINITY ? 0.0f : ew::exp_f32(s[c] - mn);
        corr = ew::exp_f32(mo - mn);  // 0 on the first visible tile
      }
      const float sum = warp_sum(p[0] + p[1]);
      for (int c = 0; c < 2; ++c) {
        const int jj = lane + 32 * c;
        float pc = p[c];
        if (has_drop) pc = mask.keep(a.prob_index(head, i, j0 + jj)) ? pc * mask.scale : 0.0f;
        sp[r * kRows + jj] = __float2bfloat16_rn(pc);
      }
      __syncwarp();
      if (lane == 0) {
        sl[r] = sl[r] * corr + sum;
        sm[r] = mn;
        scorr[r] = corr;
      }
      __syncwarp();
    }
    // P'V for the warp's rows, then O = O * corr + P'V.
    warp_gemm<false>(sp + r0 * kRows, kRows, sv, Dp, kRows / kF, Dp / kF, spv + r0 * Dp, Dp);
    __syncwarp();
    for (int e = lane; e < kF * Dp; e += 32) {
      const int r = r0 + e / Dp;
      so[r * Dp + e % Dp] = so[r * Dp + e % Dp] * scorr[r] + spv[r * Dp + e % Dp];
    }
    __syncwarp();
  }
  __syncthreads();
  float* oh = out + a.q_off(b, h);
  for (int e = threadIdx.x; e < kRows * Dp; e += blockDim.x) {
    const int r = e / Dp, d = e % Dp;
    if (i0 + r < a.T && d < a.D) oh[(i0 + r) * ldq + d] = so[e] * (1.0f / sl[r]);
  }
  if (lse && threadIdx.x < kRows && i0 + threadIdx.x < a.T)
    lse[head * a.T + i0 + threadIdx.x] = sm[threadIdx.x] + logf(sl[threadIdx.x]);
}

// ---- backward ------------------------------------------------------------------

// di[head * T + i] = rowsum(dout * out), one thread per row, in order.
__global__ void tc_di_kernel(AttnLayout a, const float* out, const float* dout, float* di) {
  HMRT_GRID_LOOP(e, a.B * a.H * a.T) {
    const int64_t head = e / a.T, i = e % a.T, b = head / a.H, h = head % a.H;
    const int64_t row = a.q_off(b, h) + i * a.ldq();
    float s = 0.0f;
    for (int64_t d = 0; d < a.D; ++d) s += dout[row + d] * out[row + d];
    di[e] = s;
  }
}

// A backward block's shared memory: the q, dout, k and v tiles (bf16), S
// and dP (fp32), P' and dS (bf16), an fp32 accumulator (dq, or dk), the
// query rows' lse and di, and with `second` another accumulator (dv).
struct BackwardTiles {
  bf16 *q, *dout, *k, *v;
  float *s, *dp;
  bf16 *p, *ds;
  float *acc, *lse, *di, *acc2;

  static size_t bytes(int Dp, bool second) {
    return 4 * align128(size_t(kRows) * Dp * sizeof(bf16)) +
           2 * align128(size_t(kRows) * kRows * sizeof(float)) +
           2 * align128(size_t(kRows) * kRows * sizeof(bf16)) +
           (second ? 2 : 1) * align128(size_t(kRows) * Dp * sizeof(float)) +
           2 * align128(kRows * sizeof(float));
  }
  __device__ BackwardTiles(unsigned char* shm, int Dp, bool second) {
    Carve cv{shm};
    q = cv.take<bf16>(kRows * Dp);
    dout = cv.take<bf16>(kRows * Dp);
    k = cv.take<bf16>(kRows * Dp);
    v = cv.take<bf16>(kRows * Dp);
    s = cv.take<float>(kRows * kRows);
    dp = cv.take<float>(kRows * kRows);
    p = cv.take<bf16>(kRows * kRows);
    ds = cv.take<bf16>(kRows * kRows);
    acc = cv.take<float>(kRows * Dp);
    lse = cv.take<float>(kRows);
    di = cv.take<float>(kRows);
    acc2 = second ? cv.take<float>(kRows * Dp) : nullptr;
  }

  // The q and dout tiles of query rows [i0, i0 + 64) of head (b, h), with
  // their lse and di (the whole block).
  __device__ void load_queries(const AttnLayout& a, const float* qg, const float* doutg,
                               const float* lseg, const float* dig, int64_t b, int64_t h,
                               int64_t i0, int Dp) {
    const int64_t head = b * a.H + h;
    load_tile(q, qg + a.q_off(b, h), a.ldq(), i0, a.T, a.D, Dp);
    load_tile(dout, doutg + a.q_off(b, h), a.ldq(), i0, a.T, a.D, Dp);
    if (threadIdx.x < kRows) {
      const int64_t i = i0 + threadIdx.x;
      lse[threadIdx.x] = i < a.T ? lseg[head * a.T + i] : 0.0f;
      di[threadIdx.x] = i < a.T ? dig[head * a.T + i] : 0.0f;
    }
  }

  // The warp's query rows r0.. of P' and dS for keys [j0, j0 + 64): S =
  // Q K^T and dP = dO V^T, then P = exp(scale * S + bias - lse) (0 where
  // masked), P' = P with the dropout, dS = P (dP' - di), both rounded.
  __device__ void probabilities_and_ds(const AttnLayout& a, const DropoutMask& mask,
                                       int has_drop, const float* bias, int64_t b, int64_t h,
                                       int64_t i0, int64_t j0, int r0, int Dp) {
    warp_gemm<true>(q + r0 * Dp, Dp, k, Dp, Dp / kF, kRows / kF, s + r0 * kRows, kRows);
    warp_gemm<true>(dout + r0 * Dp, Dp, v, Dp, Dp / kF, kRows / kF, dp + r0 * kRows, kRows);
    __syncwarp();
    const int lane = threadIdx.x % 32;
    const int64_t head = b * a.H + h;
    for (int e = lane; e < kF * kRows; e += 32) {
      const int r = r0 + e / kRows, jj = e % kRows;
      const int64_t i = i0 + r, j = j0 + jj;
      const float sc = score(a, bias, b, h, i, j, s[r * kRows + jj]);
      const float pr = sc == -INFINITY ? 0.0f : ew::exp_f32(sc - lse[r]);
      float pd = pr, dpr = dp[r * kRows + jj];
      if (has_drop) {
        const bool keep = mask.keep(a.prob_index(head, i, j));
        pd = keep ? pr * mask.scale : 0.0f;
        dpr = keep ? dpr * mask.scale : 0.0f;
      }
      p[r * kRows + jj] = __float2bfloat16_rn(pd);
      ds[r * kRows + jj] = __float2bfloat16_rn(pr * (dpr - di[r]));
    }
    __syncwarp();
  }
};

// grid: (query tiles, batch * heads)
__global__ void __launch_bounds__(kThreadsTc)
    tc_dq_kernel(AttnLayout a, DropoutMask mask, int has_drop, int Dp, const float* q,
                 const float* k, const float* v, const float* bias, const float* lse,
                 const float* dout, const float* di, float* dq) {
  extern __shared__ __align__(128) unsigned char shm[];
  BackwardTiles t(shm, Dp, false);
  const int64_t head = blockIdx.y, b = head / a.H, h = head % a.H;
  const int64_t i0 = int64_t(blockIdx.x) * kRows;
  const int r0 = threadIdx.x / 32 * kF;
  t.load_queries(a, q, dout, lse, di, b, h, i0, Dp);
  for (int e = threadIdx.x; e < kRows * Dp; e += blockDim.x) t.acc[e] = 0.0f;
  const int64_t i1 = i0 + kRows < a.T ? i0 + kRows : a.T;
  const int64_t kend = a.causal ? (a.S < i1 ? a.S : i1) : a.S;
  const float* kh = k + a.kv_off(b, h / a.group);
  const float* vh = v + a.kv_off(b, h / a.group);
  for (int64_t j0 = 0; j0 < kend; j0 += kRows) {
    __syncthreads();
    load_tile(t.k, kh, a.ldk(), j0, a.S, a.D, Dp);
    load_tile(t.v, vh, a.ldk(), j0, a.S, a.D, Dp);
    __syncthreads();
    t.probabilities_and_ds(a, mask, has_drop, bias, b, h, i0, j0, r0, Dp);
    // dq_w += dS_w K (accumulated in fp32 in shared memory).
    for (int n = 0; n < Dp / kF; ++n) {
      FragC acc;
      wmma::load_matrix_sync(acc, t.acc + r0 * Dp + n * kF, Dp, wmma::mem_row_major);
      for (int kk = 0; kk < kRows / kF; ++kk) {
        FragA fa;
        wmma::load_matrix_sync(fa, t.ds + r0 * kRows + kk * kF, kRows);
        FragB fb;
        wmma::load_matrix_sync(fb, t.k + kk * kF * Dp + n * kF, Dp);
        wmma::mma_sync(acc, fa, fb, acc);
      }
      wmma::store_matrix_sync(t.acc + r0 * Dp + n * kF, acc, Dp, wmma::mem_row_major);
    }
  }
  __syncthreads();
  float* dqh = dq + a.q_off(b, h);
  for (int e = threadIdx.x; e < kRows * Dp; e += blockDim.x) {
    const int r = e / Dp, d = e % Dp;
    if (i0 + r < a.T && d < a.D) dqh[(i0 + r) * a.ldq() + d] = a.scale * t.acc[e];
  }
}

// grid: (key tiles, batch * kv heads)
__global__ void __launch_bounds__(kThreadsTc)
    tc_dkv_kernel(AttnLayout a, DropoutMask mask, int has_drop, int Dp, const float* q,
                  const float* k, const float* v, const float* bias, const float* lse,
                  const float* dout, const float* di, float* dk, float* dv) {
  extern __shared__ __align__(128) unsigned char shm[];
  BackwardTiles t(shm, Dp, true);
  float *sdk = t.acc, *sdv = t.acc2;
  const int64_t task = blockIdx.y, b = task / a.Hk, kvh = task % a.Hk;
  const int64_t j0 = int64_t(blockIdx.x) * kRows;
  const int r0 = threadIdx.x / 32 * kF;
  const int64_t ldk = a.ldk();
  load_tile(t.k, k + a.kv_off(b, kvh), ldk, j0, a.S, a.D, Dp);
  load_tile(t.v, v + a.kv_off(b, kvh), ldk, j0, a.S, a.D, Dp);
  for (int e = threadIdx.x; e < kRows * Dp; e += blockDim.x) sdk[e] = sdv[e] = 0.0f;
  // Query tiles that see a key of this tile: causal, from the one holding
  // query j0 on.
  const int64_t first = a.causal ? j0 / kRows * kRows : 0;
  for (int64_t h = kvh * a.group; h < (kvh + 1) * a.group; ++h) {
    for (int64_t i0 = first; i0 < a.T; i0 += kRows) {
      __syncthreads();  // the last tile's readers are done
      t.load_queries(a, q, dout, lse, di, b, h, i0, Dp);
      __syncthreads();
      // The warp's 16 query rows of P' and dS.
      t.probabilities_and_ds(a, mask, has_drop, bias, b, h, i0, j0, r0, Dp);
      __syncthreads();  // every warp's rows of P' and dS are there
      // The warp's 16 keys: dv += P'^T dO, dk += dS^T Q.
      warp_gemm_at_acc(t.p + r0, kRows, t.dout, Dp, Dp / kF, sdv + r0 * Dp, Dp);
      warp_gemm_at_acc(t.ds + r0, kRows, t.q, Dp, Dp / kF, sdk + r0 * Dp, Dp);
    }
  }
  __syncthreads();
  float* dkh = dk + a.kv_off(b, kvh);
  float* dvh = dv + a.kv_off(b, kvh);
  for (int e = threadIdx.x; e < kRows * Dp; e += blockDim.x) {
    const int r = e / Dp, d = e % Dp;
    if (j0 + r < a.S && d < a.D) {
      dkh[(j0 + r) * ldk + d] = a.scale * sdk[e];
      dvh[(j0 + r) * ldk + d] = sdv[e];
    }
  }
}

int padded(int64_t D) { return int((D + kF - 1) / kF * kF); }

template <class Kernel>
int launch_config(Kernel kernel, size_t shm) {
  return static_cast<int>(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shm)));
}

DropoutMask no_drop() { return DropoutMask(0.0f, 0, 0); }

}  // namespace

bool tc_attention_supported(const AttnLayout& a) { return a.bf16 && a.D <= kMaxTcHeadDim; }

int tc_attention_forward(void* stream, const AttnLayout& a, const DropoutMask* drop,
                         const float* q, const float* k, const float* v, const float* bias,
                         float* out, float* lse) {
  const int Dp = padded(a.D);
  const size_t shm = forward_shm(Dp);
  if (int e = launch_config(tc_forward_kernel, shm)) return e;
  const dim3 grid(unsigned((a.T + kRows - 1) / kRows), unsigned(a.B * a.H));
  tc_forward_kernel<<<grid, kThreadsTc, shm, as_stream(stream)>>>(
      a, drop ? *drop : no_drop(), drop != nullptr, Dp, q, k, v, bias, out, lse);
  return launched();
}

int tc_attention_backward(void* stream, const AttnLayout& a, const DropoutMask* drop,
                          const float* q, const float* k, const float* v, const float* bias,
                          const float* out, const float* lse, const float* dout, float* dq,
                          float* dk, float* dv, float* di) {
  cudaStream_t s = as_stream(stream);
  const DropoutMask mask = drop ? *drop : no_drop();
  const int Dp = padded(a.D);
  if (a.T > 0) {
    tc_di_kernel<<<blocks_for(a.B * a.H * a.T), kThreads, 0, s>>>(a, out, dout, di);
    if (int e = launched()) return e;
    const size_t shm = BackwardTiles::bytes(Dp, false);
    if (int e = launch_config(tc_dq_kernel, shm)) return e;
    tc_dq_kernel<<<dim3(unsigned((a.T + kRows - 1) / kRows), unsigned(a.B * a.H)), kThreadsTc,
                   shm, s>>>(a, mask, drop != nullptr, Dp, q, k, v, bias, lse, dout, di, dq);
    if (int e = launched()) return e;
  }
  const size_t shm = BackwardTiles::bytes(Dp, true);
  if (int e = launch_config(tc_dkv_kernel, shm)) return e;
  tc_dkv_kernel<<<dim3(unsigned((a.S + kRows - 1) / kRows), unsigned(a.B * a.Hk)), kThreadsTc,
                  shm, s>>>(a, mask, drop != nullptr, Dp, q, k, v, bias, lse, dout, di, dk, dv);
  return launched();
}

}  // namespace cuda
}  // namespace hmrt
