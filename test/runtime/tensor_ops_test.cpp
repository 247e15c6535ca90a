// Generic tensor operations (hmrt/tensor_ops.h) against the scalar
// references in reference/tensor_ops_reference.h, plus hand-computed values so a
// bug shared by kernel and reference cannot hide.
//
// Tolerances:
//  - Data movement (transpose, slice, concat, gather, expand, where, trilu,
//    fill, cast) moves or converts bits and must match exactly.
//  - Float ADD, SUB, MUL, DIV, MAX, MIN, NEG, ABS, SIGN, RELU, SQRT and
//    RECIPROCAL are correctly rounded IEEE operations, and the double result
//    of one of them on float inputs rounds to that same float (double has
//    more than 2*24+2 bits), so they must equal float(reference) exactly.
//  - exp, log, tanh, erf and pow come from the C library's float functions,
//    within a few ulp (glibc documents <= 2-3 ulp); sigmoid adds two float
//    roundings.  Allowed: 8 ulp = 16 u relative.
//  - reduce_to sums in double and rounds once: u relative plus the double
//    sum's error, count * 2^-53 * sum|x|, far below 1e-9 here.
//  - Float scatter-adds (gather backward) add in index order in float:
//    reduction_tol(count) times the sum of |terms|.
#include <limits>
#include <string>

#include "reference/tensor_ops_reference.h"
#include "hmrt/tensor_ops.h"
#include "test_util.h"

namespace {

using Dims = std::vector<int64_t>;
using Bytes = std::vector<uint8_t>;
using hmrt_test::kU;
using hmrt_test::to_double;

int32_t rk(const Dims& d) { return static_cast<int32_t>(d.size()); }
int64_t numel(const Dims& d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}
std::string str(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i)
    s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// The broadcast shape of a and b (numpy rules), computed here
// independently of the library; the test cases all broadcast.
Dims bcast(const Dims& a, const Dims& b) {
  const size_t r = std::max(a.size(), b.size());
  Dims y(r);
  for (size_t d = 0; d < r; ++d) {
    const int64_t ea = d + a.size() >= r ? a[d + a.size() - r] : 1;
    const int64_t eb = d + b.size() >= r ? b[d + b.size() - r] : 1;
    y[d] = ea == 1 ? eb : ea;
  }
  return y;
}

Bytes random_bytes(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

std::vector<int64_t> random_i64(int64_t n, uint32_t seed, int64_t lo,
                                int64_t hi) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> d(lo, hi);
  std::vector<int64_t> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

template <class T>
::testing::AssertionResult same(const std::vector<T>& got,
                                const std::vector<T>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure()
           << "size " << got.size() << " vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0)
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << +got[i] << ", want "
             << +want[i];
  return ::testing::AssertionSuccess();
}

std::vector<float> to_float(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());
}

// ---- unary --------------------------------------------------------------

TEST(TensorOpsUnary, MatchesReference) {
  const hmrt_unary_op exact[] = {
      HMRT_UNARY_SQRT, HMRT_UNARY_NEG,      HMRT_UNARY_RECIPROCAL,
      HMRT_UNARY_RELU, HMRT_UNARY_IDENTITY, HMRT_UNARY_ABS,
      HMRT_UNARY_SIGN};
  const hmrt_unary_op libm[] = {HMRT_UNARY_EXP, HMRT_UNARY_LOG,
                                HMRT_UNARY_TANH, HMRT_UNARY_SIGMOID,
                                HMRT_UNARY_ERF};
  for (int64_t n : {0, 1, 7, 50000}) {
    for (int pass = 0; pass < 2; ++pass) {
      for (hmrt_unary_op op : pass ? std::vector<hmrt_unary_op>(
                                         std::begin(libm), std::end(libm))
                                   : std::vector<hmrt_unary_op>(
                                         std::begin(exact), std::end(exact))) {
        const bool positive = op == HMRT_UNARY_LOG || op == HMRT_UNARY_SQRT;
        auto x = positive ? hmrt_test::random_vec(n, 11, 1e-3f, 50.0f)
                          : hmrt_test::random_vec(n, 12, -12.0f, 12.0f);
        std::vector<double> want(n);
        hmrt::ref::unary(op, to_double(x).data(), want.data(), n);
        for (int threads : hmrt_test::thread_counts()) {
          SCOPED_TRACE(testing::Message() << "op=" << op << " n=" << n
                                          << " threads=" << threads);
          hmrt_test::ThreadScope scope(threads);
          std::vector<float> y(n);
          HMRT_ASSERT_OK(hmrt_unary_f32(op, x.data(), y.data(), n));
          if (pass == 0)
            EXPECT_TRUE(same(y, to_float(want)));
          else
            EXPECT_TRUE(hmrt_test::all_close(y, want, 1e-37, 16 * kU));
          auto inplace = x;
          HMRT_ASSERT_OK(
              hmrt_unary_f32(op, inplace.data(), inplace.data(), n));
          EXPECT_TRUE(hmrt_test::bitwise_equal(inplace, y));
        }
      }
    }
  }
}

TEST(TensorOpsUnary, HandComputed) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    hmrt_unary_op op;
    float x, y;
  };
  const Case cases[] = {
      {HMRT_UNARY_EXP, 0.0f, 1.0f},       {HMRT_UNARY_EXP, -inf, 0.0f},
      {HMRT_UNARY_LOG, 1.0f, 0.0f},       {HMRT_UNARY_LOG, 0.0f, -inf},
      {HMRT_UNARY_LOG, -1.0f, nan},       {HMRT_UNARY_SQRT, 6.25f, 2.5f},
      {HMRT_UNARY_NEG, 3.0f, -3.0f},      {HMRT_UNARY_RECIPROCAL, 4.0f, 0.25f},
      {HMRT_UNARY_RECIPROCAL, 0.0f, inf}, {HMRT_UNARY_TANH, 0.0f, 0.0f},
      {HMRT_UNARY_TANH, 30.0f, 1.0f},     {HMRT_UNARY_SIGMOID, 0.0f, 0.5f},
      {HMRT_UNARY_SIGMOID, 200.0f, 1.0f}, {HMRT_UNARY_SIGMOID, -200.0f, 0.0f},
      {HMRT_UNARY_ERF, 0.0f, 0.0f},       {HMRT_UNARY_ERF, 10.0f, 1.0f},
      {HMRT_UNARY_RELU, -2.0f, 0.0f},     {HMRT_UNARY_RELU, 2.0f, 2.0f},
      {HMRT_UNARY_RELU, nan, nan},        {HMRT_UNARY_IDENTITY, -7.5f, -7.5f},
      {HMRT_UNARY_ABS, -2.0f, 2.0f},      {HMRT_UNARY_SIGN, -3.0f, -1.0f},
      {HMRT_UNARY_SIGN, 0.5f, 1.0f},      {HMRT_UNARY_SIGN, 0.0f, 0.0f},
      {HMRT_UNARY_SIGN, nan, nan},
  };
  for (const Case& c : cases) {
    float y = -12345.0f;
    HMRT_ASSERT_OK(hmrt_unary_f32(c.op, &c.x, &y, 1));
    if (std::isnan(c.y))
      EXPECT_TRUE(std::isnan(y)) << "op " << c.op << " x " << c.x;
    else
      EXPECT_EQ(y, c.y) << "op " << c.op << " x " << c.x;
  }
  // exp(1) and erf(1) to float precision.
  float one = 1.0f, y;
  HMRT_ASSERT_OK(hmrt_unary_f32(HMRT_UNARY_EXP, &one, &y, 1));
  EXPECT_NEAR(y, 2.718281828, 4e-7);
  HMRT_ASSERT_OK(hmrt_unary_f32(HMRT_UNARY_ERF, &one, &y, 1));
  EXPECT_NEAR(y, 0.8427007929, 2e-7);
}

TEST(TensorOpsUnary, NegI64AndErrors) {
  std::vector<int64_t> x = {0, 5, -7, INT64_MAX, INT64_MIN};
  std::vector<int64_t> y(x.size());
  HMRT_ASSERT_OK(hmrt_neg_i64(x.data(), y.data(), 5));
  EXPECT_EQ(y, (std::vector<int64_t>{0, -5, 7, -INT64_MAX, INT64_MIN}));
  HMRT_ASSERT_OK(hmrt_neg_i64(x.data(), x.data(), 5));
  EXPECT_EQ(x, y);
  float v = 1;
  EXPECT_FAILS(hmrt_unary_f32(static_cast<hmrt_unary_op>(99), &v, &v, 1),
               HMRT_INVALID_ARGUMENT, "unknown op 99");
  EXPECT_FAILS(hmrt_unary_f32(HMRT_UNARY_EXP, nullptr, &v, 1),
               HMRT_INVALID_ARGUMENT, "x is NULL");
  EXPECT_FAILS(hmrt_unary_f32(HMRT_UNARY_EXP, &v, &v, -1),
               HMRT_INVALID_ARGUMENT, "n must be >= 0");
  HMRT_ASSERT_OK(hmrt_unary_f32(HMRT_UNARY_EXP, nullptr, nullptr, 0));
}

// ---- binary -------------------------------------------------------------

struct Pair {
  Dims a, b;
};
const Pair kPairs[] = {
    {{}, {}},
    {{}, {3, 4}},
    {{3, 4}, {}},
    {{3, 4}, {3, 4}},
    {{3, 1}, {1, 4}},
    {{4}, {3, 4}},
    {{2, 3, 4}, {3, 1}},
    {{1}, {5}},
    {{5, 1, 3}, {1, 4, 1}},
    {{2, 1, 3, 1, 5}, {4, 1, 2, 5}},
    {{2, 1, 2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2, 1, 2}},  // rank 8
    {{2, 0, 3}, {3}},                                       // empty
    {{1, 0}, {3, 1}},                                       // -> [3, 0]
    // Large enough (>= 3 * 2^14 elements) to be split across threads.
    {{72, 700}, {700}},
    {{250, 1}, {250, 200}},
    {{250, 200}, {250, 200}},
};

std::vector<float> binary_input(hmrt_binary_op op, bool second, int64_t n,
                                uint32_t seed) {
  if (op == HMRT_BINARY_POW)
    return second ? hmrt_test::random_vec(n, seed, -3.0f, 3.0f)
                  : hmrt_test::random_vec(n, seed, 0.1f, 4.0f);
  if (op == HMRT_BINARY_DIV && second) {
    auto v = hmrt_test::random_vec(n, seed, 0.5f, 4.0f);
    for (size_t i = 0; i < v.size(); i += 2) v[i] = -v[i];
    return v;
  }
  return hmrt_test::random_vec(n, seed, -10.0f, 10.0f);
}

TEST(TensorOpsBinary, F32MatchesReference) {
  for (int op_i = HMRT_BINARY_ADD; op_i <= HMRT_BINARY_MIN; ++op_i) {
    const auto op = static_cast<hmrt_binary_op>(op_i);
    for (const Pair& p : kPairs) {
      const Dims s = bcast(p.a, p.b);
      const int64_t n = numel(s);
      auto a = binary_input(op, false, numel(p.a), 21 + op_i);
      auto b = binary_input(op, true, numel(p.b), 31 + op_i);
      std::vector<double> want(n);
      hmrt::ref::binary(op, to_double(a).data(), rk(p.a), p.a.data(),
                        to_double(b).data(), rk(p.b), p.b.data(), want.data(),
                        rk(s), s.data());
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message() << "op=" << op << " a=" << str(p.a)
                                        << " b=" << str(p.b)
                                        << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        std::vector<float> y(n);
        HMRT_ASSERT_OK(hmrt_binary_f32(op, a.data(), rk(p.a), p.a.data(),
                                       b.data(), rk(p.b), p.b.data(), y.data(),
                                       rk(s), s.data()));
        if (op == HMRT_BINARY_POW)
          EXPECT_TRUE(hmrt_test::all_close(y, want, 1e-37, 16 * kU));
        else
          EXPECT_TRUE(same(y, to_float(want)));
        // In place into an input that has the output's shape.
        if (p.a == s) {
          auto y2 = a;
          HMRT_ASSERT_OK(hmrt_binary_f32(op, y2.data(), rk(p.a), p.a.data(),
                                         b.data(), rk(p.b), p.b.data(),
                                         y2.data(), rk(s), s.data()));
          EXPECT_TRUE(hmrt_test::bitwise_equal(y2, y));
        }
      }
    }
  }
}

TEST(TensorOpsBinary, F32HandComputed) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // [[1,2,3],[4,5,6]] + [10,20,30]
  const float a[] = {1, 2, 3, 4, 5, 6}, b[] = {10, 20, 30};
  const Dims sa = {2, 3}, sb = {3};
  float y[6];
  HMRT_ASSERT_OK(hmrt_binary_f32(HMRT_BINARY_ADD, a, 2, sa.data(), b, 1,
                                 sb.data(), y, 2, sa.data()));
  EXPECT_EQ(std::vector<float>(y, y + 6),
            (std::vector<float>{11, 22, 33, 14, 25, 36}));
  // Outer product [3,1] * [1,2].
  const float c[] = {1, 2, 3}, d[] = {10, 100};
  const Dims sc = {3, 1}, sd = {1, 2}, so = {3, 2};
  HMRT_ASSERT_OK(hmrt_binary_f32(HMRT_BINARY_MUL, c, 2, sc.data(), d, 2,
                                 sd.data(), y, 2, so.data()));
  EXPECT_EQ(std::vector<float>(y, y + 6),
            (std::vector<float>{10, 100, 20, 200, 30, 300}));
  // Scalar - tensor, tensor / scalar, pow, NaN-propagating max/min.
  const float two = 2;
  const Dims s3 = {3};
  HMRT_ASSERT_OK(hmrt_binary_f32(HMRT_BINARY_SUB, &two, 0, nullptr, c, 1,
                                 s3.data(), y, 1, s3.data()));
  EXPECT_EQ(std::vector<float>(y, y + 3), (std::vector<float>{1, 0, -1}));
  HMRT_ASSERT_OK(hmrt_binary_f32(HMRT_BINARY_DIV, c, 1, s3.data(), &two, 0,
                                 nullptr, y, 1, s3.data()));
  EXPECT_EQ(std::vector<float>(y, y + 3), (std::vector<float>{0.5, 1, 1.5}));
  HMRT_ASSERT_OK(hmrt_binary_f32(HMRT_BINARY_POW, c, 1, s3.data(), &two, 0,
                                 nullptr, y, 1, s3.data()));
  EXPECT_EQ(std::vector<float>(y, y + 3), (std::vector<float>{1, 4, 9}));
  const float m1[] = {1, nan, 5}, m2[] = {2, 0, nan};
  HMRT_ASSERT_OK(hmrt_binary_f32(HMRT_BINARY_MAX, m1, 1, s3.data(), m2, 1,
                                 s3.data(), y, 1, s3.data()));
  EXPECT_EQ(y[0], 2);
  EXPECT_TRUE(std::isnan(y[1]) && std::isnan(y[2]));
  HMRT_ASSERT_OK(hmrt_binary_f32(HMRT_BINARY_MIN, m1, 1, s3.data(), m2, 1,
                                 s3.data(), y, 1, s3.data()));
  EXPECT_EQ(y[0], 1);
  EXPECT_TRUE(std::isnan(y[1]) && std::isnan(y[2]));
}

TEST(TensorOpsBinary, I64MatchesReference) {
  for (int op_i = HMRT_BINARY_ADD; op_i <= HMRT_BINARY_MIN; ++op_i) {
    const auto op = static_cast<hmrt_binary_op>(op_i);
    for (const Pair& p : kPairs) {
      const Dims s = bcast(p.a, p.b);
      const int64_t n = numel(s);
      auto a = random_i64(numel(p.a), 41, -1000000, 1000000);
      std::vector<int64_t> b;
      if (op == HMRT_BINARY_POW) {
        b = random_i64(numel(p.b), 42, 0, 5);
      } else {
        b = random_i64(numel(p.b), 43, -1000, 1000);
        for (auto& v : b) v = v == 0 ? 7 : v;
      }
      std::vector<int64_t> want(n);
      hmrt::ref::binary_i64(op, a.data(), rk(p.a), p.a.data(), b.data(),
                            rk(p.b), p.b.data(), want.data(), rk(s), s.data());
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message() << "op=" << op << " a=" << str(p.a)
                                        << " b=" << str(p.b)
                                        << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        std::vector<int64_t> y(n);
        HMRT_ASSERT_OK(hmrt_binary_i64(op, a.data(), rk(p.a), p.a.data(),
                                       b.data(), rk(p.b), p.b.data(), y.data(),
                                       rk(s), s.data()));
        EXPECT_TRUE(same(y, want));
      }
    }
  }
}

TEST(TensorOpsBinary, I64HandComputedAndErrors) {
  const Dims s5 = {5};
  const int64_t a[] = {7, -7, INT64_MIN, INT64_MAX, 3};
  const int64_t b[] = {-2, 2, -1, 1, 4};
  int64_t y[5];
  HMRT_ASSERT_OK(hmrt_binary_i64(HMRT_BINARY_DIV, a, 1, s5.data(), b, 1,
                                 s5.data(), y, 1, s5.data()));
  EXPECT_EQ(std::vector<int64_t>(y, y + 5),
            (std::vector<int64_t>{-3, -3, INT64_MIN, INT64_MAX, 0}));
  HMRT_ASSERT_OK(hmrt_binary_i64(HMRT_BINARY_ADD, a, 1, s5.data(), b, 1,
                                 s5.data(), y, 1, s5.data()));
  EXPECT_EQ(y[3], INT64_MIN);  // wraps
  EXPECT_EQ(y[2], INT64_MAX);  // INT64_MIN + -1 wraps
  const int64_t e[] = {2, 2, 0, 1, 4};
  HMRT_ASSERT_OK(hmrt_binary_i64(HMRT_BINARY_POW, a, 1, s5.data(), e, 1,
                                 s5.data(), y, 1, s5.data()));
  EXPECT_EQ(std::vector<int64_t>(y, y + 5),
            (std::vector<int64_t>{49, 49, 1, INT64_MAX, 81}));
  const int64_t two = 2, sixty_four = 64;  // 2^64 wraps to 0
  HMRT_ASSERT_OK(hmrt_binary_i64(HMRT_BINARY_POW, &two, 0, nullptr,
                                 &sixty_four, 0, nullptr, y, 0, nullptr));
  EXPECT_EQ(y[0], 0);
  HMRT_ASSERT_OK(hmrt_binary_i64(HMRT_BINARY_MAX, a, 1, s5.data(), b, 1,
                                 s5.data(), y, 1, s5.data()));
  EXPECT_EQ(std::vector<int64_t>(y, y + 5),
            (std::vector<int64_t>{7, 2, -1, INT64_MAX, 4}));

  const int64_t zero_at_3[] = {1, 2, 3, 0, 5};
  for (int64_t& v : y) v = 42;
  EXPECT_FAILS(hmrt_binary_i64(HMRT_BINARY_DIV, a, 1, s5.data(), zero_at_3, 1,
                               s5.data(), y, 1, s5.data()),
               HMRT_INVALID_ARGUMENT, "division by zero: b[3] is 0");
  EXPECT_EQ(y[0], 42);  // untouched
  const int64_t neg[] = {-1};
  const Dims s1 = {1};
  EXPECT_FAILS(hmrt_binary_i64(HMRT_BINARY_POW, a, 1, s5.data(), neg, 1,
                               s1.data(), y, 1, s5.data()),
               HMRT_INVALID_ARGUMENT, "negative integer exponent");
}

TEST(TensorOpsBinary, ShapeErrors) {
  float a[12] = {}, b[12] = {}, y[24] = {};
  const Dims s23 = {2, 3}, s4 = {4}, s3 = {3}, s33 = {3, 3}, bad = {2, -1};
  EXPECT_FAILS(hmrt_binary_f32(HMRT_BINARY_ADD, a, 2, s23.data(), b, 1,
                               s4.data(), y, 2, s23.data()),
               HMRT_INVALID_ARGUMENT, "shapes [2,3] (a) and [4] (b) do not broadcast");
  EXPECT_FAILS(hmrt_binary_f32(HMRT_BINARY_ADD, a, 2, s23.data(), b, 1,
                               s3.data(), y, 2, s33.data()),
               HMRT_INVALID_ARGUMENT,
               "the output has shape [3,3] but the inputs broadcast to [2,3]");
  EXPECT_FAILS(hmrt_binary_f32(HMRT_BINARY_ADD, a, 2, s23.data(), b, 1,
                               s3.data(), y, 1, s3.data()),
               HMRT_INVALID_ARGUMENT, "broadcast to [2,3]");
  const Dims r9(9, 1);
  EXPECT_FAILS(hmrt_binary_f32(HMRT_BINARY_ADD, a, 9, r9.data(), b, 1,
                               s3.data(), y, 9, r9.data()),
               HMRT_INVALID_ARGUMENT, "rank of a must be in [0, 8], got 9");
  EXPECT_FAILS(hmrt_binary_f32(HMRT_BINARY_ADD, a, 2, bad.data(), b, 1,
                               s3.data(), y, 2, s23.data()),
               HMRT_INVALID_ARGUMENT, "negative dim");
  EXPECT_FAILS(hmrt_binary_f32(HMRT_BINARY_ADD, a, 2, s23.data(), nullptr, 1,
                               s3.data(), y, 2, s23.data()),
               HMRT_INVALID_ARGUMENT, "b is NULL");
  EXPECT_FAILS(hmrt_binary_f32(static_cast<hmrt_binary_op>(-1), a, 2,
                               s23.data(), b, 1, s3.data(), y, 2, s23.data()),
               HMRT_INVALID_ARGUMENT, "unknown op -1");
  EXPECT_FAILS(hmrt_binary_i64(HMRT_BINARY_ADD, nullptr, 2, s23.data(),
                               nullptr, 1, s4.data(), nullptr, 2, s23.data()),
               HMRT_INVALID_ARGUMENT, "do not broadcast");
}

// ---- equal --------------------------------------------------------------

template <class T>
std::vector<uint8_t> as_bytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// n elements of dtype with many repeats (values in a small range).
Bytes small_values(int32_t dtype, int64_t n, uint32_t seed) {
  auto ints = random_i64(n, seed, -2, 2);
  switch (dtype) {
    case HMRT_DTYPE_F32: return as_bytes(std::vector<float>(ints.begin(), ints.end()));
    case HMRT_DTYPE_F64: return as_bytes(std::vector<double>(ints.begin(), ints.end()));
    case HMRT_DTYPE_U8: return as_bytes(std::vector<uint8_t>(ints.begin(), ints.end()));
    case HMRT_DTYPE_I8: return as_bytes(std::vector<int8_t>(ints.begin(), ints.end()));
    case HMRT_DTYPE_I32: return as_bytes(std::vector<int32_t>(ints.begin(), ints.end()));
    case HMRT_DTYPE_I64: return as_bytes(ints);
    case HMRT_DTYPE_BOOL: {
      Bytes b(n);
      for (int64_t i = 0; i < n; ++i) b[i] = ints[i] > 0 ? uint8_t(ints[i]) : 0;
      return b;  // 0, 1 or 2 (2 is true as well)
    }
    case HMRT_DTYPE_U16: return as_bytes(std::vector<uint16_t>(ints.begin(), ints.end()));
    case HMRT_DTYPE_I16: return as_bytes(std::vector<int16_t>(ints.begin(), ints.end()));
    case HMRT_DTYPE_U32: return as_bytes(std::vector<uint32_t>(ints.begin(), ints.end()));
    case HMRT_DTYPE_U64: return as_bytes(std::vector<uint64_t>(ints.begin(), ints.end()));
    case HMRT_DTYPE_F16:
    case HMRT_DTYPE_BF16: {
      // -2..2 as bits; zeros alternate between +0 and -0.
      const uint16_t f16[] = {0xC000, 0xBC00, 0x0000, 0x3C00, 0x4000};
      const uint16_t bf16[] = {0xC000, 0xBF80, 0x0000, 0x3F80, 0x4000};
      std::vector<uint16_t> v;
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h = (dtype == HMRT_DTYPE_F16 ? f16 : bf16)[ints[i] + 2];
        if (ints[i] == 0 && i % 2) h = 0x8000;
        v.push_back(h);
      }
      return as_bytes(v);
    }
  }
  return {};
}

const int32_t kDtypes[] = {HMRT_DTYPE_F32, HMRT_DTYPE_U8,   HMRT_DTYPE_I8,
                           HMRT_DTYPE_I32, HMRT_DTYPE_I64,  HMRT_DTYPE_BOOL,
                           HMRT_DTYPE_F64, HMRT_DTYPE_U16,  HMRT_DTYPE_I16,
                           HMRT_DTYPE_F16, HMRT_DTYPE_U32,  HMRT_DTYPE_U64,
                           HMRT_DTYPE_BF16};

TEST(TensorOpsEqual, MatchesReference) {
  for (int32_t dt : kDtypes) {
    for (const Pair& p : kPairs) {
      const Dims s = bcast(p.a, p.b);
      const int64_t n = numel(s);
      Bytes a = small_values(dt, numel(p.a), 51), b = small_values(dt, numel(p.b), 52);
      Bytes want(n);
      hmrt::ref::equal(dt, a.data(), rk(p.a), p.a.data(), b.data(), rk(p.b),
                       p.b.data(), want.data(), rk(s), s.data());
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message() << "dtype=" << dt << " a=" << str(p.a)
                                        << " b=" << str(p.b)
                                        << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        Bytes y(n, 7);
        HMRT_ASSERT_OK(hmrt_equal(dt, a.data(), rk(p.a), p.a.data(), b.data(),
                                  rk(p.b), p.b.data(), y.data(), rk(s),
                                  s.data()));
        EXPECT_TRUE(same(y, want));
      }
    }
  }
}

TEST(TensorOpsEqual, HandComputed) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float a[] = {1, nan, -0.0f, 2};
  const float b[] = {1, nan, 0.0f, 3};
  const Dims s4 = {4}, s22 = {2, 2};
  uint8_t y[4];
  HMRT_ASSERT_OK(hmrt_equal(HMRT_DTYPE_F32, a, 1, s4.data(), b, 1, s4.data(),
                            y, 1, s4.data()));
  EXPECT_EQ(Bytes(y, y + 4), (Bytes{1, 0, 1, 0}));
  const int64_t c[] = {5, 6}, d[] = {6, 5};  // [2,1] == [2] -> [2,2]
  const Dims s21 = {2, 1}, s2 = {2};
  HMRT_ASSERT_OK(hmrt_equal(HMRT_DTYPE_I64, c, 2, s21.data(), d, 1, s2.data(),
                            y, 2, s22.data()));
  EXPECT_EQ(Bytes(y, y + 4), (Bytes{0, 1, 1, 0}));
  const uint8_t t1[] = {2, 0}, t2[] = {1, 0};  // any nonzero byte is true
  HMRT_ASSERT_OK(hmrt_equal(HMRT_DTYPE_BOOL, t1, 1, s2.data(), t2, 1,
                            s2.data(), y, 1, s2.data()));
  EXPECT_EQ(Bytes(y, y + 2), (Bytes{1, 1}));
  EXPECT_FAILS(hmrt_equal(8, a, 1, s4.data(), b, 1, s4.data(), y, 1,
                          s4.data()),
               HMRT_INVALID_ARGUMENT, "unsupported dtype 8");  // STRING
}

// ---- where --------------------------------------------------------------

TEST(TensorOpsWhere, MatchesReference) {
  struct Case {
    Dims c, x, z;
  };
  const Case cases[] = {
      {{3, 1}, {1, 4}, {}},
      {{}, {2, 3}, {2, 3}},
      {{2, 1, 4}, {3, 1}, {4}},
      {{5}, {5}, {5}},
      {{2, 0}, {1}, {2, 1}},
      {{170, 1}, {170, 300}, {300}},
      {{250, 200}, {250, 200}, {250, 200}},
  };
  for (size_t es : {1, 2, 4, 8, 3, 12}) {
    for (const Case& k : cases) {
      const Dims s = bcast(bcast(k.c, k.x), k.z);
      const int64_t n = numel(s);
      Bytes cond = random_bytes(numel(k.c), 61);
      for (size_t i = 0; i < cond.size(); i += 3) cond[i] = 0;
      Bytes x = random_bytes(numel(k.x) * es, 62), z = random_bytes(numel(k.z) * es, 63);
      Bytes want(n * es);
      hmrt::ref::where(cond.data(), rk(k.c), k.c.data(), x.data(), rk(k.x),
                       k.x.data(), z.data(), rk(k.z), k.z.data(), want.data(),
                       rk(s), s.data(), es);
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message()
                     << "es=" << es << " c=" << str(k.c) << " x=" << str(k.x)
                     << " z=" << str(k.z) << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        Bytes y(n * es);
        HMRT_ASSERT_OK(hmrt_where(cond.data(), rk(k.c), k.c.data(), x.data(),
                                  rk(k.x), k.x.data(), z.data(), rk(k.z),
                                  k.z.data(), y.data(), rk(s), s.data(), es));
        EXPECT_TRUE(same(y, want));
      }
    }
  }
}

TEST(TensorOpsWhere, HandComputedAndErrors) {
  const uint8_t cond[] = {1, 0, 5};  // [3, 1]
  const float x[] = {1, 2};          // [2]
  const float z = -1;                // scalar
  const Dims sc = {3, 1}, sx = {2}, sy = {3, 2};
  float y[6];
  HMRT_ASSERT_OK(hmrt_where(cond, 2, sc.data(), x, 1, sx.data(), &z, 0,
                            nullptr, y, 2, sy.data(), sizeof(float)));
  EXPECT_EQ(std::vector<float>(y, y + 6),
            (std::vector<float>{1, 2, -1, -1, 1, 2}));
  const Dims s3 = {3};
  EXPECT_FAILS(hmrt_where(cond, 1, s3.data(), x, 1, sx.data(), &z, 0, nullptr,
                          y, 1, s3.data(), sizeof(float)),
               HMRT_INVALID_ARGUMENT,
               "shapes [3] (cond), [2] (x) and [] (z) do not broadcast");
  EXPECT_FAILS(hmrt_where(cond, 2, sc.data(), x, 1, sx.data(), &z, 0, nullptr,
                          y, 2, sy.data(), 0),
               HMRT_INVALID_ARGUMENT, "elem_size");
}

// ---- cast ---------------------------------------------------------------

template <class T>
Bytes low_bits(const int64_t* in, size_t n) {
  std::vector<T> v;
  for (size_t i = 0; i < n; ++i) {
    T t;
    const uint64_t u = uint64_t(in[i]);
    std::memcpy(&t, &u, sizeof(T));  // little-endian: the low bytes
    v.push_back(t);
  }
  return as_bytes(v);
}

Bytes cast_source(int32_t dt) {
  const double fl[] = {0.0,    -0.0,  1.5,    -1.5,  2.7,     -2.7,   127.9,
                       128.0,  255.9, 256.0,  -129,  1e10,    -1e10,  3e38,
                       NAN,    INFINITY, -INFINITY, 1e-40, 2147483647.0,
                       4294967296.0, 9.3e18, -9.3e18, 16777217.0, 1e300,
                       // 16-bit float edges: half max, ties, subnormals.
                       65504.0, 65519.0, 65520.0, -65520.0, 1e5, 65535.7,
                       32768.5, -32768.9, 1.0 + 0x1p-11, 1.0 + 3 * 0x1p-11,
                       0x1p-24, 0x1p-25, 3 * 0x1p-25, 0x1p-14, 1e-8,
                       1.0 + 0x1p-8, -(1.0 + 3 * 0x1p-8), 1.8e19, 3.4e38};
  const int64_t in[] = {0,         1,         -1,        127,
                        128,       255,       256,       -128,
                        -129,      INT32_MAX, INT32_MIN, (int64_t{1} << 40) + 5,
                        INT64_MIN, INT64_MAX, 16777217,  -16777217,
                        65535,     65536,     -32769,    4294967295,
                        2049,      65519,     65520,     -(int64_t{1} << 53) - 1};
  constexpr size_t nin = sizeof(in) / sizeof(in[0]);
  switch (dt) {
    case HMRT_DTYPE_U16: return low_bits<uint16_t>(in, nin);
    case HMRT_DTYPE_I16: return low_bits<int16_t>(in, nin);
    case HMRT_DTYPE_U32: return low_bits<uint32_t>(in, nin);
    case HMRT_DTYPE_U64: return low_bits<uint64_t>(in, nin);
    case HMRT_DTYPE_F16:
      // Zeros, one, max, inf, NaNs (quiet, signalling, negative),
      // subnormals, integers at type limits, fractions.
      return as_bytes(std::vector<uint16_t>{
          0x0000, 0x8000, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
          0x7E00, 0x7D01, 0xFE00, 0x0001, 0x03FF, 0x0400, 0x8001, 0x57F0,
          0x5800, 0x5BF8, 0x5C00, 0xD800, 0xD808, 0x3555, 0xC0CD, 0x7800,
          0x3BFF, 0x3C01, 0x1400});
    case HMRT_DTYPE_BF16:
      return as_bytes(std::vector<uint16_t>{
          0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80,
          0x7FC0, 0x7F81, 0xFFC0, 0x0001, 0x007F, 0x0080, 0x8001, 0x42FF,
          0x4300, 0x437F, 0x4380, 0xC300, 0xC301, 0x3EAB, 0xC02D, 0x4F00,
          0xCF00, 0x5F00, 0xDF00, 0x5F80, 0x477F, 0x4780, 0x3FC1, 0x3380});
    case HMRT_DTYPE_F32: return as_bytes(std::vector<float>(std::begin(fl), std::end(fl)));
    case HMRT_DTYPE_F64: return as_bytes(std::vector<double>(std::begin(fl), std::end(fl)));
    case HMRT_DTYPE_U8: {
      std::vector<uint8_t> v;
      for (int64_t i : in) v.push_back(uint8_t(uint64_t(i)));
      return as_bytes(v);
    }
    case HMRT_DTYPE_I8: {
      std::vector<int8_t> v;
      for (int64_t i : in) v.push_back(int8_t(uint8_t(uint64_t(i))));
      return as_bytes(v);
    }
    case HMRT_DTYPE_I32: {
      std::vector<int32_t> v;
      for (int64_t i : in) v.push_back(int32_t(uint32_t(uint64_t(i))));
      return as_bytes(v);
    }
    case HMRT_DTYPE_I64: return as_bytes(std::vector<int64_t>(std::begin(in), std::end(in)));
    case HMRT_DTYPE_BOOL: return Bytes{0, 1, 2, 255, 0};
  }
  return {};
}

size_t dtype_size(int32_t dt) {
  switch (dt) {
    case HMRT_DTYPE_F32: case HMRT_DTYPE_I32: case HMRT_DTYPE_U32: return 4;
    case HMRT_DTYPE_F64: case HMRT_DTYPE_I64: case HMRT_DTYPE_U64: return 8;
    case HMRT_DTYPE_F16: case HMRT_DTYPE_BF16: case HMRT_DTYPE_U16:
    case HMRT_DTYPE_I16: return 2;
    default: return 1;
  }
}

// Equal bytes, or both NaN for float types.
::testing::AssertionResult same_values(int32_t dt, const Bytes& got,
                                       const Bytes& want) {
  const size_t es = dtype_size(dt);
  for (size_t i = 0; i * es < want.size(); ++i) {
    if (std::memcmp(&got[i * es], &want[i * es], es) == 0) continue;
    if (dt == HMRT_DTYPE_F32) {
      float g, w;
      std::memcpy(&g, &got[i * es], 4);
      std::memcpy(&w, &want[i * es], 4);
      if (std::isnan(g) && std::isnan(w)) continue;
    }
    if (dt == HMRT_DTYPE_F64) {
      double g, w;
      std::memcpy(&g, &got[i * es], 8);
      std::memcpy(&w, &want[i * es], 8);
      if (std::isnan(g) && std::isnan(w)) continue;
    }
    if (dt == HMRT_DTYPE_F16 || dt == HMRT_DTYPE_BF16) {
      // NaN payloads may differ, but the sign must not.
      uint16_t g, w;
      std::memcpy(&g, &got[i * es], 2);
      std::memcpy(&w, &want[i * es], 2);
      const uint16_t inf = dt == HMRT_DTYPE_F16 ? 0x7C00 : 0x7F80;
      if ((g & 0x7FFF) > inf && (w & 0x7FFF) > inf && (g >> 15) == (w >> 15))
        continue;
      return ::testing::AssertionFailure()
             << "element " << i << " differs: got 0x" << std::hex << g
             << ", want 0x" << w;
    }
    return ::testing::AssertionFailure() << "element " << i << " differs";
  }
  return ::testing::AssertionSuccess();
}

TEST(TensorOpsCast, AllPairsMatchReference) {
  for (int32_t from : kDtypes) {
    const Bytes x = cast_source(from);
    const int64_t n = int64_t(x.size() / dtype_size(from));
    for (int32_t to : kDtypes) {
      SCOPED_TRACE(testing::Message() << "from=" << from << " to=" << to);
      Bytes want(n * dtype_size(to)), y(n * dtype_size(to));
      hmrt::ref::cast(from, x.data(), to, want.data(), n);
      HMRT_ASSERT_OK(hmrt_cast(from, x.data(), to, y.data(), n));
      EXPECT_TRUE(same_values(to, y, want));
    }
  }
}

TEST(TensorOpsCast, HandComputed) {
  const float f[] = {-2.7f, 2.7f, NAN, -0.0f, 300.0f, -5.0f, 1e20f};
  int32_t i32[7];
  HMRT_ASSERT_OK(hmrt_cast(HMRT_DTYPE_F32, f, HMRT_DTYPE_I32, i32, 7));
  EXPECT_EQ(std::vector<int32_t>(i32, i32 + 7),
            (std::vector<int32_t>{-2, 2, 0, 0, 300, -5, INT32_MAX}));
  uint8_t u8[7], b[7];
  HMRT_ASSERT_OK(hmrt_cast(HMRT_DTYPE_F32, f, HMRT_DTYPE_U8, u8, 7));
  EXPECT_EQ(Bytes(u8, u8 + 7), (Bytes{0, 2, 0, 0, 255, 0, 255}));
  HMRT_ASSERT_OK(hmrt_cast(HMRT_DTYPE_F32, f, HMRT_DTYPE_BOOL, b, 7));
  EXPECT_EQ(Bytes(b, b + 7), (Bytes{1, 1, 1, 0, 1, 1, 1}));
  const int64_t big[] = {200, -1, 16777217};
  int8_t i8[3];
  HMRT_ASSERT_OK(hmrt_cast(HMRT_DTYPE_I64, big, HMRT_DTYPE_I8, i8, 3));
  EXPECT_EQ(i8[0], -56);  // wraps
  EXPECT_EQ(i8[1], -1);
  float g[3];
  HMRT_ASSERT_OK(hmrt_cast(HMRT_DTYPE_I64, big, HMRT_DTYPE_F32, g, 3));
  EXPECT_EQ(g[2], 16777216.0f);  // nearest even
  const uint8_t truth[] = {5, 0};
  double d[2];
  HMRT_ASSERT_OK(hmrt_cast(HMRT_DTYPE_BOOL, truth, HMRT_DTYPE_F64, d, 2));
  EXPECT_EQ(d[0], 1.0);
  EXPECT_EQ(d[1], 0.0);
  const double huge = 1e40;
  float h;
  HMRT_ASSERT_OK(hmrt_cast(HMRT_DTYPE_F64, &huge, HMRT_DTYPE_F32, &h, 1));
  EXPECT_TRUE(std::isinf(h));
  // In place between same-size types, many elements on several threads.
  auto v = hmrt_test::random_vec(50000, 71, -1000.0f, 1000.0f);
  std::vector<int32_t> want(v.size());
  for (size_t i = 0; i < v.size(); ++i) want[i] = int32_t(std::trunc(v[i]));
  for (int threads : hmrt_test::thread_counts()) {
    hmrt_test::ThreadScope scope(threads);
    auto w = v;
    HMRT_ASSERT_OK(hmrt_cast(HMRT_DTYPE_F32, w.data(), HMRT_DTYPE_I32,
                             w.data(), int64_t(w.size())));
    EXPECT_EQ(std::memcmp(w.data(), want.data(), want.size() * 4), 0);
  }
  // STRING and COMPLEX64 are not element types of the runtime.
  EXPECT_FAILS(hmrt_cast(HMRT_DTYPE_F32, f, 14, g, 1), HMRT_INVALID_ARGUMENT,
               "unsupported to_dtype 14");
  EXPECT_FAILS(hmrt_cast(8, f, HMRT_DTYPE_F32, g, 1), HMRT_INVALID_ARGUMENT,
               "unsupported from_dtype 8");
}

// ---- transpose ----------------------------------------------------------

TEST(TensorOpsTranspose, MatchesReference) {
  struct Case {
    Dims shape, perm;
  };
  std::vector<Case> cases = {
      {{}, {}},
      {{5}, {0}},
      {{3, 4}, {1, 0}},
      {{2, 3, 4, 5}, {0, 2, 1, 3}},
      {{2, 3, 4, 5}, {3, 2, 1, 0}},
      {{2, 3, 4, 5}, {0, 1, 3, 2}},
      {{1, 7, 1, 9}, {3, 1, 0, 2}},
      {{3, 0, 2}, {2, 0, 1}},
      {{260, 200}, {1, 0}},
      {{4, 64, 33}, {2, 0, 1}},
      {{2, 1, 2, 1, 2, 3, 1, 2}, {7, 6, 5, 4, 3, 2, 1, 0}},
  };
  Dims p3 = {0, 1, 2};
  do cases.push_back({{2, 3, 4}, p3});
  while (std::next_permutation(p3.begin(), p3.end()));
  for (size_t es : {1, 2, 4, 8, 3, 16}) {
    for (const Case& c : cases) {
      const int64_t n = numel(c.shape);
      Bytes x = random_bytes(n * es, 81), want(n * es);
      hmrt::ref::transpose(x.data(), rk(c.shape), c.shape.data(), c.perm.data(),
                           want.data(), es);
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message() << "es=" << es << " shape="
                                        << str(c.shape) << " perm="
                                        << str(c.perm) << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        Bytes y(n * es);
        HMRT_ASSERT_OK(hmrt_transpose(x.data(), rk(c.shape), c.shape.data(),
                                      c.perm.data(), y.data(), es));
        EXPECT_TRUE(same(y, want));
      }
    }
  }
}

TEST(TensorOpsTranspose, HandComputedAndErrors) {
  const float x[] = {1, 2, 3, 4, 5, 6};  // [2, 3]
  const Dims s = {2, 3}, perm = {1, 0};
  float y[6];
  HMRT_ASSERT_OK(hmrt_transpose(x, 2, s.data(), perm.data(), y, 4));
  EXPECT_EQ(std::vector<float>(y, y + 6), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  const Dims twice = {0, 0}, outside = {0, 2};
  EXPECT_FAILS(hmrt_transpose(x, 2, s.data(), twice.data(), y, 4),
               HMRT_INVALID_ARGUMENT, "perm [0,0] is not a permutation of 0..1");
  EXPECT_FAILS(hmrt_transpose(x, 2, s.data(), outside.data(), y, 4),
               HMRT_INVALID_ARGUMENT, "is not a permutation");
}

// ---- slice --------------------------------------------------------------

struct SliceCase {
  Dims shape, starts, steps, out;
};
const SliceCase kSlices[] = {
    {{10}, {2}, {3}, {3}},
    {{10}, {9}, {-1}, {10}},
    {{10}, {8}, {-3}, {3}},
    {{4, 6}, {1, 5}, {2, -2}, {2, 3}},
    {{5, 7, 9}, {0, 1, 8}, {1, 3, -4}, {5, 2, 3}},
    {{5, 7, 9}, {4, 0, 0}, {-1, 1, 1}, {5, 7, 9}},
    {{3, 4}, {0, 0}, {1, 1}, {0, 4}},
    {{}, {}, {}, {}},
    {{400, 150}, {0, 10}, {1, 1}, {400, 130}},
    {{300, 340}, {299, 339}, {-1, -2}, {300, 170}},
};

TEST(TensorOpsSlice, MatchesReference) {
  for (size_t es : {4, 1, 8, 6}) {
    for (const SliceCase& c : kSlices) {
      const int64_t nx = numel(c.shape), ny = numel(c.out);
      Bytes x = random_bytes(nx * es, 91), want(ny * es);
      hmrt::ref::slice(x.data(), rk(c.shape), c.shape.data(), c.starts.data(),
                       c.steps.data(), c.out.data(), want.data(), es);
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message() << "es=" << es << " shape="
                                        << str(c.shape) << " out="
                                        << str(c.out) << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        Bytes y(ny * es);
        HMRT_ASSERT_OK(hmrt_slice(x.data(), rk(c.shape), c.shape.data(),
                                  c.starts.data(), c.steps.data(), c.out.data(),
                                  y.data(), es));
        EXPECT_TRUE(same(y, want));
      }
    }
  }
}

TEST(TensorOpsSlice, BackwardMatchesReference) {
  for (const SliceCase& c : kSlices) {
    const int64_t nx = numel(c.shape), ny = numel(c.out);
    auto dy = hmrt_test::random_vec(ny, 92);
    std::vector<double> want(nx);
    hmrt::ref::slice_backward(to_double(dy).data(), rk(c.shape), c.shape.data(),
                              c.starts.data(), c.steps.data(), c.out.data(),
                              want.data());
    for (int threads : hmrt_test::thread_counts()) {
      SCOPED_TRACE(testing::Message() << "shape=" << str(c.shape) << " out="
                                      << str(c.out) << " threads=" << threads);
      hmrt_test::ThreadScope scope(threads);
      std::vector<float> dx(nx, 99.0f);  // overwritten, not accumulated
      HMRT_ASSERT_OK(hmrt_slice_backward_f32(dy.data(), rk(c.shape),
                                             c.shape.data(), c.starts.data(),
                                             c.steps.data(), c.out.data(),
                                             dx.data()));
      EXPECT_TRUE(same(dx, to_float(want)));
    }
  }
}

TEST(TensorOpsSlice, HandComputedAndErrors) {
  const int32_t x[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const Dims s = {10}, start = {8}, step = {-3}, out = {3};
  int32_t y[3];
  HMRT_ASSERT_OK(hmrt_slice(x, 1, s.data(), start.data(), step.data(),
                            out.data(), y, 4));
  EXPECT_EQ(std::vector<int32_t>(y, y + 3), (std::vector<int32_t>{8, 5, 2}));
  const float dy[] = {1, 2, 3};
  float dx[10];
  HMRT_ASSERT_OK(hmrt_slice_backward_f32(dy, 1, s.data(), start.data(),
                                         step.data(), out.data(), dx));
  EXPECT_EQ(std::vector<float>(dx, dx + 10),
            (std::vector<float>{0, 0, 3, 0, 0, 2, 0, 0, 1, 0}));

  const Dims start10 = {10}, four = {4}, step0 = {0}, one = {1};
  EXPECT_FAILS(hmrt_slice(x, 1, s.data(), start10.data(), one.data(),
                          one.data(), y, 4),
               HMRT_OUT_OF_RANGE, "dim 0: 1 elements from start 10 with step 1");
  EXPECT_FAILS(hmrt_slice(x, 1, s.data(), start.data(), step.data(),
                          four.data(), y, 4),
               HMRT_OUT_OF_RANGE, "leave [0, 10)");
  EXPECT_FAILS(hmrt_slice(x, 1, s.data(), start.data(), step0.data(),
                          one.data(), y, 4),
               HMRT_INVALID_ARGUMENT, "steps[0] is 0");
  const Dims huge = {INT64_MAX / 2};
  EXPECT_FAILS(hmrt_slice(x, 1, s.data(), start.data(), huge.data(),
                          out.data(), y, 4),
               HMRT_OUT_OF_RANGE, "leave [0, 10)");
}

// ---- concat -------------------------------------------------------------

TEST(TensorOpsConcat, MatchesReference) {
  struct Case {
    Dims out;
    int32_t axis;
    Dims sizes;
  };
  const Case cases[] = {
      {{7}, 0, {3, 0, 4}},
      {{2, 9, 3}, 1, {2, 5, 2}},
      {{2, 3, 6}, -1, {1, 0, 5}},
      {{4, 3}, 0, {1, 1, 2}},
      {{5, 0, 2}, 1, {0, 0}},
      {{48, 3000}, 1, {1000, 2000}},
      {{900, 30}, 0, {300, 300, 300}},
  };
  for (size_t es : {4, 1, 3}) {
    for (const Case& c : cases) {
      const int32_t r = rk(c.out);
      const int32_t axis = c.axis < 0 ? c.axis + r : c.axis;
      std::vector<Bytes> ins;
      std::vector<const void*> ptrs;
      for (size_t i = 0; i < c.sizes.size(); ++i) {
        Dims s = c.out;
        s[axis] = c.sizes[i];
        ins.push_back(random_bytes(numel(s) * es, 100 + uint32_t(i)));
      }
      for (auto& b : ins) ptrs.push_back(b.empty() ? nullptr : b.data());
      const int64_t n = numel(c.out);
      Bytes want(n * es);
      const int32_t k = int32_t(c.sizes.size());
      hmrt::ref::concat(k, ptrs.data(), c.sizes.data(), r, c.out.data(), c.axis,
                        want.data(), es);
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message() << "es=" << es << " out=" << str(c.out)
                                        << " axis=" << c.axis
                                        << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        Bytes y(n * es);
        HMRT_ASSERT_OK(hmrt_concat(k, ptrs.data(), c.sizes.data(), r,
                                   c.out.data(), c.axis, y.data(), es));
        EXPECT_TRUE(same(y, want));
      }
    }
  }
}

TEST(TensorOpsConcat, HandComputedAndErrors) {
  const float a[] = {1, 2, 3, 4};  // [2, 2]
  const float b[] = {5, 6};        // [2, 1]
  const void* ins[] = {a, b};
  const int64_t sizes[] = {2, 1};
  const Dims out = {2, 3};
  float y[6];
  HMRT_ASSERT_OK(hmrt_concat(2, ins, sizes, 2, out.data(), 1, y, 4));
  EXPECT_EQ(std::vector<float>(y, y + 6), (std::vector<float>{1, 2, 5, 3, 4, 6}));
  const int64_t bad_sizes[] = {2, 2};
  EXPECT_FAILS(hmrt_concat(2, ins, bad_sizes, 2, out.data(), 1, y, 4),
               HMRT_INVALID_ARGUMENT, "exceed out_shape[1] = 3");
  const int64_t short_sizes[] = {1, 1};
  EXPECT_FAILS(hmrt_concat(2, ins, short_sizes, 2, out.data(), 1, y, 4),
               HMRT_INVALID_ARGUMENT, "sum to 2 but out_shape[1] is 3");
  EXPECT_FAILS(hmrt_concat(2, ins, sizes, 2, out.data(), 2, y, 4),
               HMRT_INVALID_ARGUMENT, "axis 2 is out of range for rank 2");
  EXPECT_FAILS(hmrt_concat(0, ins, sizes, 2, out.data(), 1, y, 4),
               HMRT_INVALID_ARGUMENT, "n must be >= 1");
  const void* with_null[] = {a, nullptr};
  EXPECT_FAILS(hmrt_concat(2, with_null, sizes, 2, out.data(), 1, y, 4),
               HMRT_INVALID_ARGUMENT, "inputs[1] is NULL");
}

// ---- gather -------------------------------------------------------------

struct GatherCase {
  Dims shape;
  int32_t axis;
  std::vector<int64_t> idx;
};
std::vector<GatherCase> gather_cases() {
  std::vector<GatherCase> cases = {
      {{5, 4}, 0, {4, -1, 0, 2, 2}},
      {{3, 5, 2}, 1, {0, -5, 4, 1, -1, 3}},
      {{3, 5, 2}, -1, {1, 0, -2}},
      {{2, 3, 4}, 2, {3, 0, -1, 3}},
      {{7}, 0, {6, -7, 3}},
      {{4, 3}, 0, {}},
      {{0, 3}, 1, {2, 0}},
      {{6, 2100}, 0, {5, -1, 0, 5, 2, 2, 3, -6, 1, 4}},  // > 1024 columns
  };
  GatherCase emb{{300, 64}, 0, {}};
  for (int64_t i = 0; i < 1000; ++i) emb.idx.push_back((i * 7919) % 600 - 300);
  cases.push_back(emb);
  GatherCase cols{{300, 50}, 1, {}};
  for (int64_t i = 0; i < 200; ++i) cols.idx.push_back((i * 31) % 100 - 50);
  cases.push_back(cols);
  return cases;
}

TEST(TensorOpsGather, MatchesReference) {
  for (int32_t idt : {HMRT_DTYPE_I64, HMRT_DTYPE_I32}) {
    for (size_t es : {4, 1, 8, 2, 3}) {
      for (const GatherCase& c : gather_cases()) {
        const int32_t r = rk(c.shape);
        const int32_t axis = c.axis < 0 ? c.axis + r : c.axis;
        std::vector<int32_t> idx32(c.idx.begin(), c.idx.end());
        const void* idx = idt == HMRT_DTYPE_I64 ? static_cast<const void*>(c.idx.data())
                                                : idx32.data();
        const int64_t ni = int64_t(c.idx.size());
        Dims ys = c.shape;
        ys[axis] = ni;
        const int64_t nx = numel(c.shape), ny = numel(ys);
        if (ny > 10000 && es != 4 && es != 3) continue;  // keep the test fast
        Bytes x = random_bytes(nx * es, 111), want(ny * es);
        hmrt::ref::gather(x.data(), r, c.shape.data(), c.axis, idt, idx, ni,
                          want.data(), es);
        for (int threads : hmrt_test::thread_counts()) {
          SCOPED_TRACE(testing::Message()
                       << "idx_dtype=" << idt << " es=" << es << " shape="
                       << str(c.shape) << " axis=" << c.axis << " n_idx=" << ni
                       << " threads=" << threads);
          hmrt_test::ThreadScope scope(threads);
          Bytes y(ny * es);
          HMRT_ASSERT_OK(hmrt_gather(x.data(), r, c.shape.data(), c.axis, idt,
                                     idx, ni, y.data(), es));
          EXPECT_TRUE(same(y, want));
        }
      }
    }
  }
}

TEST(TensorOpsGather, BackwardMatchesReference) {
  for (const GatherCase& c : gather_cases()) {
    const int32_t r = rk(c.shape);
    const int32_t axis = c.axis < 0 ? c.axis + r : c.axis;
    const int64_t ni = int64_t(c.idx.size());
    Dims ys = c.shape;
    ys[axis] = ni;
    const int64_t nx = numel(c.shape), ny = numel(ys);
    // Small integers: every float sum is exact, so dx must equal the
    // reference exactly.
    std::vector<float> dy_int(ny);
    auto ints = random_i64(ny, 121, -8, 8);
    for (int64_t i = 0; i < ny; ++i) dy_int[i] = float(ints[i]);
    std::vector<double> want(nx);
    hmrt::ref::gather_backward(to_double(dy_int).data(), r, c.shape.data(),
                               c.axis, HMRT_DTYPE_I64, c.idx.data(), ni,
                               want.data());
    // Random floats: index-order float sums, identical for every thread count.
    auto dy = hmrt_test::random_vec(ny, 122);
    std::vector<double> want_f(nx);
    hmrt::ref::gather_backward(to_double(dy).data(), r, c.shape.data(), c.axis,
                               HMRT_DTYPE_I64, c.idx.data(), ni, want_f.data());
    std::vector<float> first;
    for (int threads : {1, 2, 3, 4}) {
      SCOPED_TRACE(testing::Message() << "shape=" << str(c.shape) << " axis="
                                      << c.axis << " threads=" << threads);
      hmrt_test::ThreadScope scope(threads);
      std::vector<float> dx(nx, 99.0f);
      HMRT_ASSERT_OK(hmrt_gather_backward_f32(dy_int.data(), r, c.shape.data(),
                                              c.axis, HMRT_DTYPE_I64,
                                              c.idx.data(), ni, dx.data()));
      EXPECT_TRUE(same(dx, to_float(want)));
      HMRT_ASSERT_OK(hmrt_gather_backward_f32(dy.data(), r, c.shape.data(),
                                              c.axis, HMRT_DTYPE_I64,
                                              c.idx.data(), ni, dx.data()));
      EXPECT_TRUE(hmrt_test::all_close(
          dx, want_f, hmrt_test::reduction_tol(ni) * double(ni), 0));
      if (first.empty())
        first = dx;
      else
        EXPECT_TRUE(hmrt_test::bitwise_equal(dx, first));
    }
  }
}

TEST(TensorOpsGather, HandComputedAndErrors) {
  const float x[] = {0, 1, 2, 3, 4, 5};  // [3, 2]
  const Dims s = {3, 2};
  const int64_t idx[] = {2, -3, -1};
  float y[9];
  HMRT_ASSERT_OK(hmrt_gather(x, 2, s.data(), 0, HMRT_DTYPE_I64, idx, 3, y, 4));
  EXPECT_EQ(std::vector<float>(y, y + 6), (std::vector<float>{4, 5, 0, 1, 4, 5}));
  const int32_t idx32[] = {1, 1, 0};  // [3, 2] -> [3, 3]
  HMRT_ASSERT_OK(hmrt_gather(x, 2, s.data(), 1, HMRT_DTYPE_I32, idx32, 3, y, 4));
  EXPECT_EQ(std::vector<float>(y, y + 9),
            (std::vector<float>{1, 1, 0, 3, 3, 2, 5, 5, 4}));
  const float dy[] = {1, 2, 3, 4, 5, 6};
  float dx[6];
  HMRT_ASSERT_OK(hmrt_gather_backward_f32(dy, 2, s.data(), 0, HMRT_DTYPE_I64,
                                          idx, 3, dx));
  // Rows 2 and -1 both land on row 2: (1,2) + (5,6).
  EXPECT_EQ(std::vector<float>(dx, dx + 6), (std::vector<float>{3, 4, 0, 0, 6, 8}));

  const int64_t bad[] = {0, 1, -4, 3};
  for (float& v : y) v = 42;
  EXPECT_FAILS(hmrt_gather(x, 2, s.data(), 0, HMRT_DTYPE_I64, bad, 4, y, 4),
               HMRT_OUT_OF_RANGE,
               "index -4 at position 2 is out of range [-3, 3) for axis 0");
  EXPECT_EQ(y[0], 42);  // untouched
  const int64_t bad2[] = {0, 3};
  EXPECT_FAILS(hmrt_gather_backward_f32(dy, 2, s.data(), 0, HMRT_DTYPE_I64,
                                        bad2, 2, dx),
               HMRT_OUT_OF_RANGE, "index 3 at position 1");
  EXPECT_FAILS(hmrt_gather(x, 2, s.data(), 0, HMRT_DTYPE_I8, idx, 3, y, 4),
               HMRT_INVALID_ARGUMENT, "idx_dtype");
  EXPECT_FAILS(hmrt_gather(x, 2, s.data(), -3, HMRT_DTYPE_I64, idx, 3, y, 4),
               HMRT_INVALID_ARGUMENT, "axis -3 is out of range");
  EXPECT_FAILS(hmrt_gather(x, 0, nullptr, 0, HMRT_DTYPE_I64, idx, 3, y, 4),
               HMRT_INVALID_ARGUMENT, "rank >= 1");
}

// ---- expand -------------------------------------------------------------

TEST(TensorOpsExpand, MatchesReference) {
  const Pair cases[] = {
      {{}, {2, 3}},           {{3, 1}, {2, 3, 4}},   {{1}, {5}},
      {{2, 1, 3}, {2, 4, 3}}, {{4}, {4}},            {{1, 1}, {0, 3}},
      {{200, 1}, {200, 256}}, {{1, 512}, {100, 512}}, {{2, 1, 1, 3}, {2, 5, 7, 3}},
  };
  for (size_t es : {1, 4, 8, 5}) {
    for (const Pair& c : cases) {
      const int64_t nx = numel(c.a), ny = numel(c.b);
      Bytes x = random_bytes(nx * es, 131), want(ny * es);
      hmrt::ref::expand(x.data(), rk(c.a), c.a.data(), want.data(), rk(c.b),
                        c.b.data(), es);
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message() << "es=" << es << " x=" << str(c.a)
                                        << " y=" << str(c.b)
                                        << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        Bytes y(ny * es);
        HMRT_ASSERT_OK(hmrt_expand(x.data(), rk(c.a), c.a.data(), y.data(),
                                   rk(c.b), c.b.data(), es));
        EXPECT_TRUE(same(y, want));
      }
    }
  }
}

TEST(TensorOpsExpand, HandComputedAndErrors) {
  const int64_t x[] = {1, 2};  // [2, 1]
  const Dims sx = {2, 1}, sy = {2, 3};
  int64_t y[6];
  HMRT_ASSERT_OK(hmrt_expand(x, 2, sx.data(), y, 2, sy.data(), 8));
  EXPECT_EQ(std::vector<int64_t>(y, y + 6), (std::vector<int64_t>{1, 1, 1, 2, 2, 2}));
  const Dims s3 = {3}, s4 = {4}, s23 = {2, 3};
  EXPECT_FAILS(hmrt_expand(x, 1, s3.data(), y, 1, s4.data(), 8),
               HMRT_INVALID_ARGUMENT, "x shape [3] does not broadcast to y shape [4]");
  EXPECT_FAILS(hmrt_expand(x, 2, s23.data(), y, 1, s3.data(), 8),
               HMRT_INVALID_ARGUMENT, "does not broadcast");
}

// ---- reduce_to ----------------------------------------------------------

TEST(TensorOpsReduceTo, MatchesReference) {
  const Pair cases[] = {
      {{2, 3, 4}, {4}},         {{2, 3, 4}, {3, 1}},
      {{2, 3, 4}, {}},          {{2, 3, 4}, {1, 1, 1}},
      {{2, 3, 4}, {2, 1, 4}},   {{2, 3, 4}, {2, 3, 4}},
      {{5, 1, 7}, {1, 7}},      {{0, 3}, {3}},
      {{3, 0}, {3, 1}},         {{3, 4, 5, 6}, {4, 1, 6}},
      {{}, {}},                 {{1024, 32}, {32}},
      {{16, 2048}, {16, 1}},    {{150000}, {}},
      {{4, 40000, 2}, {4, 1, 1}}, {{3, 50, 5, 40}, {3, 1, 5, 1}},
      {{20, 20, 300}, {20, 300}},
  };
  for (const Pair& c : cases) {
    const int64_t nx = numel(c.a), ny = numel(c.b);
    auto x = hmrt_test::random_vec(nx, 141);
    std::vector<double> want(ny);
    hmrt::ref::reduce_to(to_double(x).data(), rk(c.a), c.a.data(), want.data(),
                         rk(c.b), c.b.data());
    std::vector<float> first;
    for (int threads : {1, 2, 3, 4}) {
      SCOPED_TRACE(testing::Message() << "x=" << str(c.a) << " y=" << str(c.b)
                                      << " threads=" << threads);
      hmrt_test::ThreadScope scope(threads);
      std::vector<float> y(ny, 99.0f);
      HMRT_ASSERT_OK(hmrt_reduce_to_f32(x.data(), rk(c.a), c.a.data(), y.data(),
                                        rk(c.b), c.b.data()));
      EXPECT_TRUE(hmrt_test::all_close(y, want, 1e-9, kU));
      if (first.empty())
        first = y;
      else
        EXPECT_TRUE(hmrt_test::bitwise_equal(y, first));
    }
  }
}

TEST(TensorOpsReduceTo, HandComputedAndErrors) {
  const float x[] = {1, 2, 3, 4, 5, 6};  // [2, 3]
  const Dims sx = {2, 3}, s3 = {3}, s21 = {2, 1}, s2 = {2};
  float y[3];
  HMRT_ASSERT_OK(hmrt_reduce_to_f32(x, 2, sx.data(), y, 1, s3.data()));
  EXPECT_EQ(std::vector<float>(y, y + 3), (std::vector<float>{5, 7, 9}));
  HMRT_ASSERT_OK(hmrt_reduce_to_f32(x, 2, sx.data(), y, 2, s21.data()));
  EXPECT_EQ(std::vector<float>(y, y + 2), (std::vector<float>{6, 15}));
  HMRT_ASSERT_OK(hmrt_reduce_to_f32(x, 2, sx.data(), y, 0, nullptr));
  EXPECT_EQ(y[0], 21);
  // Rounded once from double: 2^24 + 1 + 1 is exact in double.
  const float big[] = {16777216.0f, 1.0f, 1.0f};
  HMRT_ASSERT_OK(hmrt_reduce_to_f32(big, 1, s3.data(), y, 0, nullptr));
  EXPECT_EQ(y[0], 16777218.0f);
  EXPECT_FAILS(hmrt_reduce_to_f32(x, 2, sx.data(), y, 1, s2.data()),
               HMRT_INVALID_ARGUMENT, "y shape [2] does not broadcast to x shape [2,3]");
  const Dims s123 = {1, 2, 3};
  EXPECT_FAILS(hmrt_reduce_to_f32(x, 2, sx.data(), y, 3, s123.data()),
               HMRT_INVALID_ARGUMENT, "does not broadcast");
}

// ---- trilu --------------------------------------------------------------

TEST(TensorOpsTrilu, MatchesReference) {
  struct Case {
    Dims shape;
    std::vector<size_t> sizes;
    std::vector<int64_t> ks;
  };
  const std::vector<int64_t> all_k = {-10, -2, -1, 0, 1, 3, 10, INT64_MAX, INT64_MIN};
  const Case cases[] = {
      {{4, 5}, {4, 1, 8, 3}, all_k},   {{5, 4}, {4, 1, 8, 3}, all_k},
      {{2, 3, 3}, {4, 1}, all_k},      {{1, 6, 2}, {4, 2}, all_k},
      {{0, 3}, {4}, all_k},            {{4, 150, 120}, {4}, {-3, 0, 50}},
  };
  for (const Case& c : cases) {
    const int64_t n = numel(c.shape);
    for (size_t es : c.sizes) {
      Bytes x = random_bytes(n * es, 151);
      for (int64_t k : c.ks) {
        for (int upper : {0, 1}) {
          Bytes want(n * es);
          hmrt::ref::trilu(x.data(), rk(c.shape), c.shape.data(), k, upper,
                           want.data(), es);
          for (int threads : hmrt_test::thread_counts()) {
            SCOPED_TRACE(testing::Message()
                         << "es=" << es << " shape=" << str(c.shape)
                         << " k=" << k << " upper=" << upper
                         << " threads=" << threads);
            hmrt_test::ThreadScope scope(threads);
            Bytes y(n * es);
            HMRT_ASSERT_OK(hmrt_trilu(x.data(), rk(c.shape), c.shape.data(), k,
                                      upper, y.data(), es));
            EXPECT_TRUE(same(y, want));
            Bytes inplace = x;
            HMRT_ASSERT_OK(hmrt_trilu(inplace.data(), rk(c.shape),
                                      c.shape.data(), k, upper,
                                      inplace.data(), es));
            EXPECT_TRUE(same(inplace, want));
          }
        }
      }
    }
  }
}

TEST(TensorOpsTrilu, HandComputedAndErrors) {
  const float x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const Dims s = {3, 3};
  float y[9];
  HMRT_ASSERT_OK(hmrt_trilu(x, 2, s.data(), 0, 1, y, 4));
  EXPECT_EQ(std::vector<float>(y, y + 9),
            (std::vector<float>{1, 2, 3, 0, 5, 6, 0, 0, 9}));
  HMRT_ASSERT_OK(hmrt_trilu(x, 2, s.data(), -1, 0, y, 4));
  EXPECT_EQ(std::vector<float>(y, y + 9),
            (std::vector<float>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
  HMRT_ASSERT_OK(hmrt_trilu(x, 2, s.data(), 1, 1, y, 4));
  EXPECT_EQ(std::vector<float>(y, y + 9),
            (std::vector<float>{0, 2, 3, 0, 0, 6, 0, 0, 0}));
  const Dims s1 = {9};
  EXPECT_FAILS(hmrt_trilu(x, 1, s1.data(), 0, 1, y, 4), HMRT_INVALID_ARGUMENT,
               "rank >= 2");
}

// ---- fill and range -------------------------------------------------------

TEST(TensorOpsFill, AllSizes) {
  for (size_t es : {1, 2, 4, 8, 3, 16}) {
    for (int64_t n : {0, 1, 5, 100000}) {
      for (bool zero : {false, true}) {
        SCOPED_TRACE(testing::Message() << "es=" << es << " n=" << n
                                        << " zero=" << zero);
        Bytes value = zero ? Bytes(es, 0) : random_bytes(es, 161);
        Bytes y(n * es, 0xAB);
        HMRT_ASSERT_OK(hmrt_fill(y.data(), n, value.data(), es));
        Bytes want;
        for (int64_t i = 0; i < n; ++i) want.insert(want.end(), value.begin(), value.end());
        EXPECT_TRUE(same(y, want));
      }
    }
  }
  const float one = 1.0f;
  float f[3];
  HMRT_ASSERT_OK(hmrt_fill(f, 3, &one, 4));
  EXPECT_EQ(std::vector<float>(f, f + 3), (std::vector<float>{1, 1, 1}));
  EXPECT_FAILS(hmrt_fill(f, 3, nullptr, 4), HMRT_INVALID_ARGUMENT, "value is NULL");
  EXPECT_FAILS(hmrt_fill(f, 3, &one, 0), HMRT_INVALID_ARGUMENT, "elem_size");
  EXPECT_FAILS(hmrt_fill(f, -3, &one, 4), HMRT_INVALID_ARGUMENT, "n must be >= 0");
}

TEST(TensorOpsRange, MatchesReferenceAndHand) {
  float y[4];
  HMRT_ASSERT_OK(hmrt_range_f32(1.0f, 0.5f, y, 4));
  EXPECT_EQ(std::vector<float>(y, y + 4), (std::vector<float>{1, 1.5, 2, 2.5}));
  int64_t z[4];
  HMRT_ASSERT_OK(hmrt_range_i64(5, -2, z, 4));
  EXPECT_EQ(std::vector<int64_t>(z, z + 4), (std::vector<int64_t>{5, 3, 1, -1}));
  for (int threads : hmrt_test::thread_counts()) {
    hmrt_test::ThreadScope scope(threads);
    const int64_t n = 60000;
    std::vector<float> f(n);
    HMRT_ASSERT_OK(hmrt_range_f32(0.1f, 0.3f, f.data(), n));
    std::vector<double> want(n);
    hmrt::ref::range(0.1f, 0.3f, want.data(), n);
    // start + i*delta rounded once: no error accumulates along the range.
    EXPECT_TRUE(same(f, to_float(want)));
    EXPECT_NEAR(f[n - 1], 0.1 + (n - 1) * 0.3, 0.3 * n * 1e-7);
    std::vector<int64_t> v(n);
    HMRT_ASSERT_OK(hmrt_range_i64(-7, 3, v.data(), n));
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v[i], -7 + 3 * i);
  }
  EXPECT_FAILS(hmrt_range_f32(0, 1, y, -1), HMRT_INVALID_ARGUMENT, "n must be >= 0");
}

// ---- dropout ------------------------------------------------------------

TEST(TensorOpsDropout, SplitMix64KnownValues) {
  // splitmix64 seeded with 1234567 (Vigna's reference generator).
  const uint64_t want[] = {6457827717110365317ull, 3203168211198807973ull,
                           9817491932198370423ull, 4593380528125082431ull,
                           16408922859458223821ull};
  for (uint64_t j = 0; j < 5; ++j)
    EXPECT_EQ(hmrt::ref::splitmix64(1234567, j), want[j]) << j;
}

TEST(TensorOpsDropout, MatchesReference) {
  const int64_t n = 100000;
  const float ratio = 0.25f;
  auto x = hmrt_test::random_vec(n, 171);
  std::vector<double> want(n);
  Bytes want_mask(n);
  hmrt::ref::dropout(to_double(x).data(), want.data(), want_mask.data(), n,
                     ratio, 42, 7);
  int64_t kept = 0;
  for (uint8_t m : want_mask) kept += m;
  // Binomial(n, 0.75): standard deviation sqrt(n * 0.75 * 0.25) ~ 137.
  EXPECT_NEAR(double(kept), 0.75 * n, 5 * 137.0);
  for (int threads : hmrt_test::thread_counts()) {
    SCOPED_TRACE(testing::Message() << "threads=" << threads);
    hmrt_test::ThreadScope scope(threads);
    std::vector<float> y(n);
    Bytes mask(n);
    HMRT_ASSERT_OK(hmrt_dropout_f32(x.data(), y.data(), mask.data(), n, ratio,
                                    42, 7));
    EXPECT_TRUE(same(mask, want_mask));
    // The scale 1/(1-ratio) is rounded to float before multiplying: 2 ulp.
    EXPECT_TRUE(hmrt_test::all_close(y, want, 0, 8 * kU));
    // In place, without a mask.
    auto y2 = x;
    HMRT_ASSERT_OK(hmrt_dropout_f32(y2.data(), y2.data(), nullptr, n, ratio,
                                    42, 7));
    EXPECT_TRUE(hmrt_test::bitwise_equal(y2, y));
    // Backward from the mask.
    auto dy = hmrt_test::random_vec(n, 172);
    std::vector<double> dx_want(n);
    for (int64_t i = 0; i < n; ++i)
      dx_want[i] = want_mask[i] ? dy[i] / (1.0 - ratio) : 0.0;
    std::vector<float> dx(n);
    HMRT_ASSERT_OK(hmrt_dropout_backward_f32(dy.data(), mask.data(), dx.data(),
                                             n, ratio));
    EXPECT_TRUE(hmrt_test::all_close(dx, dx_want, 0, 8 * kU));
  }
  // Another counter (or seed) draws an independent mask: about 5/8 of the
  // positions agree (0.75^2 + 0.25^2).
  for (auto sc : {std::pair<uint64_t, uint64_t>{42, 8}, {43, 7}}) {
    std::vector<float> y(n);
    Bytes mask(n);
    HMRT_ASSERT_OK(hmrt_dropout_f32(x.data(), y.data(), mask.data(), n, ratio,
                                    sc.first, sc.second));
    int64_t agree = 0;
    for (int64_t i = 0; i < n; ++i) agree += mask[i] == want_mask[i];
    EXPECT_NEAR(double(agree) / n, 0.625, 0.01);
  }
}

TEST(TensorOpsDropout, EdgeRatiosAndErrors) {
  auto x = hmrt_test::random_vec(1000, 181);
  std::vector<float> y(1000);
  Bytes mask(1000, 7);
  HMRT_ASSERT_OK(hmrt_dropout_f32(x.data(), y.data(), mask.data(), 1000, 0.0f, 1, 2));
  EXPECT_TRUE(hmrt_test::bitwise_equal(y, x));
  EXPECT_TRUE(same(mask, Bytes(1000, 1)));
  HMRT_ASSERT_OK(hmrt_dropout_f32(x.data(), y.data(), mask.data(), 1000, 1.0f, 1, 2));
  EXPECT_TRUE(hmrt_test::bitwise_equal(y, std::vector<float>(1000, 0.0f)));
  EXPECT_TRUE(same(mask, Bytes(1000, 0)));
  // Hand: ratio 0.5 doubles the kept values.
  const float v[] = {1, 2, 3, 4, 5, 6, 7, 8};
  float w[8];
  uint8_t m[8];
  HMRT_ASSERT_OK(hmrt_dropout_f32(v, w, m, 8, 0.5f, 3, 4));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(w[i], m[i] ? 2 * v[i] : 0.0f) << i;
  EXPECT_FAILS(hmrt_dropout_f32(x.data(), y.data(), nullptr, 10, 1.5f, 0, 0),
               HMRT_INVALID_ARGUMENT, "ratio must be in [0, 1]");
  EXPECT_FAILS(hmrt_dropout_f32(x.data(), y.data(), nullptr, 10, NAN, 0, 0),
               HMRT_INVALID_ARGUMENT, "ratio must be in [0, 1]");
  EXPECT_FAILS(hmrt_dropout_backward_f32(x.data(), nullptr, y.data(), 10, 0.5f),
               HMRT_INVALID_ARGUMENT, "mask is NULL");
}

}  // namespace
