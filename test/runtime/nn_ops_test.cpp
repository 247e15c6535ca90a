// The ONNX-semantics ops of hmrt/nn_ops.h against the double-precision
// references of reference/nn_ops_reference.h, plus hand-computed values, argument
// checks, and the gradients (kernel and reference) against central finite
// differences of the reference forward.
//
// Tolerances (u = 2^-24, the float unit roundoff; see test_util.h):
//  - MatMul/Gemm: a float dot product of length K has error at most
//    gamma_K * sum_p |a_ip||b_pj| (Higham 3.1); Gemm adds beta*C (one more
//    rounding), so each element may be off by (K + 4) u (|alpha| |A||B| +
//    |beta C|), computed per element with the reference on |A|, |B|, |C|.
//  - Reduce: sums and means are accumulated in double and rounded once, so
//    the error is 1 rounding of the result plus the double sum's
//    n * 2^-53 * sum|x|; we allow 2u |y| + 2u * sum|x| / count.  Max is exact.
//  - Softmax: each output is an exp of a difference divided by (or minus the
//    log of) a float sum of n terms: reduction_tol(n) relative to the scale
//    of the row (max |y| for softmax, max |x| + log n for log-softmax), plus
//    |x - m| u from rounding the argument of exp (up to 90 here).
//  - LayerNorm: as norm_test.cpp (row sums in float, column sums in double).
//  - SoftmaxCrossEntropyLoss: each element's loss is w * (lse - x_t) with lse
//    from a float sum of C exponentials: error <= reduction_tol(C) * |w| *
//    (max|x| + log C + 1); the sums over elements are in double.  The
//    gradient k * (p - onehot) has error <= |k| * that same relative term.
//  - Finite differences in double with h = 1e-5 have truncation error
//    O(h^2) ~ 1e-10 and rounding ~ 1e-16 |L| / h; the reference gradients are
//    held to 1e-6 relative, the float kernels to their float tolerance.
#include <cmath>
#include <cstring>
#include <functional>
#include <string>

#include "cpu/gemm_select.h"
#include "reference/nn_ops_reference.h"
#include "hmrt/nn_ops.h"
#include "hmrt/tensor_ops.h"
#include "test_util.h"

namespace {

using hmrt::ref::Shape;
using hmrt_test::all_close;
using hmrt_test::kU;
using hmrt_test::max_abs;
using hmrt_test::reduction_tol;
using hmrt_test::to_double;
using Vec = std::vector<double>;

int64_t numel(const Shape& s) { return hmrt::ref::numel(s); }
int32_t rank_of(const Shape& s) { return static_cast<int32_t>(s.size()); }

std::string str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

Vec abs_of(const std::vector<float>& v) {
  Vec r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = std::fabs(v[i]);
  return r;
}

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Central finite differences of the scalar function L at x, per element.
Vec fd_grad(const std::function<double(const Vec&)>& L, const Vec& x) {
  const double h = 1e-5;
  Vec g(x.size()), xp = x;
  for (size_t i = 0; i < x.size(); ++i) {
    xp[i] = x[i] + h;
    const double lp = L(xp);
    xp[i] = x[i] - h;
    const double lm = L(xp);
    xp[i] = x[i];
    g[i] = (lp - lm) / (2 * h);
  }
  return g;
}

// The reference gradient against finite differences (double, tight).
::testing::AssertionResult near_fd(const Vec& grad, const Vec& fd) {
  const double scale = std::max(1e-3, max_abs(fd));
  for (size_t i = 0; i < fd.size(); ++i)
    if (!(std::fabs(grad[i] - fd[i]) <= 1e-6 * scale))
      return ::testing::AssertionFailure()
             << "element " << i << ": analytic " << grad[i] << ", FD " << fd[i];
  return ::testing::AssertionSuccess();
}

std::vector<uint8_t> mask_of(const Shape& s, unsigned bits) {
  std::vector<uint8_t> m(s.size());
  for (size_t d = 0; d < s.size(); ++d) m[d] = (bits >> d) & 1;
  return m;
}
std::vector<bool> bool_mask(const std::vector<uint8_t>& m) {
  return std::vector<bool>(m.begin(), m.end());
}
int64_t kept_numel(const Shape& s, const std::vector<uint8_t>& m) {
  int64_t n = 1;
  for (size_t d = 0; d < s.size(); ++d)
    if (!m[d]) n *= s[d];
  return n;
}

// ---- MatMul ------------------------------------------------------------------

struct MatMulCase {
  Shape sa;
  int ta;
  Shape sb;
  int tb;
};

TEST(NnOpsMatMul, MatchesReference) {
  const MatMulCase cases[] = {
      {{2, 4, 16, 8}, 0, {8, 16}, 0},       // b broadcast over a 2-dim batch
      {{16}, 0, {2, 16, 8}, 0},             // row vector x batch
      {{2, 1, 3, 4}, 0, {5, 4, 6}, 0},      // mixed broadcast: outer loop
      {{2, 1, 4, 3}, 1, {5, 6, 4}, 1},      // same, both transposed
      {{2, 3, 6, 4}, 1, {3, 6, 5}, 0},      // a transposed, b batch broadcast
      {{3, 7, 5}, 0, {3, 9, 5}, 1},         // b transposed
      {{4, 1, 5, 3}, 0, {1, 6, 3, 2}, 0},   // [4,1] x [1,6] batch
      {{3, 5}, 0, {5}, 0},                  // matrix x column vector
      {{2, 3, 5}, 1, {3}, 1},               // transposed a x vector (tb ignored)
      {{7}, 1, {7}, 0},                     // dot product (rank-0 result)
      {{33, 70}, 0, {70, 41}, 0},           // plain 2-D, edge tiles
      {{2, 1, 128, 96}, 0, {3, 96, 80}, 0},  // large: threads inside each GEMM
      {{2, 3, 0}, 0, {0, 4}, 0},            // K == 0: zeros
      {{0, 3, 4}, 0, {4, 5}, 0},            // empty batch
      {{1, 1, 2, 3}, 0, {1, 3, 2}, 0},      // size-1 batch dims
  };
  for (const MatMulCase& c : cases) {
    auto a = hmrt_test::random_vec(numel(c.sa), 1);
    auto b = hmrt_test::random_vec(numel(c.sb), 2);
    Vec want, bound;
    const Shape sy = hmrt::ref::matmul(to_double(a), c.sa, c.ta, to_double(b),
                                       c.sb, c.tb, want);
    hmrt::ref::matmul(abs_of(a), c.sa, c.ta, abs_of(b), c.sb, c.tb, bound);
    const int64_t K = c.sa.size() == 1 ? c.sa[0]
                                       : (c.ta ? c.sa[c.sa.size() - 2] : c.sa.back());
    for (double& v : bound) v *= (K + 4) * kU;
    // The engines as measured, then the runtime's own forced: only it is
    // reproducible across thread counts, bit for bit.
    for (const char* engine : {"auto", "own"}) {
      hmrt::gemm_select_reset_for_test("", engine);
      std::vector<float> first;
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message() << str(c.sa) << (c.ta ? "T" : "") << " x "
                                        << str(c.sb) << (c.tb ? "T" : "")
                                        << " threads=" << threads << " engine=" << engine);
        hmrt_test::ThreadScope scope(threads);
        std::vector<float> y(want.size(), NAN);
        HMRT_ASSERT_OK(hmrt_matmul_f32(a.data(), rank_of(c.sa), c.sa.data(), c.ta,
                                       b.data(), rank_of(c.sb), c.sb.data(), c.tb,
                                       y.data(), rank_of(sy), sy.data()));
        EXPECT_TRUE(all_close(y, want, bound));
        if (first.empty())
          first = y;
        else if (std::string(engine) == "own")
          EXPECT_TRUE(hmrt_test::bitwise_equal(first, y));
      }
    }
    hmrt::gemm_select_reset_for_test("", "auto");
  }
}

TEST(NnOpsMatMul, ResultShapes) {
  // Shapes the reference derives, spelled out: the rules themselves.
  Vec y;
  EXPECT_EQ(hmrt::ref::matmul(Vec(16), {16}, false, Vec(256), {2, 16, 8}, false, y),
            (Shape{2, 8}));
  EXPECT_EQ(hmrt::ref::matmul(Vec(72), {2, 1, 3, 4}, false, Vec(120), {5, 4, 6},
                              false, y),
            (Shape{2, 5, 3, 6}));
  EXPECT_EQ(hmrt::ref::matmul(Vec(7), {7}, false, Vec(7), {7}, false, y), Shape{});
  EXPECT_EQ(hmrt::ref::matmul(Vec(15), {3, 5}, false, Vec(5), {5}, false, y),
            Shape{3});
}

TEST(NnOpsMatMul, HandComputed) {
  const float a[] = {1, 2, 3, 4, 5, 6};     // [2, 3]
  const float b[] = {7, 8, 9, 10, 11, 12};  // [3, 2]
  const int64_t sa[] = {2, 3}, sb[] = {3, 2}, sy[] = {2, 2};
  float y[4];
  HMRT_ASSERT_OK(hmrt_matmul_f32(a, 2, sa, 0, b, 2, sb, 0, y, 2, sy));
  EXPECT_EQ(y[0], 58);
  EXPECT_EQ(y[1], 64);
  EXPECT_EQ(y[2], 139);
  EXPECT_EQ(y[3], 154);
  // a^T [3,2] x a [2,3]... here: a stored [2,3] transposed is [3,2];
  // times b^T ([2,3]) gives [3,3]; entry (0,0) = 1*7 + 4*8 = 39.
  float z[9];
  const int64_t sz[] = {3, 3};
  HMRT_ASSERT_OK(hmrt_matmul_f32(a, 2, sa, 1, b, 2, sb, 1, z, 2, sz));
  EXPECT_EQ(z[0], 39);
  EXPECT_EQ(z[8], 3 * 11 + 6 * 12);
  // Vector . vector is a scalar.
  const int64_t s3[] = {3};
  float d = 0;
  HMRT_ASSERT_OK(hmrt_matmul_f32(a, 1, s3, 0, a + 3, 1, s3, 0, &d, 0, nullptr));
  EXPECT_EQ(d, 1 * 4 + 2 * 5 + 3 * 6);
}

// x rounded to bfloat16, nearest even, written here from the format's
// definition (not core/float16.h): the 16 low bits are dropped after adding
// half of the kept last bit's weight, ties to the even one.
float to_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

// The top 16 bits of x's pattern (a bf16 value, after to_bf16).
uint16_t bf16_bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return uint16_t(bits >> 16);
}

// hmrt_round_bf16 rounds to nearest even (ties both ways, the carry into
// the exponent, overflow to infinity), keeps infinities and NaN a NaN, and
// differs from hmrt_cast's truncation.
TEST(NnOpsRoundBf16, RoundsToNearestEven) {
  std::vector<float> x = hmrt_test::random_vec(4099, 7, -3.0f, 3.0f);
  const float specials[] = {1.0f + 0x1p-8f,  // a tie, to the even 1.0
                            1.0f + 0x3p-8f,  // a tie, up to the even one
                            1.0f + 0x1.01p-8f, 0x1.ffffp0f, -0x1.ffffp0f,
                            0x1.ffp127f,  // a tie above the largest bf16: to infinity
                            INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f};
  x.insert(x.end(), std::begin(specials), std::end(specials));
  std::vector<uint16_t> got(x.size()), cut(x.size());
  HMRT_ASSERT_OK(hmrt_round_bf16(x.data(), got.data(), int64_t(x.size())));
  HMRT_ASSERT_OK(
      hmrt_cast(HMRT_DTYPE_F32, x.data(), HMRT_DTYPE_BF16, cut.data(), int64_t(x.size())));
  size_t differ = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(got[i], bf16_bits(to_bf16(x[i]))) << i << ": " << x[i];
    differ += got[i] != cut[i];
  }
  EXPECT_GT(differ, x.size() / 4);  // about half round up
  EXPECT_EQ(got[x.size() - 11], bf16_bits(1.0f));
  EXPECT_EQ(got[x.size() - 10], bf16_bits(1.0f + 0x4p-8f));
  EXPECT_EQ(got[x.size() - 6], bf16_bits(INFINITY));
  const float nan = std::nanf("");
  uint16_t n = 0;
  HMRT_ASSERT_OK(hmrt_round_bf16(&nan, &n, 1));
  EXPECT_EQ(n & 0x7f80u, 0x7f80u);  // all-ones exponent
  EXPECT_NE(n & 0x007fu, 0u);       // and a mantissa: a NaN
  EXPECT_EQ(hmrt_round_bf16(nullptr, got.data(), 1), HMRT_INVALID_ARGUMENT);
}

// MatMul and Gemm with bf16 products, of fp32 operands (rounded by the
// kernel), bf16 ones or one of each, equal the fp32 kernels run on the same values in
// fp32 (bit for bit: the same GEMM over the same values), and are within
// the fp32 bound of a double reference.
TEST(NnOpsMatMulBf16, IsTheFp32KernelOnBf16Values) {
  const int64_t sa[3] = {3, 37, 50}, sb[2] = {50, 29}, sy[3] = {3, 37, 29};
  const std::vector<float> a = hmrt_test::random_vec(3 * 37 * 50, 1, -2.0f, 2.0f);
  const std::vector<float> b = hmrt_test::random_vec(50 * 29, 2, -2.0f, 2.0f);
  std::vector<float> ra(a), rb(b);
  for (float& v : ra) v = to_bf16(v);
  for (float& v : rb) v = to_bf16(v);
  std::vector<uint16_t> a16(a.size()), b16(b.size());
  for (size_t i = 0; i < a.size(); ++i) a16[i] = bf16_bits(ra[i]);
  for (size_t i = 0; i < b.size(); ++i) b16[i] = bf16_bits(rb[i]);
  std::vector<float> got(3 * 37 * 29), want(got.size()), rounded(got.size()),
      plain(got.size());
  HMRT_ASSERT_OK(hmrt_matmul_bf16(a16.data(), 3, sa, 0, b16.data(), 2, sb, 0, got.data(), 3, sy));
  HMRT_ASSERT_OK(hmrt_matmul_f32(ra.data(), 3, sa, 0, rb.data(), 2, sb, 0, want.data(), 3, sy));
  HMRT_ASSERT_OK(
      hmrt_matmul_f32_bf16(a.data(), 3, sa, 0, b.data(), 2, sb, 0, rounded.data(), 3, sy));
  HMRT_ASSERT_OK(hmrt_matmul_f32(a.data(), 3, sa, 0, b.data(), 2, sb, 0, plain.data(), 3, sy));
  EXPECT_TRUE(hmrt_test::bitwise_equal(got, want));
  EXPECT_TRUE(hmrt_test::bitwise_equal(rounded, want));
  EXPECT_FALSE(hmrt_test::bitwise_equal(got, plain));
  for (int64_t i = 0; i < 3 * 37; ++i)
    for (int64_t j = 0; j < 29; ++j) {
      double ref = 0.0, mag = 0.0;
      for (int64_t p = 0; p < 50; ++p) {
        ref += double(ra[size_t(i * 50 + p)]) * double(rb[size_t(p * 29 + j)]);
        mag += std::fabs(double(ra[size_t(i * 50 + p)]) * double(rb[size_t(p * 29 + j)]));
      }
      ASSERT_NEAR(got[size_t(i * 29 + j)], ref, 52 * kU * mag) << i << "," << j;
    }
  // Gemm, transposed operands and a broadcast C.
  const std::vector<float> c = hmrt_test::random_vec(37, 3, -1.0f, 1.0f);
  const int64_t sc[1] = {37};
  std::vector<float> g(37 * 29), gw(g.size()), gr(g.size());
  HMRT_ASSERT_OK(hmrt_gemm_bf16(b16.data(), a16.data(), c.data(), 1, sc, 29, 37, 50, 1, 1, 0.75f,
                                2.0f, g.data()));
  HMRT_ASSERT_OK(hmrt_gemm_f32_bf16(b.data(), a.data(), c.data(), 1, sc, 29, 37, 50, 1, 1, 0.75f,
                                    2.0f, gr.data()));
  HMRT_ASSERT_OK(hmrt_gemm_f32(rb.data(), ra.data(), c.data(), 1, sc, 29, 37, 50, 1, 1, 0.75f,
                               2.0f, gw.data()));
  EXPECT_TRUE(hmrt_test::bitwise_equal(g, gw));
  EXPECT_TRUE(hmrt_test::bitwise_equal(gr, gw));
  // One operand of each (the other rounded by the kernel), either way
  // round: the same bits.
  std::vector<float> mixed(got.size());
  HMRT_ASSERT_OK(
      hmrt_matmul_mixed_bf16(a16.data(), 1, 3, sa, 0, b.data(), 2, sb, 0, mixed.data(), 3, sy));
  EXPECT_TRUE(hmrt_test::bitwise_equal(mixed, want));
  std::fill(mixed.begin(), mixed.end(), 0.0f);
  HMRT_ASSERT_OK(
      hmrt_matmul_mixed_bf16(a.data(), 0, 3, sa, 0, b16.data(), 2, sb, 0, mixed.data(), 3, sy));
  EXPECT_TRUE(hmrt_test::bitwise_equal(mixed, want));
  std::vector<float> gm(g.size());
  HMRT_ASSERT_OK(hmrt_gemm_mixed_bf16(b16.data(), 1, a.data(), c.data(), 1, sc, 29, 37, 50, 1, 1,
                                      0.75f, 2.0f, gm.data()));
  EXPECT_TRUE(hmrt_test::bitwise_equal(gm, gw));
  HMRT_ASSERT_OK(hmrt_gemm_mixed_bf16(b.data(), 0, a16.data(), c.data(), 1, sc, 29, 37, 50, 1, 1,
                                      0.75f, 2.0f, gm.data()));
  EXPECT_TRUE(hmrt_test::bitwise_equal(gm, gw));
  // The fp32 kernel's checks, with messages naming the kernel.
  EXPECT_EQ(hmrt_matmul_mixed_bf16(a16.data(), 1, 3, sa, 0, b.data(), 2, sy, 0, got.data(), 3,
                                   sy),
            HMRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hmrt_last_error()).find("hmrt_matmul_mixed_bf16"), std::string::npos)
      << hmrt_last_error();
  EXPECT_EQ(hmrt_matmul_bf16(a16.data(), 3, sa, 0, b16.data(), 2, sy, 0, got.data(), 3, sy),
            HMRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hmrt_last_error()).find("hmrt_matmul_bf16"), std::string::npos)
      << hmrt_last_error();
  EXPECT_EQ(hmrt_matmul_f32_bf16(a.data(), 3, sa, 0, b.data(), 2, sy, 0, got.data(), 3, sy),
            HMRT_INVALID_ARGUMENT);
}

TEST(NnOpsMatMul, RejectsBadShapes) {
  float v[64] = {0};
  const int64_t s23[] = {2, 3}, s42[] = {4, 2}, s22[] = {2, 2};
  EXPECT_EQ(hmrt_matmul_f32(v, 2, s23, 0, v, 2, s42, 0, v, 2, s22),
            HMRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hmrt_last_error()).find("K = 3"), std::string::npos)
      << hmrt_last_error();
  // Batch 2 vs 3 does not broadcast.
  const int64_t a3[] = {2, 2, 2}, b3[] = {3, 2, 2}, y3[] = {3, 2, 2};
  EXPECT_EQ(hmrt_matmul_f32(v, 3, a3, 0, v, 3, b3, 0, v, 3, y3),
            HMRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hmrt_last_error()).find("do not broadcast"),
            std::string::npos);
  // Wrong y shape.
  const int64_t s32[] = {3, 2}, s33[] = {3, 3};
  EXPECT_EQ(hmrt_matmul_f32(v, 2, s23, 0, v, 2, s32, 0, v, 2, s33),
            HMRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hmrt_last_error()).find("gives [2, 2]"),
            std::string::npos)
      << hmrt_last_error();
  // Rank 0 operand, rank 9, negative dim, NULL data.
  EXPECT_EQ(hmrt_matmul_f32(v, 0, nullptr, 0, v, 2, s32, 0, v, 1, s22),
            HMRT_INVALID_ARGUMENT);
  const int64_t s9[] = {1, 1, 1, 1, 1, 1, 1, 2, 3};
  EXPECT_EQ(hmrt_matmul_f32(v, 9, s9, 0, v, 2, s32, 0, v, 2, s22),
            HMRT_INVALID_ARGUMENT);
  const int64_t neg[] = {-2, 3};
  EXPECT_EQ(hmrt_matmul_f32(v, 2, neg, 0, v, 2, s32, 0, v, 2, s22),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_matmul_f32(nullptr, 2, s23, 0, v, 2, s32, 0, v, 2, s22),
            HMRT_INVALID_ARGUMENT);
}

// ---- Gemm --------------------------------------------------------------------

TEST(NnOpsGemm, MatchesReference) {
  struct CCase {
    bool has_c;
    Shape sc;
  };
  const int64_t m = 13, n = 17, k = 29;
  const CCase cs[] = {{false, {}},    {true, {}},     {true, {n}},
                      {true, {1}},    {true, {m, n}}, {true, {m, 1}},
                      {true, {1, n}}, {true, {1, 1}}};
  for (int ta : {0, 1})
    for (int tb : {0, 1})
      for (const CCase& cc : cs)
        for (float beta : {0.0f, 0.75f}) {
          SCOPED_TRACE(testing::Message() << "ta=" << ta << " tb=" << tb
                                          << " C=" << (cc.has_c ? str(cc.sc) : "none")
                                          << " beta=" << beta);
          const float alpha = -1.5f;
          auto a = hmrt_test::random_vec(m * k, 11);
          auto b = hmrt_test::random_vec(k * n, 12);
          auto c = hmrt_test::random_vec(cc.has_c ? numel(cc.sc) : 0, 13);
          Vec want, bound;
          hmrt::ref::onnx_gemm(to_double(a), to_double(b), to_double(c), cc.sc,
                               m, n, k, ta, tb, alpha, beta, want);
          hmrt::ref::onnx_gemm(abs_of(a), abs_of(b), abs_of(c), cc.sc, m, n, k,
                               ta, tb, std::fabs(alpha), beta, bound);
          for (double& v : bound) v *= (k + 4) * kU;
          std::vector<float> y(m * n, NAN);
          HMRT_ASSERT_OK(hmrt_gemm_f32(a.data(), b.data(),
                                       cc.has_c ? c.data() : nullptr,
                                       rank_of(cc.sc), cc.sc.data(), m, n, k,
                                       ta, tb, alpha, beta, y.data()));
          EXPECT_TRUE(all_close(y, want, bound));
          if (cc.has_c && numel(cc.sc) == m * n) {  // c == y in place
            auto yc = c;
            HMRT_ASSERT_OK(hmrt_gemm_f32(a.data(), b.data(), yc.data(),
                                         rank_of(cc.sc), cc.sc.data(), m, n, k,
                                         ta, tb, alpha, beta, yc.data()));
            EXPECT_TRUE(hmrt_test::bitwise_equal(y, yc));
          }
        }
}

TEST(NnOpsGemm, HandComputedAndErrors) {
  // y = 2 * A B + 0.5 * C, C = [10, 20] broadcast over rows.
  const float a[] = {1, 2, 3, 4}, b[] = {1, 0, 0, 1}, c[] = {10, 20};
  const int64_t sc[] = {2};
  float y[4];
  HMRT_ASSERT_OK(hmrt_gemm_f32(a, b, c, 1, sc, 2, 2, 2, 0, 0, 2.0f, 0.5f, y));
  EXPECT_EQ(y[0], 7);
  EXPECT_EQ(y[1], 14);
  EXPECT_EQ(y[2], 11);
  EXPECT_EQ(y[3], 18);
  // A^T: [[1, 3], [2, 4]].
  HMRT_ASSERT_OK(hmrt_gemm_f32(a, b, nullptr, 0, nullptr, 2, 2, 2, 1, 0, 1.0f, 1.0f, y));
  EXPECT_EQ(y[1], 3);
  EXPECT_EQ(y[2], 2);
  // C [3] does not broadcast to [2, 2]; C [2, 1] may not alias y.
  const int64_t bad[] = {3};
  EXPECT_EQ(hmrt_gemm_f32(a, b, c, 1, bad, 2, 2, 2, 0, 0, 1.0f, 1.0f, y),
            HMRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hmrt_last_error()).find("does not broadcast"),
            std::string::npos);
  const int64_t col[] = {2, 1};
  EXPECT_EQ(hmrt_gemm_f32(a, b, y, 2, col, 2, 2, 2, 0, 0, 1.0f, 1.0f, y),
            HMRT_INVALID_ARGUMENT);
  const int64_t r3[] = {1, 1, 2};
  EXPECT_EQ(hmrt_gemm_f32(a, b, c, 3, r3, 2, 2, 2, 0, 0, 1.0f, 1.0f, y),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_gemm_f32(a, b, nullptr, 0, nullptr, -1, 2, 2, 0, 0, 1.0f, 0.0f, y),
            HMRT_INVALID_ARGUMENT);
}

// ---- Reduce ------------------------------------------------------------------

struct ReduceCase {
  Shape shape;
  unsigned mask;  // bit d set: reduce axis d
};

const ReduceCase kReduceCases[] = {
    {{5, 7, 9}, 0b001}, {{5, 7, 9}, 0b010}, {{5, 7, 9}, 0b100},
    {{5, 7, 9}, 0b011}, {{5, 7, 9}, 0b110}, {{5, 7, 9}, 0b101},
    {{5, 7, 9}, 0b111}, {{5, 7, 9}, 0b000}, {{2, 3, 4, 5}, 0b1010},
    {{2, 3, 4, 5}, 0b0101}, {{3, 1, 4, 1, 6}, 0b00110}, {{3, 1, 4, 1, 6}, 0b01011},
    {{6, 1500}, 0b01},   // column sums over 6 rows, two 1024-column tiles
    {{1, 70000}, 0b10},  // one long row: split into partial sums
    {{30000, 3}, 0b01},  // few outputs, many rows: split
    {{1000, 2, 30}, 0b101}, {{7}, 0b1}, {{}, 0},
};

TEST(NnOpsReduce, MatchesReference) {
  for (const ReduceCase& rc : kReduceCases) {
    const auto mask = mask_of(rc.shape, rc.mask);
    const int64_t count = numel(rc.shape), kept = kept_numel(rc.shape, mask);
    auto x = hmrt_test::random_vec(count, 21, -2.0f, 3.0f);
    Vec abs_sum;
    hmrt::ref::reduce(0, abs_of(x), rc.shape, bool_mask(mask), abs_sum);
    for (int op : {0, 1, 2}) {
      Vec want;
      hmrt::ref::reduce(op, to_double(x), rc.shape, bool_mask(mask), want);
      Vec tol(kept);
      const double per_group = double(count) / double(std::max<int64_t>(kept, 1));
      for (int64_t i = 0; i < kept; ++i)
        tol[i] = op == 2 ? 0.0
                         : 2 * kU * (std::fabs(want[i]) +
                                     abs_sum[i] / (op == 1 ? per_group : 1.0));
      std::vector<float> first;
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message() << str(rc.shape) << " mask=" << rc.mask
                                        << " op=" << op << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        std::vector<float> y(kept, NAN);
        HMRT_ASSERT_OK(hmrt_reduce_f32(static_cast<hmrt_reduce_op>(op), x.data(),
                                       rank_of(rc.shape), rc.shape.data(),
                                       mask.data(), y.data()));
        EXPECT_TRUE(all_close(y, want, tol));
        if (first.empty())
          first = y;
        else
          EXPECT_TRUE(hmrt_test::bitwise_equal(first, y));
      }
    }
  }
}

TEST(NnOpsReduce, HandComputed) {
  const float x[] = {1, 2, 3, 4, 5, 6};  // [2, 3]
  const int64_t s[] = {2, 3};
  const uint8_t ax1[] = {0, 1}, ax0[] = {1, 0}, all[] = {1, 1};
  float y[3];
  HMRT_ASSERT_OK(hmrt_reduce_f32(HMRT_REDUCE_SUM, x, 2, s, ax1, y));
  EXPECT_EQ(y[0], 6);
  EXPECT_EQ(y[1], 15);
  HMRT_ASSERT_OK(hmrt_reduce_f32(HMRT_REDUCE_MEAN, x, 2, s, ax0, y));
  EXPECT_EQ(y[0], 2.5f);
  EXPECT_EQ(y[1], 3.5f);
  EXPECT_EQ(y[2], 4.5f);
  HMRT_ASSERT_OK(hmrt_reduce_f32(HMRT_REDUCE_MAX, x, 2, s, all, y));
  EXPECT_EQ(y[0], 6);
}

TEST(NnOpsReduce, EmptyGroupsNanAndErrors) {
  // Reducing a dim of size 0: sum 0, mean NaN, max -inf.
  const int64_t s[] = {3, 0};
  const uint8_t ax1[] = {0, 1};
  float y[3];
  HMRT_ASSERT_OK(hmrt_reduce_f32(HMRT_REDUCE_SUM, nullptr, 2, s, ax1, y));
  EXPECT_EQ(y[2], 0.0f);
  HMRT_ASSERT_OK(hmrt_reduce_f32(HMRT_REDUCE_MEAN, nullptr, 2, s, ax1, y));
  EXPECT_TRUE(std::isnan(y[0]));
  HMRT_ASSERT_OK(hmrt_reduce_f32(HMRT_REDUCE_MAX, nullptr, 2, s, ax1, y));
  EXPECT_EQ(y[1], -INFINITY);
  // Max propagates NaN wherever it sits in the group.
  const float xn[] = {1, NAN, 3, 4, 5, NAN};
  const int64_t s23[] = {2, 3};
  HMRT_ASSERT_OK(hmrt_reduce_f32(HMRT_REDUCE_MAX, xn, 2, s23, ax1, y));
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_TRUE(std::isnan(y[1]));
  // Errors.  (3 is the only unnamed value C++ lets the enum hold.)
  EXPECT_EQ(hmrt_reduce_f32(static_cast<hmrt_reduce_op>(3), xn, 2, s23, ax1, y),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_reduce_f32(HMRT_REDUCE_SUM, xn, 2, s23, nullptr, y),
            HMRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hmrt_last_error()).find("reduce_axis is NULL"),
            std::string::npos);
}

TEST(NnOpsReduceMaxBackward, TiesEachGetTheGradient) {
  const float x[] = {1, 3, 3, 2, 2, 0};  // [2, 3], ties in both rows
  const int64_t s[] = {2, 3};
  const uint8_t ax1[] = {0, 1};
  float y[2], dx[6];
  HMRT_ASSERT_OK(hmrt_reduce_f32(HMRT_REDUCE_MAX, x, 2, s, ax1, y));
  const float dy[] = {10, 20};
  HMRT_ASSERT_OK(hmrt_reduce_max_backward_f32(x, y, dy, 2, s, ax1, dx));
  const float want[] = {0, 10, 10, 20, 20, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(dx[i], want[i]) << i;
}

TEST(NnOpsReduceMaxBackward, MatchesReferenceAndFiniteDifferences) {
  for (const ReduceCase& rc : kReduceCases) {
    SCOPED_TRACE(testing::Message() << str(rc.shape) << " mask=" << rc.mask);
    const auto mask = mask_of(rc.shape, rc.mask);
    const auto bmask = bool_mask(mask);
    const int64_t count = numel(rc.shape), kept = kept_numel(rc.shape, mask);
    // Quantised values make ties common.
    auto x = hmrt_test::random_vec(count, 31, -4.0f, 4.0f);
    for (float& v : x) v = std::round(v);
    auto dy = hmrt_test::random_vec(kept, 32);
    std::vector<float> y(kept), dx(count, NAN);
    HMRT_ASSERT_OK(hmrt_reduce_f32(HMRT_REDUCE_MAX, x.data(), rank_of(rc.shape),
                                   rc.shape.data(), mask.data(), y.data()));
    Vec want;
    hmrt::ref::reduce_max_backward(to_double(x), to_double(y), to_double(dy),
                                   rc.shape, bmask, want);
    for (int threads : hmrt_test::thread_counts()) {
      hmrt_test::ThreadScope scope(threads);
      HMRT_ASSERT_OK(hmrt_reduce_max_backward_f32(
          x.data(), y.data(), dy.data(), rank_of(rc.shape), rc.shape.data(),
          mask.data(), dx.data()));
      EXPECT_TRUE(all_close(dx, want, 0, 0));  // a selection: exact
    }
  }
  // Without ties the max is differentiable: finite differences agree.
  const Shape s = {3, 4, 5};
  for (unsigned bits : {0b001u, 0b010u, 0b101u}) {
    const auto mask = mask_of(s, bits);
    const auto bmask = bool_mask(mask);
    auto xf = hmrt_test::random_vec(numel(s), 33);
    auto dyf = hmrt_test::random_vec(kept_numel(s, mask), 34);
    const Vec x = to_double(xf), dyv = to_double(dyf);
    auto L = [&](const Vec& in) {
      Vec y;
      hmrt::ref::reduce(2, in, s, bmask, y);
      return dot(y, dyv);
    };
    const Vec fd = fd_grad(L, x);
    Vec y, dx_ref;
    hmrt::ref::reduce(2, x, s, bmask, y);
    hmrt::ref::reduce_max_backward(x, y, dyv, s, bmask, dx_ref);
    EXPECT_TRUE(near_fd(dx_ref, fd));
    std::vector<float> yk(y.size()), dx(numel(s));
    HMRT_ASSERT_OK(hmrt_reduce_f32(HMRT_REDUCE_MAX, xf.data(), 3, s.data(),
                                   mask.data(), yk.data()));
    HMRT_ASSERT_OK(hmrt_reduce_max_backward_f32(xf.data(), yk.data(), dyf.data(),
                                                3, s.data(), mask.data(),
                                                dx.data()));
    EXPECT_TRUE(all_close(dx, fd, 1e-6, 0));
  }
}

// ---- Softmax -----------------------------------------------------------------

struct AxisCase {
  Shape shape;
  int32_t axis;
};

TEST(NnOpsSoftmax, MatchesReference) {
  const AxisCase cases[] = {
      {{3, 4, 5}, 0},   {{3, 4, 5}, 1},    {{3, 4, 5}, 2},  {{3, 4, 5}, -1},
      {{3, 4, 5}, -3},  {{2, 9, 70}, 1},   {{6, 5, 4, 3}, 1}, {{6, 5, 4, 3}, 2},
      {{1000, 3}, 0},   {{17}, 0},         {{2, 1, 3}, 1},
  };
  for (const AxisCase& c : cases) {
    const int64_t count = numel(c.shape);
    const int64_t ax = c.axis < 0 ? c.axis + rank_of(c.shape) : c.axis;
    const int64_t n = c.shape[ax];
    // Large logits check the max subtraction.
    auto x = hmrt_test::random_vec(count, 41, -30.0f, 60.0f);
    auto dy = hmrt_test::random_vec(count, 42);
    for (int log : {0, 1}) {
      Vec y_ref;
      hmrt::ref::softmax_axis(to_double(x), c.shape, ax, log, y_ref);
      // exp(x - m) with |x - m| <= 90 carries 90 u from rounding x - m.
      const double tol = reduction_tol(n) + 90 * kU;
      std::vector<float> first;
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message() << str(c.shape) << " axis=" << c.axis
                                        << " log=" << log << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        std::vector<float> y(count, NAN), dx(count, NAN);
        HMRT_ASSERT_OK(hmrt_softmax_axis_f32(x.data(), rank_of(c.shape),
                                             c.shape.data(), c.axis, log,
                                             y.data()));
        EXPECT_TRUE(all_close(
            y, y_ref, tol * (log ? 60 + std::log(double(n)) + 1 : max_abs(y_ref)), 0));
        // Backward from the float forward output, as training feeds it.
        Vec dx_ref;
        hmrt::ref::softmax_axis_backward(to_double(y), to_double(dy), c.shape,
                                         ax, log, dx_ref);
        HMRT_ASSERT_OK(hmrt_softmax_axis_backward_f32(
            y.data(), dy.data(), rank_of(c.shape), c.shape.data(), c.axis, log,
            dx.data()));
        EXPECT_TRUE(all_close(dx, dx_ref, tol * (max_abs(dx_ref) + 1), 0));
        // In place gives the same bits.
        auto y2 = x;
        HMRT_ASSERT_OK(hmrt_softmax_axis_f32(y2.data(), rank_of(c.shape),
                                             c.shape.data(), c.axis, log,
                                             y2.data()));
        EXPECT_TRUE(hmrt_test::bitwise_equal(y, y2));
        auto dx2 = dy;
        HMRT_ASSERT_OK(hmrt_softmax_axis_backward_f32(
            y.data(), dx2.data(), rank_of(c.shape), c.shape.data(), c.axis, log,
            dx2.data()));
        EXPECT_TRUE(hmrt_test::bitwise_equal(dx, dx2));
        if (first.empty())
          first = dx;
        else
          EXPECT_TRUE(hmrt_test::bitwise_equal(first, dx));
      }
    }
  }
}

TEST(NnOpsSoftmax, HandComputedAxis0) {
  // Columns of [[0, ln 3], [0, 0]]: softmax over axis 0.
  const float x[] = {0, std::log(3.0f), 0, 0};
  const int64_t s[] = {2, 2};
  float y[4];
  HMRT_ASSERT_OK(hmrt_softmax_axis_f32(x, 2, s, 0, 0, y));
  EXPECT_NEAR(y[0], 0.5, 1e-7);
  EXPECT_NEAR(y[2], 0.5, 1e-7);
  EXPECT_NEAR(y[1], 0.75, 1e-7);
  EXPECT_NEAR(y[3], 0.25, 1e-7);
  HMRT_ASSERT_OK(hmrt_softmax_axis_f32(x, 2, s, 0, 1, y));
  EXPECT_NEAR(y[3], std::log(0.25), 1e-6);
  // Huge logits do not overflow (the max, in row 1, is subtracted).
  const float big[] = {0, 0, 1000, 0};
  HMRT_ASSERT_OK(hmrt_softmax_axis_f32(big, 2, s, 0, 0, y));
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_NEAR(y[1], 0.5, 1e-7);
  HMRT_ASSERT_OK(hmrt_softmax_axis_f32(big, 2, s, 0, 1, y));
  EXPECT_NEAR(y[0], -1000.0, 1e-3);
  EXPECT_EQ(y[2], 0.0f);
  // Axis out of range.
  EXPECT_EQ(hmrt_softmax_axis_f32(x, 2, s, 2, 0, y), HMRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hmrt_last_error()).find("axis 2"), std::string::npos);
  EXPECT_EQ(hmrt_softmax_axis_f32(x, 2, s, -3, 0, y), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_softmax_axis_f32(x, 0, nullptr, 0, 0, y), HMRT_INVALID_ARGUMENT);
}

TEST(NnOpsSoftmax, GradientsMatchFiniteDifferences) {
  const Shape s = {2, 3, 4};
  auto xf = hmrt_test::random_vec(numel(s), 43, -2.0f, 2.0f);
  auto dyf = hmrt_test::random_vec(numel(s), 44);
  const Vec x = to_double(xf), dyv = to_double(dyf);
  for (int axis : {0, 1, 2}) {
    for (int log : {0, 1}) {
      SCOPED_TRACE(testing::Message() << "axis=" << axis << " log=" << log);
      auto L = [&](const Vec& in) {
        Vec y;
        hmrt::ref::softmax_axis(in, s, axis, log, y);
        return dot(y, dyv);
      };
      const Vec fd = fd_grad(L, x);
      Vec y, dx_ref;
      hmrt::ref::softmax_axis(x, s, axis, log, y);
      hmrt::ref::softmax_axis_backward(y, dyv, s, axis, log, dx_ref);
      EXPECT_TRUE(near_fd(dx_ref, fd));
      std::vector<float> yk(numel(s)), dx(numel(s));
      HMRT_ASSERT_OK(hmrt_softmax_axis_f32(xf.data(), 3, s.data(), axis, log, yk.data()));
      HMRT_ASSERT_OK(hmrt_softmax_axis_backward_f32(yk.data(), dyf.data(), 3,
                                                    s.data(), axis, log, dx.data()));
      // Float forward + backward over at most 4 terms.
      EXPECT_TRUE(all_close(dx, fd, 64 * kU * (max_abs(fd) + 1), 0));
    }
  }
}

// ---- LayerNormalization ------------------------------------------------------

TEST(NnOpsLayerNorm, MatchesReference) {
  const AxisCase cases[] = {{{4, 6, 8}, -1}, {{4, 6, 8}, 1}, {{4, 6, 8}, 2},
                            {{3, 5}, 0},     {{2, 3, 40, 7}, -2}, {{9}, 0}};
  for (const AxisCase& c : cases) {
    const int64_t ax = c.axis < 0 ? c.axis + rank_of(c.shape) : c.axis;
    const int64_t count = numel(c.shape);
    const Shape norm_shape(c.shape.begin() + ax, c.shape.end());
    const int64_t cols = numel(norm_shape), outer = count / cols;
    for (bool affine : {true, false}) {
      auto x = hmrt_test::random_vec(count, 51, 2.0f, 5.0f);
      auto w = hmrt_test::random_vec(cols, 52, 0.5f, 1.5f);
      auto b = hmrt_test::random_vec(cols, 53);
      auto dy = hmrt_test::random_vec(count, 54);
      const float eps = 1e-5f;
      Vec y_ref, mean_ref, rstd_ref;
      const Vec wd = affine ? to_double(w) : Vec(), bd = affine ? to_double(b) : Vec();
      hmrt::ref::layer_norm(to_double(x), c.shape, ax, wd, bd, eps, y_ref,
                            mean_ref, rstd_ref);
      Vec dx_ref, dw_ref, db_ref;
      hmrt::ref::layer_norm_backward(to_double(dy), to_double(x), c.shape, ax,
                                     wd, mean_ref, rstd_ref, dx_ref, dw_ref,
                                     db_ref);
      const double tol = reduction_tol(std::max(outer, cols));
      // Largest rstd * |dy * w|: the size of the terms of dx, which cancel.
      double dx_scale = 0;
      for (int64_t i = 0; i < count; ++i)
        dx_scale = std::max(dx_scale, rstd_ref[i / cols] * std::fabs(dy[i]) *
                                          (affine ? std::fabs(w[i % cols]) : 1.0));
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message() << str(c.shape) << " axis=" << c.axis
                                        << " affine=" << affine
                                        << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        std::vector<float> y(count), mean(outer), rstd(outer);
        HMRT_ASSERT_OK(hmrt_layer_norm_f32(
            x.data(), rank_of(c.shape), c.shape.data(), c.axis,
            affine ? w.data() : nullptr, affine ? b.data() : nullptr, eps,
            y.data(), mean.data(), rstd.data()));
        EXPECT_TRUE(all_close(y, y_ref, tol * max_abs(y_ref), 0));
        EXPECT_TRUE(all_close(mean, mean_ref, 0, tol));
        EXPECT_TRUE(all_close(rstd, rstd_ref, 0, tol));
        // Parameter gradients start as garbage: they are overwritten.
        std::vector<float> dx(count), dw(cols, 123.0f), db(cols, -7.0f);
        HMRT_ASSERT_OK(hmrt_layer_norm_backward_f32(
            dy.data(), x.data(), rank_of(c.shape), c.shape.data(), c.axis,
            affine ? w.data() : nullptr, mean.data(), rstd.data(), dx.data(),
            dw.data(), db.data()));
        EXPECT_TRUE(all_close(dx, dx_ref, tol * dx_scale, 0));
        EXPECT_TRUE(all_close(dw, dw_ref, tol * max_abs(dw_ref), 0));
        EXPECT_TRUE(all_close(db, db_ref, tol * max_abs(db_ref), 0));
        // Without mean/rstd outputs and parameter gradients.
        std::vector<float> y2(count), dx2(count);
        HMRT_ASSERT_OK(hmrt_layer_norm_f32(
            x.data(), rank_of(c.shape), c.shape.data(), c.axis,
            affine ? w.data() : nullptr, affine ? b.data() : nullptr, eps,
            y2.data(), nullptr, nullptr));
        EXPECT_TRUE(hmrt_test::bitwise_equal(y, y2));
        HMRT_ASSERT_OK(hmrt_layer_norm_backward_f32(
            dy.data(), x.data(), rank_of(c.shape), c.shape.data(), c.axis,
            affine ? w.data() : nullptr, mean.data(), rstd.data(), dx2.data(),
            nullptr, nullptr));
        EXPECT_TRUE(hmrt_test::bitwise_equal(dx, dx2));
      }
    }
  }
}

TEST(NnOpsLayerNorm, HandComputedAndErrors) {
  // x = [1, 2, 3]: mean 2, var 2/3.
  const float x[] = {1, 2, 3};
  const int64_t s[] = {1, 3};
  float y[3], mean, rstd;
  HMRT_ASSERT_OK(hmrt_layer_norm_f32(x, 2, s, -1, nullptr, nullptr, 0.0f, y,
                                     &mean, &rstd));
  EXPECT_EQ(mean, 2.0f);
  EXPECT_NEAR(rstd, std::sqrt(1.5), 1e-6);
  EXPECT_NEAR(y[0], -std::sqrt(1.5), 1e-6);
  EXPECT_NEAR(y[1], 0.0, 1e-7);
  EXPECT_EQ(hmrt_layer_norm_f32(x, 2, s, 2, nullptr, nullptr, 1e-5f, y, nullptr,
                                nullptr),
            HMRT_INVALID_ARGUMENT);
  const int64_t empty[] = {3, 0};
  EXPECT_EQ(hmrt_layer_norm_f32(x, 2, empty, 1, nullptr, nullptr, 1e-5f, y,
                                nullptr, nullptr),
            HMRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hmrt_last_error()).find("no elements"), std::string::npos);
  EXPECT_EQ(hmrt_layer_norm_backward_f32(x, x, 2, s, 1, nullptr, nullptr, &rstd,
                                         y, nullptr, nullptr),
            HMRT_INVALID_ARGUMENT);  // mean missing
}

TEST(NnOpsLayerNorm, GradientsMatchFiniteDifferences) {
  const Shape s = {2, 3, 4};
  for (int axis : {1, 2}) {
    SCOPED_TRACE(testing::Message() << "axis=" << axis);
    const int64_t cols = axis == 1 ? 12 : 4;
    auto xf = hmrt_test::random_vec(numel(s), 55);
    auto wf = hmrt_test::random_vec(cols, 56, 0.5f, 1.5f);
    auto bf = hmrt_test::random_vec(cols, 57);
    auto dyf = hmrt_test::random_vec(numel(s), 58);
    const Vec x = to_double(xf), w = to_double(wf), b = to_double(bf),
              dyv = to_double(dyf);
    const double eps = 1e-5;
    auto L = [&](const Vec& in, const Vec& win, const Vec& bin) {
      Vec y, m, r;
      hmrt::ref::layer_norm(in, s, axis, win, bin, eps, y, m, r);
      return dot(y, dyv);
    };
    const Vec fdx = fd_grad([&](const Vec& v) { return L(v, w, b); }, x);
    const Vec fdw = fd_grad([&](const Vec& v) { return L(x, v, b); }, w);
    const Vec fdb = fd_grad([&](const Vec& v) { return L(x, w, v); }, b);
    Vec y, m, r, dx_ref, dw_ref, db_ref;
    hmrt::ref::layer_norm(x, s, axis, w, b, eps, y, m, r);
    hmrt::ref::layer_norm_backward(dyv, x, s, axis, w, m, r, dx_ref, dw_ref, db_ref);
    EXPECT_TRUE(near_fd(dx_ref, fdx));
    EXPECT_TRUE(near_fd(dw_ref, fdw));
    EXPECT_TRUE(near_fd(db_ref, fdb));
    const int64_t outer = numel(s) / cols;
    std::vector<float> yk(numel(s)), mk(outer), rk(outer), dx(numel(s)),
        dw(cols), db(cols);
    HMRT_ASSERT_OK(hmrt_layer_norm_f32(xf.data(), 3, s.data(), axis, wf.data(),
                                       bf.data(), float(eps), yk.data(),
                                       mk.data(), rk.data()));
    HMRT_ASSERT_OK(hmrt_layer_norm_backward_f32(
        dyf.data(), xf.data(), 3, s.data(), axis, wf.data(), mk.data(),
        rk.data(), dx.data(), dw.data(), db.data()));
    // rstd is up to ~1/sqrt(eps) for nearly constant rows; here rows of
    // uniform(-1, 1) values keep it O(1), so float sums of <= 12 terms.
    const double tol = reduction_tol(12) * 8;
    EXPECT_TRUE(all_close(dx, fdx, tol * (max_abs(fdx) + 1), 0));
    EXPECT_TRUE(all_close(dw, fdw, tol * (max_abs(fdw) + 1), 0));
    EXPECT_TRUE(all_close(db, fdb, tol * (max_abs(fdb) + 1), 0));
  }
}

// ---- SoftmaxCrossEntropyLoss ------------------------------------------------

struct SceCase {
  Shape shape;
  bool weighted;
  bool has_ignore;
  int64_t ignore_index;
};

// Labels for scores of `shape`: every 5th is ignore_index (when used), the
// others cycle through the classes.
std::vector<int64_t> make_labels(const SceCase& c) {
  const int64_t C = c.shape[1];
  const int64_t E = numel(c.shape) / C;
  std::vector<int64_t> t(E);
  for (int64_t e = 0; e < E; ++e)
    t[e] = c.has_ignore && e % 5 == 3 ? c.ignore_index : (e * 7 + 3) % C;
  return t;
}

const SceCase kSceCases[] = {
    {{8, 5}, false, false, 0},        {{8, 5}, true, true, -100},
    {{64, 1000}, false, true, -100},  {{64, 1000}, true, false, 0},
    {{2, 4, 3, 5}, false, false, 0},  {{2, 4, 3, 5}, true, true, 2},
    {{3, 7, 70}, false, true, -1},    {{3, 7, 70}, true, true, -1},
    {{4, 1}, false, false, 0},
};

TEST(NnOpsSce, MatchesReference) {
  for (const SceCase& c : kSceCases) {
    const int64_t count = numel(c.shape), C = c.shape[1], E = count / C;
    auto scores = hmrt_test::random_vec(count, 61, -5.0f, 5.0f);
    auto weights = hmrt_test::random_vec(C, 62, 0.5f, 2.0f);
    const auto labels = make_labels(c);
    const Vec wd = c.weighted ? to_double(weights) : Vec();
    const float* wp = c.weighted ? weights.data() : nullptr;
    const double tol = (reduction_tol(C) + 20 * kU) * (5 + std::log(double(C)) + 1);
    // Sum of |w| over counted labels: the error scale of the sums.
    double wsum = 0;
    for (int64_t e = 0; e < E; ++e)
      if (!(c.has_ignore && labels[e] == c.ignore_index))
        wsum += c.weighted ? weights[labels[e]] : 1.0;
    for (int red : {0, 1, 2}) {
      Vec loss_ref, lp_ref;
      hmrt::ref::sce_loss(to_double(scores), c.shape, labels, wd, red,
                          c.has_ignore, c.ignore_index, loss_ref, lp_ref);
      const float dloss_mean = 0.7f;
      auto dloss = red == 2 ? hmrt_test::random_vec(E, 63)
                            : std::vector<float>{dloss_mean};
      Vec d_ref;
      hmrt::ref::sce_loss_backward(to_double(scores), c.shape, labels, wd, red,
                                   c.has_ignore, c.ignore_index,
                                   to_double(dloss), d_ref);
      // Largest |k| of the gradient: w * dloss (/ denominator for mean).
      const double kmax = 2.0 * max_abs(to_double(dloss)) / (red == 0 ? wsum : 1.0);
      std::vector<float> first_loss, first_d;
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message()
                     << str(c.shape) << " weighted=" << c.weighted
                     << " ignore=" << c.has_ignore << ":" << c.ignore_index
                     << " reduction=" << red << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        std::vector<float> loss(red == 2 ? E : 1, NAN), lp(count, NAN);
        HMRT_ASSERT_OK(hmrt_sce_loss_f32(
            scores.data(), rank_of(c.shape), c.shape.data(), labels.data(), wp,
            static_cast<hmrt_loss_reduction>(red), c.has_ignore, c.ignore_index,
            loss.data(), lp.data()));
        const double loss_tol = red == 2 ? tol * 2 : tol * (red == 1 ? wsum : 1.0);
        EXPECT_TRUE(all_close(loss, loss_ref, loss_tol, 0));
        EXPECT_TRUE(all_close(lp, lp_ref, tol, 0));
        // The loss does not depend on whether log_prob is requested.
        std::vector<float> loss2(loss.size(), NAN);
        HMRT_ASSERT_OK(hmrt_sce_loss_f32(
            scores.data(), rank_of(c.shape), c.shape.data(), labels.data(), wp,
            static_cast<hmrt_loss_reduction>(red), c.has_ignore, c.ignore_index,
            loss2.data(), nullptr));
        EXPECT_TRUE(hmrt_test::bitwise_equal(loss, loss2));

        std::vector<float> d(count, NAN);
        HMRT_ASSERT_OK(hmrt_sce_loss_backward_f32(
            scores.data(), rank_of(c.shape), c.shape.data(), labels.data(), wp,
            static_cast<hmrt_loss_reduction>(red), c.has_ignore, c.ignore_index,
            dloss.data(), d.data()));
        EXPECT_TRUE(all_close(d, d_ref, kmax * (tol + 4 * kU), 0));
        // In place (dscores == scores).
        auto inplace = scores;
        HMRT_ASSERT_OK(hmrt_sce_loss_backward_f32(
            inplace.data(), rank_of(c.shape), c.shape.data(), labels.data(), wp,
            static_cast<hmrt_loss_reduction>(red), c.has_ignore, c.ignore_index,
            dloss.data(), inplace.data()));
        EXPECT_TRUE(hmrt_test::bitwise_equal(d, inplace));
        // Ignored labels: zero loss, zero gradient.
        const int64_t D = E / c.shape[0];
        for (int64_t e = 0; e < E; ++e) {
          if (!(c.has_ignore && labels[e] == c.ignore_index)) continue;
          if (red == 2) {
            ASSERT_EQ(loss[e], 0.0f);
          }
          for (int64_t k = 0; k < C; ++k)
            ASSERT_EQ(d[((e / D) * C + k) * D + e % D], 0.0f);
        }
        if (first_loss.empty()) {
          first_loss = loss;
          first_d = d;
        } else {
          EXPECT_TRUE(hmrt_test::bitwise_equal(first_loss, loss));
          EXPECT_TRUE(hmrt_test::bitwise_equal(first_d, d));
        }
      }
    }
  }
}

TEST(NnOpsSce, GradientsMatchFiniteDifferences) {
  const SceCase cases[] = {{{3, 4}, true, true, 1},
                           {{2, 3, 2, 2}, true, true, -100},
                           {{2, 3, 5}, false, false, 0}};
  for (const SceCase& c : cases) {
    const int64_t count = numel(c.shape), C = c.shape[1], E = count / C;
    auto sf = hmrt_test::random_vec(count, 71, -2.0f, 2.0f);
    auto wf = hmrt_test::random_vec(C, 72, 0.5f, 2.0f);
    const auto labels = make_labels(c);
    const Vec wd = c.weighted ? to_double(wf) : Vec();
    for (int red : {0, 1, 2}) {
      SCOPED_TRACE(testing::Message() << str(c.shape) << " reduction=" << red);
      auto dlf = red == 2 ? hmrt_test::random_vec(E, 73)
                          : std::vector<float>{1.3f};
      const Vec dl = to_double(dlf);
      auto L = [&](const Vec& in) {
        Vec loss, lp;
        hmrt::ref::sce_loss(in, c.shape, labels, wd, red, c.has_ignore,
                            c.ignore_index, loss, lp);
        return dot(loss, dl);
      };
      const Vec fd = fd_grad(L, to_double(sf));
      Vec d_ref;
      hmrt::ref::sce_loss_backward(to_double(sf), c.shape, labels, wd, red,
                                   c.has_ignore, c.ignore_index, dl, d_ref);
      EXPECT_TRUE(near_fd(d_ref, fd));
      std::vector<float> d(count);
      HMRT_ASSERT_OK(hmrt_sce_loss_backward_f32(
          sf.data(), rank_of(c.shape), c.shape.data(), labels.data(),
          c.weighted ? wf.data() : nullptr, static_cast<hmrt_loss_reduction>(red),
          c.has_ignore, c.ignore_index, dlf.data(), d.data()));
      EXPECT_TRUE(all_close(d, fd, 64 * kU * (max_abs(fd) + 1), 0));
    }
  }
}

TEST(NnOpsSce, HandComputed) {
  // scores [[0, 0], [ln 3, 0]], labels [0, 1]:
  // row 0: -log(1/2) = ln 2; row 1: -log(1/4) = 2 ln 2.
  const float s[] = {0, 0, std::log(3.0f), 0};
  const int64_t shape[] = {2, 2};
  const int64_t labels[] = {0, 1};
  const double ln2 = std::log(2.0);
  float loss[2];
  HMRT_ASSERT_OK(hmrt_sce_loss_f32(s, 2, shape, labels, nullptr, HMRT_LOSS_MEAN,
                                   0, 0, loss, nullptr));
  EXPECT_NEAR(loss[0], 1.5 * ln2, 1e-6);
  HMRT_ASSERT_OK(hmrt_sce_loss_f32(s, 2, shape, labels, nullptr, HMRT_LOSS_SUM,
                                   0, 0, loss, nullptr));
  EXPECT_NEAR(loss[0], 3 * ln2, 1e-6);
  HMRT_ASSERT_OK(hmrt_sce_loss_f32(s, 2, shape, labels, nullptr, HMRT_LOSS_NONE,
                                   0, 0, loss, nullptr));
  EXPECT_NEAR(loss[0], ln2, 1e-6);
  EXPECT_NEAR(loss[1], 2 * ln2, 1e-6);
  // Weights [1, 3]: mean = (1 ln 2 + 3 * 2 ln 2) / (1 + 3).
  const float w[] = {1, 3};
  HMRT_ASSERT_OK(hmrt_sce_loss_f32(s, 2, shape, labels, w, HMRT_LOSS_MEAN, 0,
                                   0, loss, nullptr));
  EXPECT_NEAR(loss[0], 7 * ln2 / 4, 1e-6);
  // Ignoring label 1 (a valid class): only row 0 counts.
  HMRT_ASSERT_OK(hmrt_sce_loss_f32(s, 2, shape, labels, w, HMRT_LOSS_MEAN, 1,
                                   1, loss, nullptr));
  EXPECT_NEAR(loss[0], ln2, 1e-6);
  // Everything ignored: the mean is NaN (0/0) and the gradient zero.
  const int64_t ignored[] = {-100, -100};
  HMRT_ASSERT_OK(hmrt_sce_loss_f32(s, 2, shape, ignored, w, HMRT_LOSS_MEAN, 1,
                                   -100, loss, nullptr));
  EXPECT_TRUE(std::isnan(loss[0]));
  const float dl = 1.0f;
  float d[4] = {NAN, NAN, NAN, NAN};
  HMRT_ASSERT_OK(hmrt_sce_loss_backward_f32(s, 2, shape, ignored, w,
                                            HMRT_LOSS_MEAN, 1, -100, &dl, d));
  for (float v : d) EXPECT_EQ(v, 0.0f);
  // Gradient of the unweighted mean, row 0: (softmax - onehot) / 2.
  HMRT_ASSERT_OK(hmrt_sce_loss_backward_f32(s, 2, shape, labels, nullptr,
                                            HMRT_LOSS_MEAN, 0, 0, &dl, d));
  EXPECT_NEAR(d[0], -0.25, 1e-7);
  EXPECT_NEAR(d[1], 0.25, 1e-7);
  EXPECT_NEAR(d[3], (0.25 - 1) / 2, 1e-7);
}

TEST(NnOpsSce, BadArguments) {
  const float s[6] = {0};
  const int64_t shape[] = {2, 3};
  float loss = -1.0f;
  for (int64_t bad : {int64_t{3}, int64_t{-1}, int64_t{-100}}) {
    const int64_t labels[] = {0, bad};
    // Without ignore_index every label must be a class.
    EXPECT_EQ(hmrt_sce_loss_f32(s, 2, shape, labels, nullptr, HMRT_LOSS_MEAN, 0,
                                0, &loss, nullptr),
              HMRT_OUT_OF_RANGE);
    EXPECT_NE(std::string(hmrt_last_error()).find("labels[1]"), std::string::npos);
    // With another ignore_index it is still out of range.
    EXPECT_EQ(hmrt_sce_loss_f32(s, 2, shape, labels, nullptr, HMRT_LOSS_SUM, 1,
                                bad == -1 ? -7 : -1, &loss, nullptr),
              HMRT_OUT_OF_RANGE);
    float d[6];
    EXPECT_EQ(hmrt_sce_loss_backward_f32(s, 2, shape, labels, nullptr,
                                         HMRT_LOSS_MEAN, 0, 0, &loss, d),
              HMRT_OUT_OF_RANGE);
  }
  EXPECT_EQ(loss, -1.0f);  // nothing written
  const int64_t labels[] = {0, 1};
  const int64_t r1[] = {6};
  EXPECT_EQ(hmrt_sce_loss_f32(s, 1, r1, labels, nullptr, HMRT_LOSS_MEAN, 0, 0,
                              &loss, nullptr),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_sce_loss_f32(s, 2, shape, labels, nullptr,
                              static_cast<hmrt_loss_reduction>(3), 0, 0, &loss,
                              nullptr),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_sce_loss_f32(s, 2, shape, labels, nullptr, HMRT_LOSS_MEAN, 0, 0,
                              nullptr, nullptr),
            HMRT_INVALID_ARGUMENT);
  const int64_t no_classes[] = {2, 0};
  EXPECT_EQ(hmrt_sce_loss_f32(s, 2, no_classes, labels, nullptr, HMRT_LOSS_MEAN,
                              0, 0, &loss, nullptr),
            HMRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hmrt_last_error()).find("no classes"), std::string::npos);
}

}  // namespace
