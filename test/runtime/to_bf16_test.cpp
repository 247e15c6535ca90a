// The kernels that write bf16 results (hmrt_*_f32_to_bf16: what an op
// whose value only bf16 GEMM operands read writes under --precision bf16)
// against their fp32 kernel's result rounded by hmrt_round_bf16: the same
// bits, at one thread and at several, with values that round up, down, to
// even, past the largest finite bf16 and from NaN.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "hmrt/kernels.h"
#include "hmrt/nn_ops.h"
#include "hmrt/tensor_ops.h"
#include "sce_inputs.h"
#include "test_util.h"

namespace {

// hmrt_round_bf16 of an fp32 result.
std::vector<uint16_t> rounded(const std::vector<float>& x) {
  std::vector<uint16_t> y(x.size());
  EXPECT_EQ(hmrt_round_bf16(x.data(), y.data(), int64_t(x.size())), HMRT_OK);
  return y;
}

// A poison pattern no kernel writes, to catch elements left unwritten.
constexpr uint16_t kPoison = 0x7F81;

TEST(ToBf16, FusedIsTheRoundedFp32Program) {
  // A GELU of x + bias (the chain the compiler fuses in a GPT's MLP), its
  // bias broadcast over rows, on 3 x 701 elements (a block's tail), then a
  // program whose values overflow bf16, sit halfway between two bf16s and
  // are NaN.
  const int64_t rows = 3, cols = 701, n = rows * cols;
  std::vector<float> x = hmrt_test::random_vec(n, 11, -4.0f, 4.0f);
  const std::vector<float> bias = hmrt_test::random_vec(cols, 12, -1.0f, 1.0f);
  const std::vector<float> half = {0.5f}, rsqrt2 = {0.70710678f}, one = {1.0f};
  const int64_t gelu[] = {
      HMRT_FUSED_ADD, 0, 1, -1,   // 5: h = x + bias
      HMRT_FUSED_MUL, 5, 3, -1,   // 6: h / sqrt 2
      HMRT_FUSED_ERF, 6, -1, -1,  // 7
      HMRT_FUSED_ADD, 7, 4, -1,   // 8: 1 + erf
      HMRT_FUSED_MUL, 5, 8, -1,   // 9
      HMRT_FUSED_MUL, 9, 2, -1,   // 10: * 0.5
  };
  const int64_t scale[] = {HMRT_FUSED_MUL, 0, 2, -1};  // x * 0.5
  // Exact halfway values (ties to even both ways), a value that rounds up
  // past the largest finite bf16, and NaN, in x for the scaling program.
  const float specials[] = {
      2.0f * (1.0f + 0x1p-8f), 2.0f * (1.0f + 3 * 0x1p-8f), std::numeric_limits<float>::max(),
      std::numeric_limits<float>::quiet_NaN(), -2.0f * (1.0f + 0x1p-8f), 0.0f, -0.0f};
  const int64_t dims[2] = {rows, cols};
  const int64_t in_dims[] = {rows, cols, 1, cols, 1, 1, 1, 1, 1, 1};
  const int64_t in_bool[5] = {0, 0, 0, 0, 0};
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) std::memcpy(x.data(), specials, sizeof specials);
    const void* in[5] = {x.data(), bias.data(), half.data(), rsqrt2.data(), one.data()};
    const int64_t* code = pass == 0 ? gelu : scale;
    const int64_t n_code = pass == 0 ? 6 : 1;
    std::vector<float> want(static_cast<size_t>(n));
    HMRT_ASSERT_OK(hmrt_fused_f32(n_code, code, 5, in, in_bool, in_dims, want.data(), 2, dims));
    for (int threads : {1, 3}) {
      hmrt_test::ThreadScope scope(threads);
      std::vector<uint16_t> got(static_cast<size_t>(n), kPoison);
      HMRT_ASSERT_OK(
          hmrt_fused_f32_to_bf16(n_code, code, 5, in, in_bool, in_dims, got.data(), 2, dims));
      EXPECT_EQ(got, rounded(want)) << "pass " << pass << ", " << threads << " threads";
    }
  }
  // The fp32 kernel's checks and messages, under its own name.
  const int64_t bad[] = {HMRT_FUSED_ADD, 0, 9, -1};
  const void* in[5] = {x.data(), bias.data(), half.data(), rsqrt2.data(), one.data()};
  std::vector<uint16_t> y(static_cast<size_t>(n));
  EXPECT_EQ(hmrt_fused_f32_to_bf16(1, bad, 5, in, in_bool, in_dims, y.data(), 2, dims),
            HMRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hmrt_last_error()).find("hmrt_fused_f32_to_bf16: instruction 0"),
            std::string::npos)
      << hmrt_last_error();
}

TEST(ToBf16, LayerNormIsTheRoundedFp32Norm) {
  // Rows of 3 x 67 (a tail after the eight lanes) and of 2048 (a GPT's
  // width), with and without scale and bias; mean and rstd stay fp32 and
  // are the fp32 kernel's.
  for (int64_t cols : {int64_t{201}, int64_t{2048}})
    for (bool affine : {true, false}) {
      const int64_t rows = 37;
      const int64_t shape[3] = {rows, cols == 201 ? 3 : 1, cols == 201 ? 67 : 2048};
      const std::vector<float> x = hmrt_test::random_vec(rows * cols, 21, -3.0f, 3.0f);
      const std::vector<float> w = hmrt_test::random_vec(cols, 22, 0.5f, 1.5f);
      const std::vector<float> b = hmrt_test::random_vec(cols, 23, -1.0f, 1.0f);
      const float* wp = affine ? w.data() : nullptr;
      const float* bp = affine ? b.data() : nullptr;
      std::vector<float> want(x.size()), mean(static_cast<size_t>(rows)),
          rstd(static_cast<size_t>(rows));
      HMRT_ASSERT_OK(hmrt_layer_norm_f32(x.data(), 3, shape, 1, wp, bp, 1e-5f, want.data(),
                                         mean.data(), rstd.data()));
      for (int threads : {1, 2}) {
        hmrt_test::ThreadScope scope(threads);
        std::vector<uint16_t> got(x.size(), kPoison);
        std::vector<float> m(static_cast<size_t>(rows)), r(static_cast<size_t>(rows));
        HMRT_ASSERT_OK(hmrt_layer_norm_f32_to_bf16(x.data(), 3, shape, 1, wp, bp, 1e-5f,
                                                   got.data(), m.data(), r.data()));
        EXPECT_EQ(got, rounded(want)) << cols << " " << affine << " " << threads;
        EXPECT_TRUE(hmrt_test::bitwise_equal(m, mean));
        EXPECT_TRUE(hmrt_test::bitwise_equal(r, rstd));
        // Without the statistics.
        std::vector<uint16_t> bare(x.size(), kPoison);
        HMRT_ASSERT_OK(hmrt_layer_norm_f32_to_bf16(x.data(), 3, shape, 1, wp, bp, 1e-5f,
                                                   bare.data(), nullptr, nullptr));
        EXPECT_EQ(bare, got);
      }
    }
  const int64_t shape[2] = {2, 3};
  const float x[6] = {};
  uint16_t y[6];
  EXPECT_EQ(hmrt_layer_norm_f32_to_bf16(x, 2, shape, 1, nullptr, nullptr, -1.0f, y, nullptr,
                                        nullptr),
            HMRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hmrt_last_error()).find("hmrt_layer_norm_f32_to_bf16: eps"),
            std::string::npos)
      << hmrt_last_error();
}

TEST(ToBf16, CrossEntropyGradientIsTheRoundedFp32Gradient) {
  // The cases of sce_inputs.h, the first two by the fp32 kernel's fast path
  // (mean, no weights), which the bf16 one does not take; with dims after
  // the classes, by tiles of columns.
  uint32_t salt = 0;
  for (const hmrt_test::SceCase& c : hmrt_test::sce_cases()) {
    SCOPED_TRACE("case " + std::to_string(salt));
    const hmrt_test::SceInputs in(c, salt++);
    std::vector<float> want(static_cast<size_t>(in.E * in.C));
    HMRT_ASSERT_OK(hmrt_sce_loss_backward_f32(in.x.data(), in.rank, c.shape.data(),
                                              in.labels.data(), in.wp, c.reduction, c.ignore,
                                              in.ignore_index, in.dloss.data(), want.data()));
    for (int threads : {1, 2}) {
      hmrt_test::ThreadScope scope(threads);
      std::vector<uint16_t> got(want.size(), kPoison);
      HMRT_ASSERT_OK(hmrt_sce_loss_backward_f32_to_bf16(
          in.x.data(), in.rank, c.shape.data(), in.labels.data(), in.wp, c.reduction, c.ignore,
          in.ignore_index, in.dloss.data(), got.data()));
      EXPECT_EQ(got, rounded(want)) << threads << " threads";
    }
  }
}

}  // namespace
