// A fused program compiled for itself (cuda/fused_generated.h), as hmcc
// --target cuda writes each program of a model: registered, it replaces
// the interpreter for its code, and computes the CPU kernel's bits over
// inputs of every kind (in place, a bias row, a scalar, a bool mask), in
// fp32 and rounded to bf16 (skipped without a GPU); and the registry and
// HMRT_CUDA_FUSED, which are host code.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda/fused_generated.h"
#include "cuda_test_fixture.h"
#include "fused_inputs.h"
#include "hmrt/tensor_ops.h"
#include "test_util.h"

namespace {

using namespace hmrt_cuda_test;
using hmrt::ew::fused_apply;

// GELU(x + bias) by erf, masked against sigmoid(x), then min with the
// scalar (cuda_nn_test.cpp's exact program ends with max instead, so that
// it keeps testing the interpreter).
struct MaskedGelu {
  static constexpr int kInputs = 4, kInstructions = 9;
  static constexpr int64_t kCode[36] = {
      HMRT_FUSED_ADD, 0, 1, -1,  HMRT_FUSED_MUL, 4, 2, -1,     HMRT_FUSED_MUL, 5, 2, -1,
      HMRT_FUSED_ERF, 6, -1, -1, HMRT_FUSED_ADD, 7, 7, -1,     HMRT_FUSED_MUL, 5, 8, -1,
      HMRT_FUSED_SIGMOID, 0, -1, -1, HMRT_FUSED_WHERE, 3, 9, 10, HMRT_FUSED_MIN, 11, 2, -1};
  static HMRT_FUSED_INLINE float eval(const float* r) {
    const float v4 = fused_apply(HMRT_FUSED_ADD, r[0], r[1], 0.0f);
    const float v5 = fused_apply(HMRT_FUSED_MUL, v4, r[2], 0.0f);
    const float v6 = fused_apply(HMRT_FUSED_MUL, v5, r[2], 0.0f);
    const float v7 = fused_apply(HMRT_FUSED_ERF, v6, 0.0f, 0.0f);
    const float v8 = fused_apply(HMRT_FUSED_ADD, v7, v7, 0.0f);
    const float v9 = fused_apply(HMRT_FUSED_MUL, v5, v8, 0.0f);
    const float v10 = fused_apply(HMRT_FUSED_SIGMOID, r[0], 0.0f, 0.0f);
    const float v11 = fused_apply(HMRT_FUSED_WHERE, r[3], v9, v10);
    return fused_apply(HMRT_FUSED_MIN, v11, r[2], 0.0f);
  }
};
const int kRegistered = hmrt::cuda::register_programs<MaskedGelu>();

// The registry finds a registered program by its code, from a copy of it
// too (a program's calls pass their own arrays), and no other program (host
// code: runs without a GPU).
TEST(CudaGeneratedRegistry, FindsARegisteredProgramByItsCode) {
  ASSERT_EQ(kRegistered, 1);
  const int64_t n_code = MaskedGelu::kInstructions;
  std::vector<int64_t> code(MaskedGelu::kCode, MaskedGelu::kCode + 4 * n_code);
  ASSERT_NE(hmrt::cuda::find_generated_fused(code.data(), n_code, 4), nullptr)
      << "HMRT_CUDA_FUSED=interpreter is set";
  // Another program of the same length, or the same code with another
  // number of inputs, is not this one.
  EXPECT_EQ(hmrt::cuda::find_generated_fused(code.data(), n_code, 5), nullptr);
  code.back() = 0;
  EXPECT_EQ(hmrt::cuda::find_generated_fused(code.data(), n_code, 4), nullptr);
}

TEST_F(Cuda, GeneratedFusedProgramMatchesCpu) {
  const int64_t* code = MaskedGelu::kCode;
  const int64_t n_code = MaskedGelu::kInstructions;
  ASSERT_NE(hmrt::cuda::find_generated_fused(code, n_code, 4), nullptr)
      << "HMRT_CUDA_FUSED=interpreter is set";
  const hmrt_test::FusedInputs f;
  const int64_t n = f.n;
  float *dx, *db, *dh, *dy;
  uint8_t* dm;
  BufferPtr bx = upload(f.x, &dx), bb = upload(f.bias, &db), bh = upload(f.half, &dh);
  BufferPtr bm = upload(f.mask, &dm), by = upload(std::vector<float>(size_t(n), 0.0f), &dy);
  const void* dev_in[4] = {dx, db, dh, dm};
  std::vector<float> want(static_cast<size_t>(n));
  HMRT_ASSERT_OK(hmrt_fused_f32(n_code, code, 4, f.host, f.in_bool.data(), f.in_dims.data(),
                                want.data(), 3, f.dims));
  HMRT_ASSERT_OK(
      k_->fused_f32(n_code, code, 4, dev_in, f.in_bool.data(), f.in_dims.data(), dy, 3, f.dims));
  EXPECT_TRUE(same_bits(download<float>(by.get(), size_t(n)), want));

  std::vector<uint16_t> want16(static_cast<size_t>(n));
  HMRT_ASSERT_OK(hmrt_fused_f32_to_bf16(n_code, code, 4, f.host, f.in_bool.data(),
                                        f.in_dims.data(), want16.data(), 3, f.dims));
  uint16_t* dy16;
  BufferPtr by16 = upload(std::vector<uint16_t>(size_t(n), 0), &dy16);
  HMRT_ASSERT_OK(k_->fused_f32_to_bf16(n_code, code, 4, dev_in, f.in_bool.data(),
                                       f.in_dims.data(), dy16, 3, f.dims));
  EXPECT_TRUE(same_bits(download<uint16_t>(by16.get(), size_t(n)), want16));
}

// HMRT_CUDA_FUSED's values (host code: runs without a GPU): interpreter
// turns the generated kernels off; unset, empty and generated keep them; any
// other value keeps them and says so on one line, once.
TEST(CudaFusedMode, ValuesOfTheEnvironmentVariable) {
  EXPECT_TRUE(hmrt::cuda::interpreter_requested("interpreter"));
  EXPECT_FALSE(hmrt::cuda::interpreter_requested(nullptr));
  EXPECT_FALSE(hmrt::cuda::interpreter_requested(""));
  EXPECT_FALSE(hmrt::cuda::interpreter_requested("generated"));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(hmrt::cuda::interpreter_requested("interpretr\n"));
  EXPECT_FALSE(hmrt::cuda::interpreter_requested("off"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err,
            "hmrt: HMRT_CUDA_FUSED=interpretr\\n: unknown (generated or interpreter); running the "
            "generated fused kernels\n");
}

}  // namespace
