// The CUDA backend's kernels for Transpose, Trilu, Equal, the int64 ops and
// the reductions (cuda/tensor_kernels.cu), as launchers that
// cuda/tensor_ops_cuda.cpp calls after the CPU kernels' checks.  Plain C++,
// as cuda_kernels.h: each queues its work on `stream` and returns the
// launch's cudaError_t as an int; pointers are device addresses.
#ifndef HMRT_CUDA_TENSOR_KERNELS_H
#define HMRT_CUDA_TENSOR_KERNELS_H

#include <cstddef>
#include <cstdint>

#include "core/plan.h"

namespace hmrt {
namespace cuda {

// Trilu over rows of N elements of elem_size (1, 2, 4 or 8) bytes, M rows
// per matrix: element (i, j) kept where j >= i + k (upper) or j <= i + k.
int trilu(void* stream, const void* x, void* y, int64_t n, int64_t M, int64_t N, int64_t k,
          int upper, size_t elem_size);

// How Equal compares two elements: as float, double, binary16, bfloat16,
// truth values, or bitwise integers of 1, 2, 4 or 8 bytes.
enum class EqualKind { F32, F64, F16, BF16, Bool, Int1, Int2, Int4, Int8 };
// y (bool) = a == b over a broadcast plan (operands y, a, b).
int equal(void* stream, EqualKind kind, const Plan& p, const void* a, const void* b, uint8_t* y);

// y = a op b (hmrt_binary_op) in int64 over a broadcast plan; y = -x.
int binary_i64(void* stream, const Plan& p, int op, const int64_t* a, const int64_t* b,
               int64_t* y);
int neg_i64(void* stream, const int64_t* x, int64_t* y, int64_t n);

// Reductions of x over its reduced dims: y[j] for each of ny kept
// elements, from x offset kept.offsets(j) (operand 0) plus red.offsets(r)
// for r < red.total, summed in double in that order and divided by divisor
// (max: NaN wins).
int reduce(void* stream, int op, const Plan& kept, const Plan& red, double divisor,
           const float* x, float* y, int64_t ny);
// dx[i] = dy where x[i] is its group's maximum y (or both NaN), else 0:
// p iterates x's dims, operand 0 x (dense), operand 1 y (0 on reduced dims).
int reduce_max_backward(void* stream, const Plan& p, const float* x, const float* y,
                        const float* dy, float* dx);

}  // namespace cuda
}  // namespace hmrt

#endif  // HMRT_CUDA_TENSOR_KERNELS_H
