// The double-precision references themselves: every backward is checked
// against central finite differences of its forward.  For a random
// direction u and upstream gradient dy, with L(x) = <dy, f(x)>,
//   (L(x + h u) - L(x - h u)) / 2h  ==  <grad_x L, u>.
// In double with h = 1e-5 the truncation error is O(h^2) ~ 1e-10 and the
// rounding error ~ 1e-16 * |L| / h ~ 1e-11 |L|, so a relative tolerance of
// 1e-6 leaves a wide margin while any wrong term is an O(1) difference.
#include <functional>

#include "reference/reference.h"
#include "test_util.h"

namespace {

using Vec = std::vector<double>;
using Fn = std::function<Vec(const Vec&)>;

Vec rand_d(int64_t n, uint32_t seed, double lo = -1, double hi = 1) {
  auto f = hmrt_test::random_vec(n, seed, float(lo), float(hi));
  return Vec(f.begin(), f.end());
}

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Checks <grad, u> against the finite difference of <dy, f(x)> along u.
void check_directional(const char* what, const Fn& f, const Vec& x,
                       const Vec& dy, const Vec& grad, uint32_t seed) {
  const double h = 1e-5;
  for (int trial = 0; trial < 3; ++trial) {
    const Vec u = rand_d(int64_t(x.size()), seed + trial);
    Vec xp = x, xm = x;
    for (size_t i = 0; i < x.size(); ++i) {
      xp[i] += h * u[i];
      xm[i] -= h * u[i];
    }
    const double fd = (dot(dy, f(xp)) - dot(dy, f(xm))) / (2 * h);
    const double an = dot(grad, u);
    EXPECT_NEAR(an, fd, 1e-6 * (std::fabs(fd) + 1e-3)) << what << " trial " << trial;
  }
}

TEST(ReferenceGradients, Activations) {
  const int64_t n = 200;
  Vec x = rand_d(n, 1, -3, 3), dy = rand_d(n, 2), dx(n);
  for (double& v : x)
    if (std::fabs(v) < 0.01) v = 0.5;  // keep ReLU away from its kink
  using R = void (*)(const double*, double*, int64_t);
  using B = void (*)(const double*, const double*, double*, int64_t);
  const std::pair<R, B> ops[] = {
      {hmrt::ref::gelu_forward, hmrt::ref::gelu_backward},
      {hmrt::ref::silu_forward, hmrt::ref::silu_backward},
      {hmrt::ref::relu_forward, hmrt::ref::relu_backward}};
  for (const auto& op : ops) {
    op.second(x.data(), dy.data(), dx.data(), n);
    check_directional("activation", [&](const Vec& in) {
      Vec y(n);
      op.first(in.data(), y.data(), n);
      return y;
    }, x, dy, dx, 10);
  }
}

TEST(ReferenceGradients, LayerNorm) {
  const int64_t rows = 5, cols = 12;
  Vec x = rand_d(rows * cols, 3), w = rand_d(cols, 4, 0.5, 1.5),
      b = rand_d(cols, 5), dy = rand_d(rows * cols, 6);
  Vec y(rows * cols), mean(rows), rstd(rows);
  const double eps = 1e-5;
  hmrt::ref::layernorm_forward(x.data(), w.data(), b.data(), y.data(),
                               mean.data(), rstd.data(), rows, cols, eps);
  Vec dx(rows * cols), dw(cols, 0.0), db(cols, 0.0);
  hmrt::ref::layernorm_backward(dy.data(), x.data(), w.data(), mean.data(),
                                rstd.data(), dx.data(), dw.data(), db.data(),
                                rows, cols);
  auto run = [&](const Vec& xx, const Vec& ww, const Vec& bb) {
    Vec out(rows * cols);
    hmrt::ref::layernorm_forward(xx.data(), ww.data(), bb.data(), out.data(),
                                 nullptr, nullptr, rows, cols, eps);
    return out;
  };
  check_directional("dx", [&](const Vec& v) { return run(v, w, b); }, x, dy, dx, 20);
  check_directional("dw", [&](const Vec& v) { return run(x, v, b); }, w, dy, dw, 30);
  check_directional("db", [&](const Vec& v) { return run(x, w, v); }, b, dy, db, 40);
}

TEST(ReferenceGradients, RmsNorm) {
  const int64_t rows = 4, cols = 9;
  Vec x = rand_d(rows * cols, 7), w = rand_d(cols, 8, 0.5, 1.5),
      dy = rand_d(rows * cols, 9);
  Vec y(rows * cols), rstd(rows);
  hmrt::ref::rmsnorm_forward(x.data(), w.data(), y.data(), rstd.data(), rows,
                             cols, 1e-6);
  Vec dx(rows * cols), dw(cols, 0.0);
  hmrt::ref::rmsnorm_backward(dy.data(), x.data(), w.data(), rstd.data(),
                              dx.data(), dw.data(), rows, cols);
  auto run = [&](const Vec& xx, const Vec& ww) {
    Vec out(rows * cols);
    hmrt::ref::rmsnorm_forward(xx.data(), ww.data(), out.data(), nullptr, rows,
                               cols, 1e-6);
    return out;
  };
  check_directional("dx", [&](const Vec& v) { return run(v, w); }, x, dy, dx, 50);
  check_directional("dw", [&](const Vec& v) { return run(x, v); }, w, dy, dw, 60);
}

TEST(ReferenceGradients, SoftmaxAndLogSoftmax) {
  const int64_t rows = 3, cols = 11;
  Vec x = rand_d(rows * cols, 11, -3, 3), dy = rand_d(rows * cols, 12);
  Vec y(rows * cols), dx(rows * cols);
  hmrt::ref::softmax_forward(x.data(), y.data(), rows, cols);
  hmrt::ref::softmax_backward(y.data(), dy.data(), dx.data(), rows, cols);
  check_directional("softmax", [&](const Vec& v) {
    Vec out(rows * cols);
    hmrt::ref::softmax_forward(v.data(), out.data(), rows, cols);
    return out;
  }, x, dy, dx, 70);
  hmrt::ref::log_softmax_forward(x.data(), y.data(), rows, cols);
  hmrt::ref::log_softmax_backward(y.data(), dy.data(), dx.data(), rows, cols);
  check_directional("log_softmax", [&](const Vec& v) {
    Vec out(rows * cols);
    hmrt::ref::log_softmax_forward(v.data(), out.data(), rows, cols);
    return out;
  }, x, dy, dx, 80);
}

// Causal, and grouped kv heads over longer keys with an additive mask and
// dropout.
TEST(ReferenceGradients, Attention) {
  Vec bias = rand_d(5 * 7, 17);
  hmrt::ref::AttentionShape shapes[2] = {{1, 2, 2, 6, 6, 4, 0.5, true},
                                         {2, 4, 2, 5, 7, 3, 0.7, false}};
  shapes[1].bias = bias.data();  // (1, 1, 5, 7)
  shapes[1].bias_strides[2] = 7;
  shapes[1].bias_strides[3] = 1;
  Vec drop(2 * 4 * 5 * 7);  // dropout multipliers: 0 or 1/(1 - 0.3)
  for (size_t i = 0; i < drop.size(); ++i) drop[i] = i % 3 == 1 ? 0.0 : 1.0 / 0.7;
  shapes[1].drop = drop.data();
  for (const auto& a : shapes) {
    const int64_t nq = a.batch * a.heads * a.q_len * a.head_dim;
    const int64_t nk = a.batch * a.kv_heads * a.kv_len * a.head_dim;
    Vec q = rand_d(nq, 13), k = rand_d(nk, 14), v = rand_d(nk, 15), dout = rand_d(nq, 16);
    Vec dq(nq), dk(nk), dv(nk);
    hmrt::ref::attention_backward(q.data(), k.data(), v.data(), dout.data(), dq.data(),
                                  dk.data(), dv.data(), a);
    auto run = [&](const Vec& qq, const Vec& kk, const Vec& vv) {
      Vec out(nq);
      hmrt::ref::attention_forward(qq.data(), kk.data(), vv.data(), out.data(), nullptr, a);
      return out;
    };
    check_directional("dq", [&](const Vec& x) { return run(x, k, v); }, q, dout, dq, 90);
    check_directional("dk", [&](const Vec& x) { return run(q, x, v); }, k, dout, dk, 100);
    check_directional("dv", [&](const Vec& x) { return run(q, k, x); }, v, dout, dv, 110);
  }
}

TEST(ReferenceGradients, Rope) {
  const int64_t outer = 2, seq = 3, head_dim = 10, rot_dim = 6;
  const int64_t n = outer * seq * head_dim;
  Vec x = rand_d(n, 17), dy = rand_d(n, 18), dx(n);
  Vec cos = rand_d(seq * rot_dim, 19), sin = rand_d(seq * rot_dim, 20);
  hmrt::ref::rope_backward(dy.data(), cos.data(), sin.data(), dx.data(), outer,
                           seq, head_dim, rot_dim);
  check_directional("rope", [&](const Vec& v) {
    Vec out(n);
    hmrt::ref::rope_forward(v.data(), cos.data(), sin.data(), out.data(), outer,
                            seq, head_dim, rot_dim);
    return out;
  }, x, dy, dx, 120);
}

TEST(ReferenceGradients, CrossEntropy) {
  const int64_t rows = 5, classes = 7;
  Vec x = rand_d(rows * classes, 21, -2, 2), d(rows * classes);
  const std::vector<int64_t> targets = {3, -100, 0, 6, 2};
  hmrt::ref::cross_entropy_backward(x.data(), targets.data(), 1.0, d.data(),
                                    rows, classes, -100);
  check_directional("cross_entropy", [&](const Vec& v) {
    return Vec{hmrt::ref::cross_entropy_forward(v.data(), targets.data(), rows,
                                                classes, -100)};
  }, x, Vec{1.0}, d, 130);
}

TEST(ReferenceGradients, Embedding) {
  const int64_t n = 6, vocab = 4, dim = 3;
  const std::vector<int64_t> ids = {1, 3, 1, 0, 2, 1};
  Vec w = rand_d(vocab * dim, 22), dout = rand_d(n * dim, 23), dw(vocab * dim, 0.0);
  hmrt::ref::embedding_backward(ids.data(), dout.data(), dw.data(), n, dim);
  check_directional("embedding", [&](const Vec& v) {
    Vec out(n * dim);
    hmrt::ref::embedding_forward(ids.data(), v.data(), out.data(), n, dim);
    return out;
  }, w, dout, dw, 140);
}

}  // namespace
