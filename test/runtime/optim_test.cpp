// fp32 AdamW and SGD: against the double reference over many steps, and
// against values printed by PyTorch 1.13 (torch.optim.AdamW / SGD with
// foreach=False) for a fixed 5-step problem.
#include <cmath>

#include "reference/reference.h"
#include "test_util.h"

namespace {

using hmrt_test::kU;
using hmrt_test::to_double;

// The fixed problem the PyTorch values were generated from:
//   p0[i] = 0.1*i - 0.45, grad at step s: sin(0.7*i + s) * (1 + 0.3*i).
constexpr int kN = 10;
std::vector<float> golden_p0() {
  std::vector<float> p(kN);
  for (int i = 0; i < kN; ++i) p[i] = float(0.1 * i - 0.45);
  return p;
}
std::vector<float> golden_grad(int step) {
  std::vector<float> g(kN);
  for (int i = 0; i < kN; ++i) g[i] = float(std::sin(0.7 * i + step) * (1 + 0.3 * i));
  return g;
}

// PyTorch's vectorised CPU kernels may fuse multiply-adds, so each of the
// ~10 roundings per step can differ; over 5 steps 64 u relative plus an
// absolute 64 u * lr covers that, while a formula slip (bias correction,
// where eps goes, decoupled decay) changes the values by >= 1e-4.
void expect_matches_torch(const std::vector<float>& got, const float* want,
                          double lr) {
  std::vector<double> w(want, want + kN);
  EXPECT_TRUE(hmrt_test::all_close(got, w, 64 * kU * lr, 64 * kU));
}

TEST(AdamW, MatchesPyTorch) {
  // torch.optim.AdamW(lr=1e-2, betas=(0.9, 0.999), eps=1e-8,
  //                   weight_decay=0.1, foreach=False), 5 steps.
  const float want[kN] = {-0x1.e9766ap-2, -0x1.7707acp-2, -0x1.fe8682p-3,
                          -0x1.10dce6p-3, -0x1.f55bf4p-7, 0x1.303ee6p-4,
                          0x1.45dafap-3,  0x1.e91230p-3,  0x1.3edb9cp-2,
                          0x1.abc8fep-2};
  auto p = golden_p0();
  std::vector<float> m(kN, 0.0f), v(kN, 0.0f);
  for (int s = 1; s <= 5; ++s)
    HMRT_ASSERT_OK(hmrt_adamw_step(p.data(), golden_grad(s).data(), m.data(),
                                   v.data(), kN, 1e-2, 0.9, 0.999, 1e-8, 0.1, s));
  expect_matches_torch(p, want, 1e-2);
}

TEST(Sgd, MatchesPyTorchMomentum) {
  // torch.optim.SGD(lr=0.05, momentum=0.9, dampening=0.1,
  //                 weight_decay=0.01, foreach=False), 5 steps.
  const float want[kN] = {-0x1.5697e0p-1, -0x1.e1354cp-2, -0x1.f8f9cep-4,
                          0x1.06e398p-2,  0x1.fce0ccp-2,  0x1.dd234ep-2,
                          0x1.5502cap-3,  -0x1.e7ca4cp-3, -0x1.f5844ap-2,
                          -0x1.770dfep-2};
  auto p = golden_p0();
  std::vector<float> buf(kN, 12345.0f);  // ignored on the first step
  for (int s = 1; s <= 5; ++s)
    HMRT_ASSERT_OK(hmrt_sgd_step(p.data(), golden_grad(s).data(), buf.data(),
                                 kN, 0.05, 0.9, 0.1, 0.01, 0, s == 1));
  expect_matches_torch(p, want, 0.05);
}

TEST(Sgd, MatchesPyTorchNesterov) {
  // torch.optim.SGD(lr=0.05, momentum=0.9, nesterov=True, foreach=False).
  const float want[kN] = {-0x1.53f068p-1, -0x1.9ce112p-2, -0x1.015858p-7,
                          0x1.787064p-2,  0x1.1155c6p-1,  0x1.890b66p-2,
                          -0x1.5a966cp-6, -0x1.d0b4f0p-2, -0x1.3ef670p-1,
                          -0x1.518a72p-2};
  auto p = golden_p0();
  std::vector<float> buf(kN);
  for (int s = 1; s <= 5; ++s)
    HMRT_ASSERT_OK(hmrt_sgd_step(p.data(), golden_grad(s).data(), buf.data(),
                                 kN, 0.05, 0.9, 0.0, 0.0, 1, s == 1));
  expect_matches_torch(p, want, 0.05);
}

// Many steps, large n (all threads), against the double reference.  Each
// step adds ~10 float roundings of terms bounded by |p| + lr (AdamW's update
// is at most ~lr in size), so after S steps the parameters may differ by
// 16 * S * u * (|p| + lr).  v sums positive terms: 16 * S * u relative.  m
// sums gradients of both signs and can cancel to ~0, so its bound is
// 16 * S * u times the largest gradient seen.
TEST(AdamW, TracksDoubleReference) {
  const int64_t n = 50001;
  const int steps = 20;
  for (int threads : hmrt_test::thread_counts()) {
    SCOPED_TRACE(threads);
    hmrt_test::ThreadScope scope(threads);
    auto p = hmrt_test::random_vec(n, 111);
    std::vector<float> m(n, 0.0f), v(n, 0.0f);
    auto pd = to_double(p), md = to_double(m), vd = to_double(v);
    double max_g = 0;
    for (int s = 1; s <= steps; ++s) {
      auto g = hmrt_test::normal_vec(n, 200 + s);
      max_g = std::max(max_g, hmrt_test::max_abs(to_double(g)));
      HMRT_ASSERT_OK(hmrt_adamw_step(p.data(), g.data(), m.data(), v.data(), n,
                                     3e-3, 0.9, 0.95, 1e-8, 0.1, s));
      hmrt::ref::adamw_step(pd.data(), to_double(g).data(), md.data(), vd.data(),
                            n, 3e-3, 0.9, 0.95, 1e-8, 0.1, s);
    }
    const double r = 16 * steps * kU;
    EXPECT_TRUE(hmrt_test::all_close(p, pd, r * 3e-3, r));
    EXPECT_TRUE(hmrt_test::all_close(m, md, r * max_g, 0));
    EXPECT_TRUE(hmrt_test::all_close(v, vd, 1e-30, r));
  }
}

TEST(Sgd, TracksDoubleReference) {
  const int64_t n = 40000;
  const int steps = 10;
  for (bool nesterov : {false, true}) {
    for (int threads : hmrt_test::thread_counts()) {
      SCOPED_TRACE(testing::Message() << "nesterov=" << nesterov << " threads=" << threads);
      hmrt_test::ThreadScope scope(threads);
      auto p = hmrt_test::random_vec(n, 121);
      std::vector<float> buf(n);
      auto pd = to_double(p);
      std::vector<double> bufd(n);
      for (int s = 1; s <= steps; ++s) {
        auto g = hmrt_test::normal_vec(n, 300 + s);
        HMRT_ASSERT_OK(hmrt_sgd_step(p.data(), g.data(), buf.data(), n, 0.01,
                                     0.9, 0.0, 1e-4, nesterov, s == 1));
        hmrt::ref::sgd_step(pd.data(), to_double(g).data(), bufd.data(), n,
                            0.01, 0.9, 0.0, 1e-4, nesterov, s == 1);
      }
      // |buf| grows to at most sum of |g| / (1 - 0.9) ~ 10 max|g|; each step
      // rounds terms of size |p| + lr*|buf|.
      const double r = 16 * steps * kU;
      EXPECT_TRUE(hmrt_test::all_close(p, pd, r * (1 + 0.01 * 50), r));
    }
  }
}

TEST(Sgd, PlainWithoutBuffer) {
  std::vector<float> p = {1, 2}, g = {0.5f, -1};
  HMRT_ASSERT_OK(hmrt_sgd_step(p.data(), g.data(), nullptr, 2, 0.1, 0, 0, 0, 0, 1));
  EXPECT_FLOAT_EQ(p[0], 0.95f);
  EXPECT_FLOAT_EQ(p[1], 2.1f);
}

// ONNX's preview-training optimizers against the expected outputs of ONNX's
// own backend tests (onnx/backend/test/data/node/test_adagrad, test_momentum,
// test_nesterov_momentum, test_adam: model attributes and test_data_set_0,
// copied as exact float32 values). ONNX computed them in float32 NumPy.
TEST(OnnxOptimizers, MatchBackendTestData) {
  const float r = 0x1.99999ap-4f;  // 0.1f
  {
    const float x = 1, g = -1, h = 2;
    float x_new, h_new;
    HMRT_ASSERT_OK(hmrt_onnx_adagrad(&x, &g, &h, &x_new, &h_new, 1, r, 0,
                                     double(0.001f), double(0.1f), double(1e-5f)));
    EXPECT_TRUE(hmrt_test::all_close({x_new, h_new}, {0x1.0ec52ep+0, 0x1.7fbe80p+1}, 0, 4 * kU));
  }
  const float x[2] = {0x1.333334p+0f, 0x1.666666p+1f};
  const float g[2] = {-0x1.e147aep-1f, -0x1.4p+1f};
  const float v[2] = {0x1.b33334p+0f, 0x1.ccccccp+1f};
  float x_new[2], v_new[2], h_new[2];
  HMRT_ASSERT_OK(hmrt_onnx_momentum(x, g, v, x_new, v_new, 2, r, 0, double(0.001f),
                                    double(0.95f), double(0.1f), 0));
  EXPECT_TRUE(hmrt_test::all_close({x_new[0], x_new[1], v_new[0], v_new[1]},
                                   {0x1.21e3a8p+0, 0x1.5a9692p+1, 0x1.5a36e4p-1, 0x1.d87938p-1},
                                   0, 4 * kU));
  HMRT_ASSERT_OK(hmrt_onnx_momentum(x, g, v, x_new, v_new, 2, r, 0, double(0.01f),
                                    double(0.95f), 1.0, 1));
  EXPECT_TRUE(hmrt_test::all_close({x_new[0], x_new[1], v_new[0], v_new[1]},
                                   {0x1.3a3fbcp+0, 0x1.7a8390p+1, 0x1.5fbe78p-1, 0x1.e56040p-1},
                                   0, 4 * kU));
  const float h[2] = {0x1.99999ap-4f, 0x1.99999ap-4f};
  HMRT_ASSERT_OK(hmrt_onnx_adam(x, g, v, h, x_new, v_new, h_new, 2, r, 0, double(0.001f), 0.0,
                                double(0.95f), double(0.1f), double(1e-7f)));
  EXPECT_TRUE(hmrt_test::all_close(
      {x_new[0], x_new[1], v_new[0], v_new[1], h_new[0], h_new[1]},
      {0x1.0668c8p+0, 0x1.549cb8p+1, 0x1.916c62p+0, 0x1.a5c724p+1, 0x1.9b3e72p-1, 0x1.67d584p+2},
      0, 4 * kU));
}

// Many steps, large n (all threads), in place, against the double reference,
// with non-zero starting states so that T = 0 is checked too. Every
// hyper-parameter is non-trivial. Each step adds a few float roundings of
// terms bounded by |x| + r * (update size), so 16 u per step covers them.
TEST(OnnxOptimizers, TrackDoubleReference) {
  const int64_t n = 30001;
  const int steps = 12;
  for (int kind = 0; kind < 4; ++kind) {
    for (int threads : hmrt_test::thread_counts()) {
      SCOPED_TRACE(testing::Message() << "kind " << kind << " threads " << threads);
      hmrt_test::ThreadScope scope(threads);
      auto x = hmrt_test::random_vec(n, 400 + kind);
      auto s1 = hmrt_test::random_vec(n, 410 + kind), s2 = s1;
      for (float& e : s1) e = std::fabs(e);  // Adagrad's and Adam's H are sums of squares
      for (float& e : s2) e = std::fabs(e) * 0.5f;
      auto xd = to_double(x), s1d = to_double(s1), s2d = to_double(s2);
      for (int t = 0; t < steps; ++t) {
        auto g = hmrt_test::normal_vec(n, 500 + t);
        auto gd = to_double(g);
        if (kind == 0) {
          HMRT_ASSERT_OK(hmrt_onnx_adagrad(x.data(), g.data(), s1.data(), x.data(), s1.data(), n,
                                           0.05, t, 0.01, 0.1, 1e-5));
          hmrt::ref::onnx_adagrad(xd.data(), gd.data(), s1d.data(), n, 0.05, t, 0.01, 0.1, 1e-5);
        } else if (kind <= 2) {
          HMRT_ASSERT_OK(hmrt_onnx_momentum(x.data(), g.data(), s1.data(), x.data(), s1.data(), n,
                                            0.05, t, 0.01, 0.9, 0.5, kind == 2));
          hmrt::ref::onnx_momentum(xd.data(), gd.data(), s1d.data(), n, 0.05, t, 0.01, 0.9, 0.5,
                                   kind == 2);
        } else {
          HMRT_ASSERT_OK(hmrt_onnx_adam(x.data(), g.data(), s2.data(), s1.data(), x.data(),
                                        s2.data(), s1.data(), n, 0.05, t, 0.01, 0.001, 0.9,
                                        0.999, 1e-6));
          hmrt::ref::onnx_adam(xd.data(), gd.data(), s2d.data(), s1d.data(), n, 0.05, t, 0.01,
                               0.001, 0.9, 0.999, 1e-6);
        }
      }
      const double r = 16 * steps * kU;
      EXPECT_TRUE(hmrt_test::all_close(x, xd, r, r));
      EXPECT_TRUE(hmrt_test::all_close(s1, s1d, r * 10, r));
      if (kind == 3) {  // Adam's first moment (V)
        EXPECT_TRUE(hmrt_test::all_close(s2, s2d, r * 10, r));
      }
    }
  }
}

TEST(Optimizers, RejectBadArguments) {
  float x = 0;
  EXPECT_EQ(hmrt_adamw_step(&x, &x, &x, &x, 1, 1e-3, 0.9, 0.999, 1e-8, 0, 0),
            HMRT_INVALID_ARGUMENT);  // step is 1-based
  EXPECT_EQ(hmrt_adamw_step(&x, &x, &x, &x, 1, 1e-3, 1.0, 0.999, 1e-8, 0, 1),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_sgd_step(&x, &x, nullptr, 1, 0.1, 0.9, 0, 0, 0, 1),
            HMRT_INVALID_ARGUMENT);  // momentum needs a buffer
  EXPECT_EQ(hmrt_sgd_step(&x, &x, &x, 1, 0.1, 0.9, 0.1, 0, 1, 1),
            HMRT_INVALID_ARGUMENT);  // nesterov with dampening
  EXPECT_EQ(hmrt_onnx_momentum(&x, &x, &x, &x, &x, 1, 0.1, -1, 0, 0.9, 1, 0),
            HMRT_INVALID_ARGUMENT);  // T counts from 0
  EXPECT_EQ(hmrt_onnx_adam(&x, nullptr, &x, &x, &x, &x, &x, 1, 0.1, 0, 0, 0, 0.9, 0.999, 1e-6),
            HMRT_INVALID_ARGUMENT);
}

}  // namespace
