// Softmax and log-softmax forward/backward against the double reference.
//
// Tolerance: each output is exp of a difference divided by (or minus the log
// of) a float sum of `cols` terms, and backward adds one more row sum, so
// the error is bounded by reduction_tol(cols) relative to the row's scale
// (max |y| for softmax, max |x| + log(cols) for log-softmax, max |dx|).
#include "reference/reference.h"
#include "test_util.h"

namespace {

using hmrt_test::all_close;
using hmrt_test::max_abs;
using hmrt_test::reduction_tol;
using hmrt_test::to_double;

struct Shape {
  int64_t rows, cols;
};
const Shape kShapes[] = {{1, 1}, {2, 3}, {19, 8}, {33, 100}, {5, 1023}, {200, 17}};

TEST(Softmax, MatchesReference) {
  for (const Shape& s : kShapes) {
    for (int threads : hmrt_test::thread_counts()) {
      SCOPED_TRACE(testing::Message() << "rows=" << s.rows << " cols="
                                      << s.cols << " threads=" << threads);
      hmrt_test::ThreadScope scope(threads);
      const int64_t n = s.rows * s.cols;
      // Large logits check the max subtraction.
      auto x = hmrt_test::random_vec(n, 51, -30.0f, 60.0f);
      auto dy = hmrt_test::random_vec(n, 52);
      std::vector<double> y_ref(n), dx_ref(n);
      hmrt::ref::softmax_forward(to_double(x).data(), y_ref.data(), s.rows, s.cols);
      std::vector<float> y(n), dx(n);
      HMRT_ASSERT_OK(hmrt_softmax_forward(x.data(), y.data(), s.rows, s.cols));
      // exp(x - m) with |x - m| <= 90 carries 90 u from rounding x - m.
      const double tol = reduction_tol(s.cols) + 90 * hmrt_test::kU;
      EXPECT_TRUE(all_close(y, y_ref, tol * max_abs(y_ref), 0));
      // Backward from the float forward output (what training feeds it).
      hmrt::ref::softmax_backward(to_double(y).data(), to_double(dy).data(),
                                  dx_ref.data(), s.rows, s.cols);
      HMRT_ASSERT_OK(hmrt_softmax_backward(y.data(), dy.data(), dx.data(),
                                           s.rows, s.cols));
      EXPECT_TRUE(all_close(dx, dx_ref, tol * (max_abs(dx_ref) + 1), 0));

      // In place.
      auto y2 = x;
      HMRT_ASSERT_OK(hmrt_softmax_forward(y2.data(), y2.data(), s.rows, s.cols));
      EXPECT_TRUE(hmrt_test::bitwise_equal(y, y2));
    }
  }
}

TEST(LogSoftmax, MatchesReference) {
  for (const Shape& s : kShapes) {
    for (int threads : hmrt_test::thread_counts()) {
      SCOPED_TRACE(testing::Message() << "rows=" << s.rows << " cols="
                                      << s.cols << " threads=" << threads);
      hmrt_test::ThreadScope scope(threads);
      const int64_t n = s.rows * s.cols;
      auto x = hmrt_test::random_vec(n, 53, -30.0f, 60.0f);
      auto dy = hmrt_test::random_vec(n, 54);
      std::vector<double> y_ref(n), dx_ref(n);
      hmrt::ref::log_softmax_forward(to_double(x).data(), y_ref.data(), s.rows,
                                     s.cols);
      std::vector<float> y(n), dx(n);
      HMRT_ASSERT_OK(hmrt_log_softmax_forward(x.data(), y.data(), s.rows, s.cols));
      const double tol = reduction_tol(s.cols) + 90 * hmrt_test::kU;
      EXPECT_TRUE(all_close(y, y_ref, tol * (60 + std::log(double(s.cols)) + 1), 0));
      hmrt::ref::log_softmax_backward(to_double(y).data(), to_double(dy).data(),
                                      dx_ref.data(), s.rows, s.cols);
      HMRT_ASSERT_OK(hmrt_log_softmax_backward(y.data(), dy.data(), dx.data(),
                                               s.rows, s.cols));
      EXPECT_TRUE(all_close(dx, dx_ref, tol * (max_abs(dx_ref) + 1), 0));
      auto y2 = x;
      HMRT_ASSERT_OK(hmrt_log_softmax_forward(y2.data(), y2.data(), s.rows, s.cols));
      EXPECT_TRUE(hmrt_test::bitwise_equal(y, y2));
    }
  }
}

TEST(Softmax, RowsSumToOne) {
  auto x = hmrt_test::random_vec(7 * 1000, 55, -5.0f, 5.0f);
  std::vector<float> y(x.size());
  HMRT_ASSERT_OK(hmrt_softmax_forward(x.data(), y.data(), 7, 1000));
  for (int r = 0; r < 7; ++r) {
    double s = 0;
    for (int c = 0; c < 1000; ++c) s += y[r * 1000 + c];
    EXPECT_NEAR(s, 1.0, hmrt_test::reduction_tol(1000));
  }
}

TEST(Softmax, RejectsZeroColumns) {
  float v = 0;
  EXPECT_EQ(hmrt_softmax_forward(&v, &v, 2, 0), HMRT_INVALID_ARGUMENT);
  HMRT_ASSERT_OK(hmrt_softmax_forward(nullptr, nullptr, 0, 0));
}

}  // namespace
