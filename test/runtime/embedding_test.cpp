// Embedding gather/scatter-add against the double reference.
// Forward is a copy (exact).  Backward adds float rows in token order; the
// double reference differs only by float rounding of those sums, bounded by
// (count of the id) * u * sum|dout|, at most reduction_tol(n) * max sum.
#include "reference/reference.h"
#include "test_util.h"

namespace {

using hmrt_test::to_double;

TEST(Embedding, ForwardBackwardMatchReference) {
  struct Shape {
    int64_t n, vocab, dim;
  };
  const Shape shapes[] = {{1, 1, 1}, {5, 3, 7}, {100, 50, 33}, {513, 1000, 64},
                          {64, 7, 1000}};
  for (const Shape& s : shapes) {
    for (int threads : hmrt_test::thread_counts()) {
      SCOPED_TRACE(testing::Message() << "n=" << s.n << " vocab=" << s.vocab
                                      << " dim=" << s.dim << " threads=" << threads);
      hmrt_test::ThreadScope scope(threads);
      std::vector<int64_t> ids(s.n);
      for (int64_t i = 0; i < s.n; ++i) ids[i] = (i * 7919 + 3) % s.vocab;
      auto w = hmrt_test::random_vec(s.vocab * s.dim, 91);
      auto dout = hmrt_test::random_vec(s.n * s.dim, 92);

      std::vector<double> out_ref(s.n * s.dim);
      hmrt::ref::embedding_forward(ids.data(), to_double(w).data(),
                                   out_ref.data(), s.n, s.dim);
      std::vector<float> out(s.n * s.dim);
      HMRT_ASSERT_OK(hmrt_embedding_forward(ids.data(), w.data(), out.data(),
                                            s.n, s.vocab, s.dim));
      EXPECT_TRUE(hmrt_test::all_close(out, out_ref, 0, 0));

      // Accumulates onto the existing gradient.
      auto dw = hmrt_test::random_vec(s.vocab * s.dim, 93);
      auto dw_ref = to_double(dw);
      hmrt::ref::embedding_backward(ids.data(), to_double(dout).data(),
                                    dw_ref.data(), s.n, s.dim);
      HMRT_ASSERT_OK(hmrt_embedding_backward(ids.data(), dout.data(), dw.data(),
                                             s.n, s.vocab, s.dim));
      EXPECT_TRUE(hmrt_test::all_close(
          dw, dw_ref, hmrt_test::reduction_tol(s.n) * (s.n + 1), 0));
    }
  }
}

TEST(Embedding, BackwardIndependentOfThreads) {
  const int64_t n = 4096, vocab = 17, dim = 96;  // many repeated ids
  std::vector<int64_t> ids(n);
  for (int64_t i = 0; i < n; ++i) ids[i] = (i * i) % vocab;
  auto dout = hmrt_test::random_vec(n * dim, 94);
  std::vector<float> first;
  for (int threads : {1, 2, 3, 4}) {
    hmrt_test::ThreadScope scope(threads);
    std::vector<float> dw(vocab * dim, 0.0f);
    HMRT_ASSERT_OK(hmrt_embedding_backward(ids.data(), dout.data(), dw.data(),
                                           n, vocab, dim));
    if (first.empty())
      first = dw;
    else
      EXPECT_TRUE(hmrt_test::bitwise_equal(first, dw)) << threads;
  }
}

TEST(Embedding, OutOfRangeIdsWriteNothing) {
  const int64_t vocab = 4, dim = 2;
  std::vector<float> w(vocab * dim, 1.0f), out(3 * dim, -7.0f);
  for (int64_t bad : {int64_t{4}, int64_t{-1}, int64_t{1} << 40}) {
    std::vector<int64_t> ids = {0, bad, 1};
    EXPECT_EQ(hmrt_embedding_forward(ids.data(), w.data(), out.data(), 3,
                                     vocab, dim),
              HMRT_OUT_OF_RANGE);
    EXPECT_NE(std::string(hmrt_last_error()).find("ids[1]"), std::string::npos)
        << hmrt_last_error();
    for (float x : out) EXPECT_EQ(x, -7.0f);
    EXPECT_EQ(hmrt_embedding_backward(ids.data(), out.data(), w.data(), 3,
                                      vocab, dim),
              HMRT_OUT_OF_RANGE);
    for (float x : w) EXPECT_EQ(x, 1.0f);
  }
}

}  // namespace
