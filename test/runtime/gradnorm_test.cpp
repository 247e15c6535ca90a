// Global gradient norm, clipping coefficient and scaling.
// The norm is accumulated in double from exact float squares, so the only
// float rounding is the final one: 2 u relative.
#include <cmath>
#include <string>

#include "reference/reference.h"
#include "test_util.h"

namespace {

TEST(GradNorm, MatchesReference) {
  for (int threads : hmrt_test::thread_counts()) {
    SCOPED_TRACE(threads);
    hmrt_test::ThreadScope scope(threads);
    const int64_t sizes[] = {1, 0, 4095, 4097, 100000, 13};
    std::vector<std::vector<float>> bufs;
    std::vector<std::vector<double>> bufs_d;
    std::vector<const float*> ptrs;
    std::vector<const double*> ptrs_d;
    for (int i = 0; i < 6; ++i) {
      bufs.push_back(hmrt_test::normal_vec(sizes[i], 181 + i));
      bufs_d.push_back(hmrt_test::to_double(bufs.back()));
    }
    for (int i = 0; i < 6; ++i) {
      ptrs.push_back(bufs[i].data());
      ptrs_d.push_back(bufs_d[i].data());
    }
    float norm = 0;
    HMRT_ASSERT_OK(hmrt_global_norm(ptrs.data(), sizes, 6, &norm));
    const double want = hmrt::ref::global_norm(ptrs_d.data(), sizes, 6);
    EXPECT_NEAR(norm, want, 2 * hmrt_test::kU * want);

    // In two steps, as generated programs take it (a running sum, then
    // the norm of it): the same bits.
    std::vector<double> running(6);
    for (int i = 0; i < 6; ++i)
      HMRT_ASSERT_OK(hmrt_add_sum_of_squares(ptrs[i], sizes[i],
                                             i ? &running[i - 1] : nullptr, &running[i]));
    float two_step = 0;
    HMRT_ASSERT_OK(hmrt_norm_of_sum(&running[5], &two_step));
    EXPECT_EQ(two_step, norm);

    double ss = 0;
    HMRT_ASSERT_OK(hmrt_sum_of_squares(bufs[4].data(), sizes[4], &ss));
    const double want_ss = hmrt::ref::global_norm(&ptrs_d[4], &sizes[4], 1);
    EXPECT_NEAR(ss, want_ss * want_ss, 1e-12 * want_ss * want_ss);
  }
}

// Bad arguments are refused in one message naming the function called.
TEST(GradNorm, RunningSumRefusesBadArguments) {
  const float x[2] = {1.0f, 2.0f};
  double out = 0;
  EXPECT_NE(hmrt_add_sum_of_squares(nullptr, 2, nullptr, &out), HMRT_OK);
  EXPECT_NE(std::string(hmrt_last_error()).find("hmrt_add_sum_of_squares"), std::string::npos);
  EXPECT_NE(hmrt_add_sum_of_squares(x, -1, nullptr, &out), HMRT_OK);
  EXPECT_NE(hmrt_add_sum_of_squares(x, 2, nullptr, nullptr), HMRT_OK);
  EXPECT_NE(hmrt_norm_of_sum(nullptr, nullptr), HMRT_OK);
  EXPECT_NE(std::string(hmrt_last_error()).find("hmrt_norm_of_sum"), std::string::npos);
  const double acc = 10.0;
  HMRT_ASSERT_OK(hmrt_add_sum_of_squares(x, 2, &acc, &out));
  EXPECT_EQ(out, 15.0);
}

TEST(GradNorm, IndependentOfThreads) {
  auto x = hmrt_test::normal_vec(1 << 20, 191);
  double first = -1;
  for (int threads : {1, 2, 3, 4}) {
    hmrt_test::ThreadScope scope(threads);
    double s = 0;
    HMRT_ASSERT_OK(hmrt_sum_of_squares(x.data(), int64_t(x.size()), &s));
    if (first < 0)
      first = s;
    else
      EXPECT_EQ(first, s);
  }
}

TEST(GradNorm, ClipCoefficientLikeTorch) {
  float c = 0;
  // clip_grad_norm_: coef = max_norm / (norm + 1e-6), clamped to 1.
  HMRT_ASSERT_OK(hmrt_clip_coefficient(10.0f, 1.0f, &c));
  EXPECT_FLOAT_EQ(c, 1.0f / (10.0f + 1e-6f));
  HMRT_ASSERT_OK(hmrt_clip_coefficient(0.5f, 1.0f, &c));
  EXPECT_EQ(c, 1.0f);
  HMRT_ASSERT_OK(hmrt_clip_coefficient(0.0f, 1.0f, &c));
  EXPECT_EQ(c, 1.0f);
  HMRT_ASSERT_OK(hmrt_clip_coefficient(NAN, 1.0f, &c));
  EXPECT_TRUE(std::isnan(c));
  HMRT_ASSERT_OK(hmrt_clip_coefficient(INFINITY, 1.0f, &c));
  EXPECT_EQ(c, 0.0f);
}

TEST(GradNorm, ScaleAndClipEndToEnd) {
  auto g = hmrt_test::normal_vec(30000, 192);
  const float* ptr = g.data();
  const int64_t n = int64_t(g.size());
  float norm = 0, coef = 0;
  HMRT_ASSERT_OK(hmrt_global_norm(&ptr, &n, 1, &norm));
  HMRT_ASSERT_OK(hmrt_clip_coefficient(norm, 1.0f, &coef));
  HMRT_ASSERT_OK(hmrt_scale(g.data(), n, coef));
  float after = 0;
  HMRT_ASSERT_OK(hmrt_global_norm(&ptr, &n, 1, &after));
  EXPECT_NEAR(after, 1.0f, 1e-5);
}

TEST(GradNorm, RejectsBadArguments) {
  const float* null_buf = nullptr;
  const int64_t one = 1, neg = -1;
  float out = 0;
  EXPECT_EQ(hmrt_global_norm(&null_buf, &one, 1, &out), HMRT_INVALID_ARGUMENT);
  float x = 1;
  const float* px = &x;
  EXPECT_EQ(hmrt_global_norm(&px, &neg, 1, &out), HMRT_INVALID_ARGUMENT);
  HMRT_ASSERT_OK(hmrt_global_norm(nullptr, nullptr, 0, &out));
  EXPECT_EQ(out, 0.0f);
}

}  // namespace
