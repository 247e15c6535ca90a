// Attention with bf16 products and fp32 sums on tensor cores
// (HMRT_ATTENTION_BF16; cuda/attention_tc.h), in the manner of
// FlashAttention-2: the (q_len x kv_len) probabilities never leave the
// registers of the warp that computes them.
//
// A block has 4 warps and owns 64 query rows (the forward and dq) or 64
// keys (dk and dv), 16 to a warp. Tiles of q, k, v and dout are rounded to
// bf16 (nearest even) as they are loaded into shared memory, zero past the
// sequence and past head_dim up to Dp (the next multiple of 16), so zeros
// add nothing; rows are padded by 8 elements so that a warp's fragment
// loads fall in distinct banks. Products run as mma.sync m16n8k16 tiles
// accumulating in fp32 registers, whose layout is the PTX ISA's: lane l
// holds rows l/4 and l/4 + 8, columns 2 (l%4) and 2 (l%4) + 1 of each 16 x 8
// tile, which is also the layout of an A operand's two 16 x 8 halves, so
// probabilities computed in registers feed the next product directly. A B
// operand that a tile holds transposed (V for P'V, K for dS K, Q and dO for
// dk and dv) is read with ldmatrix.trans from the same row-major tile.
// Everything else (scale, bias, masks, softmax, dropout, dS) is fp32 work
// on those registers in the CPU kernel's formulas (cpu/attention.cpp):
//   forward: S = Q K^T, s = scale * S + bias; per row the running max m and
//     sum l, P = exp(s - m) summed before the dropout, O = O * corr + P' V
//     with P' rounded; out = O / l, lse = m + log l.
//   dq: P = exp(s - lse), dP = dO V^T, dS = P (dP' - di) rounded,
//     dq = scale * sum over key tiles of dS K.
//   dk, dv: the same P and dS, transposed (keys as rows), per (query tile,
//     key tile), walking the group's query heads and their tiles in order:
//     dv += P'^T dO, dk += dS^T Q, dk *= scale at the end.
// di = rowsum(dout * out) comes first, one thread per row, in fp32.
// No atomics: every sum is taken in a fixed order, so results do not
// depend on scheduling (the order within a tile's products is the tensor
// cores', not the CPU's: results agree within rounding, not bit for bit).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>

#include "core/ew_math.h"
#include "cuda/attention_tc.h"
#include "cuda/launch.cuh"

namespace hmrt {
namespace cuda {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kRows = 64;                        // query rows or keys per block
constexpr int kWarpsTc = 4;                      // warps per block, 16 rows each
constexpr int kThreadsTc = 32 * kWarpsTc;
constexpr int kMaxK = int(kMaxTcHeadDim) / 16;   // 16-wide steps over head_dim
constexpr int kMaxN = int(kMaxTcHeadDim) / 8;    // 8-wide tiles over head_dim
constexpr int kPad = 8;                          // bf16 elements after each shared row

// D += A B for one m16n8k16 tile: A (16 x 16 bf16) in 4 registers, B
// (16 x 8 bf16) in 2, D (16 x 8 fp32) in 4.
__device__ __forceinline__ void mma(float* d, const uint32_t* a, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// lo and hi rounded to bf16 (nearest even), lo in the low half.
__device__ __forceinline__ uint32_t pack(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

__device__ __forceinline__ uint32_t pair(const bf16* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

// The A operand of rows [r0, r0 + 16) and columns [k0, k0 + 16) of a
// row-major bf16 tile (row length ld).
__device__ __forceinline__ void load_a(uint32_t* a, const bf16* s, int ld, int r0, int k0) {
  const int lane = threadIdx.x & 31;
  const bf16* p = s + (r0 + (lane >> 2)) * ld + k0 + 2 * (lane & 3);
  a[0] = pair(p);
  a[1] = pair(p + 8 * ld);
  a[2] = pair(p + 8);
  a[3] = pair(p + 8 * ld + 8);
}

// The B operand (16 x 8: k x n) whose element (k, n) is s[(n0 + n) * ld +
// k0 + k]: a tile stored with n as its rows.
__device__ __forceinline__ void load_b(uint32_t& b0, uint32_t& b1, const bf16* s, int ld, int n0,
                                       int k0) {
  const int lane = threadIdx.x & 31;
  const bf16* p = s + (n0 + (lane >> 2)) * ld + k0 + 2 * (lane & 3);
  b0 = pair(p);
  b1 = pair(p + 8);
}

// The B operand (16 x 8: k x n) whose element (k, n) is s[(k0 + k) * ld +
// n0 + n]: a tile stored with k as its rows, transposed on the way by
// ldmatrix (lanes 0-15 give the addresses of its 16 rows of 16 bytes).
__device__ __forceinline__ void load_b_trans(uint32_t& b0, uint32_t& b1, const bf16* s, int ld,
                                             int k0, int n0) {
  const int lane = threadIdx.x & 15;
  const unsigned addr =
      static_cast<unsigned>(__cvta_generic_to_shared(s + (k0 + lane) * ld + n0));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(b0), "=r"(b1)
               : "r"(addr));
}

// The A operand of a 16 x 16 block of probabilities held as two
// accumulator tiles (columns 0-7 in lo, 8-15 in hi), rounded to bf16.
__device__ __forceinline__ void to_a(uint32_t* a, const float* lo, const float* hi) {
  a[0] = pack(lo[0], lo[1]);
  a[1] = pack(lo[2], lo[3]);
  a[2] = pack(hi[0], hi[1]);
  a[3] = pack(hi[2], hi[3]);
}

// The two products of the backward for the warp's rows [r0, r0 + 16) of
// a1 and a2 (row-major tiles, head_dim in nk steps of 16) against N tiles
// of 8 rows of b1 and b2 from row n0 on: s = A1 B1^T and dp = A2 B2^T, each
// A fragment loaded once for all N.
template <int N>
__device__ __forceinline__ void two_products(float (&s)[N][4], float (&dp)[N][4], const bf16* a1,
                                             const bf16* a2, const bf16* b1, const bf16* b2,
                                             int ld, int r0, int n0, int nk) {
#pragma unroll
  for (int n = 0; n < N; ++n)
#pragma unroll
    for (int c = 0; c < 4; ++c) s[n][c] = dp[n][c] = 0.0f;
#pragma unroll
  for (int kk = 0; kk < kMaxK; ++kk)
    if (kk < nk) {
      uint32_t f1[4], f2[4];
      load_a(f1, a1, ld, r0, kk * 16);
      load_a(f2, a2, ld, r0, kk * 16);
#pragma unroll
      for (int n = 0; n < N; ++n) {
        uint32_t b0, b1_;
        load_b(b0, b1_, b1, ld, n0 + n * 8, kk * 16);
        mma(s[n], f1, b0, b1_);
        load_b(b0, b1_, b2, ld, n0 + n * 8, kk * 16);
        mma(dp[n], f2, b0, b1_);
      }
    }
}

// Rows [r0, r0 + 64) of a (rows x D) operand whose row r starts at
// x + r * ld, as bf16 at dst[r * ldd + d] (ldd a multiple of 8), rounded,
// zero past `rows` and D up to Dp.  Four floats to a load where rows allow
// (D and ld multiples of 4, x 16-byte aligned), four loads in flight per
// thread: the tiles come from L2, and one load at a time would leave the
// kernel waiting on its latency.
__device__ void load_tile(bf16* dst, int ldd, const float* x, int64_t ld, int64_t r0,
                          int64_t rows, int64_t D, int Dp) {
  if (D % 4 == 0 && ld % 4 == 0 && (reinterpret_cast<uintptr_t>(x) & 15) == 0) {
    const int per_row = Dp / 4, total = kRows * per_row;
    for (int base = threadIdx.x; base < total; base += 4 * blockDim.x) {
      float4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int e = base + u * blockDim.x, r = e / per_row, d = 4 * (e - r * per_row);
        v[u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (e < total && r0 + r < rows && d < D)
          v[u] = *reinterpret_cast<const float4*>(x + (r0 + r) * ld + d);
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int e = base + u * blockDim.x, r = e / per_row, d = 4 * (e - r * per_row);
        if (e < total)
          *reinterpret_cast<uint2*>(dst + r * ldd + d) =
              make_uint2(pack(v[u].x, v[u].y), pack(v[u].z, v[u].w));
      }
    }
    return;
  }
  for (int e = threadIdx.x; e < kRows * Dp; e += blockDim.x) {
    const int r = e / Dp, d = e - r * Dp;
    const int64_t row = r0 + r;
    dst[r * ldd + d] = __float2bfloat16_rn(row < rows && d < D ? x[row * ld + d] : 0.0f);
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

// v reduced over the 4 lanes that hold one row of an accumulator tile.
__device__ __forceinline__ float quad_max(float v) {
  v = ew::max(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return ew::max(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// ---- forward -------------------------------------------------------------------

// q, k and v tiles, rows by query or key.
size_t forward_shm(int Dp) { return 3 * size_t(kRows) * (Dp + kPad) * sizeof(bf16); }

// grid: (query tiles, batch * heads)
__global__ void __launch_bounds__(kThreadsTc)
    tc_forward_kernel(AttnLayout a, DropoutMask mask, int has_drop, int Dp, const float* q,
                      const float* k, const float* v, const float* bias, float* out,
                      float* lse) {
  extern __shared__ __align__(16) unsigned char shm[];
  const int ldt = Dp + kPad;
  bf16* sq = reinterpret_cast<bf16*>(shm);
  bf16* sk = sq + kRows * ldt;
  bf16* sv = sk + kRows * ldt;
  const int64_t head = blockIdx.y, b = head / a.H, h = head % a.H;
  const int64_t i0 = int64_t(blockIdx.x) * kRows;
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nk = Dp / 16, nd = Dp / 8;
  const int64_t ldq = a.ldq(), ldk = a.ldk();
  load_tile(sq, ldt, q + a.q_off(b, h), ldq, i0, a.T, a.D, Dp);
  __syncthreads();
  uint32_t qa[kMaxK][4];
#pragma unroll
  for (int kk = 0; kk < kMaxK; ++kk)
    if (kk < nk) load_a(qa[kk], sq, ldt, w * 16, kk * 16);
  float o[kMaxN][4];
#pragma unroll
  for (int d = 0; d < kMaxN; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  const int64_t row[2] = {i0 + w * 16 + g, i0 + w * 16 + g + 8};
  const int64_t i1 = i0 + kRows < a.T ? i0 + kRows : a.T;
  const int64_t kend = a.causal ? (a.S < i1 ? a.S : i1) : a.S;
  const float* kh = k + a.kv_off(b, h / a.group);
  const float* vh = v + a.kv_off(b, h / a.group);
  for (int64_t j0 = 0; j0 < kend; j0 += kRows) {
    __syncthreads();  // the last tile's readers of sk, sv are done
    load_tile(sk, ldt, kh, ldk, j0, a.S, a.D, Dp);
    load_tile(sv, ldt, vh, ldk, j0, a.S, a.D, Dp);
    __syncthreads();
    // The warp's 16 rows of scores, 8 keys to a tile: Q_w K^T.
    float s[8][4];
#pragma unroll
    for (int n = 0; n < 8; ++n) {
      s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < kMaxK; ++kk)
        if (kk < nk) {
          uint32_t b0, b1;
          load_b(b0, b1, sk, ldt, n * 8, kk * 16);
          mma(s[n], qa[kk], b0, b1);
        }
    }
    // Online softmax over the tile's keys, rows g (c < 2) and g + 8.
    float mn[2] = {m[0], m[1]};
#pragma unroll
    for (int n = 0; n < 8; ++n)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int64_t j = j0 + n * 8 + 2 * t + (c & 1);
        s[n][c] = score(a, bias, b, h, row[c >> 1], j, s[n][c]);
        mn[c >> 1] = ew::max(mn[c >> 1], s[n][c]);
      }
    float corr[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      mn[r] = quad_max(mn[r]);
      corr[r] = mn[r] == -INFINITY ? 1.0f : ew::exp_f32(m[r] - mn[r]);  // 0 on the first
    }
#pragma unroll
    for (int n = 0; n < 8; ++n)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int r = c >> 1;
        const float p =
            mn[r] == -INFINITY || s[n][c] == -INFINITY ? 0.0f : ew::exp_f32(s[n][c] - mn[r]);
        sum[r] += p;
        float pd = p;
        if (has_drop) {
          const int64_t j = j0 + n * 8 + 2 * t + (c & 1);
          pd = mask.keep(a.prob_index(head, row[r], j)) ? p * mask.scale : 0.0f;
        }
        s[n][c] = pd;
      }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      l[r] = l[r] * corr[r] + quad_sum(sum[r]);
      m[r] = mn[r];
    }
    // O = O * corr + P'V.
#pragma unroll
    for (int d = 0; d < kMaxN; ++d) {
      o[d][0] *= corr[0];
      o[d][1] *= corr[0];
      o[d][2] *= corr[1];
      o[d][3] *= corr[1];
    }
#pragma unroll
    for (int kk = 0; kk < kRows / 16; ++kk) {
      uint32_t pa[4];
      to_a(pa, s[2 * kk], s[2 * kk + 1]);
#pragma unroll
      for (int d = 0; d < kMaxN; ++d)
        if (d < nd) {
          uint32_t b0, b1;
          load_b_trans(b0, b1, sv, ldt, kk * 16, d * 8);
          mma(o[d], pa, b0, b1);
        }
    }
  }
  float* oh = out + a.o_off(b, h);
  const int64_t ldo = a.ldo();
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (row[r] >= a.T) continue;
    const float inv = 1.0f / l[r];
#pragma unroll
    for (int d = 0; d < kMaxN; ++d)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int col = d * 8 + 2 * t + e;
        if (d < nd && col < a.D) oh[row[r] * ldo + col] = o[d][2 * r + e] * inv;
      }
    if (lse && t == 0) lse[head * a.T + row[r]] = m[r] + logf(l[r]);
  }
}

// ---- backward ------------------------------------------------------------------

// di[head * T + i] = rowsum(dout * out), one thread per row, in order.
__global__ void tc_di_kernel(AttnLayout a, const float* out, const float* dout, float* di) {
  HMRT_GRID_LOOP(e, a.B * a.H * a.T) {
    const int64_t head = e / a.T, i = e % a.T, b = head / a.H, h = head % a.H;
    const int64_t row = a.o_off(b, h) + i * a.ldo();
    float s = 0.0f;
    for (int64_t d = 0; d < a.D; ++d) s += dout[row + d] * out[row + d];
    di[e] = s;
  }
}

// P (before the dropout), P' (after) and dS of one score: s the product
// q.k, i the query, j the key; lse and di the query row's.
struct Grad {
  float p, pd, ds;
};
__device__ __forceinline__ Grad grad_of(const AttnLayout& a, const DropoutMask& mask,
                                        int has_drop, const float* bias, int64_t b, int64_t h,
                                        int64_t i, int64_t j, float s, float dp, float lse,
                                        float di) {
  const float sc = score(a, bias, b, h, i, j, s);
  const float pr = sc == -INFINITY ? 0.0f : ew::exp_f32(sc - lse);
  float pd = pr, dpr = dp;
  if (has_drop) {
    const bool keep = mask.keep(a.prob_index(b * a.H + h, i, j));
    pd = keep ? pr * mask.scale : 0.0f;
    dpr = keep ? dpr * mask.scale : 0.0f;
  }
  return {pr, pd, pr * (dpr - di)};
}

// dq: the q and dout tiles (rows by query), the k and v tiles (by key).
size_t dq_shm(int Dp) { return 4 * size_t(kRows) * (Dp + kPad) * sizeof(bf16); }

// grid: (query tiles, batch * heads)
__global__ void __launch_bounds__(kThreadsTc)
    tc_dq_kernel(AttnLayout a, DropoutMask mask, int has_drop, int Dp, const float* q,
                 const float* k, const float* v, const float* bias, const float* lse,
                 const float* dout, const float* di, float* dq) {
  extern __shared__ __align__(16) unsigned char shm[];
  const int ldt = Dp + kPad;
  bf16* sq = reinterpret_cast<bf16*>(shm);
  bf16* sdo = sq + kRows * ldt;
  bf16* sk = sdo + kRows * ldt;
  bf16* sv = sk + kRows * ldt;
  const int64_t head = blockIdx.y, b = head / a.H, h = head % a.H;
  const int64_t i0 = int64_t(blockIdx.x) * kRows;
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nk = Dp / 16, nd = Dp / 8;
  const int64_t ldq = a.ldq(), ldk = a.ldk();
  load_tile(sq, ldt, q + a.q_off(b, h), ldq, i0, a.T, a.D, Dp);
  load_tile(sdo, ldt, dout + a.o_off(b, h), a.ldo(), i0, a.T, a.D, Dp);
  const int64_t row[2] = {i0 + w * 16 + g, i0 + w * 16 + g + 8};
  float lse_r[2], di_r[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    lse_r[r] = row[r] < a.T ? lse[head * a.T + row[r]] : 0.0f;
    di_r[r] = row[r] < a.T ? di[head * a.T + row[r]] : 0.0f;
  }
  float acc[kMaxN][4];
#pragma unroll
  for (int d = 0; d < kMaxN; ++d) acc[d][0] = acc[d][1] = acc[d][2] = acc[d][3] = 0.0f;
  const int64_t i1 = i0 + kRows < a.T ? i0 + kRows : a.T;
  const int64_t kend = a.causal ? (a.S < i1 ? a.S : i1) : a.S;
  const float* kh = k + a.kv_off(b, h / a.group);
  const float* vh = v + a.kv_off(b, h / a.group);
  for (int64_t j0 = 0; j0 < kend; j0 += kRows) {
    __syncthreads();
    load_tile(sk, ldt, kh, ldk, j0, a.S, a.D, Dp);
    load_tile(sv, ldt, vh, ldk, j0, a.S, a.D, Dp);
    __syncthreads();
    // S = Q_w K^T and dP = dO_w V^T, 8 keys to a tile.
    float s[8][4], dp[8][4];
    two_products(s, dp, sq, sdo, sk, sv, ldt, w * 16, 0, nk);
#pragma unroll
    for (int n = 0; n < 8; ++n)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int r = c >> 1;
        const int64_t j = j0 + n * 8 + 2 * t + (c & 1);
        s[n][c] = grad_of(a, mask, has_drop, bias, b, h, row[r], j, s[n][c], dp[n][c], lse_r[r],
                          di_r[r]).ds;
      }
    // dq_w += dS_w K.
#pragma unroll
    for (int kk = 0; kk < kRows / 16; ++kk) {
      uint32_t fa[4];
      to_a(fa, s[2 * kk], s[2 * kk + 1]);
#pragma unroll
      for (int d = 0; d < kMaxN; ++d)
        if (d < nd) {
          uint32_t b0, b1;
          load_b_trans(b0, b1, sk, ldt, kk * 16, d * 8);
          mma(acc[d], fa, b0, b1);
        }
    }
  }
  float* dqh = dq + a.q_off(b, h);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (row[r] >= a.T) continue;
#pragma unroll
    for (int d = 0; d < kMaxN; ++d)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int col = d * 8 + 2 * t + e;
        if (d < nd && col < a.D) dqh[row[r] * ldq + col] = a.scale * acc[d][2 * r + e];
      }
  }
}

// dk, dv: the k and v tiles (rows by key, loaded once), the q and dout
// tiles (by query), and the query rows' lse and di.
size_t dkv_shm(int Dp) {
  return 4 * size_t(kRows) * (Dp + kPad) * sizeof(bf16) + 2 * kRows * sizeof(float);
}

// grid: (key tiles, batch * kv heads)
__global__ void __launch_bounds__(kThreadsTc)
    tc_dkv_kernel(AttnLayout a, DropoutMask mask, int has_drop, int Dp, const float* q,
                  const float* k, const float* v, const float* bias, const float* lse,
                  const float* dout, const float* di, float* dk, float* dv) {
  extern __shared__ __align__(16) unsigned char shm[];
  const int ldt = Dp + kPad;
  bf16* sk = reinterpret_cast<bf16*>(shm);
  bf16* sv = sk + kRows * ldt;
  bf16* sq = sv + kRows * ldt;
  bf16* sdo = sq + kRows * ldt;
  float* slse = reinterpret_cast<float*>(sdo + kRows * ldt);
  float* sdi = slse + kRows;
  const int64_t task = blockIdx.y, b = task / a.Hk, kvh = task % a.Hk;
  const int64_t j0 = int64_t(blockIdx.x) * kRows;
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nk = Dp / 16, nd = Dp / 8;
  const int64_t ldq = a.ldq(), ldk = a.ldk();
  load_tile(sk, ldt, k + a.kv_off(b, kvh), ldk, j0, a.S, a.D, Dp);
  load_tile(sv, ldt, v + a.kv_off(b, kvh), ldk, j0, a.S, a.D, Dp);
  const int64_t key[2] = {j0 + w * 16 + g, j0 + w * 16 + g + 8};
  float dka[kMaxN][4], dva[kMaxN][4];
#pragma unroll
  for (int d = 0; d < kMaxN; ++d)
#pragma unroll
    for (int c = 0; c < 4; ++c) dka[d][c] = dva[d][c] = 0.0f;
  // Query tiles that see a key of this tile: causal, from the one holding
  // query j0 on.
  const int64_t first = a.causal ? j0 / kRows * kRows : 0;
  for (int64_t h = kvh * a.group; h < (kvh + 1) * a.group; ++h) {
    const int64_t head = b * a.H + h;
    for (int64_t i0 = first; i0 < a.T; i0 += kRows) {
      __syncthreads();  // the last tile's readers are done
      load_tile(sq, ldt, q + a.q_off(b, h), ldq, i0, a.T, a.D, Dp);
      load_tile(sdo, ldt, dout + a.o_off(b, h), a.ldo(), i0, a.T, a.D, Dp);
      if (threadIdx.x < kRows) {
        const int64_t i = i0 + threadIdx.x;
        slse[threadIdx.x] = i < a.T ? lse[head * a.T + i] : 0.0f;
        sdi[threadIdx.x] = i < a.T ? di[head * a.T + i] : 0.0f;
      }
      __syncthreads();
      // The tile's 64 queries in two halves of 32: S^T = K_w Q^T and
      // dP^T = V_w dO^T (keys as rows), then dv += P'^T dO, dk += dS^T Q.
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float s[4][4], dp[4][4];
        two_products(s, dp, sk, sv, sq, sdo, ldt, w * 16, half * 32, nk);
#pragma unroll
        for (int n = 0; n < 4; ++n)
#pragma unroll
          for (int c = 0; c < 4; ++c) {
            const int qi = half * 32 + n * 8 + 2 * t + (c & 1);
            const Grad gr = grad_of(a, mask, has_drop, bias, b, h, i0 + qi, key[c >> 1], s[n][c],
                                    dp[n][c], slse[qi], sdi[qi]);
            s[n][c] = gr.pd;
            dp[n][c] = gr.ds;
          }
#pragma unroll
        for (int kk = 0; kk < 2; ++kk) {
          uint32_t pa[4], da[4];
          to_a(pa, s[2 * kk], s[2 * kk + 1]);
          to_a(da, dp[2 * kk], dp[2 * kk + 1]);
#pragma unroll
          for (int d = 0; d < kMaxN; ++d)
            if (d < nd) {
              uint32_t b0, b1;
              load_b_trans(b0, b1, sdo, ldt, half * 32 + kk * 16, d * 8);
              mma(dva[d], pa, b0, b1);
              load_b_trans(b0, b1, sq, ldt, half * 32 + kk * 16, d * 8);
              mma(dka[d], da, b0, b1);
            }
        }
      }
    }
  }
  float* dkh = dk + a.kv_off(b, kvh);
  float* dvh = dv + a.kv_off(b, kvh);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (key[r] >= a.S) continue;
#pragma unroll
    for (int d = 0; d < kMaxN; ++d)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int col = d * 8 + 2 * t + e;
        if (d < nd && col < a.D) {
          dkh[key[r] * ldk + col] = a.scale * dka[d][2 * r + e];
          dvh[key[r] * ldk + col] = dva[d][2 * r + e];
        }
      }
  }
}

int padded(int64_t D) { return int((D + 15) / 16 * 16); }

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
    const size_t shm = dq_shm(Dp);
    if (int e = launch_config(tc_dq_kernel, shm)) return e;
    tc_dq_kernel<<<dim3(unsigned((a.T + kRows - 1) / kRows), unsigned(a.B * a.H)), kThreadsTc,
                   shm, s>>>(a, mask, drop != nullptr, Dp, q, k, v, bias, lse, dout, di, dq);
    if (int e = launched()) return e;
  }
  const size_t shm = dkv_shm(Dp);
  if (int e = launch_config(tc_dkv_kernel, shm)) return e;
  tc_dkv_kernel<<<dim3(unsigned((a.S + kRows - 1) / kRows), unsigned(a.B * a.Hk)), kThreadsTc,
                  shm, s>>>(a, mask, drop != nullptr, Dp, q, k, v, bias, lse, dout, di, dk, dv);
  return launched();
}

}  // namespace cuda
}  // namespace hmrt
