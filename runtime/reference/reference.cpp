// Scalar double-precision references for the CPU kernels; see reference.h.
#include "reference/reference.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace hmrt {
namespace ref {

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
          double alpha, const double* a, int64_t lda, const double* b,
          int64_t ldb, double beta, double* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        const double av = trans_a ? a[p * lda + i] : a[i * lda + p];
        const double bv = trans_b ? b[j * ldb + p] : b[p * ldb + j];
        s += av * bv;
      }
      double& cij = c[i * ldc + j];
      cij = alpha * s + (beta == 0.0 ? 0.0 : beta * cij);
    }
}

void gelu_forward(const double* x, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = 0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0)));
}

void gelu_backward(const double* x, const double* dy, double* dx, int64_t n) {
  const double pi = std::acos(-1.0);
  for (int64_t i = 0; i < n; ++i) {
    const double cdf = 0.5 * (1.0 + std::erf(x[i] / std::sqrt(2.0)));
    const double pdf = std::exp(-0.5 * x[i] * x[i]) / std::sqrt(2.0 * pi);
    dx[i] = dy[i] * (cdf + x[i] * pdf);
  }
}

void silu_forward(const double* x, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0 + std::exp(-x[i]));
}

void silu_backward(const double* x, const double* dy, double* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double s = 1.0 / (1.0 + std::exp(-x[i]));
    dx[i] = dy[i] * (s + x[i] * s * (1.0 - s));
  }
}

void relu_forward(const double* x, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0 ? x[i] : 0.0;
}

void relu_backward(const double* x, const double* dy, double* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = x[i] > 0.0 ? dy[i] : 0.0;
}

void layernorm_forward(const double* x, const double* weight,
                       const double* bias, double* y, double* mean,
                       double* rstd, int64_t rows, int64_t cols, double eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * cols;
    double m = 0.0;
    for (int64_t c = 0; c < cols; ++c) m += xr[c];
    m /= cols;
    double var = 0.0;
    for (int64_t c = 0; c < cols; ++c) var += (xr[c] - m) * (xr[c] - m);
    var /= cols;
    const double s = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = (xr[c] - m) * s * (weight ? weight[c] : 1.0) +
                        (bias ? bias[c] : 0.0);
    if (mean) mean[r] = m;
    if (rstd) rstd[r] = s;
  }
}

void layernorm_backward(const double* dy, const double* x,
                        const double* weight, const double* mean,
                        const double* rstd, double* dx, double* dweight,
                        double* dbias, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * cols;
    const double* dyr = dy + r * cols;
    double mean_g = 0.0, mean_gx = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      const double xhat = (xr[c] - mean[r]) * rstd[r];
      const double g = dyr[c] * (weight ? weight[c] : 1.0);
      mean_g += g;
      mean_gx += g * xhat;
      if (dweight) dweight[c] += dyr[c] * xhat;
      if (dbias) dbias[c] += dyr[c];
    }
    mean_g /= cols;
    mean_gx /= cols;
    for (int64_t c = 0; c < cols; ++c) {
      const double xhat = (xr[c] - mean[r]) * rstd[r];
      const double g = dyr[c] * (weight ? weight[c] : 1.0);
      dx[r * cols + c] = rstd[r] * (g - mean_g - xhat * mean_gx);
    }
  }
}

void rmsnorm_forward(const double* x, const double* weight, double* y,
                     double* rstd, int64_t rows, int64_t cols, double eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * cols;
    double ms = 0.0;
    for (int64_t c = 0; c < cols; ++c) ms += xr[c] * xr[c];
    ms /= cols;
    const double s = 1.0 / std::sqrt(ms + eps);
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = xr[c] * s * (weight ? weight[c] : 1.0);
    if (rstd) rstd[r] = s;
  }
}

void rmsnorm_backward(const double* dy, const double* x, const double* weight,
                      const double* rstd, double* dx, double* dweight,
                      int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * cols;
    const double* dyr = dy + r * cols;
    const double s = rstd[r];
    double mean_gx = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      mean_gx += dyr[c] * (weight ? weight[c] : 1.0) * xr[c];
      if (dweight) dweight[c] += dyr[c] * xr[c] * s;
    }
    mean_gx /= cols;
    for (int64_t c = 0; c < cols; ++c)
      dx[r * cols + c] =
          s * dyr[c] * (weight ? weight[c] : 1.0) - xr[c] * s * s * s * mean_gx;
  }
}

void softmax_forward(const double* x, double* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * cols;
    const double m = *std::max_element(xr, xr + cols);
    double s = 0.0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(xr[c] - m);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = std::exp(xr[c] - m) / s;
  }
}

void softmax_backward(const double* y, const double* dy, double* dx,
                      int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    double d = 0.0;
    for (int64_t c = 0; c < cols; ++c) d += dy[r * cols + c] * y[r * cols + c];
    for (int64_t c = 0; c < cols; ++c)
      dx[r * cols + c] = y[r * cols + c] * (dy[r * cols + c] - d);
  }
}

void log_softmax_forward(const double* x, double* y, int64_t rows,
                         int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * cols;
    const double m = *std::max_element(xr, xr + cols);
    double s = 0.0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(xr[c] - m);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = xr[c] - m - std::log(s);
  }
}

void log_softmax_backward(const double* y, const double* dy, double* dx,
                          int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (int64_t c = 0; c < cols; ++c) s += dy[r * cols + c];
    for (int64_t c = 0; c < cols; ++c)
      dx[r * cols + c] = dy[r * cols + c] - std::exp(y[r * cols + c]) * s;
  }
}

namespace {
// Probabilities P (T x S) of query head h of batch b; row lse into lse.
// Masked scores are -inf (causal: key j > query i); a fully masked row
// gives NaN, as the float kernel and PyTorch do.
void attention_probs(const double* q, const double* k, const AttentionShape& a,
                     int64_t b, int64_t h, double* p, double* lse) {
  const int64_t T = a.q_len, S = a.kv_len, D = a.head_dim;
  const double* qh = q + (b * a.heads + h) * T * D;
  const double* kh = k + (b * a.kv_heads + h / (a.heads / a.kv_heads)) * S * D;
  for (int64_t i = 0; i < T; ++i) {
    double m = -INFINITY;
    for (int64_t j = 0; j < S; ++j) {
      double s = 0.0;
      for (int64_t d = 0; d < D; ++d) s += qh[i * D + d] * kh[j * D + d];
      s *= a.scale;
      if (a.bias)
        s += a.bias[b * a.bias_strides[0] + h * a.bias_strides[1] +
                    i * a.bias_strides[2] + j * a.bias_strides[3]];
      if (a.causal && j > i) s = -INFINITY;
      p[i * S + j] = s;
      m = std::max(m, s);
    }
    double sum = 0.0;
    for (int64_t j = 0; j < S; ++j) sum += std::exp(p[i * S + j] - m);
    for (int64_t j = 0; j < S; ++j) p[i * S + j] = std::exp(p[i * S + j] - m) / sum;
    if (lse) lse[(b * a.heads + h) * T + i] = m + std::log(sum);
  }
}
}  // namespace

void attention_forward(const double* q, const double* k, const double* v,
                       double* out, double* lse, const AttentionShape& a) {
  const int64_t T = a.q_len, S = a.kv_len, D = a.head_dim;
  std::vector<double> p(T * S);
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t h = 0; h < a.heads; ++h) {
      attention_probs(q, k, a, b, h, p.data(), lse);
      const double* vh = v + (b * a.kv_heads + h / (a.heads / a.kv_heads)) * S * D;
      double* oh = out + (b * a.heads + h) * T * D;
      const double* dr = a.drop ? a.drop + (b * a.heads + h) * T * S : nullptr;
      for (int64_t i = 0; i < T; ++i)
        for (int64_t d = 0; d < D; ++d) {
          double s = 0.0;
          for (int64_t j = 0; j < S; ++j)
            s += p[i * S + j] * (dr ? dr[i * S + j] : 1.0) * vh[j * D + d];
          oh[i * D + d] = s;
        }
    }
}

void attention_backward(const double* q, const double* k, const double* v,
                        const double* dout, double* dq, double* dk, double* dv,
                        const AttentionShape& a) {
  const int64_t T = a.q_len, S = a.kv_len, D = a.head_dim;
  const int64_t group = a.heads / a.kv_heads;
  std::fill(dk, dk + a.batch * a.kv_heads * S * D, 0.0);
  std::fill(dv, dv + a.batch * a.kv_heads * S * D, 0.0);
  std::vector<double> p(T * S), dp(T * S), ds(T * S);
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t h = 0; h < a.heads; ++h) {
      attention_probs(q, k, a, b, h, p.data(), nullptr);
      const int64_t qo = (b * a.heads + h) * T * D;
      const int64_t ko = (b * a.kv_heads + h / group) * S * D;
      const double* doh = dout + qo;
      const double* dr = a.drop ? a.drop + (b * a.heads + h) * T * S : nullptr;
      auto m = [&](int64_t i, int64_t j) { return dr ? dr[i * S + j] : 1.0; };
      // dV += (P m)^T dO, dP = (dO V^T) m
      for (int64_t j = 0; j < S; ++j)
        for (int64_t d = 0; d < D; ++d) {
          double s = 0.0;
          for (int64_t i = 0; i < T; ++i) s += p[i * S + j] * m(i, j) * doh[i * D + d];
          dv[ko + j * D + d] += s;
        }
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < S; ++j) {
          double s = 0.0;
          for (int64_t d = 0; d < D; ++d) s += doh[i * D + d] * v[ko + j * D + d];
          dp[i * S + j] = s * m(i, j);
        }
      // softmax backward per row: dS = P * (dP - sum_j P dP)
      for (int64_t i = 0; i < T; ++i) {
        double s = 0.0;
        for (int64_t j = 0; j < S; ++j) s += p[i * S + j] * dp[i * S + j];
        for (int64_t j = 0; j < S; ++j) ds[i * S + j] = p[i * S + j] * (dp[i * S + j] - s);
      }
      for (int64_t i = 0; i < T; ++i)
        for (int64_t d = 0; d < D; ++d) {
          double s = 0.0;
          for (int64_t j = 0; j < S; ++j) s += ds[i * S + j] * k[ko + j * D + d];
          dq[qo + i * D + d] = a.scale * s;
        }
      for (int64_t j = 0; j < S; ++j)
        for (int64_t d = 0; d < D; ++d) {
          double s = 0.0;
          for (int64_t i = 0; i < T; ++i) s += ds[i * S + j] * q[qo + i * D + d];
          dk[ko + j * D + d] += a.scale * s;
        }
    }
}

void rope_forward(const double* x, const double* cos, const double* sin,
                  double* y, int64_t outer, int64_t seq, int64_t head_dim,
                  int64_t rot_dim) {
  const int64_t h = rot_dim / 2;
  for (int64_t r = 0; r < outer * seq; ++r) {
    const int64_t t = r % seq;
    const double* xr = x + r * head_dim;
    for (int64_t i = 0; i < head_dim; ++i) {
      double v = xr[i];
      if (i < rot_dim) {
        const double rot = i < h ? -xr[i + h] : xr[i - h];  // rotate_half
        v = xr[i] * cos[t * rot_dim + i] + rot * sin[t * rot_dim + i];
      }
      y[r * head_dim + i] = v;
    }
  }
}

void rope_backward(const double* dy, const double* cos, const double* sin,
                   double* dx, int64_t outer, int64_t seq, int64_t head_dim,
                   int64_t rot_dim) {
  // Transpose of the forward map: dx_i = sum_o dy_o * d y_o / d x_i.
  const int64_t h = rot_dim / 2;
  for (int64_t r = 0; r < outer * seq; ++r) {
    const int64_t t = r % seq;
    const double* g = dy + r * head_dim;
    const double* c = cos + t * rot_dim;
    const double* s = sin + t * rot_dim;
    for (int64_t i = 0; i < head_dim; ++i) {
      double v = g[i];
      if (i < h)  // x_i appears in y_i (cos) and y_{i+h} (+sin)
        v = g[i] * c[i] + g[i + h] * s[i + h];
      else if (i < rot_dim)  // x_i appears in y_i (cos) and y_{i-h} (-sin)
        v = g[i] * c[i] - g[i - h] * s[i - h];
      dx[r * head_dim + i] = v;
    }
  }
}

void embedding_forward(const int64_t* ids, const double* weight, double* out,
                       int64_t n, int64_t dim) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < dim; ++c) out[i * dim + c] = weight[ids[i] * dim + c];
}

void embedding_backward(const int64_t* ids, const double* dout,
                        double* dweight, int64_t n, int64_t dim) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < dim; ++c) dweight[ids[i] * dim + c] += dout[i * dim + c];
}

namespace {
double lse_row(const double* x, int64_t n) {
  const double m = *std::max_element(x, x + n);
  double s = 0.0;
  for (int64_t j = 0; j < n; ++j) s += std::exp(x[j] - m);
  return m + std::log(s);
}
}  // namespace

double cross_entropy_forward(const double* logits, const int64_t* targets,
                             int64_t rows, int64_t classes,
                             int64_t ignore_index) {
  double total = 0.0;
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (targets[r] == ignore_index) continue;
    const double* x = logits + r * classes;
    total += lse_row(x, classes) - x[targets[r]];
    ++count;
  }
  return count > 0 ? total / count : NAN;
}

void cross_entropy_backward(const double* logits, const int64_t* targets,
                            double dloss, double* dlogits, int64_t rows,
                            int64_t classes, int64_t ignore_index) {
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r) count += targets[r] != ignore_index;
  for (int64_t r = 0; r < rows; ++r) {
    const double* x = logits + r * classes;
    double* d = dlogits + r * classes;
    if (targets[r] == ignore_index) {
      std::fill(d, d + classes, 0.0);
      continue;
    }
    const double l = lse_row(x, classes);
    for (int64_t j = 0; j < classes; ++j)
      d[j] = (std::exp(x[j] - l) - (j == targets[r] ? 1.0 : 0.0)) * dloss / count;
  }
}

void adamw_step(double* param, const double* grad, double* exp_avg,
                double* exp_avg_sq, int64_t n, double lr, double beta1,
                double beta2, double eps, double weight_decay, int64_t step) {
  const double bc1 = 1.0 - std::pow(beta1, double(step));
  const double bc2 = 1.0 - std::pow(beta2, double(step));
  for (int64_t i = 0; i < n; ++i) {
    param[i] *= 1.0 - lr * weight_decay;
    exp_avg[i] = beta1 * exp_avg[i] + (1.0 - beta1) * grad[i];
    exp_avg_sq[i] = beta2 * exp_avg_sq[i] + (1.0 - beta2) * grad[i] * grad[i];
    const double denom = std::sqrt(exp_avg_sq[i]) / std::sqrt(bc2) + eps;
    param[i] -= lr / bc1 * exp_avg[i] / denom;
  }
}

void sgd_step(double* param, const double* grad, double* buf, int64_t n,
              double lr, double momentum, double dampening,
              double weight_decay, bool nesterov, bool first_step) {
  for (int64_t i = 0; i < n; ++i) {
    double d = grad[i] + weight_decay * param[i];
    if (momentum != 0.0) {
      buf[i] = first_step ? d : momentum * buf[i] + (1.0 - dampening) * d;
      d = nesterov ? d + momentum * buf[i] : buf[i];
    }
    param[i] -= lr * d;
  }
}

void onnx_adagrad(double* x, const double* g, double* h, int64_t n, double r,
                  int64_t t, double norm_coefficient, double decay_factor,
                  double epsilon) {
  const double rate = r / (1.0 + double(t) * decay_factor);
  for (int64_t i = 0; i < n; ++i) {
    const double g_reg = norm_coefficient * x[i] + g[i];
    h[i] += g_reg * g_reg;
    x[i] -= rate * g_reg / (std::sqrt(h[i]) + epsilon);
  }
}

void onnx_momentum(double* x, const double* g, double* v, int64_t n, double r,
                   int64_t t, double norm_coefficient, double alpha,
                   double beta, bool nesterov) {
  const double beta_adjusted = t > 0 ? beta : 1.0;
  for (int64_t i = 0; i < n; ++i) {
    const double g_reg = norm_coefficient * x[i] + g[i];
    v[i] = alpha * v[i] + beta_adjusted * g_reg;
    x[i] -= nesterov ? r * (g_reg + alpha * v[i]) : r * v[i];
  }
}

void onnx_adam(double* x, const double* g, double* v, double* h, int64_t n,
               double r, int64_t t, double norm_coefficient,
               double norm_coefficient_post, double alpha, double beta,
               double epsilon) {
  const double r_adjusted =
      t > 0 ? r * std::sqrt(1.0 - std::pow(beta, double(t))) /
                  (1.0 - std::pow(alpha, double(t)))
            : r;
  for (int64_t i = 0; i < n; ++i) {
    const double g_reg = norm_coefficient * x[i] + g[i];
    v[i] = alpha * v[i] + (1.0 - alpha) * g_reg;
    h[i] = beta * h[i] + (1.0 - beta) * g_reg * g_reg;
    const double x_new = x[i] - r_adjusted * v[i] / (std::sqrt(h[i]) + epsilon);
    x[i] = (1.0 - norm_coefficient_post) * x_new;
  }
}

double global_norm(const double* const* buffers, const int64_t* sizes,
                   int64_t count) {
  double s = 0.0;
  for (int64_t b = 0; b < count; ++b)
    for (int64_t i = 0; i < sizes[b]; ++i) s += buffers[b][i] * buffers[b][i];
  return std::sqrt(s);
}

}  // namespace ref
}  // namespace hmrt
