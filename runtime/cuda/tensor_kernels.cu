// The CUDA backend's kernels for Transpose's companions: Trilu, Equal, the
// int64 ops and the reductions (cuda/tensor_kernels.h).  Per element they
// are the CPU kernels' operations (core/ew_math.h's int64 arithmetic,
// core/float16.h's conversions); the sums of ReduceSum/Mean run in double
// in the reduced dims' row-major order.
#include <cuda_runtime.h>

#include <cmath>

#include "cuda/launch.cuh"
#include "core/ew_math.h"
#include "core/float16.h"
#include "cuda/tensor_kernels.h"
#include "hmrt/nn_ops.h"  // hmrt_reduce_op

namespace hmrt {
namespace cuda {
namespace {


template <class T>
__global__ void trilu_kernel(const T* x, T* y, int64_t n, int64_t M, int64_t N, int64_t k,
                             int upper) {
  HMRT_GRID_LOOP(e, n) {
    const int64_t j = e % N, i = (e / N) % M;
    const bool keep = upper ? j >= i + k : j <= i + k;
    y[e] = keep ? x[e] : T(0);
  }
}

template <class T>
__device__ bool same_value(EqualKind kind, T a, T b) {
  switch (kind) {
    case EqualKind::F32: {
      float u, v;
      memcpy(&u, &a, 4);
      memcpy(&v, &b, 4);
      return u == v;
    }
    case EqualKind::F64: {
      double u, v;
      memcpy(&u, &a, 8);
      memcpy(&v, &b, 8);
      return u == v;
    }
    case EqualKind::F16: return half_to_float(uint16_t(a)) == half_to_float(uint16_t(b));
    case EqualKind::BF16: return bf16_to_float(uint16_t(a)) == bf16_to_float(uint16_t(b));
    case EqualKind::Bool: return (a != 0) == (b != 0);
    default: return a == b;
  }
}

template <class T>
__global__ void equal_kernel(EqualKind kind, Plan p, const T* a, const T* b, uint8_t* y) {
  HMRT_GRID_LOOP(i, p.total) {
    int64_t off[3];
    p.offsets(i, off);
    y[off[0]] = same_value(kind, a[off[1]], b[off[2]]);
  }
}

__global__ void binary_i64_kernel(Plan p, int op, const int64_t* a, const int64_t* b, int64_t* y) {
  HMRT_GRID_LOOP(i, p.total) {
    int64_t off[3];
    p.offsets(i, off);
    y[off[0]] = ew::binary_i64(op, a[off[1]], b[off[2]]);
  }
}

__global__ void neg_i64_kernel(const int64_t* x, int64_t* y, int64_t n) {
  HMRT_GRID_LOOP(i, n) { y[i] = ew::wrap_sub(0, x[i]); }
}

__global__ void reduce_kernel(int op, Plan kept, Plan red, double divisor, const float* x,
                              float* y, int64_t ny) {
  HMRT_GRID_LOOP(j, ny) {
    int64_t base;
    kept.offsets(j, &base);
    double acc = op == HMRT_REDUCE_MAX ? -INFINITY : 0.0;
    for (int64_t r = 0; r < red.total; ++r) {
      int64_t off;
      red.offsets(r, &off);
      const double v = x[base + off];
      if (op != HMRT_REDUCE_MAX)
        acc += v;
      else if (acc == acc && (v != v || v > acc))  // NaN wins, then stays
        acc = v;
    }
    y[j] = static_cast<float>(acc / divisor);
  }
}

__global__ void reduce_max_backward_kernel(Plan p, const float* x, const float* y,
                                           const float* dy, float* dx) {
  HMRT_GRID_LOOP(i, p.total) {
    int64_t off[2];
    p.offsets(i, off);
    const float m = y[off[1]], v = x[off[0]];
    const bool hit = v == m || (v != v && m != m);
    dx[off[0]] = hit ? dy[off[1]] : 0.0f;
  }
}

}  // namespace

int trilu(void* stream, const void* x, void* y, int64_t n, int64_t M, int64_t N, int64_t k,
          int upper, size_t elem_size) {
  const unsigned g = blocks_for(n);
  cudaStream_t s = as_stream(stream);
  switch (elem_size) {
    case 1: trilu_kernel<<<g, kThreads, 0, s>>>(static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), n, M, N, k, upper); break;
    case 2: trilu_kernel<<<g, kThreads, 0, s>>>(static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y), n, M, N, k, upper); break;
    case 4: trilu_kernel<<<g, kThreads, 0, s>>>(static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y), n, M, N, k, upper); break;
    default: trilu_kernel<<<g, kThreads, 0, s>>>(static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y), n, M, N, k, upper); break;
  }
  return launched();
}

int equal(void* stream, EqualKind kind, const Plan& p, const void* a, const void* b, uint8_t* y) {
  const unsigned g = blocks_for(p.total);
  cudaStream_t s = as_stream(stream);
  switch (kind) {
    case EqualKind::Bool:
    case EqualKind::Int1:
      equal_kernel<<<g, kThreads, 0, s>>>(kind, p, static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b), y);
      break;
    case EqualKind::F16:
    case EqualKind::BF16:
    case EqualKind::Int2:
      equal_kernel<<<g, kThreads, 0, s>>>(kind, p, static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b), y);
      break;
    case EqualKind::F32:
    case EqualKind::Int4:
      equal_kernel<<<g, kThreads, 0, s>>>(kind, p, static_cast<const uint32_t*>(a), static_cast<const uint32_t*>(b), y);
      break;
    default:
      equal_kernel<<<g, kThreads, 0, s>>>(kind, p, static_cast<const uint64_t*>(a), static_cast<const uint64_t*>(b), y);
      break;
  }
  return launched();
}

int binary_i64(void* stream, const Plan& p, int op, const int64_t* a, const int64_t* b,
               int64_t* y) {
  binary_i64_kernel<<<blocks_for(p.total), kThreads, 0, as_stream(stream)>>>(p, op, a, b, y);
  return launched();
}

int neg_i64(void* stream, const int64_t* x, int64_t* y, int64_t n) {
  neg_i64_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(x, y, n);
  return launched();
}

int reduce(void* stream, int op, const Plan& kept, const Plan& red, double divisor,
           const float* x, float* y, int64_t ny) {
  reduce_kernel<<<blocks_for(ny), kThreads, 0, as_stream(stream)>>>(op, kept, red, divisor, x, y,
                                                                    ny);
  return launched();
}

int reduce_max_backward(void* stream, const Plan& p, const float* x, const float* y,
                        const float* dy, float* dx) {
  reduce_max_backward_kernel<<<blocks_for(p.total), kThreads, 0, as_stream(stream)>>>(p, x, y,
                                                                                      dy, dx);
  return launched();
}

}  // namespace cuda
}  // namespace hmrt
