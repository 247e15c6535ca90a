/* hmrt CPU kernels (float32).  C API; see runtime/README.md for conventions.
 *
 * Common rules for every function below:
 *  - All tensors are dense and row-major (C order, last index fastest) unless
 *    a leading dimension or stride is passed explicitly.
 *  - Sizes are int64_t and must be >= 0 (else HMRT_INVALID_ARGUMENT); a zero
 *    size is a no-op that still writes defined outputs (e.g. a loss of NaN for
 *    zero counted rows, as PyTorch).  Pointers may be NULL only when the
 *    matching size is 0 or the argument is documented as optional.
 *  - Outputs must not overlap inputs unless "in place OK" is stated.
 *  - Activation gradients (dx, dq, dlogits, ...) are OVERWRITTEN.  Parameter
 *    gradients (dweight, dbias, embedding dweight) are ACCUMULATED (+=), so
 *    tied or micro-batched parameters need no extra add; zero them first.
 *  - Reductions have a fixed order that does not depend on the thread count:
 *    results are bitwise identical for any hmrt_set_num_threads value.
 */
#ifndef HMRT_KERNELS_H
#define HMRT_KERNELS_H

#include "hmrt/hmrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- GEMM (cpu/gemm.cpp) ----------------------------------------------------
 * C = alpha * op(A) * op(B) + beta * C, op(A) is m x k, op(B) is k x n,
 * C is m x n with row stride ldc >= n.
 * trans_a == 0: A is stored m x k, lda >= k; trans_a != 0: A is stored k x m
 * (op(A) = A^T), lda >= m.  Likewise B: k x n with ldb >= n, or n x k with
 * ldb >= k when trans_b != 0.  With beta == 0, C is not read (NaN in C does
 * not propagate), as in BLAS. */
/* Which GEMM the runtime was built with: "openblas" (cblas_sgemm; its
 * results are reproducible for a fixed thread count but may differ in the
 * last bits between thread counts) or "hmrt" (the runtime's own blocked
 * kernels, bitwise identical for any thread count). */
const char* hmrt_gemm_backend(void);

hmrt_status hmrt_sgemm(int trans_a, int trans_b, int64_t m, int64_t n,
                       int64_t k, float alpha, const float* a, int64_t lda,
                       const float* b, int64_t ldb, float beta, float* c,
                       int64_t ldc);

/* batch_count independent GEMMs; matrix i uses a + i*stride_a, b + i*stride_b,
 * c + i*stride_c (strides in elements; stride_a or stride_b may be 0 to
 * broadcast one operand).  C matrices must not overlap. */
hmrt_status hmrt_sgemm_strided_batched(int trans_a, int trans_b, int64_t m,
                                       int64_t n, int64_t k, float alpha,
                                       const float* a, int64_t lda,
                                       int64_t stride_a, const float* b,
                                       int64_t ldb, int64_t stride_b,
                                       float beta, float* c, int64_t ldc,
                                       int64_t stride_c, int64_t batch_count);

/* ---- elementwise (cpu/elementwise.cpp) ---------------------------------------
 * n elements; forward in place OK (y == x), backward in place OK (dx == dy).
 * GELU is the exact form 0.5*x*(1+erf(x/sqrt(2))) (PyTorch approximate='none').
 * SiLU is x*sigmoid(x).  ReLU backward passes dy where x > 0. */
hmrt_status hmrt_gelu_forward(const float* x, float* y, int64_t n);
hmrt_status hmrt_gelu_backward(const float* x, const float* dy, float* dx,
                               int64_t n);
hmrt_status hmrt_silu_forward(const float* x, float* y, int64_t n);
hmrt_status hmrt_silu_backward(const float* x, const float* dy, float* dx,
                               int64_t n);
hmrt_status hmrt_relu_forward(const float* x, float* y, int64_t n);
hmrt_status hmrt_relu_backward(const float* x, const float* dy, float* dx,
                               int64_t n);

/* ---- normalisation (cpu/norm.cpp) --------------------------------------------
 * x, y, dy, dx: (rows, cols); weight, bias, dweight, dbias: (cols);
 * mean, rstd: (rows).  Normalisation is over the last axis (cols >= 1).
 * LayerNorm: y = (x - mean) * rstd * weight + bias, rstd = 1/sqrt(var + eps),
 *   var the biased variance (PyTorch LayerNorm).
 * RMSNorm:   y = x * rstd * weight, rstd = 1/sqrt(mean(x^2) + eps).
 * Optional (may be NULL): weight (means 1), bias (means 0), mean and rstd in
 * forward (not saved), dweight and dbias in backward (not computed).
 * Backward needs the mean/rstd saved by forward.  dweight/dbias accumulate. */
hmrt_status hmrt_layernorm_forward(const float* x, const float* weight,
                                   const float* bias, float* y, float* mean,
                                   float* rstd, int64_t rows, int64_t cols,
                                   float eps);
hmrt_status hmrt_layernorm_backward(const float* dy, const float* x,
                                    const float* weight, const float* mean,
                                    const float* rstd, float* dx,
                                    float* dweight, float* dbias, int64_t rows,
                                    int64_t cols);
hmrt_status hmrt_rmsnorm_forward(const float* x, const float* weight, float* y,
                                 float* rstd, int64_t rows, int64_t cols,
                                 float eps);
hmrt_status hmrt_rmsnorm_backward(const float* dy, const float* x,
                                  const float* weight, const float* rstd,
                                  float* dx, float* dweight, int64_t rows,
                                  int64_t cols);

/* ---- softmax (cpu/softmax.cpp) -------------------------------------------------
 * Along the last axis of (rows, cols), cols >= 1 when rows > 0.  Backward
 * takes the forward OUTPUT y.  Forward in place OK (y == x), backward in
 * place OK (dx == dy).
 * softmax:     dx = y * (dy - sum(dy * y))
 * log_softmax: dx = dy - exp(y) * sum(dy) */
hmrt_status hmrt_softmax_forward(const float* x, float* y, int64_t rows,
                                 int64_t cols);
hmrt_status hmrt_softmax_backward(const float* y, const float* dy, float* dx,
                                  int64_t rows, int64_t cols);
hmrt_status hmrt_log_softmax_forward(const float* x, float* y, int64_t rows,
                                     int64_t cols);
hmrt_status hmrt_log_softmax_backward(const float* y, const float* dy,
                                      float* dx, int64_t rows, int64_t cols);

/* ---- scaled-dot-product attention (cpu/attention.cpp) ----------------------
 * q, out, dout, dq: (batch, heads, q_len, head_dim); k, v, dk, dv:
 *   (batch, kv_heads, kv_len, head_dim).  Query head h reads kv head
 *   h / (heads / kv_heads) (grouped heads: heads a multiple of kv_heads);
 *   dk and dv sum over the query heads of their group.
 * Scores s_ij = scale * q_i.k_j + bias[b, h, i, j]; bias is NULL or an
 *   additive float mask (-inf masks) whose 4 dims bias_dims are each 1
 *   (broadcast) or the full (batch, heads, q_len, kv_len) one.
 * flags: HMRT_ATTENTION_CAUSAL also masks every key j > i (then
 *   q_len == kv_len); HMRT_ATTENTION_BTHD lays q, out, dout, dq out as
 *   (batch, q_len, heads, head_dim) and k, v, dk, dv as (batch, kv_len,
 *   kv_heads, head_dim) instead; HMRT_ATTENTION_PACKED (with BTHD, q_len ==
 *   kv_len) reads q, k and v from one (batch, seq, heads + 2 kv_heads,
 *   head_dim) tensor, as one projection makes them, and writes dq, dk, dv
 *   into one such tensor: q's heads first, then k's, then v's (k must be
 *   q + heads * head_dim and v k + kv_heads * head_dim, and likewise dk and
 *   dv), rows (heads + 2 kv_heads) * head_dim apart, while out and dout
 *   stay (batch, q_len, heads, head_dim); HMRT_ATTENTION_BF16 makes every product
 *   one of bf16 values summed in fp32, as a GPU's tensor cores do: q, k, v
 *   and dout are rounded to bf16 (nearest even) where they are multiplied,
 *   the probabilities are rounded after their row sums are taken (and
 *   after the dropout) and before they weigh v or dout, and the scores'
 *   gradient dS before it multiplies k or q; the sums, the softmax,
 *   rowsum(dout * out), lse and the results stay fp32.
 * out[i] = sum_j softmax_j(s_ij) v[j]; a row with every key masked is NaN.
 * dropout > 0 drops the probabilities as hmrt_dropout_f32(ratio = dropout,
 *   seed, counter) would the (batch, heads, q_len, kv_len) tensor of them
 *   (kept ones scaled by 1/(1 - dropout)); the backward draws the same mask
 *   from the same arguments.
 * lse: (batch, heads, q_len), the log-sum-exp of each row of the masked
 *   scores, saved by forward (may be NULL there) and required by backward,
 *   which recomputes the probabilities from it instead of storing
 *   (q_len x kv_len) per head.
 * scale is usually 1/sqrt(head_dim). */
#define HMRT_ATTENTION_CAUSAL 1
#define HMRT_ATTENTION_BTHD 2
#define HMRT_ATTENTION_BF16 4
#define HMRT_ATTENTION_PACKED 8
hmrt_status hmrt_attention_forward(const float* q, const float* k,
                                   const float* v, const float* bias,
                                   const int64_t* bias_dims, float* out,
                                   float* lse, int64_t batch, int64_t heads,
                                   int64_t kv_heads, int64_t q_len,
                                   int64_t kv_len, int64_t head_dim,
                                   float scale, int32_t flags, float dropout,
                                   uint64_t seed, uint64_t counter);
hmrt_status hmrt_attention_backward(
    const float* q, const float* k, const float* v, const float* bias,
    const int64_t* bias_dims, const float* out, const float* lse,
    const float* dout, float* dq, float* dk, float* dv, int64_t batch,
    int64_t heads, int64_t kv_heads, int64_t q_len, int64_t kv_len,
    int64_t head_dim, float scale, int32_t flags, float dropout, uint64_t seed,
    uint64_t counter);

/* ---- rotary position embedding (cpu/rope.cpp) ----------------------------------
 * x, y, dy, dx: (outer, seq, head_dim), e.g. (batch*heads, seq, head_dim) for
 * the (B, H, T, D) layout.  cos, sin: (seq, rot_dim), row t for position t,
 * as HF Llama/GPT-NeoX build them (cat(freqs, freqs)).  rot_dim is even and
 * <= head_dim; dims >= rot_dim pass through unchanged (partial rotary).
 * On the first rot_dim dims, with h = rot_dim/2, x1 = x[:h], x2 = x[h:]:
 *   y = x * cos + rotate_half(x) * sin,   rotate_half(x) = cat(-x2, x1).
 * Backward: dx = dy * cos + rotate_half^T(dy * sin), rotate_half^T(z) =
 * cat(z2, -z1).  In place OK (y == x, dx == dy). */
hmrt_status hmrt_rope_forward(const float* x, const float* cos,
                              const float* sin, float* y, int64_t outer,
                              int64_t seq, int64_t head_dim, int64_t rot_dim);
hmrt_status hmrt_rope_backward(const float* dy, const float* cos,
                               const float* sin, float* dx, int64_t outer,
                               int64_t seq, int64_t head_dim, int64_t rot_dim);

/* ---- embedding (cpu/embedding.cpp) ---------------------------------------------
 * ids: (n) int64; weight, dweight: (vocab, dim); out, dout: (n, dim).
 * Any id outside [0, vocab) is HMRT_OUT_OF_RANGE, checked before anything is
 * written.  Backward accumulates dweight[ids[i]] += dout[i] in order of i
 * (deterministic; repeated ids are summed in order). */
hmrt_status hmrt_embedding_forward(const int64_t* ids, const float* weight,
                                   float* out, int64_t n, int64_t vocab,
                                   int64_t dim);
hmrt_status hmrt_embedding_backward(const int64_t* ids, const float* dout,
                                    float* dweight, int64_t n, int64_t vocab,
                                    int64_t dim);

/* ---- softmax cross-entropy, mean reduction (cpu/loss.cpp) ----------------------
 * logits, dlogits: (rows, classes); targets: (rows) int64; lse: (rows).
 * Rows whose target equals ignore_index (PyTorch default -100) do not count;
 * every other target must lie in [0, classes) (else HMRT_OUT_OF_RANGE).
 * loss[0] = mean over counted rows of (lse - logits[target]); NaN if no row
 * counts (as PyTorch).  lse is optional in forward (saved if non-NULL) and in
 * backward (recomputed if NULL).  dloss points at the scalar upstream
 * gradient.  dlogits = dloss/count * (softmax(logits) - onehot(target)), zero
 * rows for ignored targets.  Backward in place OK (dlogits == logits). */
hmrt_status hmrt_cross_entropy_forward(const float* logits,
                                       const int64_t* targets, float* loss,
                                       float* lse, int64_t rows,
                                       int64_t classes, int64_t ignore_index);
hmrt_status hmrt_cross_entropy_backward(const float* logits,
                                        const int64_t* targets,
                                        const float* lse, const float* dloss,
                                        float* dlogits, int64_t rows,
                                        int64_t classes, int64_t ignore_index);

/* ---- optimizers (cpu/optim.cpp) ------------------------------------------------
 * All buffers have n elements and are updated in place.  Scalar
 * hyper-parameters are doubles, combined in double as Python does before the
 * per-element float arithmetic.
 *
 * AdamW, torch.optim.AdamW(foreach=False, amsgrad=False) semantics; step is
 * the 1-based step number of this update:
 *   p *= 1 - lr*wd;  m = beta1*m + (1-beta1)*g;  v = beta2*v + (1-beta2)*g*g
 *   p -= lr/(1-beta1^step) * m / (sqrt(v)/sqrt(1-beta2^step) + eps) */
hmrt_status hmrt_adamw_step(float* param, const float* grad, float* exp_avg,
                            float* exp_avg_sq, int64_t n, double lr,
                            double beta1, double beta2, double eps,
                            double weight_decay, int64_t step);

/* SGD, torch.optim.SGD semantics:
 *   d = g + wd*p;  if momentum != 0: buf = first_step ? d
 *   : momentum*buf + (1-dampening)*d;  d = nesterov ? d + momentum*buf : buf
 *   p -= lr*d.
 * momentum_buf may be NULL when momentum == 0. */
hmrt_status hmrt_sgd_step(float* param, const float* grad,
                          float* momentum_buf, int64_t n, double lr,
                          double momentum, double dampening,
                          double weight_decay, int nesterov, int first_step);

/* ONNX's ai.onnx.preview.training optimizers, as the operator schemas define
 * them (they differ from PyTorch's).  Out of place: x, g and the states are
 * read, x_new and the new states written (each may be the same buffer as the
 * input it replaces).  r is the learning rate R, t the update count T (0 on
 * the first update); scalars are combined in double, elements in float.
 *   g' = norm_coefficient*x + g
 * Adagrad:  h' = h + g'^2;  x' = x - r/(1 + t*decay_factor) * g'/(sqrt(h') + epsilon)
 * Momentum: v' = alpha*v + (t > 0 ? beta : 1)*g';
 *           x' = x - r*v' (standard) or x - r*(g' + alpha*v') (nesterov)
 * Adam:     v' = alpha*v + (1-alpha)*g';  h' = beta*h + (1-beta)*g'^2;
 *           r' = t > 0 ? r*sqrt(1 - beta^t)/(1 - alpha^t) : r;
 *           x' = (1 - norm_coefficient_post) * (x - r'*v'/(sqrt(h') + epsilon)) */
hmrt_status hmrt_onnx_adagrad(const float* x, const float* g, const float* h,
                              float* x_new, float* h_new, int64_t n, double r,
                              int64_t t, double norm_coefficient,
                              double decay_factor, double epsilon);
hmrt_status hmrt_onnx_momentum(const float* x, const float* g, const float* v,
                               float* x_new, float* v_new, int64_t n, double r,
                               int64_t t, double norm_coefficient, double alpha,
                               double beta, int nesterov);
hmrt_status hmrt_onnx_adam(const float* x, const float* g, const float* v,
                           const float* h, float* x_new, float* v_new,
                           float* h_new, int64_t n, double r, int64_t t,
                           double norm_coefficient, double norm_coefficient_post,
                           double alpha, double beta, double epsilon);

/* ---- block-wise 8-bit states (cpu/quant8.cpp) ----------------------------------
 * A tensor of n floats is stored as n uint8 codes plus ceil(n/256) float
 * absmax values: block b covers elements [256b, 256b+256) (the last block may
 * be short); value = map[code] * absmax[b].  Shards of a tensor must start at
 * multiples of 256 to keep blocks intact.  All-zero bytes (codes and absmax)
 * is a valid all-zero state.  Quantisation picks the nearest map entry
 * (binary search; ties go to the larger entry). */
#define HMRT_QUANT_BLOCK 256

/* The 256-entry dynamic (tree) quantisation maps, sorted ascending, built as
 * bitsandbytes' create_dynamic_map(signed, max_exponent_bits=7, total_bits=8):
 * for e = 0..6 the midpoints of an even split of [0.1, 1] into 2^e (signed) or
 * 2^(e+1) (unsigned) intervals, scaled by 10^(e-6); the signed map adds their
 * negatives; both add 0 and 1.  Signed: [-0.99297, 1]; unsigned: [0, 1]. */
void hmrt_dynamic_map(int is_signed, float map[256]);

hmrt_status hmrt_quantize_blockwise(const float* x, int64_t n, int is_signed,
                                    uint8_t* codes, float* absmax);
hmrt_status hmrt_dequantize_blockwise(const uint8_t* codes,
                                      const float* absmax, int64_t n,
                                      int is_signed, float* x);

/* 8-bit AdamW (bitsandbytes AdamW8bit, block-wise): the first moment is
 * stored with the signed map, the second with the unsigned map.  Per block:
 * dequantize m and v, apply the fp32 AdamW update above (the parameter update
 * uses the unquantised new m and v), then requantize m and v with fresh
 * absmax values. */
hmrt_status hmrt_adamw8bit_step(float* param, const float* grad,
                                uint8_t* exp_avg_codes, float* exp_avg_absmax,
                                uint8_t* exp_avg_sq_codes,
                                float* exp_avg_sq_absmax, int64_t n, double lr,
                                double beta1, double beta2, double eps,
                                double weight_decay, int64_t step);

/* ---- gradient norm and clipping (cpu/gradnorm.cpp) ----------------------------
 * hmrt_sum_of_squares: *out = sum x[i]^2 accumulated in double.  Callers that
 * see a tensor in chunks add the partial sums in a fixed order.
 * hmrt_add_sum_of_squares: *out = (acc ? *acc : 0) + the sum of squares of
 *   x (hmrt_sum_of_squares'), a running sum over tensors.
 * hmrt_global_norm: *out = sqrt(sum over buffers of their sums of squares).
 * hmrt_norm_of_sum: *out = sqrt(*sum), rounded to float: of the last
 *   running sum over the buffers in order, hmrt_global_norm's bits.
 * hmrt_clip_coefficient: *coef = min(1, max_norm / (total_norm + 1e-6)), the
 *   factor torch.nn.utils.clip_grad_norm_ multiplies every gradient by.
 * hmrt_scale: x *= s. */
hmrt_status hmrt_sum_of_squares(const float* x, int64_t n, double* out);
hmrt_status hmrt_add_sum_of_squares(const float* x, int64_t n,
                                    const double* acc, double* out);
hmrt_status hmrt_global_norm(const float* const* buffers, const int64_t* sizes,
                             int64_t count, float* out);
hmrt_status hmrt_norm_of_sum(const double* sum, float* out);
hmrt_status hmrt_clip_coefficient(float total_norm, float max_norm,
                                  float* coef);
hmrt_status hmrt_scale(float* x, int64_t n, float s);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HMRT_KERNELS_H */
