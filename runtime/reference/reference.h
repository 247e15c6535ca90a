// Scalar reference implementations of every CPU kernel, in double precision
// and written for clarity, not speed (llm.c style: the reference beside the
// kernel).  The unit tests compare the optimised float kernels with these.
// Same layouts and accumulate/overwrite rules as hmrt/kernels.h.
// Built into the test-only library hmrt_reference, never into hmrt.
#ifndef HMRT_REFERENCE_REFERENCE_H
#define HMRT_REFERENCE_REFERENCE_H

#include <cstdint>

namespace hmrt {
namespace ref {

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
          double alpha, const double* a, int64_t lda, const double* b,
          int64_t ldb, double beta, double* c, int64_t ldc);

void gelu_forward(const double* x, double* y, int64_t n);
void gelu_backward(const double* x, const double* dy, double* dx, int64_t n);
void silu_forward(const double* x, double* y, int64_t n);
void silu_backward(const double* x, const double* dy, double* dx, int64_t n);
void relu_forward(const double* x, double* y, int64_t n);
void relu_backward(const double* x, const double* dy, double* dx, int64_t n);

// weight/bias may be nullptr (1 and 0).
void layernorm_forward(const double* x, const double* weight,
                       const double* bias, double* y, double* mean,
                       double* rstd, int64_t rows, int64_t cols, double eps);
void layernorm_backward(const double* dy, const double* x,
                        const double* weight, const double* mean,
                        const double* rstd, double* dx, double* dweight,
                        double* dbias, int64_t rows, int64_t cols);
void rmsnorm_forward(const double* x, const double* weight, double* y,
                     double* rstd, int64_t rows, int64_t cols, double eps);
void rmsnorm_backward(const double* dy, const double* x, const double* weight,
                      const double* rstd, double* dx, double* dweight,
                      int64_t rows, int64_t cols);

void softmax_forward(const double* x, double* y, int64_t rows, int64_t cols);
void softmax_backward(const double* y, const double* dy, double* dx,
                      int64_t rows, int64_t cols);
void log_softmax_forward(const double* x, double* y, int64_t rows,
                         int64_t cols);
void log_softmax_backward(const double* y, const double* dy, double* dx,
                          int64_t rows, int64_t cols);

// Materialises the full (seq x seq) masked probabilities per head.
// Scaled-dot-product attention: q, out (batch, heads, q_len, head_dim);
// k, v (batch, kv_heads, kv_len, head_dim), query head h reading kv head
// h / (heads / kv_heads); lse (batch, heads, q_len). Scores are
// scale * q.k + bias[b, h, i, j] (element strides bias_strides, 0 where
// broadcast; no bias when null), -inf where causal and j > i.
struct AttentionShape {
  int64_t batch, heads, kv_heads, q_len, kv_len, head_dim;
  double scale;
  bool causal;
  const double* bias = nullptr;
  int64_t bias_strides[4] = {0, 0, 0, 0};
  // Dropout: each probability (b, h, i, j) times drop[((b*H + h)*T + i)*S + j]
  // (0, or 1/(1 - ratio) where kept) before it weighs v; none when null.
  const double* drop = nullptr;
};
void attention_forward(const double* q, const double* k, const double* v,
                       double* out, double* lse, const AttentionShape& a);
// dk, dv sum over the query heads that share a kv head.
void attention_backward(const double* q, const double* k, const double* v,
                        const double* dout, double* dq, double* dk, double* dv,
                        const AttentionShape& a);

void rope_forward(const double* x, const double* cos, const double* sin,
                  double* y, int64_t outer, int64_t seq, int64_t head_dim,
                  int64_t rot_dim);
void rope_backward(const double* dy, const double* cos, const double* sin,
                   double* dx, int64_t outer, int64_t seq, int64_t head_dim,
                   int64_t rot_dim);

void embedding_forward(const int64_t* ids, const double* weight, double* out,
                       int64_t n, int64_t dim);
void embedding_backward(const int64_t* ids, const double* dout,
                        double* dweight, int64_t n, int64_t dim);

double cross_entropy_forward(const double* logits, const int64_t* targets,
                             int64_t rows, int64_t classes,
                             int64_t ignore_index);
void cross_entropy_backward(const double* logits, const int64_t* targets,
                            double dloss, double* dlogits, int64_t rows,
                            int64_t classes, int64_t ignore_index);

// One AdamW / SGD step in double, same formulas as hmrt_adamw_step and
// hmrt_sgd_step.
void adamw_step(double* param, const double* grad, double* exp_avg,
                double* exp_avg_sq, int64_t n, double lr, double beta1,
                double beta2, double eps, double weight_decay, int64_t step);
void sgd_step(double* param, const double* grad, double* buf, int64_t n,
              double lr, double momentum, double dampening,
              double weight_decay, bool nesterov, bool first_step);

// One step of ONNX's Adagrad / Momentum / Adam in double, written from the
// operator schemas' pseudo-code (hmrt/kernels.h has the formulas).
void onnx_adagrad(double* x, const double* g, double* h, int64_t n, double r,
                  int64_t t, double norm_coefficient, double decay_factor,
                  double epsilon);
void onnx_momentum(double* x, const double* g, double* v, int64_t n, double r,
                   int64_t t, double norm_coefficient, double alpha,
                   double beta, bool nesterov);
void onnx_adam(double* x, const double* g, double* v, double* h, int64_t n,
               double r, int64_t t, double norm_coefficient,
               double norm_coefficient_post, double alpha, double beta,
               double epsilon);

double global_norm(const double* const* buffers, const int64_t* sizes,
                   int64_t count);

}  // namespace ref
}  // namespace hmrt

#endif  // HMRT_REFERENCE_REFERENCE_H
