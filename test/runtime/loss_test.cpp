// Softmax cross-entropy (mean reduction, ignore_index) against the double
// reference.
//
// Tolerance: each row loss is lse - x_t with lse from a float sum of
// `classes` exponentials, so per-row error is below reduction_tol(classes)
// times (|lse| + |x_t|); the mean adds nothing (double accumulation).  The
// gradient elements are exp(x - lse) * dloss / count: the same relative
// error on each.
#include "reference/reference.h"
#include "test_util.h"

namespace {

using hmrt_test::to_double;

TEST(CrossEntropy, MatchesReference) {
  struct Shape {
    int64_t rows, classes;
  };
  const Shape shapes[] = {{1, 1}, {1, 2}, {7, 10}, {64, 1000}, {33, 50257}};
  for (const Shape& s : shapes) {
    for (bool with_lse : {true, false}) {
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message() << "rows=" << s.rows << " classes="
                                        << s.classes << " lse=" << with_lse
                                        << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        const int64_t n = s.rows * s.classes;
        auto logits = hmrt_test::random_vec(n, 101, -10.0f, 10.0f);
        std::vector<int64_t> targets(s.rows);
        for (int64_t r = 0; r < s.rows; ++r)
          targets[r] = r % 5 == 3 ? -100 : (r * 31 + 7) % s.classes;
        const double loss_ref = hmrt::ref::cross_entropy_forward(
            to_double(logits).data(), targets.data(), s.rows, s.classes, -100);
        float loss = 0;
        std::vector<float> lse(s.rows);
        HMRT_ASSERT_OK(hmrt_cross_entropy_forward(
            logits.data(), targets.data(), &loss, with_lse ? lse.data() : nullptr,
            s.rows, s.classes, -100));
        const double tol = hmrt_test::reduction_tol(s.classes);
        EXPECT_NEAR(loss, loss_ref, tol * (20 + std::log(double(s.classes))));

        const float dloss = 0.7f;
        std::vector<double> d_ref(n);
        hmrt::ref::cross_entropy_backward(to_double(logits).data(),
                                          targets.data(), dloss, d_ref.data(),
                                          s.rows, s.classes, -100);
        std::vector<float> d(n, NAN);
        HMRT_ASSERT_OK(hmrt_cross_entropy_backward(
            logits.data(), targets.data(), with_lse ? lse.data() : nullptr,
            &dloss, d.data(), s.rows, s.classes, -100));
        // Scale of the gradient is dloss/count; the target entry p - 1 can
        // cancel, so the bound is absolute.
        const double g = dloss / std::max(1.0, double(s.rows - s.rows / 5));
        EXPECT_TRUE(hmrt_test::all_close(d, d_ref, tol * 30 * g, 0));
        // Ignored rows have zero gradient.
        for (int64_t r = 0; r < s.rows; ++r) {
          if (targets[r] != -100) continue;
          for (int64_t c = 0; c < s.classes; ++c)
            ASSERT_EQ(d[r * s.classes + c], 0.0f);
        }

        // In place (dlogits == logits) gives the same bits.
        auto inplace = logits;
        HMRT_ASSERT_OK(hmrt_cross_entropy_backward(
            inplace.data(), targets.data(), with_lse ? lse.data() : nullptr,
            &dloss, inplace.data(), s.rows, s.classes, -100));
        EXPECT_TRUE(hmrt_test::bitwise_equal(d, inplace));
      }
    }
  }
}

TEST(CrossEntropy, UniformLogitsGiveLogClasses) {
  std::vector<float> logits(4 * 8, 3.0f);
  std::vector<int64_t> targets = {0, 7, 3, 5};
  float loss = 0;
  HMRT_ASSERT_OK(hmrt_cross_entropy_forward(logits.data(), targets.data(),
                                            &loss, nullptr, 4, 8, -100));
  EXPECT_NEAR(loss, std::log(8.0), 1e-6);
}

TEST(CrossEntropy, AllIgnoredIsNanWithZeroGradient) {
  std::vector<float> logits = {1, 2, 3, 4};
  std::vector<int64_t> targets = {-100, -100};
  float loss = 0;
  HMRT_ASSERT_OK(hmrt_cross_entropy_forward(logits.data(), targets.data(),
                                            &loss, nullptr, 2, 2, -100));
  EXPECT_TRUE(std::isnan(loss));  // as torch: 0 / 0
  const float dloss = 1.0f;
  std::vector<float> d(4, NAN);
  HMRT_ASSERT_OK(hmrt_cross_entropy_backward(logits.data(), targets.data(),
                                             nullptr, &dloss, d.data(), 2, 2,
                                             -100));
  for (float x : d) EXPECT_EQ(x, 0.0f);
}

TEST(CrossEntropy, BadTargetsAreOutOfRange) {
  std::vector<float> logits(6, 0.0f);
  float loss = -1;
  for (int64_t bad : {int64_t{3}, int64_t{-1}, int64_t{-100}}) {
    std::vector<int64_t> targets = {0, bad};
    // With ignore_index -1, -100 is just out of range.
    EXPECT_EQ(hmrt_cross_entropy_forward(logits.data(), targets.data(), &loss,
                                         nullptr, 2, 3, bad == -1 ? -7 : -1),
              HMRT_OUT_OF_RANGE);
    EXPECT_NE(std::string(hmrt_last_error()).find("targets[1]"),
              std::string::npos);
  }
  EXPECT_EQ(loss, -1.0f);
}

}  // namespace
