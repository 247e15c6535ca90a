// Rotary embedding forward/backward against the double reference.
//
// Tolerance: each output is x1*c -/+ x2*s, three float roundings of terms
// bounded by |x| (|cos|, |sin| <= 1), so 4 u * max|x| bounds the error.
#include <cmath>

#include "reference/reference.h"
#include "test_util.h"

namespace {

using hmrt_test::all_close;
using hmrt_test::to_double;

// cos/sin tables as HF Llama builds them: freqs = t * base^(-2i/rot_dim),
// emb = cat(freqs, freqs).
void tables(int64_t seq, int64_t rot_dim, std::vector<float>& cos,
            std::vector<float>& sin) {
  cos.resize(seq * rot_dim);
  sin.resize(seq * rot_dim);
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t i = 0; i < rot_dim; ++i) {
      const double f =
          t * std::pow(10000.0, -2.0 * (i % (rot_dim / 2)) / double(rot_dim));
      cos[t * rot_dim + i] = float(std::cos(f));
      sin[t * rot_dim + i] = float(std::sin(f));
    }
}

TEST(Rope, MatchesReference) {
  struct Shape {
    int64_t outer, seq, head_dim, rot_dim;
  };
  const Shape shapes[] = {{1, 1, 2, 2}, {3, 7, 8, 8}, {4, 33, 64, 64},
                          {2, 5, 10, 4}, {6, 130, 32, 16}};
  for (const Shape& s : shapes) {
    for (int threads : hmrt_test::thread_counts()) {
      SCOPED_TRACE(testing::Message() << "outer=" << s.outer << " seq=" << s.seq
                                      << " head_dim=" << s.head_dim << " rot_dim="
                                      << s.rot_dim << " threads=" << threads);
      hmrt_test::ThreadScope scope(threads);
      const int64_t n = s.outer * s.seq * s.head_dim;
      std::vector<float> cos, sin;
      tables(s.seq, s.rot_dim, cos, sin);
      auto x = hmrt_test::random_vec(n, 81), dy = hmrt_test::random_vec(n, 82);
      std::vector<double> y_ref(n), dx_ref(n);
      hmrt::ref::rope_forward(to_double(x).data(), to_double(cos).data(),
                              to_double(sin).data(), y_ref.data(), s.outer,
                              s.seq, s.head_dim, s.rot_dim);
      hmrt::ref::rope_backward(to_double(dy).data(), to_double(cos).data(),
                               to_double(sin).data(), dx_ref.data(), s.outer,
                               s.seq, s.head_dim, s.rot_dim);
      std::vector<float> y(n), dx(n);
      HMRT_ASSERT_OK(hmrt_rope_forward(x.data(), cos.data(), sin.data(),
                                       y.data(), s.outer, s.seq, s.head_dim,
                                       s.rot_dim));
      HMRT_ASSERT_OK(hmrt_rope_backward(dy.data(), cos.data(), sin.data(),
                                        dx.data(), s.outer, s.seq, s.head_dim,
                                        s.rot_dim));
      EXPECT_TRUE(all_close(y, y_ref, 4 * hmrt_test::kU, 0));
      EXPECT_TRUE(all_close(dx, dx_ref, 4 * hmrt_test::kU, 0));

      // In place, and backward undoes forward (the rotation is orthogonal).
      auto z = x;
      HMRT_ASSERT_OK(hmrt_rope_forward(z.data(), cos.data(), sin.data(),
                                       z.data(), s.outer, s.seq, s.head_dim,
                                       s.rot_dim));
      EXPECT_TRUE(hmrt_test::bitwise_equal(y, z));
      HMRT_ASSERT_OK(hmrt_rope_backward(z.data(), cos.data(), sin.data(),
                                        z.data(), s.outer, s.seq, s.head_dim,
                                        s.rot_dim));
      EXPECT_TRUE(all_close(z, to_double(x), 8 * hmrt_test::kU, 0));
    }
  }
}

TEST(Rope, RejectsOddRotDim) {
  float v[8] = {};
  EXPECT_EQ(hmrt_rope_forward(v, v, v, v, 1, 1, 4, 3), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_rope_forward(v, v, v, v, 1, 1, 4, 6), HMRT_INVALID_ARGUMENT);
}

}  // namespace
