/* hmrt/kernel_table.h: the kernels of a device backend (hmrt/device.h), as
 * one table of function pointers per backend (hmrt_device_kernels).
 *
 * Each entry has the signature and semantics of the C function named in its
 * comment (hmrt/kernels.h, hmrt/tensor_ops.h, hmrt/nn_ops.h); pointer
 * arguments to tensor data are addresses in the backend's device tier, as
 * hmrt_buffer_device_ptr and hmrt_exec_base(x, HMRT_TIER_DEVICE) give them
 * (the CPU backend: host pointers), and arrays of shapes, sizes and pointers
 * are host memory.  The CPU backend fills the table with the runtime's CPU
 * kernels; another backend leaves NULL what it does not have yet.
 *
 * Generated programs call every kernel on device memory through the table of
 * the device they run on, after checking at entry that the entries they call
 * are there (hmrt_kernel_missing otherwise); host optimizer updates call the
 * CPU kernels directly.  The driver and the checkpoint code run no kernel on
 * device memory: they reach it with the device interface's copies and memset.
 *
 * `size` is sizeof(hmrt_kernels) of the runtime that filled it: entries are
 * only ever added at the end. */
#ifndef HMRT_KERNEL_TABLE_H
#define HMRT_KERNEL_TABLE_H

#include "hmrt/device.h"
#include "hmrt/hmrt.h"
#include "hmrt/kernels.h"
#include "hmrt/nn_ops.h"
#include "hmrt/tensor_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hmrt_kernels {
  uint32_t size;
  const char* backend;
  /* hmrt_sgemm */
  hmrt_status (*sgemm)(int trans_a, int trans_b, int64_t m, int64_t n,
                       int64_t k, float alpha, const float* a, int64_t lda,
                       const float* b, int64_t ldb, float beta, float* c,
                       int64_t ldc);
  /* hmrt_sgemm_strided_batched */
  hmrt_status (*sgemm_strided_batched)(
      int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
      const float* a, int64_t lda, int64_t stride_a, const float* b,
      int64_t ldb, int64_t stride_b, float beta, float* c, int64_t ldc,
      int64_t stride_c, int64_t batch_count);
  /* hmrt_cast */
  hmrt_status (*cast)(int32_t from_dtype, const void* x, int32_t to_dtype,
                      void* y, int64_t n);
  /* hmrt_fill */
  hmrt_status (*fill)(void* y, int64_t n, const void* value, size_t elem_size);
  /* hmrt_global_norm */
  hmrt_status (*global_norm)(const float* const* buffers, const int64_t* sizes,
                             int64_t count, float* out);
  /* hmrt_scale */
  hmrt_status (*scale)(float* x, int64_t n, float s);
  /* hmrt_adamw_step */
  hmrt_status (*adamw_step)(float* param, const float* grad, float* exp_avg,
                            float* exp_avg_sq, int64_t n, double lr,
                            double beta1, double beta2, double eps,
                            double weight_decay, int64_t step);
  /* hmrt_sgd_step */
  hmrt_status (*sgd_step)(float* param, const float* grad,
                          float* momentum_buf, int64_t n, double lr,
                          double momentum, double dampening,
                          double weight_decay, int nesterov, int first_step);
  /* After sgd_step: every other kernel generated programs call on device
   * memory. */
  /* hmrt_adamw8bit_step */
  hmrt_status (*adamw8bit_step)(float* param, const float* grad, uint8_t* exp_avg_codes, float* exp_avg_absmax, uint8_t* exp_avg_sq_codes, float* exp_avg_sq_absmax, int64_t n, double lr, double beta1, double beta2, double eps, double weight_decay, int64_t step);
  /* hmrt_attention_forward */
  hmrt_status (*attention_forward)(const float* q, const float* k, const float* v, const float* bias, const int64_t* bias_dims, float* out, float* lse, int64_t batch, int64_t heads, int64_t kv_heads, int64_t q_len, int64_t kv_len, int64_t head_dim, float scale, int32_t flags, float dropout, uint64_t seed, uint64_t counter);
  /* hmrt_attention_backward */
  hmrt_status (*attention_backward)(const float* q, const float* k, const float* v, const float* bias, const int64_t* bias_dims, const float* out, const float* lse, const float* dout, float* dq, float* dk, float* dv, int64_t batch, int64_t heads, int64_t kv_heads, int64_t q_len, int64_t kv_len, int64_t head_dim, float scale, int32_t flags, float dropout, uint64_t seed, uint64_t counter);
  /* hmrt_binary_f32 */
  hmrt_status (*binary_f32)(hmrt_binary_op op, const float* a, int32_t ra, const int64_t* sa, const float* b, int32_t rb, const int64_t* sb, float* y, int32_t ry, const int64_t* sy);
  /* hmrt_binary_i64 */
  hmrt_status (*binary_i64)(hmrt_binary_op op, const int64_t* a, int32_t ra, const int64_t* sa, const int64_t* b, int32_t rb, const int64_t* sb, int64_t* y, int32_t ry, const int64_t* sy);
  /* hmrt_clip_coefficient */
  hmrt_status (*clip_coefficient)(float total_norm, float max_norm, float* coef);
  /* hmrt_concat */
  hmrt_status (*concat)(int32_t n, const void* const* inputs, const int64_t* sizes, int32_t rank, const int64_t* out_shape, int32_t axis, void* y, size_t elem_size);
  /* hmrt_dropout_f32 */
  hmrt_status (*dropout_f32)(const float* x, float* y, uint8_t* mask, int64_t n, float ratio, uint64_t seed, uint64_t counter);
  /* hmrt_dropout_backward_f32 */
  hmrt_status (*dropout_backward_f32)(const float* dy, const uint8_t* mask, float* dx, int64_t n, float ratio);
  /* hmrt_equal */
  hmrt_status (*equal)(int32_t dtype, const void* a, int32_t ra, const int64_t* sa, const void* b, int32_t rb, const int64_t* sb, uint8_t* y, int32_t ry, const int64_t* sy);
  /* hmrt_expand */
  hmrt_status (*expand)(const void* x, int32_t rx, const int64_t* sx, void* y, int32_t ry, const int64_t* sy, size_t elem_size);
  /* hmrt_fused_f32 */
  hmrt_status (*fused_f32)(int64_t n_code, const int64_t* code, int64_t n_in, const void* const* in, const int64_t* in_bool, const int64_t* in_dims, float* y, int32_t rank, const int64_t* dims);
  /* hmrt_gather */
  hmrt_status (*gather)(const void* x, int32_t rank, const int64_t* shape, int32_t axis, int32_t idx_dtype, const void* idx, int64_t n_idx, void* y, size_t elem_size);
  /* hmrt_gather_backward_f32 */
  hmrt_status (*gather_backward_f32)(const float* dy, int32_t rank, const int64_t* shape, int32_t axis, int32_t idx_dtype, const void* idx, int64_t n_idx, float* dx);
  /* hmrt_gemm_f32 */
  hmrt_status (*gemm_f32)(const float* a, const float* b, const float* c, int32_t rc, const int64_t* sc, int64_t m, int64_t n, int64_t k, int32_t trans_a, int32_t trans_b, float alpha, float beta, float* y);
  /* hmrt_layer_norm_f32 */
  hmrt_status (*layer_norm_f32)(const float* x, int32_t rank, const int64_t* shape, int32_t axis, const float* scale, const float* bias, float eps, float* y, float* mean, float* rstd);
  /* hmrt_layer_norm_backward_f32 */
  hmrt_status (*layer_norm_backward_f32)(const float* dy, const float* x, int32_t rank, const int64_t* shape, int32_t axis, const float* scale, const float* mean, const float* rstd, float* dx, float* dscale, float* dbias);
  /* hmrt_matmul_f32 */
  hmrt_status (*matmul_f32)(const float* a, int32_t ra, const int64_t* sa, int32_t trans_a, const float* b, int32_t rb, const int64_t* sb, int32_t trans_b, float* y, int32_t ry, const int64_t* sy);
  /* hmrt_neg_i64 */
  hmrt_status (*neg_i64)(const int64_t* x, int64_t* y, int64_t n);
  /* hmrt_onnx_adagrad */
  hmrt_status (*onnx_adagrad)(const float* x, const float* g, const float* h, float* x_new, float* h_new, int64_t n, double r, int64_t t, double norm_coefficient, double decay_factor, double epsilon);
  /* hmrt_onnx_adam */
  hmrt_status (*onnx_adam)(const float* x, const float* g, const float* v, const float* h, float* x_new, float* v_new, float* h_new, int64_t n, double r, int64_t t, double norm_coefficient, double norm_coefficient_post, double alpha, double beta, double epsilon);
  /* hmrt_onnx_momentum */
  hmrt_status (*onnx_momentum)(const float* x, const float* g, const float* v, float* x_new, float* v_new, int64_t n, double r, int64_t t, double norm_coefficient, double alpha, double beta, int nesterov);
  /* hmrt_reduce_f32 */
  hmrt_status (*reduce_f32)(hmrt_reduce_op op, const float* x, int32_t rank, const int64_t* shape, const uint8_t* reduce_axis, float* y);
  /* hmrt_reduce_max_backward_f32 */
  hmrt_status (*reduce_max_backward_f32)(const float* x, const float* y, const float* dy, int32_t rank, const int64_t* shape, const uint8_t* reduce_axis, float* dx);
  /* hmrt_reduce_to_f32 */
  hmrt_status (*reduce_to_f32)(const float* x, int32_t rx, const int64_t* sx, float* y, int32_t ry, const int64_t* sy);
  /* hmrt_relu_backward */
  hmrt_status (*relu_backward)(const float* x, const float* dy, float* dx, int64_t n);
  /* hmrt_sce_loss_f32 */
  hmrt_status (*sce_loss_f32)(const float* scores, int32_t rank, const int64_t* shape, const int64_t* labels, const float* weights, hmrt_loss_reduction reduction, int32_t has_ignore, int64_t ignore_index, float* loss, float* log_prob);
  /* hmrt_sce_loss_backward_f32 */
  hmrt_status (*sce_loss_backward_f32)(const float* scores, int32_t rank, const int64_t* shape, const int64_t* labels, const float* weights, hmrt_loss_reduction reduction, int32_t has_ignore, int64_t ignore_index, const float* dloss, float* dscores);
  /* hmrt_slice */
  hmrt_status (*slice)(const void* x, int32_t rank, const int64_t* shape, const int64_t* starts, const int64_t* steps, const int64_t* out_shape, void* y, size_t elem_size);
  /* hmrt_slice_backward_f32 */
  hmrt_status (*slice_backward_f32)(const float* dy, int32_t rank, const int64_t* shape, const int64_t* starts, const int64_t* steps, const int64_t* out_shape, float* dx);
  /* hmrt_softmax_axis_f32 */
  hmrt_status (*softmax_axis_f32)(const float* x, int32_t rank, const int64_t* shape, int32_t axis, int32_t log, float* y);
  /* hmrt_softmax_axis_backward_f32 */
  hmrt_status (*softmax_axis_backward_f32)(const float* y, const float* dy, int32_t rank, const int64_t* shape, int32_t axis, int32_t log, float* dx);
  /* hmrt_transpose */
  hmrt_status (*transpose)(const void* x, int32_t rank, const int64_t* shape, const int64_t* perm, void* y, size_t elem_size);
  /* hmrt_trilu */
  hmrt_status (*trilu)(const void* x, int32_t rank, const int64_t* shape, int64_t k, int32_t upper, void* y, size_t elem_size);
  /* hmrt_unary_f32 */
  hmrt_status (*unary_f32)(hmrt_unary_op op, const float* x, float* y, int64_t n);
  /* hmrt_where */
  hmrt_status (*where)(const uint8_t* cond, int32_t rc, const int64_t* sc, const void* x, int32_t rx, const int64_t* sx, const void* z, int32_t rz, const int64_t* sz, void* y, int32_t ry, const int64_t* sy, size_t elem_size);
  /* hmrt_matmul_f32_bf16 */
  hmrt_status (*matmul_f32_bf16)(const float* a, int32_t ra, const int64_t* sa, int32_t trans_a, const float* b, int32_t rb, const int64_t* sb, int32_t trans_b, float* y, int32_t ry, const int64_t* sy);
  /* hmrt_gemm_f32_bf16 */
  hmrt_status (*gemm_f32_bf16)(const float* a, const float* b, const float* c, int32_t rc, const int64_t* sc, int64_t m, int64_t n, int64_t k, int32_t trans_a, int32_t trans_b, float alpha, float beta, float* y);
  /* hmrt_matmul_bf16 */
  hmrt_status (*matmul_bf16)(const uint16_t* a, int32_t ra, const int64_t* sa, int32_t trans_a, const uint16_t* b, int32_t rb, const int64_t* sb, int32_t trans_b, float* y, int32_t ry, const int64_t* sy);
  /* hmrt_gemm_bf16 */
  hmrt_status (*gemm_bf16)(const uint16_t* a, const uint16_t* b, const float* c, int32_t rc, const int64_t* sc, int64_t m, int64_t n, int64_t k, int32_t trans_a, int32_t trans_b, float alpha, float beta, float* y);
  /* hmrt_round_bf16 */
  hmrt_status (*round_bf16)(const float* x, uint16_t* y, int64_t n);
  /* hmrt_add_sum_of_squares */
  hmrt_status (*add_sum_of_squares)(const float* x, int64_t n, const double* acc, double* out);
  /* hmrt_norm_of_sum */
  hmrt_status (*norm_of_sum)(const double* sum, float* out);
  /* hmrt_fused_f32_to_bf16 */
  hmrt_status (*fused_f32_to_bf16)(int64_t n_code, const int64_t* code, int64_t n_in, const void* const* in, const int64_t* in_bool, const int64_t* in_dims, uint16_t* y, int32_t rank, const int64_t* dims);
  /* hmrt_layer_norm_f32_to_bf16 */
  hmrt_status (*layer_norm_f32_to_bf16)(const float* x, int32_t rank, const int64_t* shape, int32_t axis, const float* scale, const float* bias, float eps, uint16_t* y, float* mean, float* rstd);
  /* hmrt_sce_loss_backward_f32_to_bf16 */
  hmrt_status (*sce_loss_backward_f32_to_bf16)(const float* scores, int32_t rank, const int64_t* shape, const int64_t* labels, const float* weights, hmrt_loss_reduction reduction, int32_t has_ignore, int64_t ignore_index, const float* dloss, uint16_t* dscores);
  /* hmrt_matmul_mixed_bf16 */
  hmrt_status (*matmul_mixed_bf16)(const void* a, int32_t a_bf16, int32_t ra, const int64_t* sa, int32_t trans_a, const void* b, int32_t rb, const int64_t* sb, int32_t trans_b, float* y, int32_t ry, const int64_t* sy);
  /* hmrt_gemm_mixed_bf16 */
  hmrt_status (*gemm_mixed_bf16)(const void* a, int32_t a_bf16, const void* b, const float* c, int32_t rc, const int64_t* sc, int64_t m, int64_t n, int64_t k, int32_t trans_a, int32_t trans_b, float alpha, float beta, float* y);
};

/* Records "the <backend> backend has no <name> kernel yet ..." as the last
 * error and returns HMRT_UNIMPLEMENTED: what a generated program returns
 * when an entry it calls is NULL. */
hmrt_status hmrt_kernel_missing(const hmrt_kernels* kernels, const char* name);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HMRT_KERNEL_TABLE_H */
