// The SIMD helpers of runtime/cpu/vec.h, chiefly the polynomial exp that
// softmax, attention, cross-entropy and SiLU use.
#include <cfloat>
#include <cmath>

#include "cpu/vec.h"
#include "test_util.h"

namespace {

// Distance in ulp of float `got` from the exact value `want`.
double ulp_error(float got, double want) {
  const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::fabs(want), double(FLT_MIN))) - 23);
  return std::fabs(double(got) - want) / ulp;
}

TEST(VecExp, WithinTwoUlpOverTheNormalRange) {
  double worst = 0;
  float at = 0;
  // 2^21 evenly spaced points over [-87, 88] (normal results), plus the
  // neighbourhood of 0 where the reduction is exact.
  const int64_t points = int64_t{1} << 21;
  for (int64_t i = 0; i <= points; ++i) {
    for (float x : {float(-87.0 + 175.0 * double(i) / points),
                    float(double(i - points / 2) * 1e-6)}) {
      const double e = ulp_error(hmrt::vexp1(x), std::exp(double(x)));
      if (e > worst) worst = e, at = x;
    }
  }
  RecordProperty("worst_ulp", std::to_string(worst));
  EXPECT_LE(worst, 2.0) << "at x = " << at;
}

TEST(VecExp, LanesAgreeWithScalar) {
  const hmrt::v4f x = {-3.5f, 0.0f, 1.25f, 70.0f};
  const hmrt::v4f e = hmrt::vexp(x);
  for (int l = 0; l < 4; ++l) EXPECT_EQ(e[l], hmrt::vexp1(x[l]));
}

TEST(VecExp, SpecialValues) {
  EXPECT_EQ(hmrt::vexp1(0.0f), 1.0f);
  EXPECT_EQ(hmrt::vexp1(-INFINITY), 0.0f);
  EXPECT_EQ(hmrt::vexp1(-200.0f), 0.0f);
  EXPECT_EQ(hmrt::vexp1(INFINITY), INFINITY);
  EXPECT_EQ(hmrt::vexp1(89.0f), INFINITY);
  EXPECT_TRUE(std::isnan(hmrt::vexp1(NAN)));
  // Gradual underflow: subnormal results within one subnormal step.
  for (float x : {-88.0f, -95.0f, -100.0f, -103.0f})
    EXPECT_NEAR(hmrt::vexp1(x), std::exp(double(x)), std::ldexp(1.0, -149)) << x;
}

TEST(VecSqrt, CorrectlyRounded) {
  const hmrt::v4f x = {2.0f, 1e-30f, 12345.678f, 0.0f};
  const hmrt::v4f r = hmrt::vsqrt(x);
  for (int l = 0; l < 4; ++l) EXPECT_EQ(r[l], std::sqrt(x[l]));
}

}  // namespace
