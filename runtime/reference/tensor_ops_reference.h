// Scalar references of the generic tensor operations (hmrt/tensor_ops.h),
// written for clarity, not speed: every output element is found by
// unravelling its flat index and computing the input's index from it.
// Arithmetic is in double (int64 for integer ops).  The arguments are
// assumed valid: the references check nothing.  Shapes are (rank, dims) as
// in the C API.  Test-only, never built into hmrt.
#ifndef HMRT_REFERENCE_TENSOR_OPS_REFERENCE_H
#define HMRT_REFERENCE_TENSOR_OPS_REFERENCE_H

#include <cstddef>
#include <cstdint>

#include "hmrt/tensor_ops.h"

namespace hmrt {
namespace ref {

int64_t numel(int32_t rank, const int64_t* dims);

void unary(hmrt_unary_op op, const double* x, double* y, int64_t n);
void binary(hmrt_binary_op op, const double* a, int32_t ra, const int64_t* sa,
            const double* b, int32_t rb, const int64_t* sb, double* y,
            int32_t ry, const int64_t* sy);
// Exact integer results; DIV and POW need b != 0 and b >= 0 respectively.
void binary_i64(hmrt_binary_op op, const int64_t* a, int32_t ra,
                const int64_t* sa, const int64_t* b, int32_t rb,
                const int64_t* sb, int64_t* y, int32_t ry, const int64_t* sy);
void equal(int32_t dtype, const void* a, int32_t ra, const int64_t* sa,
           const void* b, int32_t rb, const int64_t* sb, uint8_t* y,
           int32_t ry, const int64_t* sy);
void where(const uint8_t* cond, int32_t rc, const int64_t* sc, const void* x,
           int32_t rx, const int64_t* sx, const void* z, int32_t rz,
           const int64_t* sz, void* y, int32_t ry, const int64_t* sy,
           size_t elem_size);
void cast(int32_t from_dtype, const void* x, int32_t to_dtype, void* y,
          int64_t n);

void transpose(const void* x, int32_t rank, const int64_t* shape,
               const int64_t* perm, void* y, size_t elem_size);
void slice(const void* x, int32_t rank, const int64_t* shape,
           const int64_t* starts, const int64_t* steps,
           const int64_t* out_shape, void* y, size_t elem_size);
void slice_backward(const double* dy, int32_t rank, const int64_t* shape,
                    const int64_t* starts, const int64_t* steps,
                    const int64_t* out_shape, double* dx);
void concat(int32_t n, const void* const* inputs, const int64_t* sizes,
            int32_t rank, const int64_t* out_shape, int32_t axis, void* y,
            size_t elem_size);
// idx holds int64 (idx_dtype HMRT_DTYPE_I64) or int32 values.
void gather(const void* x, int32_t rank, const int64_t* shape, int32_t axis,
            int32_t idx_dtype, const void* idx, int64_t n_idx, void* y,
            size_t elem_size);
void gather_backward(const double* dy, int32_t rank, const int64_t* shape,
                     int32_t axis, int32_t idx_dtype, const void* idx,
                     int64_t n_idx, double* dx);
void expand(const void* x, int32_t rx, const int64_t* sx, void* y, int32_t ry,
            const int64_t* sy, size_t elem_size);
void reduce_to(const double* x, int32_t rx, const int64_t* sx, double* y,
               int32_t ry, const int64_t* sy);
void trilu(const void* x, int32_t rank, const int64_t* shape, int64_t k,
           bool upper, void* y, size_t elem_size);
void range(double start, double delta, double* y, int64_t n);

// The dropout generator of hmrt_dropout_f32, written out separately.
uint64_t splitmix64(uint64_t seed, uint64_t j);  // output j of the stream
void dropout(const double* x, double* y, uint8_t* mask, int64_t n,
             double ratio, uint64_t seed, uint64_t counter);

}  // namespace ref
}  // namespace hmrt

#endif  // HMRT_REFERENCE_TENSOR_OPS_REFERENCE_H
