// GELU, SiLU and ReLU forward/backward against the double reference.
//
// Tolerance: glibc's erff/expf are accurate to a couple of ulp and each
// formula adds at most ~6 float roundings, so every term carries a relative
// error below 16 u.  GELU' = Phi(x) + x*phi(x) and SiLU' = s + x*s*(1-s)
// cancel near their zeros, so the error is bounded by 16 u times the size of
// the terms, |dy| * (1 + |x|), not by the size of the result.
#include <functional>

#include "reference/reference.h"
#include "test_util.h"

namespace {

using hmrt_test::kU;

using Fwd = hmrt_status (*)(const float*, float*, int64_t);
using Bwd = hmrt_status (*)(const float*, const float*, float*, int64_t);
using RefFwd = void (*)(const double*, double*, int64_t);
using RefBwd = void (*)(const double*, const double*, double*, int64_t);

struct Activation {
  const char* name;
  Fwd fwd;
  Bwd bwd;
  RefFwd ref_fwd;
  RefBwd ref_bwd;
};

// Names the parameter in test listings (instead of a byte dump).
void PrintTo(const Activation& act, std::ostream* os) { *os << act.name; }

class Activations : public testing::TestWithParam<Activation> {};

TEST_P(Activations, ForwardBackwardMatchReference) {
  const Activation& act = GetParam();
  for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{70001}}) {
    for (int threads : hmrt_test::thread_counts()) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " threads=" << threads);
      hmrt_test::ThreadScope scope(threads);
      auto x = hmrt_test::random_vec(n, 11, -8.0f, 8.0f);
      if (n > 2) x[0] = 0.0f, x[1] = -0.0f;
      auto dy = hmrt_test::random_vec(n, 12);
      std::vector<double> want_y(n), want_dx(n), tol_y(n), tol_dx(n);
      act.ref_fwd(hmrt_test::to_double(x).data(), want_y.data(), n);
      act.ref_bwd(hmrt_test::to_double(x).data(), hmrt_test::to_double(dy).data(),
                  want_dx.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        tol_y[i] = 16 * kU * std::fabs(x[i]) + 1e-30;
        tol_dx[i] = 16 * kU * std::fabs(dy[i]) * (1.0 + std::fabs(x[i])) + 1e-30;
      }
      std::vector<float> y(n), dx(n);
      HMRT_ASSERT_OK(act.fwd(x.data(), y.data(), n));
      HMRT_ASSERT_OK(act.bwd(x.data(), dy.data(), dx.data(), n));
      EXPECT_TRUE(hmrt_test::all_close(y, want_y, tol_y));
      EXPECT_TRUE(hmrt_test::all_close(dx, want_dx, tol_dx));

      // In place gives the same bits.
      auto y2 = x;
      HMRT_ASSERT_OK(act.fwd(y2.data(), y2.data(), n));
      EXPECT_TRUE(hmrt_test::bitwise_equal(y, y2));
      auto dx2 = dy;
      HMRT_ASSERT_OK(act.bwd(x.data(), dx2.data(), dx2.data(), n));
      EXPECT_TRUE(hmrt_test::bitwise_equal(dx, dx2));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cpu, Activations,
    testing::Values(
        Activation{"Gelu", hmrt_gelu_forward, hmrt_gelu_backward,
                   hmrt::ref::gelu_forward, hmrt::ref::gelu_backward},
        Activation{"Silu", hmrt_silu_forward, hmrt_silu_backward,
                   hmrt::ref::silu_forward, hmrt::ref::silu_backward},
        Activation{"Relu", hmrt_relu_forward, hmrt_relu_backward,
                   hmrt::ref::relu_forward, hmrt::ref::relu_backward}),
    [](const testing::TestParamInfo<Activation>& p) { return p.param.name; });

TEST(Activations, KnownValues) {
  // GELU(1) = 0.5 * (1 + erf(1/sqrt 2)) = 0.841344746...
  float x[3] = {1.0f, -1.0f, 0.0f}, y[3];
  HMRT_ASSERT_OK(hmrt_gelu_forward(x, y, 3));
  EXPECT_NEAR(y[0], 0.8413447460685429, 1e-7);
  EXPECT_NEAR(y[1], -0.15865525393145707, 1e-7);
  EXPECT_EQ(y[2], 0.0f);
  HMRT_ASSERT_OK(hmrt_silu_forward(x, y, 3));
  EXPECT_NEAR(y[0], 0.7310585786300049, 1e-7);
  float nan_in = NAN, out = 0;
  HMRT_ASSERT_OK(hmrt_relu_forward(&nan_in, &out, 1));
  EXPECT_TRUE(std::isnan(out));  // like torch.relu
}

TEST(Activations, RejectBadArguments) {
  float x = 0;
  EXPECT_EQ(hmrt_gelu_forward(&x, &x, -1), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_silu_backward(nullptr, &x, &x, 1), HMRT_INVALID_ARGUMENT);
  HMRT_ASSERT_OK(hmrt_relu_forward(nullptr, nullptr, 0));
}

}  // namespace
