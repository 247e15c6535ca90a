/* hmrt generic tensor operations with ONNX semantics: elementwise maps with
 * multidirectional broadcasting, casts and data movement (transpose, slice,
 * concat, gather, expand, ...), called by the code hmcc generates.  C API;
 * see runtime/README.md and hmrt/kernels.h for the general conventions.
 *
 * Common rules for every function below:
 *  - All tensors are dense and row-major (C order, last index fastest).
 *  - A shape is (int32_t rank, const int64_t* dims): rank 0 is a scalar of
 *    one element (dims may then be NULL), rank must be <= HMRT_MAX_RANK and
 *    every dim >= 0, else HMRT_INVALID_ARGUMENT.
 *  - Broadcasting is numpy/ONNX multidirectional: shapes are aligned on their
 *    trailing dims, missing leading dims count as 1, and a dim of 1 stretches
 *    to the other's size (also to 0).  The output shape is passed and must
 *    equal the broadcast shape exactly (HMRT_INVALID_ARGUMENT otherwise).
 *  - Element types are hmrt_dtype values (hmrt/program.h).  Data-movement
 *    ops are type-generic: elem_size is the element size in bytes (>= 1).
 *  - Data pointers may be NULL only when the tensor has no elements.
 *  - An axis may be negative and then counts from the end (ONNX).
 *  - Outputs must not overlap inputs unless "in place OK" is stated.
 *  - Arguments, shapes and indices are all checked before any output is
 *    written: a failing call leaves its outputs untouched and records a
 *    message for hmrt_last_error().
 *  - Results never depend on the thread count (hmrt_set_num_threads).
 */
#ifndef HMRT_TENSOR_OPS_H
#define HMRT_TENSOR_OPS_H

#include "hmrt/hmrt.h"
#include "hmrt/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest rank accepted (the same definition as in hmrt/nn_ops.h). */
#define HMRT_MAX_RANK 8

/* ---- elementwise ---------------------------------------------------------- */

typedef enum hmrt_unary_op {
  HMRT_UNARY_EXP,
  HMRT_UNARY_LOG,
  HMRT_UNARY_SQRT,
  HMRT_UNARY_NEG,
  HMRT_UNARY_RECIPROCAL, /* 1/x */
  HMRT_UNARY_TANH,
  HMRT_UNARY_SIGMOID,    /* 1/(1+exp(-x)) */
  HMRT_UNARY_ERF,
  HMRT_UNARY_RELU,       /* max(x, 0); NaN stays NaN (torch.relu) */
  HMRT_UNARY_IDENTITY,
  HMRT_UNARY_ABS,
  HMRT_UNARY_SIGN        /* -1 or 1; +-0 and NaN pass through */
} hmrt_unary_op;

/* y[i] = op(x[i]) for n elements, in float: EXP and SIGMOID with the
 * runtime's vectorised exp (< 2 ulp), LOG, TANH and ERF with SLEEF's (<= 1
 * ulp, the same bits on every x86-64 CPU),
 * the others exact (IEEE results for invalid inputs: log(-1) = NaN,
 * 1/0 = inf).
 * In place OK (y == x). */
hmrt_status hmrt_unary_f32(hmrt_unary_op op, const float* x, float* y,
                           int64_t n);
/* y[i] = -x[i], two's complement (INT64_MIN stays INT64_MIN).
 * In place OK. */
hmrt_status hmrt_neg_i64(const int64_t* x, int64_t* y, int64_t n);

typedef enum hmrt_binary_op {
  HMRT_BINARY_ADD,
  HMRT_BINARY_SUB,
  HMRT_BINARY_MUL,
  HMRT_BINARY_DIV,
  HMRT_BINARY_POW,
  HMRT_BINARY_MAX, /* NaN propagates (torch.maximum) */
  HMRT_BINARY_MIN  /* NaN propagates (torch.minimum) */
} hmrt_binary_op;

/* y[i] = a[bcast(i)] op b[bcast(i)]; y has the broadcast shape of a and b
 * (ry, sy passed and checked).  In place OK when y is a or b and that input
 * already has the output's shape. */
hmrt_status hmrt_binary_f32(hmrt_binary_op op, const float* a, int32_t ra,
                            const int64_t* sa, const float* b, int32_t rb,
                            const int64_t* sb, float* y, int32_t ry,
                            const int64_t* sy);
/* int64 version, two's complement wrapping for ADD, SUB, MUL.  DIV truncates
 * toward zero (C, ONNX); a zero divisor anywhere in b is HMRT_INVALID_ARGUMENT
 * (INT64_MIN / -1 wraps to INT64_MIN).  POW is repeated multiplication with
 * wrapping; a negative exponent anywhere in b is HMRT_INVALID_ARGUMENT (as
 * numpy).  MAX, MIN as usual.  In place OK as hmrt_binary_f32. */
hmrt_status hmrt_binary_i64(hmrt_binary_op op, const int64_t* a, int32_t ra,
                            const int64_t* sa, const int64_t* b, int32_t rb,
                            const int64_t* sb, int64_t* y, int32_t ry,
                            const int64_t* sy);
/* Pow with an exponent of another type: cast it to f32 (hmrt_cast), then
 * hmrt_binary_f32. */

/* ---- fused elementwise programs ------------------------------------------ */

/* The instructions of a fused program.  Each computes, element by element,
 * what its one-op kernel computes, with the same bits: */
typedef enum hmrt_fused_op {
  HMRT_FUSED_ADD,        /* a + b, and so on: hmrt_binary_f32's ops */
  HMRT_FUSED_SUB,
  HMRT_FUSED_MUL,
  HMRT_FUSED_DIV,
  HMRT_FUSED_POW,
  HMRT_FUSED_MAX,
  HMRT_FUSED_MIN,
  HMRT_FUSED_EXP,        /* op(a): hmrt_unary_f32's ops */
  HMRT_FUSED_LOG,
  HMRT_FUSED_SQRT,
  HMRT_FUSED_NEG,
  HMRT_FUSED_RECIPROCAL,
  HMRT_FUSED_TANH,
  HMRT_FUSED_SIGMOID,
  HMRT_FUSED_ERF,
  HMRT_FUSED_RELU,
  HMRT_FUSED_ABS,
  HMRT_FUSED_SIGN,
  HMRT_FUSED_WHERE,      /* a != 0 ? b : c (hmrt_where with a bool a) */
  HMRT_FUSED_RELU_GRAD   /* a > 0 ? b : 0 (hmrt_relu_backward, x = a) */
} hmrt_fused_op;

/* y = the value of the last of n_code instructions (1..256), element by
 * element over y's shape (rank, dims).  code holds 4 int64 per instruction:
 * op (hmrt_fused_op), then its operands a, b, c, each naming an input
 * (0 .. n_in-1) or an earlier instruction's value (n_in + its index), -1
 * for an operand the op does not take.  Input j (n_in <= 64) is at in[j]:
 * float, or bool bytes (0/1) where in_bool[j] is nonzero; its shape is
 * in_dims[j*rank .. j*rank+rank-1], each dim 1 (broadcast) or y's.
 * In place OK when y is a float input of y's shape. */
hmrt_status hmrt_fused_f32(int64_t n_code, const int64_t* code, int64_t n_in,
                           const void* const* in, const int64_t* in_bool,
                           const int64_t* in_dims, float* y, int32_t rank,
                           const int64_t* dims);

/* hmrt_fused_f32 with y in bfloat16 bit patterns: each element computed in
 * fp32 as hmrt_fused_f32 computes it, then rounded to nearest even as
 * hmrt_round_bf16 rounds it (a value only bf16 GEMM operands read). */
hmrt_status hmrt_fused_f32_to_bf16(int64_t n_code, const int64_t* code, int64_t n_in,
                                   const void* const* in, const int64_t* in_bool,
                                   const int64_t* in_dims, uint16_t* y, int32_t rank,
                                   const int64_t* dims);

/* y = (a == b) as bool bytes (0/1), broadcasting; dtype (hmrt_dtype) is the
 * element type of both a and b.  Floats (F16 and BF16 too) compare by value
 * (NaN != NaN, -0 == +0); BOOL compares truth values (any nonzero byte is
 * true). */
hmrt_status hmrt_equal(int32_t dtype, const void* a, int32_t ra,
                       const int64_t* sa, const void* b, int32_t rb,
                       const int64_t* sb, uint8_t* y, int32_t ry,
                       const int64_t* sy);

/* y = cond ? x : z with three-way broadcasting (ONNX Where); any nonzero
 * cond byte is true.  elem_size bytes per element of x, z and y. */
hmrt_status hmrt_where(const uint8_t* cond, int32_t rc, const int64_t* sc,
                       const void* x, int32_t rx, const int64_t* sx,
                       const void* z, int32_t rz, const int64_t* sz, void* y,
                       int32_t ry, const int64_t* sy, size_t elem_size);

/* Element-type conversion of n elements with ONNX Cast semantics, between
 * any two of the hmrt_dtype values (F32, F64, F16, BF16, I8, I16, I32, I64,
 * U8, U16, U32, U64, BOOL):
 *  - anything -> BOOL is x != 0 (NaN -> 1); BOOL -> anything is 0 or 1 (any
 *    nonzero source byte is true);
 *  - float -> integer truncates toward zero; NaN -> 0 and values outside the
 *    target's range saturate to its min/max (ONNX leaves these undefined);
 *  - integer -> integer wraps (two's complement), as C and numpy;
 *  - integer -> float and F64 -> F32 round to nearest even (F64 -> F32
 *    overflows to +-inf);
 *  - F16 and BF16 -> anything: exactly to float first (every F16 and BF16
 *    value is a float), then as from F32;
 *  - anything -> F16 rounds to nearest even, once (F64 directly, not through
 *    F32), as numpy's astype(float16): magnitudes >= 65520 become +-inf,
 *    results below 2^-14 are subnormal, NaN stays NaN (quiet, sign and top
 *    payload bits kept).  ONNX's test data test_cast_FLOAT_to_FLOAT16 and
 *    test_cast_DOUBLE_to_FLOAT16 follow this rule;
 *  - anything -> BF16 converts to F32 as above, then TRUNCATES (rounds toward
 *    zero: keeps the top 16 bits of the float), NaN stays NaN (quiet bit
 *    set), +-inf stays +-inf.  This follows ONNX 1.12's backend test data
 *    (test_cast_FLOAT_to_BFLOAT16 was generated by truncation, not by
 *    round-to-nearest-even, and differs from it in 5 of its 12 values).
 *    F64 -> BF16 therefore rounds to nearest F32 first (overflow to +-inf).
 * from_dtype == to_dtype is a copy (BOOL to BOOL makes every byte 0 or 1).
 * In place OK (y == x) when both types have the same size; no other
 * overlap. */
hmrt_status hmrt_cast(int32_t from_dtype, const void* x, int32_t to_dtype,
                      void* y, int64_t n);

/* y[i] = x[i] rounded to bfloat16, to nearest with ties to even (NaN stays
 * a quiet NaN), where hmrt_cast truncates as ONNX's tests expect: the
 * rounding of a bf16 GEMM's operands (hmcc --precision bf16, as PyTorch's
 * .to(torch.bfloat16) rounds).  No overlap. */
hmrt_status hmrt_round_bf16(const float* x, uint16_t* y, int64_t n);

/* ---- data movement -------------------------------------------------------- */

/* y[i_0..i_{r-1}] = x[j] with j[perm[k]] = i_k: y's dims[k] = shape[perm[k]].
 * perm must be a permutation of 0..rank-1. */
hmrt_status hmrt_transpose(const void* x, int32_t rank, const int64_t* shape,
                           const int64_t* perm, void* y, size_t elem_size);

/* Strided slice: y[i] = x[starts + i * steps] per dimension, y of out_shape.
 * starts/steps are already clamped by the compiler: steps != 0 (negative
 * walks backwards); for every dim with out_shape[d] > 0, both starts[d] and
 * starts[d] + (out_shape[d]-1)*steps[d] must lie in [0, shape[d]), else
 * HMRT_OUT_OF_RANGE.  A dim with out_shape[d] == 0 ignores its start. */
hmrt_status hmrt_slice(const void* x, int32_t rank, const int64_t* shape,
                       const int64_t* starts, const int64_t* steps,
                       const int64_t* out_shape, void* y, size_t elem_size);
/* Gradient of hmrt_slice: dx (shape of x) is zeroed, then dy (out_shape) is
 * added at the sliced positions (which are distinct, so dx gets dy there). */
hmrt_status hmrt_slice_backward_f32(const float* dy, int32_t rank,
                                    const int64_t* shape,
                                    const int64_t* starts,
                                    const int64_t* steps,
                                    const int64_t* out_shape, float* dx);

/* Concatenate n >= 1 inputs along axis: inputs[i] has out_shape except
 * sizes[i] (>= 0) on the axis; the sizes must sum to out_shape[axis]. */
hmrt_status hmrt_concat(int32_t n, const void* const* inputs,
                        const int64_t* sizes, int32_t rank,
                        const int64_t* out_shape, int32_t axis, void* y,
                        size_t elem_size);

/* ONNX Gather of x (rank >= 1) along axis by n_idx indices (idx of any shape,
 * flattened): y's shape is shape[:axis] + idx.shape + shape[axis+1:].
 * idx_dtype is HMRT_DTYPE_I64 (int64_t) or HMRT_DTYPE_I32 (int32_t).
 * Negative indices count from the end; an index outside [-d, d), d =
 * shape[axis], is HMRT_OUT_OF_RANGE naming the index and its position. */
hmrt_status hmrt_gather(const void* x, int32_t rank, const int64_t* shape,
                        int32_t axis, int32_t idx_dtype, const void* idx,
                        int64_t n_idx, void* y, size_t elem_size);
/* Gradient of hmrt_gather: dx (shape of x) is zeroed (overwritten, not
 * accumulated), then dy's rows are added at their indices.  Repeated indices
 * sum in index order, so the result is the same for any thread count. */
hmrt_status hmrt_gather_backward_f32(const float* dy, int32_t rank,
                                     const int64_t* shape, int32_t axis,
                                     int32_t idx_dtype, const void* idx,
                                     int64_t n_idx, float* dx);

/* Broadcast copy of x to y's shape (ONNX Expand; the compiler passes the
 * broadcast of x's shape and Expand's shape input): sx must broadcast to
 * sy, so rx <= ry. */
hmrt_status hmrt_expand(const void* x, int32_t rx, const int64_t* sx, void* y,
                        int32_t ry, const int64_t* sy, size_t elem_size);

/* Sum of x over its broadcast dimensions so that it has shape sy (the
 * gradient of broadcasting sy to sx): sy must broadcast to sx (ry <= rx).
 * Sums are accumulated in double, in a fixed order, rounded once. */
hmrt_status hmrt_reduce_to_f32(const float* x, int32_t rx, const int64_t* sx,
                               float* y, int32_t ry, const int64_t* sy);

/* ONNX Trilu on the last two dims (rank >= 2), element (i, j) of each matrix:
 * keep it where j - i >= k (upper != 0) or j - i <= k (upper == 0), zero
 * (all-zero bytes) elsewhere.  In place OK (y == x). */
hmrt_status hmrt_trilu(const void* x, int32_t rank, const int64_t* shape,
                       int64_t k, int32_t upper, void* y, size_t elem_size);

/* Fill n elements with the elem_size bytes at value (ConstantOfShape,
 * zeroing). */
hmrt_status hmrt_fill(void* y, int64_t n, const void* value, size_t elem_size);

/* ONNX Range, n = max(ceil((limit - start) / delta), 0) computed by the
 * caller: y[i] = start + i * delta.  f32: computed in double and rounded once
 * (as torch.arange), so no error accumulates along the sequence.  i64:
 * two's complement wrapping. */
hmrt_status hmrt_range_f32(float start, float delta, float* y, int64_t n);
hmrt_status hmrt_range_i64(int64_t start, int64_t delta, int64_t* y,
                           int64_t n);

/* ---- dropout --------------------------------------------------------------
 * Inverted dropout with a counter-based generator, so any element's mask
 * can be recomputed from (seed, counter, i) alone, independently of threads:
 *   sm(s, j) = mix(s + (j + 1) * 0x9E3779B97F4A7C15)   (output j of the
 *              splitmix64 stream seeded with s; mix is splitmix64's
 *              finaliser: z ^= z >> 30; z *= 0xBF58476D1CE4E5B9;
 *              z ^= z >> 27; z *= 0x94D049BB133111EB; z ^= z >> 31)
 *   key     = sm(seed, counter)
 *   u_i     = (sm(key, i) >> 11) * 2^-53          uniform in [0, 1)
 *   keep_i  = u_i >= ratio                          P(keep) = 1 - ratio
 *   y_i     = keep_i ? x_i * scale : 0,  scale = 1/(1-ratio) rounded to float
 *             (as PyTorch and onnxruntime; within 1 ulp of x/(1-ratio)).
 * ratio must be in [0, 1]: 0 gives y = x and mask all 1; 1 gives y = 0 and
 * mask all 0.  Use a new counter (e.g. step * #dropouts + dropout number)
 * for every call.  mask (bool bytes) may be NULL when not needed.
 * In place OK (y == x). */
hmrt_status hmrt_dropout_f32(const float* x, float* y, uint8_t* mask,
                             int64_t n, float ratio, uint64_t seed,
                             uint64_t counter);
/* dx = mask ? dy * scale : 0 with the same scale.  In place OK (dx == dy). */
hmrt_status hmrt_dropout_backward_f32(const float* dy, const uint8_t* mask,
                                      float* dx, int64_t n, float ratio);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HMRT_TENSOR_OPS_H */
