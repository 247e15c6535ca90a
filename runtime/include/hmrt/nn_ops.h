/* hmrt NN ops with ONNX semantics over arbitrary shapes and axes (float32).
 * C API called by the code hmcc generates; see runtime/README.md for the
 * conventions shared with hmrt/kernels.h.
 *
 * Common rules for every function below:
 *  - Tensors are dense and row-major.  A shape is passed as
 *    (int32_t rank, const int64_t* dims) with 0 <= rank <= 8 (a function may
 *    ask for more, e.g. matmul operands have rank >= 1); dims may be NULL
 *    when rank == 0; every dim must be >= 0.  Anything else, or a size whose
 *    element count overflows int64_t, is HMRT_INVALID_ARGUMENT.
 *  - An axis may be negative (counted from the end, as in ONNX):
 *    axis in [-rank, rank).
 *  - Pointers may be NULL only when the matching element count is 0 or the
 *    argument is documented as nullable.
 *  - Outputs are OVERWRITTEN (never accumulated), including the parameter
 *    gradients dscale and dbias.  Outputs must not overlap inputs unless
 *    "in place OK" is stated.
 *  - Results do not depend on the number of threads (hmrt_set_num_threads):
 *    every reduction has a fixed order chosen from the shapes alone.
 *  - Every argument is checked before anything is written, so a failing
 *    call leaves its outputs untouched.
 */
#ifndef HMRT_NN_OPS_H
#define HMRT_NN_OPS_H

#include "hmrt/hmrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest rank accepted by the functions of this header. */
#define HMRT_MAX_RANK 8

/* ---- MatMul (numpy.matmul / ONNX MatMul) -------------------------------------
 * a: [..., M, K], or [K] (a row vector: M = 1 and the M dim is dropped from
 * the result).  b: [..., K, N], or [K] (a column vector: N = 1, dropped).
 * trans_a / trans_b != 0 transpose the last two dims of a / b before the
 * product, i.e. a is stored [..., K, M] / b is stored [..., N, K]; they are
 * ignored for 1-D operands.  The batch dims (all but the last two) broadcast
 * numpy-style after right alignment.  y has the result shape
 * broadcast(batch_a, batch_b) + [M] (unless a is 1-D) + [N] (unless b is
 * 1-D), which is passed and must match exactly (rank 0 for vector . vector).
 * K == 0 gives zeros.  Runs on hmrt_sgemm_strided_batched over the longest
 * run of trailing batch dims whose batch strides are uniform. */
hmrt_status hmrt_matmul_f32(const float* a, int32_t ra, const int64_t* sa,
                            int32_t trans_a, const float* b, int32_t rb,
                            const int64_t* sb, int32_t trans_b, float* y,
                            int32_t ry, const int64_t* sy);

/* ---- Gemm (ONNX Gemm) ---------------------------------------------------------
 * y[M,N] = alpha * op(A) * op(B) + beta * C.  A is stored [M,K] ([K,M] when
 * trans_a != 0), B is stored [K,N] ([N,K] when trans_b != 0).  C (nullable;
 * rc and sc are then ignored) has rank rc <= 2 and is unidirectionally
 * broadcast to [M,N]: right-aligned, each of its dims equal to the target's
 * or 1 (so [], [N], [1], [M,N], [M,1], [1,N], [1,1]).  With beta == 0 or
 * c == NULL, C is not read (a NaN in C does not propagate, as in BLAS).
 * c may equal y when C has shape [M,N]. */
hmrt_status hmrt_gemm_f32(const float* a, const float* b, const float* c,
                          int32_t rc, const int64_t* sc, int64_t m, int64_t n,
                          int64_t k, int32_t trans_a, int32_t trans_b,
                          float alpha, float beta, float* y);

/* ---- MatMul and Gemm with bfloat16 products ----------------------------------------
 * hmrt_matmul_f32 and hmrt_gemm_f32 (same arguments, checks and results'
 * layout) multiplying bf16 values: the products are exact in fp32, the sums
 * run in fp32 and the result is fp32, as on a GPU's bf16 tensor cores
 * (hmcc --precision bf16).  The _f32_bf16 kernels round fp32 A and B to
 * bf16 (nearest even) first; the _bf16 kernels take A and B as bfloat16
 * bit patterns (HMRT_DTYPE_BF16; hmrt_round_bf16 rounds them so), with the
 * same results for the same values.  C, alpha and beta stay fp32. */
hmrt_status hmrt_matmul_f32_bf16(const float* a, int32_t ra, const int64_t* sa,
                                 int32_t trans_a, const float* b, int32_t rb,
                                 const int64_t* sb, int32_t trans_b, float* y,
                                 int32_t ry, const int64_t* sy);
hmrt_status hmrt_gemm_f32_bf16(const float* a, const float* b, const float* c,
                               int32_t rc, const int64_t* sc, int64_t m, int64_t n,
                               int64_t k, int32_t trans_a, int32_t trans_b,
                               float alpha, float beta, float* y);
hmrt_status hmrt_matmul_bf16(const uint16_t* a, int32_t ra, const int64_t* sa,
                             int32_t trans_a, const uint16_t* b, int32_t rb,
                             const int64_t* sb, int32_t trans_b, float* y, int32_t ry,
                             const int64_t* sy);
hmrt_status hmrt_gemm_bf16(const uint16_t* a, const uint16_t* b, const float* c, int32_t rc,
                           const int64_t* sc, int64_t m, int64_t n, int64_t k,
                           int32_t trans_a, int32_t trans_b, float alpha, float beta,
                           float* y);
/* One operand of each: with a_bf16, A is bf16 bit patterns and B fp32,
 * else A is fp32 and B bf16; the fp32 one is rounded to bf16 (nearest even)
 * first, so the results are those of the _bf16 kernels on the rounded
 * operand (and of the _f32_bf16 ones on the widened bf16 one). */
hmrt_status hmrt_matmul_mixed_bf16(const void* a, int32_t a_bf16, int32_t ra, const int64_t* sa,
                                   int32_t trans_a, const void* b, int32_t rb,
                                   const int64_t* sb, int32_t trans_b, float* y, int32_t ry,
                                   const int64_t* sy);
hmrt_status hmrt_gemm_mixed_bf16(const void* a, int32_t a_bf16, const void* b, const float* c,
                                 int32_t rc, const int64_t* sc, int64_t m, int64_t n, int64_t k,
                                 int32_t trans_a, int32_t trans_b, float alpha, float beta,
                                 float* y);

/* ---- ReduceSum / ReduceMean / ReduceMax ---------------------------------------- */
typedef enum hmrt_reduce_op {
  HMRT_REDUCE_SUM = 0,
  HMRT_REDUCE_MEAN = 1,
  HMRT_REDUCE_MAX = 2
} hmrt_reduce_op;

/* Reduces x over the axes d with reduce_axis[d] != 0 (an array of rank
 * bytes; NULL only when rank == 0).  y holds the kept dims in their order,
 * prod(shape[d] for kept d) elements; keepdims does not change the memory
 * layout, so the caller's choice of y's shape does not matter here.  Sums are
 * accumulated in double.  Over an empty set (a reduced dim of size 0) sum
 * gives 0, mean NaN (0/0) and max -inf (ONNX).  Max propagates NaN: a group
 * holding a NaN reduces to NaN.  No reduced axis copies x into y. */
hmrt_status hmrt_reduce_f32(hmrt_reduce_op op, const float* x, int32_t rank,
                            const int64_t* shape, const uint8_t* reduce_axis,
                            float* y);

/* Gradient of HMRT_REDUCE_MAX.  y is the forward result and dy its gradient
 * (both in y's layout above); dx has x's shape:
 *   dx[i] = dy[g(i)] if x[i] == y[g(i)] else 0,  g(i) the group of i.
 * Ties: EVERY position equal to the max gets the full dy (the gradient is
 * not split between them, unlike torch.amax; this is the subgradient ONNX
 * graphs built from Equal/Where masks compute).  When y[g] is NaN the NaN
 * positions of the group get dy. */
hmrt_status hmrt_reduce_max_backward_f32(const float* x, const float* y,
                                         const float* dy, int32_t rank,
                                         const int64_t* shape,
                                         const uint8_t* reduce_axis,
                                         float* dx);

/* ---- Softmax / LogSoftmax (ONNX opset >= 13) ------------------------------------
 * Along one axis of x (rank >= 1), numerically stable (the max along the
 * axis is subtracted first).  log != 0 selects log-softmax.  Backward takes
 * the forward OUTPUT y:
 *   softmax:     dx = y * (dy - sum_axis(dy * y))
 *   log-softmax: dx = dy - exp(y) * sum_axis(dy)
 * Forward in place OK (y == x), backward in place OK (dx == dy).  For the
 * last axis these are hmrt_softmax_forward and friends. */
hmrt_status hmrt_softmax_axis_f32(const float* x, int32_t rank,
                                  const int64_t* shape, int32_t axis,
                                  int32_t log, float* y);
hmrt_status hmrt_softmax_axis_backward_f32(const float* y, const float* dy,
                                           int32_t rank, const int64_t* shape,
                                           int32_t axis, int32_t log,
                                           float* dx);

/* ---- LayerNormalization (ONNX opset 17) ----------------------------------------
 * Normalises x over dims axis..rank-1 (cols = prod(shape[axis:]) >= 1 when
 * x is not empty): for each of outer = prod(shape[:axis]) groups,
 *   y = (x - mean) * rstd * scale + bias,  rstd = 1/sqrt(var + eps),
 * var the biased variance.  scale and bias have shape[axis:] (cols elements;
 * broadcasting them is the caller's job); scale NULL means 1, bias NULL
 * means 0.  mean and rstd (nullable outputs) get outer elements (ONNX's Mean
 * and InvStdDev, shape[:axis] + [1]*(rank-axis)).  This is
 * hmrt_layernorm_forward on (outer, cols). */
hmrt_status hmrt_layer_norm_f32(const float* x, int32_t rank,
                                const int64_t* shape, int32_t axis,
                                const float* scale, const float* bias,
                                float eps, float* y, float* mean, float* rstd);

/* hmrt_layer_norm_f32 with y in bfloat16 bit patterns: each element computed
 * in fp32 as hmrt_layer_norm_f32 computes it, then rounded to nearest even
 * as hmrt_round_bf16 rounds it; mean and rstd stay fp32. */
hmrt_status hmrt_layer_norm_f32_to_bf16(const float* x, int32_t rank,
                                        const int64_t* shape, int32_t axis,
                                        const float* scale, const float* bias,
                                        float eps, uint16_t* y, float* mean,
                                        float* rstd);

/* Gradients of hmrt_layer_norm_f32 from the mean and rstd it saved: dx
 * (required), dscale and dbias (nullable; cols elements, OVERWRITTEN, not
 * accumulated, unlike hmrt_layernorm_backward).  scale NULL means 1. */
hmrt_status hmrt_layer_norm_backward_f32(const float* dy, const float* x,
                                         int32_t rank, const int64_t* shape,
                                         int32_t axis, const float* scale,
                                         const float* mean, const float* rstd,
                                         float* dx, float* dscale,
                                         float* dbias);

/* ---- SoftmaxCrossEntropyLoss (ONNX opset >= 13) ----------------------------------- */
typedef enum hmrt_loss_reduction {
  HMRT_LOSS_MEAN = 0,
  HMRT_LOSS_SUM = 1,
  HMRT_LOSS_NONE = 2
} hmrt_loss_reduction;

/* scores: [N, C, d1, ..., dk] (rank >= 2; the CLASS DIM IS 1, as in ONNX and
 * torch, not the last one); labels: [N, d1, ..., dk] int64, E = N*d1*...*dk
 * elements; weights: [C] (nullable, means all 1).  For element e = (n, d),
 *   l[e] = -w[labels[e]] * log_softmax(scores[n, :, d])[labels[e]],
 * and 0 where has_ignore != 0 and labels[e] == ignore_index (ignore_index may
 * be any value, also one in [0, C)).  Every other label must lie in [0, C),
 * else HMRT_OUT_OF_RANGE (checked before anything is written).
 *   HMRT_LOSS_MEAN: loss[0] = sum(l) / sum of w[labels[e]] over counted e
 *                   (their count when weights == NULL); NaN when that is 0.
 *   HMRT_LOSS_SUM:  loss[0] = sum(l).
 *   HMRT_LOSS_NONE: loss[e] = l[e], E elements in labels' layout.
 * The sums are taken in double in a fixed order.  log_prob (nullable)
 * receives log_softmax(scores) along dim 1 in scores' layout.  C must be >= 1
 * when E > 0. */
hmrt_status hmrt_sce_loss_f32(const float* scores, int32_t rank,
                              const int64_t* shape, const int64_t* labels,
                              const float* weights,
                              hmrt_loss_reduction reduction,
                              int32_t has_ignore, int64_t ignore_index,
                              float* loss, float* log_prob);

/* Gradient of hmrt_sce_loss_f32 with respect to scores, given dloss (1
 * element for mean/sum, E for none; entries at ignored labels are not read):
 *   dscores[n, c, d] = k[e] * (softmax(scores[n, :, d])[c] - (c == labels[e]))
 * with k[e] = w[labels[e]] * (dloss[0] / denominator of the mean | dloss[0] |
 * dloss[e]), and 0 for ignored elements.  When the mean's denominator is 0
 * every gradient is 0 (as hmrt_cross_entropy_backward).  In place OK
 * (dscores == scores). */
hmrt_status hmrt_sce_loss_backward_f32(const float* scores, int32_t rank,
                                       const int64_t* shape,
                                       const int64_t* labels,
                                       const float* weights,
                                       hmrt_loss_reduction reduction,
                                       int32_t has_ignore, int64_t ignore_index,
                                       const float* dloss, float* dscores);

/* hmrt_sce_loss_backward_f32 with dscores in bfloat16 bit patterns: each
 * element computed in fp32 as hmrt_sce_loss_backward_f32 computes it, then
 * rounded to nearest even as hmrt_round_bf16 rounds it.  Not in place. */
hmrt_status hmrt_sce_loss_backward_f32_to_bf16(const float* scores, int32_t rank,
                                               const int64_t* shape,
                                               const int64_t* labels,
                                               const float* weights,
                                               hmrt_loss_reduction reduction,
                                               int32_t has_ignore,
                                               int64_t ignore_index,
                                               const float* dloss,
                                               uint16_t* dscores);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HMRT_NN_OPS_H */
