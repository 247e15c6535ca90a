// Double-precision references of the ops of hmrt/nn_ops.h; see
// nn_ops_reference.h.  Shapes are assumed valid (the tests pass valid ones;
// a mismatch aborts).
#include "reference/nn_ops_reference.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace hmrt {
namespace ref {
namespace {

void require(bool cond) {
  if (!cond) std::abort();
}

// Multi-index of flat index i in shape s.
Shape unravel(int64_t i, const Shape& s) {
  Shape idx(s.size());
  for (int64_t d = int64_t(s.size()) - 1; d >= 0; --d) {
    idx[d] = s[d] == 0 ? 0 : i % s[d];
    i = s[d] == 0 ? 0 : i / s[d];
  }
  return idx;
}

// Flat index of the group (the kept dims, in order) of multi-index idx.
int64_t group_of(const Shape& idx, const Shape& shape,
                 const std::vector<bool>& reduce) {
  int64_t g = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!reduce[d]) g = g * shape[d] + idx[d];
  return g;
}

int64_t kept_count(const Shape& shape, const std::vector<bool>& reduce) {
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!reduce[d]) n *= shape[d];
  return n;
}

// (outer, n, inner) split around axis.
void split3(const Shape& s, int64_t axis, int64_t* outer, int64_t* n,
            int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int64_t d = 0; d < axis; ++d) *outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d) *inner *= s[d];
  *n = s[axis];
}

}  // namespace

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Shape matmul(const std::vector<double>& a, const Shape& sa, bool trans_a,
             const std::vector<double>& b, const Shape& sb, bool trans_b,
             std::vector<double>& y) {
  require(!sa.empty() && !sb.empty());
  const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
  if (a1) trans_a = false;
  if (b1) trans_b = false;
  const size_t ra = sa.size(), rb = sb.size();
  const int64_t M = a1 ? 1 : (trans_a ? sa[ra - 1] : sa[ra - 2]);
  const int64_t K = a1 ? sa[0] : (trans_a ? sa[ra - 2] : sa[ra - 1]);
  const int64_t Kb = b1 ? sb[0] : (trans_b ? sb[rb - 1] : sb[rb - 2]);
  const int64_t N = b1 ? 1 : (trans_b ? sb[rb - 2] : sb[rb - 1]);
  require(K == Kb);
  const Shape ba(sa.begin(), sa.end() - (a1 ? 1 : 2));
  const Shape bb(sb.begin(), sb.end() - (b1 ? 1 : 2));
  const size_t nb = std::max(ba.size(), bb.size());
  Shape batch(nb);
  for (size_t i = 0; i < nb; ++i) {
    // Right-aligned dims, 1 where an operand has fewer.
    const int64_t da = i + ba.size() >= nb ? ba[i + ba.size() - nb] : 1;
    const int64_t db = i + bb.size() >= nb ? bb[i + bb.size() - nb] : 1;
    require(da == db || da == 1 || db == 1);
    batch[i] = da == 1 ? db : da;
  }
  Shape ys = batch;
  if (!a1) ys.push_back(M);
  if (!b1) ys.push_back(N);
  const int64_t nbatch = numel(batch);
  y.assign(nbatch * M * N, 0.0);
  for (int64_t t = 0; t < nbatch; ++t) {
    const Shape idx = unravel(t, batch);
    // Offsets of the matrices of a and b: broadcast dims use index 0.
    int64_t oa = 0, ob = 0;
    for (size_t i = 0; i < nb; ++i) {
      if (i + ba.size() >= nb) {
        const int64_t d = ba[i + ba.size() - nb];
        oa = oa * d + (d == 1 ? 0 : idx[i]);
      }
      if (i + bb.size() >= nb) {
        const int64_t d = bb[i + bb.size() - nb];
        ob = ob * d + (d == 1 ? 0 : idx[i]);
      }
    }
    const double* A = a.data() + oa * M * K;
    const double* B = b.data() + ob * K * N;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0.0;
        for (int64_t p = 0; p < K; ++p)
          s += (trans_a ? A[p * M + i] : A[i * K + p]) *
               (trans_b ? B[j * K + p] : B[p * N + j]);
        y[(t * M + i) * N + j] = s;
      }
  }
  return ys;
}

void onnx_gemm(const std::vector<double>& a, const std::vector<double>& b,
               const std::vector<double>& c, const Shape& sc, int64_t m,
               int64_t n, int64_t k, bool trans_a, bool trans_b, double alpha,
               double beta, std::vector<double>& y) {
  y.assign(m * n, 0.0);
  // C's dims right-aligned to [m, n].
  const int64_t cm = sc.size() == 2 ? sc[0] : 1;
  const int64_t cn = sc.empty() ? 1 : sc.back();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t p = 0; p < k; ++p)
        s += (trans_a ? a[p * m + i] : a[i * k + p]) *
             (trans_b ? b[j * k + p] : b[p * n + j]);
      double v = alpha * s;
      if (!c.empty() && beta != 0.0)
        v += beta * c[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
      y[i * n + j] = v;
    }
}

void reduce(int op, const std::vector<double>& x, const Shape& shape,
            const std::vector<bool>& red, std::vector<double>& y) {
  const int64_t groups = kept_count(shape, red);
  int64_t reduced = 1;  // elements per group, also when x is empty
  for (size_t d = 0; d < shape.size(); ++d)
    if (red[d]) reduced *= shape[d];
  y.assign(groups, op == 2 ? -std::numeric_limits<double>::infinity() : 0.0);
  for (int64_t i = 0; i < numel(shape); ++i) {
    double& g = y[group_of(unravel(i, shape), shape, red)];
    if (op == 2) {
      if (!std::isnan(g) && (std::isnan(x[i]) || x[i] > g)) g = x[i];
    } else {
      g += x[i];
    }
  }
  if (op == 1)
    for (double& g : y) g /= double(reduced);
}

void reduce_max_backward(const std::vector<double>& x,
                         const std::vector<double>& y,
                         const std::vector<double>& dy, const Shape& shape,
                         const std::vector<bool>& red,
                         std::vector<double>& dx) {
  dx.assign(numel(shape), 0.0);
  for (int64_t i = 0; i < numel(shape); ++i) {
    const int64_t g = group_of(unravel(i, shape), shape, red);
    const bool hit = x[i] == y[g] || (std::isnan(x[i]) && std::isnan(y[g]));
    dx[i] = hit ? dy[g] : 0.0;
  }
}

void softmax_axis(const std::vector<double>& x, const Shape& shape,
                  int64_t axis, bool log, std::vector<double>& y) {
  int64_t outer, n, inner;
  split3(shape, axis, &outer, &n, &inner);
  y.assign(x.size(), 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t base = o * n * inner + j;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < n; ++c) m = std::max(m, x[base + c * inner]);
      double s = 0.0;
      for (int64_t c = 0; c < n; ++c) s += std::exp(x[base + c * inner] - m);
      for (int64_t c = 0; c < n; ++c) {
        const double v = x[base + c * inner] - m;
        y[base + c * inner] = log ? v - std::log(s) : std::exp(v) / s;
      }
    }
}

void softmax_axis_backward(const std::vector<double>& y,
                           const std::vector<double>& dy, const Shape& shape,
                           int64_t axis, bool log, std::vector<double>& dx) {
  int64_t outer, n, inner;
  split3(shape, axis, &outer, &n, &inner);
  dx.assign(y.size(), 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t base = o * n * inner + j;
      double s = 0.0;
      for (int64_t c = 0; c < n; ++c) {
        const int64_t i = base + c * inner;
        s += log ? dy[i] : dy[i] * y[i];
      }
      for (int64_t c = 0; c < n; ++c) {
        const int64_t i = base + c * inner;
        dx[i] = log ? dy[i] - std::exp(y[i]) * s : y[i] * (dy[i] - s);
      }
    }
}

void layer_norm(const std::vector<double>& x, const Shape& shape, int64_t axis,
                const std::vector<double>& scale,
                const std::vector<double>& bias, double eps,
                std::vector<double>& y, std::vector<double>& mean,
                std::vector<double>& rstd) {
  int64_t outer = 1, cols = 1;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d)
    (d < axis ? outer : cols) *= shape[d];
  y.assign(x.size(), 0.0);
  mean.assign(outer, 0.0);
  rstd.assign(outer, 0.0);
  for (int64_t r = 0; r < outer; ++r) {
    const double* xr = x.data() + r * cols;
    double m = 0.0;
    for (int64_t c = 0; c < cols; ++c) m += xr[c];
    m /= double(cols);
    double var = 0.0;
    for (int64_t c = 0; c < cols; ++c) var += (xr[c] - m) * (xr[c] - m);
    var /= double(cols);
    const double s = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = (xr[c] - m) * s * (scale.empty() ? 1.0 : scale[c]) +
                        (bias.empty() ? 0.0 : bias[c]);
    mean[r] = m;
    rstd[r] = s;
  }
}

void layer_norm_backward(const std::vector<double>& dy,
                         const std::vector<double>& x, const Shape& shape,
                         int64_t axis, const std::vector<double>& scale,
                         const std::vector<double>& mean,
                         const std::vector<double>& rstd,
                         std::vector<double>& dx, std::vector<double>& dscale,
                         std::vector<double>& dbias) {
  int64_t outer = 1, cols = 1;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d)
    (d < axis ? outer : cols) *= shape[d];
  dx.assign(x.size(), 0.0);
  dscale.assign(cols, 0.0);
  dbias.assign(cols, 0.0);
  for (int64_t r = 0; r < outer; ++r) {
    // dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * scale.
    double mg = 0.0, mgx = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      const double xhat = (x[i] - mean[r]) * rstd[r];
      const double g = dy[i] * (scale.empty() ? 1.0 : scale[c]);
      mg += g;
      mgx += g * xhat;
      dscale[c] += dy[i] * xhat;
      dbias[c] += dy[i];
    }
    mg /= double(cols);
    mgx /= double(cols);
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      const double xhat = (x[i] - mean[r]) * rstd[r];
      const double g = dy[i] * (scale.empty() ? 1.0 : scale[c]);
      dx[i] = rstd[r] * (g - mg - xhat * mgx);
    }
  }
}

void sce_loss(const std::vector<double>& scores, const Shape& shape,
              const std::vector<int64_t>& labels,
              const std::vector<double>& weights, int reduction,
              bool has_ignore, int64_t ignore_index, std::vector<double>& loss,
              std::vector<double>& log_prob) {
  softmax_axis(scores, shape, 1, true, log_prob);
  const int64_t N = shape[0], C = shape[1];
  const int64_t D = numel(Shape(shape.begin() + 2, shape.end())), E = N * D;
  std::vector<double> l(E, 0.0);
  double total = 0.0, denom = 0.0;
  for (int64_t e = 0; e < E; ++e) {
    const int64_t t = labels[e];
    if (has_ignore && t == ignore_index) continue;
    require(t >= 0 && t < C);
    const int64_t n = e / D, d = e % D;
    const double w = weights.empty() ? 1.0 : weights[t];
    l[e] = -w * log_prob[(n * C + t) * D + d];
    total += l[e];
    denom += w;
  }
  if (reduction == 2)
    loss = l;
  else if (reduction == 1)
    loss.assign(1, total);
  else
    loss.assign(1, denom == 0.0 ? std::numeric_limits<double>::quiet_NaN()
                                : total / denom);
}

void sce_loss_backward(const std::vector<double>& scores, const Shape& shape,
                       const std::vector<int64_t>& labels,
                       const std::vector<double>& weights, int reduction,
                       bool has_ignore, int64_t ignore_index,
                       const std::vector<double>& dloss,
                       std::vector<double>& dscores) {
  std::vector<double> p;
  softmax_axis(scores, shape, 1, false, p);
  const int64_t N = shape[0], C = shape[1];
  const int64_t D = numel(Shape(shape.begin() + 2, shape.end())), E = N * D;
  double denom = 0.0;
  for (int64_t e = 0; e < E; ++e) {
    const int64_t t = labels[e];
    if (has_ignore && t == ignore_index) continue;
    denom += weights.empty() ? 1.0 : weights[t];
  }
  dscores.assign(scores.size(), 0.0);
  for (int64_t e = 0; e < E; ++e) {
    const int64_t t = labels[e];
    if (has_ignore && t == ignore_index) continue;
    const double w = weights.empty() ? 1.0 : weights[t];
    double k;
    if (reduction == 2)
      k = w * dloss[e];
    else if (reduction == 1)
      k = w * dloss[0];
    else
      k = denom == 0.0 ? 0.0 : w * dloss[0] / denom;
    const int64_t n = e / D, d = e % D;
    for (int64_t c = 0; c < C; ++c) {
      const int64_t i = (n * C + c) * D + d;
      dscores[i] = k * (p[i] - (c == t ? 1.0 : 0.0));
    }
  }
}

}  // namespace ref
}  // namespace hmrt
