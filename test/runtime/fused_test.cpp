// Fused elementwise programs (hmrt_fused_f32) against the same ops run one
// by one through the one-op kernels, which they must match bit for bit (one
// per-element function each, core/ew_math.h), and a GELU program against a
// double-precision reference.  Shapes are not multiples of the register
// block, inputs broadcast in every way the compiler emits (scalars, bias
// rows, masks over leading dims, bool conditions), and every program runs
// at several thread counts.
#include <cmath>
#include <numeric>
#include <vector>

#include "hmrt/kernels.h"
#include "hmrt/tensor_ops.h"
#include "test_util.h"

namespace {

using Dims = std::vector<int64_t>;
using hmrt_test::bitwise_equal;

int64_t numel(const Dims& d) {
  return std::accumulate(d.begin(), d.end(), int64_t{1}, std::multiplies<>());
}
int32_t rk(const Dims& d) { return static_cast<int32_t>(d.size()); }

// One input: float data or bool bytes, with its dims aligned to the output.
struct In {
  Dims dims;
  std::vector<float> f;
  std::vector<uint8_t> b;
  const void* ptr() const {
    return b.empty() ? static_cast<const void*>(f.data()) : b.data();
  }
};

In floats(Dims dims, uint32_t seed, float lo = -3.0f, float hi = 3.0f) {
  In in;
  in.f = hmrt_test::random_vec(numel(dims), seed, lo, hi);
  in.dims = std::move(dims);
  return in;
}
In scalar(float v, int rank) {
  In in;
  in.dims.assign(size_t(rank), 1);
  in.f = {v};
  return in;
}
In bools(Dims dims, uint32_t seed) {
  In in;
  std::mt19937 rng(seed);
  in.dims = std::move(dims);
  in.b.resize(size_t(numel(in.dims)));
  for (auto& v : in.b) v = uint8_t(rng() & 1);
  return in;
}

std::vector<float> fused(const std::vector<int64_t>& code,
                         const std::vector<In>& ins, const Dims& out) {
  std::vector<const void*> ptrs;
  std::vector<int64_t> is_bool, dims;
  for (const In& in : ins) {
    ptrs.push_back(in.ptr());
    is_bool.push_back(!in.b.empty());
    dims.insert(dims.end(), in.dims.begin(), in.dims.end());
  }
  std::vector<float> y(static_cast<size_t>(numel(out)), -1.0f);
  hmrt_status st = hmrt_fused_f32(int64_t(code.size() / 4), code.data(),
                                  int64_t(ins.size()), ptrs.data(),
                                  is_bool.data(), dims.data(), y.data(),
                                  rk(out), out.data());
  EXPECT_EQ(st, HMRT_OK) << hmrt_last_error();
  return y;
}

// The same program, one op at a time through the one-op kernels.
struct Stepwise {
  Dims out;
  std::vector<std::vector<float>> vals;  // inputs (as float), then results
  std::vector<Dims> shapes;

  const float* v(int64_t j) const { return vals[size_t(j)].data(); }
  const Dims& s(int64_t j) const { return shapes[size_t(j)]; }

  std::vector<float> run(const std::vector<int64_t>& code,
                         const std::vector<In>& ins) {
    for (const In& in : ins) {
      std::vector<float> f = in.f;
      if (!in.b.empty()) f.assign(in.b.begin(), in.b.end());
      vals.push_back(f);
      shapes.push_back(in.dims);
    }
    const int64_t n = numel(out);
    for (size_t i = 0; i < code.size(); i += 4) {
      const int64_t op = code[i], a = code[i + 1], b = code[i + 2],
                    c = code[i + 3];
      std::vector<float> y(static_cast<size_t>(n));
      if (op <= HMRT_FUSED_MIN) {
        EXPECT_EQ(hmrt_binary_f32(hmrt_binary_op(op), v(a), rk(s(a)),
                                  s(a).data(), v(b), rk(s(b)), s(b).data(),
                                  y.data(), rk(out), out.data()),
                  HMRT_OK) << hmrt_last_error();
      } else if (op == HMRT_FUSED_WHERE) {
        std::vector<uint8_t> cond(vals[size_t(a)].begin(), vals[size_t(a)].end());
        EXPECT_EQ(hmrt_where(cond.data(), rk(s(a)), s(a).data(), v(b),
                             rk(s(b)), s(b).data(), v(c), rk(s(c)),
                             s(c).data(), y.data(), rk(out), out.data(),
                             sizeof(float)),
                  HMRT_OK) << hmrt_last_error();
      } else if (op == HMRT_FUSED_RELU_GRAD) {
        EXPECT_EQ(hmrt_relu_backward(v(a), v(b), y.data(), n), HMRT_OK);
      } else {
        static const hmrt_unary_op unary[] = {
            HMRT_UNARY_EXP,  HMRT_UNARY_LOG,        HMRT_UNARY_SQRT,
            HMRT_UNARY_NEG,  HMRT_UNARY_RECIPROCAL, HMRT_UNARY_TANH,
            HMRT_UNARY_SIGMOID, HMRT_UNARY_ERF,     HMRT_UNARY_RELU,
            HMRT_UNARY_ABS,  HMRT_UNARY_SIGN};
        EXPECT_EQ(numel(s(a)), n) << "a unary op's operand has the output's shape here";
        EXPECT_EQ(hmrt_unary_f32(unary[op - HMRT_FUSED_EXP], v(a), y.data(), n),
                  HMRT_OK);
      }
      vals.push_back(y);
      shapes.push_back(out);
    }
    return vals.back();
  }
};

void expect_same_as_stepwise(const std::vector<int64_t>& code,
                             const std::vector<In>& ins, const Dims& out) {
  Stepwise stepwise;
  stepwise.out = out;
  const std::vector<float> want = stepwise.run(code, ins);
  for (int threads : hmrt_test::thread_counts()) {
    SCOPED_TRACE(testing::Message() << "threads=" << threads);
    hmrt_test::ThreadScope scope(threads);
    EXPECT_TRUE(bitwise_equal(fused(code, ins, out), want));
  }
}

TEST(Fused, GeluWithBiasMatchesOpsOneByOne) {
  // x = mm + bias; y = x * (erf(x / sqrt2) + 1) * 0.5, as PyTorch exports it.
  const Dims out = {3, 7, 555};
  std::vector<In> ins = {floats(out, 1), floats({1, 1, 555}, 2),
                         scalar(1.41421354f, 3), scalar(1.0f, 3),
                         scalar(0.5f, 3)};
  const std::vector<int64_t> code = {
      HMRT_FUSED_ADD, 1, 0, -1,   // 5: x
      HMRT_FUSED_DIV, 5, 2, -1,   // 6
      HMRT_FUSED_ERF, 6, -1, -1,  // 7
      HMRT_FUSED_ADD, 7, 3, -1,   // 8
      HMRT_FUSED_MUL, 5, 8, -1,   // 9
      HMRT_FUSED_MUL, 9, 4, -1};  // 10
  expect_same_as_stepwise(code, ins, out);

  // And against a double-precision GELU: SLEEF's erf is within 1 ulp and
  // each float operation rounds once, but 1 + erf(x/sqrt2) cancels for
  // negative x, so the bound has an absolute part of |x| ulp(1).
  const std::vector<float> y = fused(code, ins, out);
  for (int64_t i = 0; i < numel(out); ++i) {
    const double x = double(ins[0].f[size_t(i)]) + ins[1].f[size_t(i % 555)];
    const double want = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    ASSERT_LE(std::fabs(y[size_t(i)] - want),
              16 * hmrt_test::kU * std::fabs(want) + 4 * hmrt_test::kU * std::fabs(x))
        << "x = " << x;
  }
}

TEST(Fused, EveryOpMatchesItsKernel) {
  const Dims out = {2, 3, 1030};
  for (int64_t op = HMRT_FUSED_ADD; op <= HMRT_FUSED_RELU_GRAD; ++op) {
    SCOPED_TRACE(testing::Message() << "op=" << op);
    const bool positive = op == HMRT_FUSED_LOG || op == HMRT_FUSED_SQRT ||
                          op == HMRT_FUSED_POW;
    std::vector<In> ins = {floats(out, 10, positive ? 0.01f : -8.0f, 8.0f),
                           floats({1, 3, 1}, 11, 0.5f, 2.0f),  // broadcast
                           floats(out, 12), bools({1, 1, 1030}, 13)};
    std::vector<int64_t> code;
    if (op == HMRT_FUSED_WHERE)
      code = {op, 3, 0, 2};
    else if (op == HMRT_FUSED_RELU_GRAD)
      code = {op, 0, 2, -1};
    else if (op <= HMRT_FUSED_MIN)
      code = {op, 0, 1, -1};
    else
      code = {op, 0, -1, -1};
    // A second instruction, so that the first one's value is a register.
    code.insert(code.end(), {HMRT_FUSED_ADD, 4, 2, -1});
    expect_same_as_stepwise(code, ins, out);
  }
}

TEST(Fused, ScalarOutputAndInPlace) {
  std::vector<In> ins = {scalar(2.0f, 0), scalar(3.0f, 0)};
  EXPECT_EQ(fused({HMRT_FUSED_MUL, 0, 1, -1, HMRT_FUSED_NEG, 2, -1, -1}, ins, {}),
            std::vector<float>{-6.0f});

  // y is input 0: each block is read before it is written.
  const Dims out = {5000};
  In a = floats(out, 21), b = floats(out, 22);
  std::vector<float> want(a.f.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = -(a.f[i] * b.f[i]);
  const int64_t code[] = {HMRT_FUSED_MUL, 0, 1, -1, HMRT_FUSED_NEG, 2, -1, -1};
  const void* ptrs[] = {a.f.data(), b.f.data()};
  const int64_t is_bool[] = {0, 0}, dims[] = {5000, 5000};
  HMRT_ASSERT_OK(hmrt_fused_f32(2, code, 2, ptrs, is_bool, dims, a.f.data(), 1,
                                out.data()));
  EXPECT_TRUE(bitwise_equal(a.f, want));
}

TEST(Fused, RejectsMalformedPrograms) {
  float x = 1, y = 0;
  const void* ptrs[] = {&x};
  const int64_t is_bool[] = {0}, one[] = {1}, four[] = {4};
  auto call = [&](std::vector<int64_t> code, const int64_t* dims) {
    return hmrt_fused_f32(int64_t(code.size() / 4), code.data(), 1, ptrs,
                          is_bool, dims, &y, 1, one);
  };
  EXPECT_FAILS(call({99, 0, -1, -1}, one), HMRT_INVALID_ARGUMENT,
               "instruction 0 has unknown op 99");
  EXPECT_FAILS(call({HMRT_FUSED_NEG, 1, -1, -1}, one), HMRT_INVALID_ARGUMENT,
               "instruction 0 operand 0 is 1");
  EXPECT_FAILS(call({HMRT_FUSED_NEG, 0, 0, -1}, one), HMRT_INVALID_ARGUMENT,
               "instruction 0 operand 1 is 0");
  EXPECT_FAILS(call({HMRT_FUSED_ADD, 0, -1, -1}, one), HMRT_INVALID_ARGUMENT,
               "instruction 0 operand 1 is -1");
  EXPECT_FAILS(call({HMRT_FUSED_NEG, 0, -1, -1}, four), HMRT_INVALID_ARGUMENT,
               "input 0 has dim 0 of 4, which does not broadcast to the output's 1");
  EXPECT_FAILS(call({}, one), HMRT_INVALID_ARGUMENT, "n_code must be in [1, 256]");
  EXPECT_EQ(y, 0.0f);
}

// The vectorised maps give every element the same bits wherever it sits in
// an array (whole vectors and the padded tail go through one function).
TEST(Fused, TranscendentalMapsDoNotDependOnPosition) {
  for (hmrt_unary_op op : {HMRT_UNARY_ERF, HMRT_UNARY_TANH, HMRT_UNARY_LOG}) {
    auto x = hmrt_test::random_vec(37, 5, 0.01f, 5.0f);
    std::vector<float> y(37);
    HMRT_ASSERT_OK(hmrt_unary_f32(op, x.data(), y.data(), 37));
    for (size_t i = 0; i < x.size(); ++i) {
      float one;
      HMRT_ASSERT_OK(hmrt_unary_f32(op, &x[i], &one, 1));
      EXPECT_EQ(std::memcmp(&one, &y[i], sizeof(float)), 0) << "op " << op << " i " << i;
    }
  }
}

}  // namespace
