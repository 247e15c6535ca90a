// Causal attention forward/backward against the double reference, which
// materialises the full (seq x seq) probabilities.
//
// Tolerance: a score s_ij = scale * q_i.k_j has float error up to
// D*u*scale*sum_d |q_id k_jd| <= D*u*scale*|q_i||k_j|; through exp that is a
// relative error of the probabilities; the output and gradient rows are then
// float sums over at most seq keys or D dims.  So we allow
//   (reduction_tol(seq + D) + D*u*scale*max|q||k|) * scale_of_tensor.
#include <cmath>

#include "reference/reference.h"
#include "test_util.h"

namespace {

using hmrt_test::all_close;
using hmrt_test::max_abs;
using hmrt_test::to_double;

struct Shape {
  int64_t batch, heads, seq, dim;
};

double max_row_norm(const std::vector<float>& x, int64_t dim) {
  double m = 0;
  for (size_t r = 0; r < x.size() / dim; ++r) {
    double s = 0;
    for (int64_t d = 0; d < dim; ++d) s += double(x[r * dim + d]) * x[r * dim + d];
    m = std::max(m, std::sqrt(s));
  }
  return m;
}

TEST(CausalAttention, MatchesReference) {
  const Shape shapes[] = {{1, 1, 1, 1},  {1, 2, 5, 3},   {2, 3, 17, 8},
                          {1, 1, 64, 16}, {1, 2, 65, 32}, {2, 1, 130, 64}};
  for (const Shape& s : shapes) {
    for (int threads : hmrt_test::thread_counts()) {
      SCOPED_TRACE(testing::Message() << "B=" << s.batch << " H=" << s.heads
                                      << " T=" << s.seq << " D=" << s.dim
                                      << " threads=" << threads);
      hmrt_test::ThreadScope scope(threads);
      const int64_t n = s.batch * s.heads * s.seq * s.dim;
      const int64_t nl = s.batch * s.heads * s.seq;
      const float scale = 1.0f / std::sqrt(float(s.dim));
      auto q = hmrt_test::normal_vec(n, 61), k = hmrt_test::normal_vec(n, 62);
      auto v = hmrt_test::normal_vec(n, 63), dout = hmrt_test::normal_vec(n, 64);
      auto qd = to_double(q), kd = to_double(k), vd = to_double(v);

      std::vector<double> out_ref(n), lse_ref(nl);
      hmrt::ref::attention_forward(qd.data(), kd.data(), vd.data(),
                                   out_ref.data(), lse_ref.data(), s.batch,
                                   s.heads, s.seq, s.dim, scale);
      std::vector<float> out(n), lse(nl);
      HMRT_ASSERT_OK(hmrt_causal_attention_forward(
          q.data(), k.data(), v.data(), out.data(), lse.data(), s.batch,
          s.heads, s.seq, s.dim, scale));
      const double tol =
          hmrt_test::reduction_tol(s.seq + s.dim) +
          s.dim * hmrt_test::kU * scale * max_row_norm(q, s.dim) * max_row_norm(k, s.dim);
      EXPECT_TRUE(all_close(out, out_ref, tol * max_abs(out_ref), 0));
      EXPECT_TRUE(all_close(lse, lse_ref, tol * (max_abs(lse_ref) + 1), 0));

      std::vector<double> dq_ref(n), dk_ref(n), dv_ref(n);
      hmrt::ref::attention_backward(qd.data(), kd.data(), vd.data(),
                                    to_double(dout).data(), dq_ref.data(),
                                    dk_ref.data(), dv_ref.data(), s.batch,
                                    s.heads, s.seq, s.dim, scale);
      // Outputs start as garbage: backward overwrites them.
      std::vector<float> dq(n, NAN), dk(n, NAN), dv(n, NAN);
      HMRT_ASSERT_OK(hmrt_causal_attention_backward(
          q.data(), k.data(), v.data(), out.data(), lse.data(), dout.data(),
          dq.data(), dk.data(), dv.data(), s.batch, s.heads, s.seq, s.dim,
          scale));
      EXPECT_TRUE(all_close(dq, dq_ref, tol * max_abs(dq_ref), 0));
      EXPECT_TRUE(all_close(dk, dk_ref, tol * max_abs(dk_ref), 0));
      EXPECT_TRUE(all_close(dv, dv_ref, tol * max_abs(dv_ref), 0));
    }
  }
}

TEST(CausalAttention, FirstRowCopiesV) {
  // Query 0 sees only key 0, so out[0] = v[0] exactly and lse[0] = s_00.
  const int64_t T = 4, D = 3;
  auto q = hmrt_test::normal_vec(T * D, 65), k = hmrt_test::normal_vec(T * D, 66);
  auto v = hmrt_test::normal_vec(T * D, 67);
  std::vector<float> out(T * D), lse(T);
  HMRT_ASSERT_OK(hmrt_causal_attention_forward(q.data(), k.data(), v.data(),
                                               out.data(), lse.data(), 1, 1, T,
                                               D, 0.5f));
  for (int d = 0; d < D; ++d) EXPECT_EQ(out[d], v[d]);
  const double s00 = 0.5 * (double(q[0]) * k[0] + double(q[1]) * k[1] + double(q[2]) * k[2]);
  EXPECT_NEAR(lse[0], s00, 1e-5);
}

TEST(CausalAttention, IndependentOfThreads) {
  const int64_t B = 2, H = 3, T = 70, D = 16, n = B * H * T * D;
  auto q = hmrt_test::normal_vec(n, 68), k = hmrt_test::normal_vec(n, 69);
  auto v = hmrt_test::normal_vec(n, 70), dout = hmrt_test::normal_vec(n, 71);
  std::vector<float> first;
  for (int threads : {1, 2, 4}) {
    hmrt_test::ThreadScope scope(threads);
    std::vector<float> out(n), lse(B * H * T), dq(n), dk(n), dv(n);
    HMRT_ASSERT_OK(hmrt_causal_attention_forward(q.data(), k.data(), v.data(),
                                                 out.data(), lse.data(), B, H,
                                                 T, D, 0.25f));
    HMRT_ASSERT_OK(hmrt_causal_attention_backward(
        q.data(), k.data(), v.data(), out.data(), lse.data(), dout.data(),
        dq.data(), dk.data(), dv.data(), B, H, T, D, 0.25f));
    std::vector<float> all = out;
    for (auto* t : {&dq, &dk, &dv}) all.insert(all.end(), t->begin(), t->end());
    if (first.empty())
      first = all;
    else
      EXPECT_TRUE(hmrt_test::bitwise_equal(first, all)) << threads;
  }
}

TEST(CausalAttention, RejectsBadArguments) {
  float x = 0;
  EXPECT_EQ(hmrt_causal_attention_forward(&x, &x, &x, &x, nullptr, 1, 1, -1,
                                          1, 1.0f),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_causal_attention_backward(&x, &x, &x, &x, nullptr, &x, &x,
                                           &x, &x, 1, 1, 1, 1, 1.0f),
            HMRT_INVALID_ARGUMENT);  // lse is required
}

}  // namespace
