// LayerNorm and RMSNorm forward/backward against the double reference.
//
// Tolerance: the kernels compute row sums of `cols` terms in float (mean,
// variance, two dot products in backward), and the parameter gradients are
// column sums over `rows` accumulated in double from float products, so
// errors are bounded by reduction_tol(max(rows, cols)) (4 float sums'
// worth of gamma_n) relative to the largest value of the tensor.  dx is a
// difference of terms of size rstd*|dy*w| that can cancel (for cols = 1 it
// is ~0), so its bound is relative to that term size instead.
#include "reference/reference.h"
#include "test_util.h"

namespace {

using hmrt_test::all_close;
using hmrt_test::max_abs;
using hmrt_test::reduction_tol;
using hmrt_test::to_double;

// Largest rstd[r] * |dy[r, c] * w[c]|: the size of the terms of dx.
double dx_term_scale(const std::vector<float>& dy, const std::vector<float>& w,
                     const std::vector<double>& rstd, int64_t cols, bool affine) {
  double m = 0;
  for (size_t i = 0; i < dy.size(); ++i)
    m = std::max(m, rstd[i / cols] * std::fabs(dy[i]) * (affine ? std::fabs(w[i % cols]) : 1.0));
  return m;
}

struct Shape {
  int64_t rows, cols;
};
const Shape kShapes[] = {{1, 1}, {3, 5}, {17, 64}, {64, 257}, {9, 1000}, {301, 33}};

TEST(LayerNorm, MatchesReference) {
  for (const Shape& s : kShapes) {
    for (bool affine : {true, false}) {
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message() << "rows=" << s.rows << " cols="
                                        << s.cols << " affine=" << affine
                                        << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        const int64_t n = s.rows * s.cols;
        // An offset mean checks the centred (two-pass) variance.
        auto x = hmrt_test::random_vec(n, 21, 2.0f, 5.0f);
        auto w = hmrt_test::random_vec(s.cols, 22, 0.5f, 1.5f);
        auto b = hmrt_test::random_vec(s.cols, 23);
        auto dy = hmrt_test::random_vec(n, 24);
        const float eps = 1e-5f;

        std::vector<double> y_ref(n), mean_ref(s.rows), rstd_ref(s.rows);
        auto xd = to_double(x), wd = to_double(w), bd = to_double(b);
        hmrt::ref::layernorm_forward(xd.data(), affine ? wd.data() : nullptr,
                                     affine ? bd.data() : nullptr, y_ref.data(),
                                     mean_ref.data(), rstd_ref.data(), s.rows,
                                     s.cols, eps);
        std::vector<float> y(n), mean(s.rows), rstd(s.rows);
        HMRT_ASSERT_OK(hmrt_layernorm_forward(
            x.data(), affine ? w.data() : nullptr, affine ? b.data() : nullptr,
            y.data(), mean.data(), rstd.data(), s.rows, s.cols, eps));
        const double tol = reduction_tol(std::max(s.rows, s.cols));
        EXPECT_TRUE(all_close(y, y_ref, tol * max_abs(y_ref), 0));
        EXPECT_TRUE(all_close(mean, mean_ref, 0, tol));
        EXPECT_TRUE(all_close(rstd, rstd_ref, 0, tol));

        // Backward from the saved statistics; parameter grads accumulate
        // onto a non-zero start.
        std::vector<double> dx_ref(n), dw_ref(s.cols, 1.0), db_ref(s.cols, -1.0);
        hmrt::ref::layernorm_backward(to_double(dy).data(), xd.data(),
                                      affine ? wd.data() : nullptr,
                                      mean_ref.data(), rstd_ref.data(),
                                      dx_ref.data(), dw_ref.data(),
                                      db_ref.data(), s.rows, s.cols);
        std::vector<float> dx(n), dw(s.cols, 1.0f), db(s.cols, -1.0f);
        HMRT_ASSERT_OK(hmrt_layernorm_backward(
            dy.data(), x.data(), affine ? w.data() : nullptr, mean.data(),
            rstd.data(), dx.data(), dw.data(), db.data(), s.rows, s.cols));
        EXPECT_TRUE(all_close(
            dx, dx_ref, tol * dx_term_scale(dy, w, rstd_ref, s.cols, affine), 0));
        EXPECT_TRUE(all_close(dw, dw_ref, tol * max_abs(dw_ref), 0));
        EXPECT_TRUE(all_close(db, db_ref, tol * max_abs(db_ref), 0));
      }
    }
  }
}

TEST(RmsNorm, MatchesReference) {
  for (const Shape& s : kShapes) {
    for (int threads : hmrt_test::thread_counts()) {
      SCOPED_TRACE(testing::Message() << "rows=" << s.rows << " cols="
                                      << s.cols << " threads=" << threads);
      hmrt_test::ThreadScope scope(threads);
      const int64_t n = s.rows * s.cols;
      auto x = hmrt_test::random_vec(n, 31);
      auto w = hmrt_test::random_vec(s.cols, 32, 0.5f, 1.5f);
      auto dy = hmrt_test::random_vec(n, 33);
      const float eps = 1e-6f;
      std::vector<double> y_ref(n), rstd_ref(s.rows);
      auto xd = to_double(x), wd = to_double(w);
      hmrt::ref::rmsnorm_forward(xd.data(), wd.data(), y_ref.data(),
                                 rstd_ref.data(), s.rows, s.cols, eps);
      std::vector<float> y(n), rstd(s.rows);
      HMRT_ASSERT_OK(hmrt_rmsnorm_forward(x.data(), w.data(), y.data(),
                                          rstd.data(), s.rows, s.cols, eps));
      const double tol = reduction_tol(std::max(s.rows, s.cols));
      EXPECT_TRUE(all_close(y, y_ref, tol * max_abs(y_ref), 0));
      EXPECT_TRUE(all_close(rstd, rstd_ref, 0, tol));

      std::vector<double> dx_ref(n), dw_ref(s.cols, 0.5);
      hmrt::ref::rmsnorm_backward(to_double(dy).data(), xd.data(), wd.data(),
                                  rstd_ref.data(), dx_ref.data(),
                                  dw_ref.data(), s.rows, s.cols);
      std::vector<float> dx(n), dw(s.cols, 0.5f);
      HMRT_ASSERT_OK(hmrt_rmsnorm_backward(dy.data(), x.data(), w.data(),
                                           rstd.data(), dx.data(), dw.data(),
                                           s.rows, s.cols));
      EXPECT_TRUE(all_close(
          dx, dx_ref, tol * dx_term_scale(dy, w, rstd_ref, s.cols, true), 0));
      EXPECT_TRUE(all_close(dw, dw_ref, tol * max_abs(dw_ref), 0));
    }
  }
}

TEST(Norms, ParameterGradientsIndependentOfThreads) {
  const int64_t rows = 513, cols = 300;
  auto x = hmrt_test::random_vec(rows * cols, 41);
  auto dy = hmrt_test::random_vec(rows * cols, 42);
  std::vector<float> mean(rows), rstd(rows), y(rows * cols);
  HMRT_ASSERT_OK(hmrt_layernorm_forward(x.data(), nullptr, nullptr, y.data(),
                                        mean.data(), rstd.data(), rows, cols,
                                        1e-5f));
  std::vector<float> first_dw, first_dx;
  for (int threads : {1, 2, 3, 4}) {
    hmrt_test::ThreadScope scope(threads);
    std::vector<float> dx(rows * cols), dw(cols, 0.0f), db(cols, 0.0f);
    HMRT_ASSERT_OK(hmrt_layernorm_backward(dy.data(), x.data(), nullptr,
                                           mean.data(), rstd.data(), dx.data(),
                                           dw.data(), db.data(), rows, cols));
    if (first_dw.empty()) {
      first_dw = dw;
      first_dx = dx;
    } else {
      EXPECT_TRUE(hmrt_test::bitwise_equal(first_dw, dw));
      EXPECT_TRUE(hmrt_test::bitwise_equal(first_dx, dx));
    }
  }
}

TEST(Norms, RejectBadArguments) {
  float v = 0;
  EXPECT_EQ(hmrt_layernorm_forward(&v, nullptr, nullptr, &v, nullptr, nullptr,
                                   1, 0, 1e-5f),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_rmsnorm_backward(&v, &v, nullptr, nullptr, &v, nullptr, 1, 1),
            HMRT_INVALID_ARGUMENT);  // rstd missing
  HMRT_ASSERT_OK(hmrt_layernorm_forward(nullptr, nullptr, nullptr, nullptr,
                                        nullptr, nullptr, 0, 8, 1e-5f));
}

}  // namespace
