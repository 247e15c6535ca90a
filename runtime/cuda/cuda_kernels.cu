// The CUDA backend's own kernels (cuda_kernels.h): the optimizer updates,
// scale, fill, the 16-bit casts and the gradient norm's partial sums.  Each
// element goes through the CPU kernel's own functions (core/optim_math.h,
// core/float16.h); the build turns off fused multiply-adds (--fmad=false),
// so the results are the CPU backend's bit for bit.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "cuda/launch.cuh"
#include "core/float16.h"
#include "core/norm_math.h"
#include "core/quant8_math.h"
#include "core/reduce_math.h"
#include "core/ew_math.h"
#include "cuda/cuda_kernels.h"
#include "hmrt/kernels.h"  // HMRT_QUANT_BLOCK

namespace hmrt {
namespace cuda {
namespace {

constexpr int64_t kNormChunk = 4096;  // cpu/gradnorm.cpp's chunk

__global__ void adamw_kernel(AdamWScalars s, float* p, const float* g, float* m,
                             float* v, int64_t n) {
  HMRT_GRID_LOOP(i, n) {
    float pi = p[i], mi = m[i], vi = v[i];
    adamw_update(s, g[i], pi, mi, vi);
    p[i] = pi;
    m[i] = mi;
    v[i] = vi;
  }
}

__global__ void sgd_kernel(SgdScalars s, float* p, const float* g, float* buf,
                           int64_t n) {
  HMRT_GRID_LOOP(i, n) {
    float pi = p[i];
    sgd_update(s, g[i], pi, buf == nullptr ? nullptr : buf + i);
    p[i] = pi;
  }
}

__global__ void onnx_adagrad_kernel(OnnxAdagradScalars s, const float* x, const float* g,
                                    const float* h, float* x_new, float* h_new, int64_t n) {
  HMRT_GRID_LOOP(i, n) { onnx_adagrad_update(s, x[i], g[i], h[i], x_new[i], h_new[i]); }
}

__global__ void onnx_momentum_kernel(OnnxMomentumScalars s, const float* x, const float* g,
                                     const float* v, float* x_new, float* v_new, int64_t n) {
  HMRT_GRID_LOOP(i, n) { onnx_momentum_update(s, x[i], g[i], v[i], x_new[i], v_new[i]); }
}

__global__ void onnx_adam_kernel(OnnxAdamScalars s, const float* x, const float* g,
                                 const float* v, const float* h, float* x_new, float* v_new,
                                 float* h_new, int64_t n) {
  HMRT_GRID_LOOP(i, n) {
    onnx_adam_update(s, x[i], g[i], v[i], h[i], x_new[i], v_new[i], h_new[i]);
  }
}

// 8-bit AdamW, one block per quantisation block of kQuantBlock elements,
// one thread per element: dequantise, update, the block's new absmax (NaN
// wins: the same value in any order), quantise with the CPU's search.
constexpr int kQuantBlock = HMRT_QUANT_BLOCK;
static_assert(kQuantBlock % 32 == 0 && kQuantBlock <= 1024, "one thread per element");

__device__ float block_absmax(float a, float* red) {
  for (int o = 16; o > 0; o >>= 1) a = absmax_step(a, __shfl_xor_sync(0xffffffffu, a, o));
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = a;
  __syncthreads();
  float m = red[0];
  for (int w = 1; w < kQuantBlock / 32; ++w) m = absmax_step(m, red[w]);
  return m;
}

__global__ void adamw8bit_kernel(AdamWScalars s, const QuantMap* maps, float* param,
                                 const float* grad, uint8_t* qm, float* am, uint8_t* qv,
                                 float* av, int64_t n) {
  __shared__ float red_m[kQuantBlock / 32], red_v[kQuantBlock / 32];
  const QuantMap& smap = maps[0];
  const QuantMap& umap = maps[1];
  const int64_t b = blockIdx.x, i = b * kQuantBlock + threadIdx.x;
  const bool live = i < n;
  float m = 0.0f, v = 0.0f;
  if (live) {
    m = smap.map[qm[i]] * am[b];
    v = umap.map[qv[i]] * av[b];
    float p = param[i];
    adamw_update(s, grad[i], p, m, v);
    param[i] = p;
  }
  const float new_am = block_absmax(absmax_step(0.0f, m), red_m);
  const float new_av = block_absmax(absmax_step(0.0f, v), red_v);
  if (live) {
    qm[i] = new_am > 0.0f ? smap.nearest(m * (1.0f / new_am)) : smap.zero;
    qv[i] = new_av > 0.0f ? umap.nearest(v * (1.0f / new_av)) : umap.zero;
  }
  if (threadIdx.x == 0) {  // every thread read am[b] and av[b] before the reductions
    am[b] = new_am;
    av[b] = new_av;
  }
}

__global__ void scale_kernel(float* x, int64_t n, float s) {
  HMRT_GRID_LOOP(i, n) { x[i] *= s; }
}

template <class T>
__global__ void fill_kernel(T* y, int64_t n, T value) {
  HMRT_GRID_LOOP(i, n) { y[i] = value; }
}

__global__ void cast_kernel(Cast kind, const void* x, void* y, int64_t n) {
  const uint16_t* x16 = static_cast<const uint16_t*>(x);
  const float* x32 = static_cast<const float*>(x);
  uint16_t* y16 = static_cast<uint16_t*>(y);
  float* y32 = static_cast<float*>(y);
  HMRT_GRID_LOOP(i, n) {
    switch (kind) {
      case Cast::F16ToF32: y32[i] = half_to_float(x16[i]); break;
      case Cast::F32ToF16: y16[i] = double_to_half(double(x32[i])); break;
      case Cast::Bf16ToF32: y32[i] = bf16_to_float(x16[i]); break;
      case Cast::F32ToBf16: y16[i] = float_to_bf16(x32[i]); break;
      case Cast::F16ToBf16: y16[i] = float_to_bf16(half_to_float(x16[i])); break;
      case Cast::Bf16ToF16: y16[i] = double_to_half(double(bf16_to_float(x16[i]))); break;
      case Cast::F32ToBf16Rne: y16[i] = float_to_bf16_rne(x32[i]); break;
    }
  }
}

// A block per row of the packed result (blocks stride over the rows): the
// row's start found once, its columns by the block's threads, four floats a
// load where rows allow (vec).  One division per element, as a flat loop
// over the elements needs, cost as much as the GEMM it fed.
__global__ void round_bf16_blocks_kernel(const float* x, int64_t stride, int64_t rows,
                                         int64_t cols, int64_t ld, uint16_t* y, int64_t n_rows,
                                         int vec) {
  for (int64_t row = blockIdx.x; row < n_rows; row += gridDim.x) {
    const int64_t b = row / rows, r = row - b * rows;
    const float* src = x + b * stride + r * ld;
    uint16_t* dst = y + row * cols;
    if (vec) {
      for (int64_t c = 4 * int64_t(threadIdx.x); c < cols; c += 4 * int64_t(blockDim.x)) {
        const float4 v = *reinterpret_cast<const float4*>(src + c);
        *reinterpret_cast<uint2*>(dst + c) =
            make_uint2(uint32_t(float_to_bf16_rne(v.x)) | uint32_t(float_to_bf16_rne(v.y)) << 16,
                       uint32_t(float_to_bf16_rne(v.z)) | uint32_t(float_to_bf16_rne(v.w)) << 16);
      }
    } else {
      for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) dst[c] = float_to_bf16_rne(src[c]);
    }
  }
}

// Sums of squares per 4096-element chunk, the CPU's order within each.
__global__ void sum_squares_kernel(const float* x, int64_t n, double* partial) {
  const int64_t chunks = (n + kNormChunk - 1) / kNormChunk;
  // Four threads a chunk, one per accumulator (lanes 4c .. 4c + 3 of a
  // warp): four times the threads of one a chunk, and a warp's loads touch
  // 8 places instead of 32.  The sums and their order are the CPU's.
  HMRT_GRID_LOOP(e, 4 * chunks) {
    const int64_t c = e >> 2;
    const int l = int(e & 3);
    const int64_t i0 = c * kNormChunk;
    const int64_t i1 = i0 + kNormChunk < n ? i0 + kNormChunk : n;
    const int64_t full = i0 + (i1 - i0) / 4 * 4;
    double a = 0.0;
#pragma unroll 8
    for (int64_t i = i0 + l; i < full; i += 4) a += double(x[i]) * double(x[i]);
    if (l == 0)
      for (int64_t i = full; i < i1; ++i) a += double(x[i]) * double(x[i]);
    // (a0 + a1) + (a2 + a3) among the chunk's four lanes.
    const unsigned group = 0xfu << (threadIdx.x & 28);
    a += __shfl_down_sync(group, a, 1, 4);
    a += __shfl_down_sync(group, a, 2, 4);
    if (l == 0) partial[c] = a;
  }
}

// One chunk or less (n <= 4096), summed by one thread in order as the CPU
// does: the block first copies x to shared memory, so that the thread's
// reads do not each wait for global memory.
__global__ void sum_squares_small_kernel(const float* x, int64_t n, double* partial) {
  __shared__ float staged[kNormChunk];
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) staged[i] = x[i];
  __syncthreads();
  if (threadIdx.x != 0) return;
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += double(staged[i]) * double(staged[i]);
  partial[0] = s;
}

// The partial sums in order (cpu/gradnorm.cpp's order), added to *acc when
// there is one.  Thread 0 adds them one after another, as the CPU does,
// from shared memory, while the block's other warps copy the next tile of
// partials there: a thread alone reading them from global memory waited
// for each (a 100 M-element gradient has 25,000 partials).
constexpr int kOrderTile = 2048;
__global__ void sum_in_order_kernel(const double* partial, int64_t count, const double* acc,
                                    double* out) {
  __shared__ double tile[2][kOrderTile];
  const int64_t tiles = (count + kOrderTile - 1) / kOrderTile;
  for (int64_t k = threadIdx.x; k < kOrderTile && k < count; k += blockDim.x)
    tile[0][k] = partial[k];
  __syncthreads();
  double s = 0.0;
  for (int64_t t = 0; t < tiles; ++t) {
    const double* cur = tile[t & 1];
    if (threadIdx.x == 0) {
      const int64_t len = count - t * kOrderTile < kOrderTile ? count - t * kOrderTile : kOrderTile;
      for (int64_t k = 0; k < len; ++k) s += cur[k];
    } else if (threadIdx.x >= 32 && t + 1 < tiles) {
      const int64_t base = (t + 1) * kOrderTile;
      double* next = tile[(t + 1) & 1];
      for (int64_t k = threadIdx.x - 32; k < kOrderTile && base + k < count;
           k += blockDim.x - 32)
        next[k] = partial[base + k];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = (acc != nullptr ? *acc : 0.0) + s;
}

// One thread: sqrt of the sum, rounded to float.
__global__ void norm_of_sum_kernel(const double* sum, float* out) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  *out = float(sqrt(*sum));
}

// ---- tensor kernels over plans ----

__global__ void binary_kernel(Plan p, int op, const float* a, const float* b, float* y) {
  HMRT_GRID_LOOP(i, p.total) {
    int64_t off[kMaxOps];
    p.offsets(i, off);
    const float u = a[off[1]], v = b[off[2]];
    float r;
    switch (op) {
      case HMRT_BINARY_ADD: r = u + v; break;
      case HMRT_BINARY_SUB: r = u - v; break;
      case HMRT_BINARY_MUL: r = u * v; break;
      case HMRT_BINARY_DIV: r = u / v; break;
      case HMRT_BINARY_POW: r = powf(u, v); break;
      case HMRT_BINARY_MAX: r = ew::max(u, v); break;
      default: r = ew::min(u, v); break;
    }
    y[off[0]] = r;
  }
}

template <class T>
__global__ void plan_copy_kernel(Plan p, const T* x, T* y) {
  HMRT_GRID_LOOP(i, p.total) {
    int64_t off[kMaxOps];
    p.offsets(i, off);
    y[off[0]] = x[off[1]];
  }
}

template <class T>
__global__ void where_kernel(Plan p, const uint8_t* cond, const T* x, const T* z, T* y) {
  HMRT_GRID_LOOP(i, p.total) {
    int64_t off[kMaxOps];
    p.offsets(i, off);
    y[off[0]] = cond[off[1]] ? x[off[2]] : z[off[3]];
  }
}

__global__ void dropout_kernel(DropoutMask m, const float* x, float* y, uint8_t* mask,
                               int64_t n) {
  HMRT_GRID_LOOP(i, n) {
    const bool keep = m.keep(uint64_t(i));
    y[i] = keep ? x[i] * m.scale : 0.0f;
    if (mask != nullptr) mask[i] = keep;
  }
}

__global__ void dropout_backward_kernel(float scale, const float* dy, const uint8_t* mask,
                                        float* dx, int64_t n) {
  HMRT_GRID_LOOP(i, n) { dx[i] = mask[i] ? dy[i] * scale : 0.0f; }
}

template <class T>
__global__ void gather_kernel(const T* x, const int64_t* nidx, int64_t dim, int64_t n_idx,
                              int64_t inner, int64_t total, T* y) {
  HMRT_GRID_LOOP(e, total) {
    const int64_t i = e % inner, r = e / inner;
    const int64_t j = r % n_idx, o = r / n_idx;
    y[e] = x[(o * dim + nidx[j]) * inner + i];
  }
}

__global__ void gather_backward_kernel(const float* dy, const int64_t* first,
                                       const int64_t* order, int64_t dim, int64_t n_idx,
                                       int64_t inner, int64_t total, float* dx) {
  HMRT_GRID_LOOP(e, total) {
    const int64_t i = e % inner, r = e / inner;
    const int64_t v = r % dim, o = r / dim;
    float sum = 0.0f;
    for (int64_t k = first[v]; k < first[v + 1]; ++k)
      sum = sum + dy[(o * n_idx + order[k]) * inner + i];
    dx[e] = sum;
  }
}

// ---- LayerNorm: eight threads per row ---------------------------------------

constexpr int kRowGroup = 8;                         // threads per row
constexpr int kGroupRows = kThreads / kRowGroup;     // rows per block

// reduce_sum8(n, f) (core/norm_math.h) by the eight threads of a row's
// group, `lane` its thread: each sums its lane's accumulator (sum8_lane),
// the shuffles combine them as sum8_combine does, lane 0 adds the tail in
// order; the sum on every lane.  Every thread of the warp takes part.
template <class F>
__device__ float group8_sum(int64_t n, int lane, F f) {
  constexpr unsigned kAll = 0xffffffffu;
  const float a = sum8_lane(n, lane, f);
  const float b = a + __shfl_down_sync(kAll, a, 4, kRowGroup);        // lanes 0-3: a[l] + a[l + 4]
  const float pair = b + __shfl_down_sync(kAll, b, 1, kRowGroup);     // lanes 0, 2: b0 + b1, b2 + b3
  float s = pair + __shfl_down_sync(kAll, pair, 2, kRowGroup);       // lane 0: (b0 + b1) + (b2 + b3)
  if (lane == 0)
    for (int64_t i = n / 8 * 8; i < n; ++i) s += f(i);
  return __shfl_sync(kAll, s, 0, kRowGroup);
}

// Rows go kGroupRows to a block, eight threads to a row, in a grid-stride
// loop that every thread of a block runs alike (so that whole warps
// shuffle): body(r, active) for this thread's row r, where a thread past the
// last row gets the last row, inactive (it computes, for the shuffles,
// and writes nothing).
template <class Body>
__device__ void for_row_groups(int64_t rows, Body body) {
  for (int64_t first = int64_t(blockIdx.x) * kGroupRows; first < rows;
       first += int64_t(gridDim.x) * kGroupRows) {
    const int64_t mine = first + threadIdx.x / kRowGroup;
    body(mine < rows ? mine : rows - 1, mine < rows);
  }
}

unsigned row_group_blocks(int64_t rows) {
  int64_t b = (rows + kGroupRows - 1) / kGroupRows;
  if (b > kMaxBlocks) b = kMaxBlocks;
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

// layernorm_forward_row (core/norm_math.h), its sums and its elements shared
// by a row's eight threads: the same bits.
// y in fp32, or rounded to bf16 (Out = uint16_t).
template <class Out>
__global__ void layer_norm_kernel(const float* x, const float* scale, const float* bias,
                                  float eps, Out* y, float* mean, float* rstd, int64_t rows,
                                  int64_t cols) {
  const int lane = threadIdx.x % kRowGroup;
  for_row_groups(rows, [&](int64_t r, bool active) {
    const float* xr = x + r * cols;
    const float m = group8_sum(cols, lane, [&](int64_t c) { return xr[c]; }) /
                    static_cast<float>(cols);
    const float s = layernorm_rstd(group8_sum(cols, lane,
                                              [&](int64_t c) {
                                                const float d = xr[c] - m;
                                                return d * d;
                                              }),
                                   cols, eps);
    if (!active) return;
    Out* yr = y + r * cols;
    for (int64_t c = lane; c < cols; c += kRowGroup)
      store_result(yr + c, layernorm_element(xr, scale, bias, m, s, c));
    if (lane == 0) {
      if (mean) mean[r] = m;
      if (rstd) rstd[r] = s;
    }
  });
}

struct Group8Sum {
  int lane;
  template <class F>
  __device__ float operator()(int64_t n, F f) const {
    return group8_sum(n, lane, f);
  }
};

// layernorm_dx_row, shared by a row's eight threads as above.
__global__ void layer_norm_dx_kernel(const float* dy, const float* x, const float* scale,
                                     const float* mean, const float* rstd, float* dx,
                                     int64_t rows, int64_t cols) {
  const int lane = threadIdx.x % kRowGroup;
  for_row_groups(rows, [&](int64_t r, bool active) {
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    const float m = mean[r], s = rstd[r];
    const LayerNormDxSums sums = layernorm_dx_sums(dyr, xr, scale, m, s, cols, Group8Sum{lane});
    if (!active) return;
    float* dxr = dx + r * cols;
    for (int64_t c = lane; c < cols; c += kRowGroup)
      dxr[c] = layernorm_dx_element(dyr, xr, scale, m, s, sums, cols, c);
  });
}

// Each (column, chunk) on a thread of its own: 32 columns by 8 chunks a
// block, the columns of a warp consecutive; the sums to partials[chunk][c]
// (weight) and partials[chunks + chunk][c] (bias).
__global__ void layer_norm_dparams_partials_kernel(const float* dy, const float* x,
                                                   const float* mean, const float* rstd,
                                                   int64_t rows, int64_t cols, int64_t chunks,
                                                   double* partials) {
  const int64_t c = int64_t(blockIdx.x) * 32 + threadIdx.x % 32;
  const int64_t k = int64_t(blockIdx.y) * 8 + threadIdx.x / 32;
  if (c >= cols || k >= chunks) return;
  layernorm_dparams_chunk(dy, x, mean, rstd, rows, cols, k, c, &partials[k * cols + c],
                           &partials[(chunks + k) * cols + c]);
}

// Then the chunks' sums in order, per column (the CPU zeroes the gradients
// and adds the column sums).  Without partials (no scratch for them), each
// chunk summed here.
__global__ void layer_norm_dparams_kernel(const float* dy, const float* x, const float* mean,
                                          const float* rstd, const double* partials,
                                          float* dscale, float* dbias, int64_t rows,
                                          int64_t cols, int64_t chunks) {
  HMRT_GRID_LOOP(c, cols) {
    double ds = 0.0, db = 0.0;
    for (int64_t k = 0; k < chunks; ++k) {
      double s, b;
      if (partials) {
        s = partials[k * cols + c];
        b = partials[(chunks + k) * cols + c];
      } else {
        layernorm_dparams_chunk(dy, x, mean, rstd, rows, cols, k, c, &s, &b);
      }
      ds += s;
      db += b;
    }
    if (dscale) dscale[c] = 0.0f + static_cast<float>(ds);
    if (dbias) dbias[c] = 0.0f + static_cast<float>(db);
  }
}

// Chunk k of y's element e on thread k * ny + e (consecutive threads,
// consecutive elements of y).
__global__ void reduce_to_rows_partials_kernel(ReducePlan plan, const float* x, int64_t ny,
                                               int64_t count, double* partials) {
  HMRT_GRID_LOOP(t, count) {
    int64_t xo, yo;
    reduce_to_row_offsets(plan, t % ny, &xo, &yo);
    partials[t] = reduce_to_row_chunk(plan, x + xo, t / ny);
  }
}

__global__ void reduce_to_rows_kernel(ReducePlan plan, const float* x, float* y, int64_t ny,
                                      const double* partials) {
  HMRT_GRID_LOOP(e, ny) { reduce_to_row_element(plan, x, e, y, partials, ny); }
}

// Block b of y's element yi on thread b * ny + yi.
__global__ void reduce_to_runs_partials_kernel(ReducePlan plan, const float* x, int64_t ny,
                                               int64_t count, double* partials) {
  HMRT_GRID_LOOP(t, count) {
    int64_t xo, yo;
    unravel_xy(plan.p, plan.kept, plan.nk, t % ny, &xo, &yo);
    partials[t] = reduce_to_run_block(plan, x + xo, t / ny);
  }
}

__global__ void reduce_to_runs_kernel(ReducePlan plan, const float* x, float* y, int64_t ny,
                                      const double* partials) {
  HMRT_GRID_LOOP(yi, ny) { reduce_to_run_element(plan, x, yi, y, partials, ny); }
}

}  // namespace

int adamw(void* stream, const AdamWScalars& a, float* param, const float* grad,
          float* exp_avg, float* exp_avg_sq, int64_t n) {
  if (n == 0) return 0;
  adamw_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(a, param, grad, exp_avg,
                                                                  exp_avg_sq, n);
  return launched();
}

int sgd(void* stream, const SgdScalars& a, float* param, const float* grad,
        float* momentum_buf, int64_t n) {
  if (n == 0) return 0;
  sgd_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(a, param, grad, momentum_buf, n);
  return launched();
}

int onnx_adagrad(void* stream, const OnnxAdagradScalars& s, const float* x, const float* g,
                 const float* h, float* x_new, float* h_new, int64_t n) {
  if (n == 0) return 0;
  onnx_adagrad_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(s, x, g, h, x_new,
                                                                         h_new, n);
  return launched();
}

int onnx_momentum(void* stream, const OnnxMomentumScalars& s, const float* x, const float* g,
                  const float* v, float* x_new, float* v_new, int64_t n) {
  if (n == 0) return 0;
  onnx_momentum_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(s, x, g, v, x_new,
                                                                          v_new, n);
  return launched();
}

int onnx_adam(void* stream, const OnnxAdamScalars& s, const float* x, const float* g,
              const float* v, const float* h, float* x_new, float* v_new, float* h_new,
              int64_t n) {
  if (n == 0) return 0;
  onnx_adam_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(s, x, g, v, h, x_new,
                                                                      v_new, h_new, n);
  return launched();
}

int adamw8bit(void* stream, const AdamWScalars& s, const QuantMap* maps, float* param,
              const float* grad, uint8_t* exp_avg_codes, float* exp_avg_absmax,
              uint8_t* exp_avg_sq_codes, float* exp_avg_sq_absmax, int64_t n) {
  if (n == 0) return 0;
  const int64_t blocks = (n + kQuantBlock - 1) / kQuantBlock;
  adamw8bit_kernel<<<unsigned(blocks), kQuantBlock, 0, as_stream(stream)>>>(
      s, maps, param, grad, exp_avg_codes, exp_avg_absmax, exp_avg_sq_codes, exp_avg_sq_absmax,
      n);
  return launched();
}

int scale(void* stream, float* x, int64_t n, float s) {
  if (n == 0) return 0;
  scale_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(x, n, s);
  return launched();
}

int fill(void* stream, void* y, int64_t n, uint64_t value, size_t elem_size) {
  if (n == 0) return 0;
  const unsigned b = blocks_for(n);
  cudaStream_t s = as_stream(stream);
  switch (elem_size) {
    case 1: fill_kernel<<<b, kThreads, 0, s>>>(static_cast<uint8_t*>(y), n, uint8_t(value)); break;
    case 2: fill_kernel<<<b, kThreads, 0, s>>>(static_cast<uint16_t*>(y), n, uint16_t(value)); break;
    case 4: fill_kernel<<<b, kThreads, 0, s>>>(static_cast<uint32_t*>(y), n, uint32_t(value)); break;
    default: fill_kernel<<<b, kThreads, 0, s>>>(static_cast<uint64_t*>(y), n, value); break;
  }
  return launched();
}

int cast(void* stream, Cast kind, const void* x, void* y, int64_t n) {
  if (n == 0) return 0;
  cast_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(kind, x, y, n);
  return launched();
}

int round_bf16_blocks(void* stream, const float* x, int64_t batch, int64_t stride, int64_t rows,
                      int64_t cols, int64_t ld, uint16_t* y) {
  const int64_t n_rows = batch * rows;
  if (n_rows == 0 || cols == 0) return 0;
  const int vec = cols % 4 == 0 && ld % 4 == 0 && (batch == 1 || stride % 4 == 0) &&
                  (reinterpret_cast<uintptr_t>(x) & 15) == 0 &&
                  (reinterpret_cast<uintptr_t>(y) & 7) == 0;
  const unsigned blocks = unsigned(n_rows < kMaxBlocks ? n_rows : kMaxBlocks);
  round_bf16_blocks_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(x, stride, rows, cols, ld,
                                                                       y, n_rows, vec);
  return launched();
}

int sum_squares_partials(void* stream, const float* x, int64_t n, double* partial) {
  const int64_t chunks = (n + kNormChunk - 1) / kNormChunk;
  if (chunks <= 1)
    sum_squares_small_kernel<<<1, kThreads, 0, as_stream(stream)>>>(x, n, partial);
  else
    sum_squares_kernel<<<blocks_for(4 * chunks), kThreads, 0, as_stream(stream)>>>(x, n, partial);
  return launched();
}

int sum_in_order(void* stream, const double* partial, int64_t count, const double* acc,
                 double* out) {
  sum_in_order_kernel<<<1, kThreads, 0, as_stream(stream)>>>(partial, count, acc, out);
  return launched();
}

int norm_of_sum(void* stream, const double* sum, float* out) {
  norm_of_sum_kernel<<<1, 1, 0, as_stream(stream)>>>(sum, out);
  return launched();
}

int binary_f32(void* stream, const Plan& p, int op, const float* a, const float* b, float* y) {
  if (p.total == 0) return 0;
  binary_kernel<<<blocks_for(p.total), kThreads, 0, as_stream(stream)>>>(p, op, a, b, y);
  return launched();
}

int plan_copy(void* stream, const Plan& p, const void* x, void* y, size_t elem_size) {
  if (p.total == 0) return 0;
  cudaStream_t s = as_stream(stream);
  // Rows contiguous on both sides (the plan merged to one dim, or to two
  // with unit inner strides: a slice, split or concat along the last dims):
  // the CUDA runtime's copies, at the memory's bandwidth, instead of a
  // thread per element finding its offsets.
  const int64_t e = int64_t(elem_size), limit = int64_t{1} << 31;
  if (p.rank == 0 || (p.rank == 1 && p.st[0][0] == 1 && p.st[1][0] == 1))
    return static_cast<int>(cudaMemcpyAsync(y, x, size_t(p.total * e), cudaMemcpyDefault, s));
  if (p.rank == 2 && p.st[0][1] == 1 && p.st[1][1] == 1 && p.st[0][0] >= p.dims[1] &&
      p.st[1][0] >= p.dims[1] && p.st[0][0] * e < limit && p.st[1][0] * e < limit)
    return static_cast<int>(cudaMemcpy2DAsync(y, size_t(p.st[0][0] * e), x,
                                              size_t(p.st[1][0] * e), size_t(p.dims[1] * e),
                                              size_t(p.dims[0]), cudaMemcpyDefault, s));
  const unsigned g = blocks_for(p.total);
  switch (elem_size) {
    case 1: plan_copy_kernel<<<g, kThreads, 0, s>>>(p, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y)); break;
    case 2: plan_copy_kernel<<<g, kThreads, 0, s>>>(p, static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y)); break;
    case 4: plan_copy_kernel<<<g, kThreads, 0, s>>>(p, static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y)); break;
    default: plan_copy_kernel<<<g, kThreads, 0, s>>>(p, static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y)); break;
  }
  return launched();
}

int where(void* stream, const Plan& p, const uint8_t* cond, const void* x, const void* z,
          void* y, size_t elem_size) {
  if (p.total == 0) return 0;
  const unsigned g = blocks_for(p.total);
  cudaStream_t s = as_stream(stream);
  switch (elem_size) {
    case 1: where_kernel<<<g, kThreads, 0, s>>>(p, cond, static_cast<const uint8_t*>(x), static_cast<const uint8_t*>(z), static_cast<uint8_t*>(y)); break;
    case 2: where_kernel<<<g, kThreads, 0, s>>>(p, cond, static_cast<const uint16_t*>(x), static_cast<const uint16_t*>(z), static_cast<uint16_t*>(y)); break;
    case 4: where_kernel<<<g, kThreads, 0, s>>>(p, cond, static_cast<const uint32_t*>(x), static_cast<const uint32_t*>(z), static_cast<uint32_t*>(y)); break;
    default: where_kernel<<<g, kThreads, 0, s>>>(p, cond, static_cast<const uint64_t*>(x), static_cast<const uint64_t*>(z), static_cast<uint64_t*>(y)); break;
  }
  return launched();
}

int dropout(void* stream, const DropoutMask& m, const float* x, float* y, uint8_t* mask,
            int64_t n) {
  if (n == 0) return 0;
  dropout_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(m, x, y, mask, n);
  return launched();
}

int dropout_backward(void* stream, float scale, const float* dy, const uint8_t* mask,
                     float* dx, int64_t n) {
  if (n == 0) return 0;
  dropout_backward_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(scale, dy, mask,
                                                                             dx, n);
  return launched();
}

int gather(void* stream, const void* x, const int64_t* nidx, int64_t outer, int64_t dim,
           int64_t n_idx, int64_t inner, void* y, size_t elem_size) {
  const int64_t total = outer * n_idx * inner;
  if (total == 0) return 0;
  const unsigned g = blocks_for(total);
  cudaStream_t s = as_stream(stream);
  switch (elem_size) {
    case 1: gather_kernel<<<g, kThreads, 0, s>>>(static_cast<const uint8_t*>(x), nidx, dim, n_idx, inner, total, static_cast<uint8_t*>(y)); break;
    case 2: gather_kernel<<<g, kThreads, 0, s>>>(static_cast<const uint16_t*>(x), nidx, dim, n_idx, inner, total, static_cast<uint16_t*>(y)); break;
    case 4: gather_kernel<<<g, kThreads, 0, s>>>(static_cast<const uint32_t*>(x), nidx, dim, n_idx, inner, total, static_cast<uint32_t*>(y)); break;
    default: gather_kernel<<<g, kThreads, 0, s>>>(static_cast<const uint64_t*>(x), nidx, dim, n_idx, inner, total, static_cast<uint64_t*>(y)); break;
  }
  return launched();
}

int gather_backward(void* stream, const float* dy, const int64_t* first, const int64_t* order,
                    int64_t outer, int64_t dim, int64_t n_idx, int64_t inner, float* dx) {
  const int64_t total = outer * dim * inner;
  if (total == 0) return 0;
  gather_backward_kernel<<<blocks_for(total), kThreads, 0, as_stream(stream)>>>(
      dy, first, order, dim, n_idx, inner, total, dx);
  return launched();
}

template <class Out>
int layer_norm_to(void* stream, const float* x, const float* scale, const float* bias, float eps,
                  Out* y, float* mean, float* rstd, int64_t rows, int64_t cols) {
  if (rows == 0) return 0;
  layer_norm_kernel<<<row_group_blocks(rows), kThreads, 0, as_stream(stream)>>>(
      x, scale, bias, eps, y, mean, rstd, rows, cols);
  return launched();
}

int layer_norm(void* stream, const float* x, const float* scale, const float* bias, float eps,
               float* y, float* mean, float* rstd, int64_t rows, int64_t cols) {
  return layer_norm_to(stream, x, scale, bias, eps, y, mean, rstd, rows, cols);
}

int layer_norm(void* stream, const float* x, const float* scale, const float* bias, float eps,
               uint16_t* y, float* mean, float* rstd, int64_t rows, int64_t cols) {
  return layer_norm_to(stream, x, scale, bias, eps, y, mean, rstd, rows, cols);
}

int64_t layer_norm_partials(int64_t rows, int64_t cols) {
  return 2 * norm_row_chunks(rows) * cols;
}

int layer_norm_backward(void* stream, const float* dy, const float* x, const float* scale,
                        const float* mean, const float* rstd, float* dx, float* dscale,
                        float* dbias, int64_t rows, int64_t cols, double* partials) {
  cudaStream_t s = as_stream(stream);
  if (rows > 0)
    layer_norm_dx_kernel<<<row_group_blocks(rows), kThreads, 0, s>>>(dy, x, scale, mean, rstd,
                                                                     dx, rows, cols);
  if ((dscale || dbias) && cols > 0) {
    const int64_t chunks = norm_row_chunks(rows);
    if (partials && chunks > 0) {
      const dim3 grid(static_cast<unsigned>((cols + 31) / 32),
                      static_cast<unsigned>((chunks + 7) / 8));
      layer_norm_dparams_partials_kernel<<<grid, kThreads, 0, s>>>(dy, x, mean, rstd, rows,
                                                                    cols, chunks, partials);
    }
    layer_norm_dparams_kernel<<<blocks_for(cols), kThreads, 0, s>>>(
        dy, x, mean, rstd, partials, dscale, dbias, rows, cols, chunks);
  }
  return launched();
}

int64_t reduce_to_partials(const ReducePlan& plan, int64_t ny) {
  const bool rows = plan.p.st[1][plan.p.rank - 1] != 0;  // inner dim kept
  const int64_t parts = rows ? reduce_to_row_chunks(plan) : reduce_to_run_blocks(plan);
  return parts > 1 ? parts * ny : 0;
}

int reduce_to(void* stream, const ReducePlan& plan, const float* x, float* y, int64_t ny,
              double* partials) {
  if (ny == 0) return 0;
  cudaStream_t s = as_stream(stream);
  const bool rows = plan.p.st[1][plan.p.rank - 1] != 0;
  const int64_t count = reduce_to_partials(plan, ny);
  if (count == 0) partials = nullptr;
  if (partials && rows)
    reduce_to_rows_partials_kernel<<<blocks_for(count), kThreads, 0, s>>>(plan, x, ny, count,
                                                                          partials);
  else if (partials)
    reduce_to_runs_partials_kernel<<<blocks_for(count), kThreads, 0, s>>>(plan, x, ny, count,
                                                                          partials);
  if (rows)
    reduce_to_rows_kernel<<<blocks_for(ny), kThreads, 0, s>>>(plan, x, y, ny, partials);
  else
    reduce_to_runs_kernel<<<blocks_for(ny), kThreads, 0, s>>>(plan, x, y, ny, partials);
  return launched();
}

}  // namespace cuda
}  // namespace hmrt
