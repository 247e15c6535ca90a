// The CUDA backend's attention, fused-program, one-op elementwise, softmax
// and cross-entropy kernels (cuda/nn_ops_cuda.cpp), ONNX's optimizers, and
// Transpose, Trilu, Equal, the int64 ops and the reductions
// (cuda/tensor_ops_cuda.cpp) against the CPU kernels on the same inputs.
//
// Bitwise where the GPU computes each element as the CPU does (exp, erf,
// sigmoid and the IEEE ops: core/ew_math.h); within a stated bound where it
// cannot: tanh, log and pow from the GPU's math library (2 ulp), and the
// row sums of softmax, log-sum-exp and attention, which a block of threads
// takes in another order than the CPU's vector lanes (tolerances relative
// to the largest magnitude of the CPU's result).  Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cuda_test_fixture.h"
#include "fused_inputs.h"
#include "packed_qkv.h"
#include "sce_inputs.h"
#include "hmrt/io.h"
#include "hmrt/kernels.h"
#include "hmrt/nn_ops.h"
#include "hmrt/tensor_ops.h"
#include "test_util.h"

namespace {

using namespace hmrt_cuda_test;

// Within n ulp of want (NaN matching NaN), or of scale[i] where given: for
// a sum, the magnitude of its terms, whose own rounding is what differs.
void expect_ulps(const std::vector<float>& got, const std::vector<float>& want, float ulps,
                 const char* what, const std::vector<float>* scale = nullptr) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << what << " [" << i << "]";
      continue;
    }
    const float tol = ulps * std::fabs(scale ? (*scale)[i] : want[i]) *
                      std::numeric_limits<float>::epsilon();
    ASSERT_LE(std::fabs(got[i] - want[i]), tol + 1e-37f)
        << what << " [" << i << "]: " << got[i] << " vs " << want[i];
  }
}

TEST_F(Cuda, UnaryAndReluBackwardMatchCpu) {
  const int64_t n = 5000;
  std::vector<float> x = hmrt_test::random_vec(n, 5, -30.0f, 30.0f);
  x[0] = 0.0f;
  x[1] = -0.0f;
  x[2] = std::numeric_limits<float>::quiet_NaN();
  x[3] = 100.0f;   // exp overflows
  x[4] = -120.0f;  // exp underflows
  std::vector<float> pos = x;
  for (float& v : pos) v = std::fabs(v) + 1e-3f;  // log's domain
  const std::vector<float> dy = hmrt_test::random_vec(n, 6, -1.0f, 1.0f);
  float *dx, *dp, *ddy, *dout;
  BufferPtr bx = upload(x, &dx), bp = upload(pos, &dp), bdy = upload(dy, &ddy);
  BufferPtr bo = upload(std::vector<float>(size_t(n), 0.0f), &dout);
  for (int op = HMRT_UNARY_EXP; op <= HMRT_UNARY_SIGN; ++op) {
    SCOPED_TRACE("unary op " + std::to_string(op));
    const bool on_pos = op == HMRT_UNARY_LOG || op == HMRT_UNARY_SQRT;
    const std::vector<float>& in = on_pos ? pos : x;
    std::vector<float> want(static_cast<size_t>(n));
    HMRT_ASSERT_OK(hmrt_unary_f32(hmrt_unary_op(op), in.data(), want.data(), n));
    HMRT_ASSERT_OK(k_->unary_f32(hmrt_unary_op(op), on_pos ? dp : dx, dout, n));
    const std::vector<float> got = download<float>(bo.get(), size_t(n));
    if (op == HMRT_UNARY_TANH || op == HMRT_UNARY_LOG)
      expect_ulps(got, want, 2.0f, "tanh/log");
    else  // x[2] is a NaN: the GPU's NaN need not have the CPU's payload
      EXPECT_TRUE(same_bits(got, want, /*nan_payloads=*/false));
  }
  std::vector<float> want(static_cast<size_t>(n));
  HMRT_ASSERT_OK(hmrt_relu_backward(x.data(), dy.data(), want.data(), n));
  HMRT_ASSERT_OK(k_->relu_backward(dx, ddy, dout, n));
  EXPECT_TRUE(same_bits(download<float>(bo.get(), size_t(n)), want));
  EXPECT_EQ(k_->unary_f32(hmrt_unary_op(99), dx, dout, n), HMRT_INVALID_ARGUMENT);
}

// A fused program with broadcast inputs (a bias row, a scalar, a bool mask
// over the leading dims) on the GPU and the CPU.
TEST_F(Cuda, FusedProgramsMatchCpu) {
  const hmrt_test::FusedInputs f;
  const int64_t n = f.n;
  // GELU(x + bias) by erf, then where(mask, ., sigmoid(x)): bitwise.
  const std::vector<int64_t> exact = {
      HMRT_FUSED_ADD,  0, 1, -1,   // 4: h = x + bias
      HMRT_FUSED_MUL,  4, 2, -1,   // 5: h * 0.5
      HMRT_FUSED_MUL,  5, 2, -1,   // 6: h * 0.25 (stands in for 1/sqrt 2)
      HMRT_FUSED_ERF,  6, -1, -1,  // 7
      HMRT_FUSED_ADD,  7, 7, -1,   // 8
      HMRT_FUSED_MUL,  5, 8, -1,   // 9
      HMRT_FUSED_SIGMOID, 0, -1, -1,  // 10
      HMRT_FUSED_WHERE, 3, 9, 10,  // 11
      HMRT_FUSED_MAX,  11, 2, -1,  // 12
  };
  // With tanh and log, which the GPU's math library rounds on its own:
  // within a few ulp of the larger of the two terms (where they cancel,
  // their rounding is all that is left of the sum).
  const std::vector<int64_t> inexact = {
      HMRT_FUSED_TANH, 0, -1, -1,  // 4
      HMRT_FUSED_ABS,  0, -1, -1,  // 5
      HMRT_FUSED_ADD,  5, 2, -1,   // 6
      HMRT_FUSED_LOG,  6, -1, -1,  // 7
      HMRT_FUSED_ADD,  4, 7, -1,   // 8
  };
  std::vector<int64_t> terms(inexact.begin(), inexact.end() - 4);  // max(|tanh|, |log|)
  terms.insert(terms.end(), {HMRT_FUSED_ABS, 4, -1, -1,    // 8
                             HMRT_FUSED_ABS, 7, -1, -1,    // 9
                             HMRT_FUSED_MAX, 8, 9, -1});   // 10
  float *dx, *db, *dh, *dy;
  uint8_t* dm;
  BufferPtr bx = upload(f.x, &dx), bb = upload(f.bias, &db), bh = upload(f.half, &dh);
  BufferPtr bm = upload(f.mask, &dm), by = upload(std::vector<float>(size_t(n), 0.0f), &dy);
  const void* dev_in[4] = {dx, db, dh, dm};
  const int64_t* dims = f.dims;
  const std::vector<int64_t>& in_dims = f.in_dims;
  const std::vector<int64_t>& in_bool = f.in_bool;
  for (const auto* code : {&exact, &inexact}) {
    const int64_t n_code = int64_t(code->size() / 4);
    std::vector<float> want(static_cast<size_t>(n));
    HMRT_ASSERT_OK(hmrt_fused_f32(n_code, code->data(), 4, f.host, in_bool.data(),
                                  in_dims.data(), want.data(), 3, dims));
    HMRT_ASSERT_OK(k_->fused_f32(n_code, code->data(), 4, dev_in, in_bool.data(), in_dims.data(),
                                 dy, 3, dims));
    const std::vector<float> got = download<float>(by.get(), size_t(n));
    if (code == &exact) {
      EXPECT_TRUE(same_bits(got, want));
    } else {
      std::vector<float> scale(static_cast<size_t>(n));
      HMRT_ASSERT_OK(hmrt_fused_f32(int64_t(terms.size() / 4), terms.data(), 4, f.host,
                                    in_bool.data(), in_dims.data(), scale.data(), 3, dims));
      expect_ulps(got, want, 4.0f, "tanh + log", &scale);
    }
  }
  // Written in bf16 (hmrt_fused_f32_to_bf16): the CPU's bits.
  {
    const int64_t n_code = int64_t(exact.size() / 4);
    std::vector<uint16_t> want(static_cast<size_t>(n));
    HMRT_ASSERT_OK(hmrt_fused_f32_to_bf16(n_code, exact.data(), 4, f.host, in_bool.data(),
                                          in_dims.data(), want.data(), 3, dims));
    uint16_t* dy16;
    BufferPtr by16 = upload(std::vector<uint16_t>(size_t(n), 0), &dy16);
    HMRT_ASSERT_OK(k_->fused_f32_to_bf16(n_code, exact.data(), 4, dev_in, in_bool.data(),
                                         in_dims.data(), dy16, 3, dims));
    EXPECT_TRUE(same_bits(download<uint16_t>(by16.get(), size_t(n)), want));
  }
  // The CPU's checks and messages.
  const std::vector<int64_t> bad = {HMRT_FUSED_ADD, 0, 9, -1};
  EXPECT_EQ(k_->fused_f32(1, bad.data(), 4, dev_in, in_bool.data(), in_dims.data(), dy, 3, dims),
            HMRT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("instruction 0 operand 1 is 9"), std::string::npos) << last_error();
}

TEST_F(Cuda, SoftmaxMatchesCpu) {
  struct Case { std::vector<int64_t> shape; int32_t axis; };
  const Case cases[] = {{{6, 300}, -1}, {{3, 50, 7}, 1}, {{2, 3, 4, 5}, 0}};
  for (const Case& c : cases)
    for (int32_t log : {0, 1}) {
      SCOPED_TRACE("rank " + std::to_string(c.shape.size()) + " log " + std::to_string(log));
      int64_t n = 1;
      for (int64_t d : c.shape) n *= d;
      const int32_t rank = int32_t(c.shape.size());
      const std::vector<float> x = hmrt_test::random_vec(n, 21, -8.0f, 8.0f);
      const std::vector<float> dy = hmrt_test::random_vec(n, 22, -1.0f, 1.0f);
      std::vector<float> y(static_cast<size_t>(n)), dx(static_cast<size_t>(n));
      HMRT_ASSERT_OK(hmrt_softmax_axis_f32(x.data(), rank, c.shape.data(), c.axis, log, y.data()));
      HMRT_ASSERT_OK(hmrt_softmax_axis_backward_f32(y.data(), dy.data(), rank, c.shape.data(),
                                                    c.axis, log, dx.data()));
      float *dxp, *dyp, *dout, *dgrad;
      BufferPtr bx = upload(x, &dxp), bdy = upload(dy, &dyp);
      BufferPtr bo = upload(std::vector<float>(size_t(n), 0.0f), &dout);
      BufferPtr bg = upload(std::vector<float>(size_t(n), 0.0f), &dgrad);
      HMRT_ASSERT_OK(k_->softmax_axis_f32(dxp, rank, c.shape.data(), c.axis, log, dout));
      expect_close(download<float>(bo.get(), size_t(n)), y, 2e-6, "softmax");
      // The gradient from the CPU's y, so that only the kernel differs.
      HMRT_ASSERT_OK(hmrt_copy_from_host(bo.get(), 0, y.data(), y.size() * sizeof(float)));
      HMRT_ASSERT_OK(
          k_->softmax_axis_backward_f32(dout, dyp, rank, c.shape.data(), c.axis, log, dgrad));
      expect_close(download<float>(bg.get(), size_t(n)), dx, 1e-5, "softmax gradient");
    }
}

TEST_F(Cuda, SoftmaxCrossEntropyMatchesCpu) {
  uint32_t salt = 0;
  for (const hmrt_test::SceCase& c : hmrt_test::sce_cases()) {
    SCOPED_TRACE("case " + std::to_string(salt));
    const hmrt_test::SceInputs in(c, salt++);
    const int32_t rank = in.rank;
    const int64_t C = in.C, E = in.E, nl = in.nl, ignore_index = in.ignore_index;
    std::vector<float> loss(static_cast<size_t>(nl)), logp(static_cast<size_t>(E * C)),
        dx(static_cast<size_t>(E * C));
    HMRT_ASSERT_OK(hmrt_sce_loss_f32(in.x.data(), rank, c.shape.data(), in.labels.data(), in.wp,
                                     c.reduction, c.ignore, ignore_index, loss.data(),
                                     logp.data()));
    HMRT_ASSERT_OK(hmrt_sce_loss_backward_f32(in.x.data(), rank, c.shape.data(),
                                              in.labels.data(), in.wp, c.reduction, c.ignore,
                                              ignore_index, in.dloss.data(), dx.data()));
    float *gx, *gw, *gloss, *glogp, *gdl, *gdx;
    int64_t* gl;
    BufferPtr bx = upload(in.x, &gx), bw = upload(in.w, &gw), bl = upload(in.labels, &gl);
    BufferPtr bloss = upload(std::vector<float>(size_t(nl), 0.0f), &gloss);
    BufferPtr blogp = upload(std::vector<float>(size_t(E * C), 0.0f), &glogp);
    BufferPtr bdl = upload(in.dloss, &gdl);
    BufferPtr bdx = upload(std::vector<float>(size_t(E * C), 7.0f), &gdx);
    HMRT_ASSERT_OK(k_->sce_loss_f32(gx, rank, c.shape.data(), gl, c.weighted ? gw : nullptr,
                                    c.reduction, c.ignore, ignore_index, gloss, glogp));
    expect_close(download<float>(bloss.get(), size_t(nl)), loss, 2e-6, "loss");
    expect_close(download<float>(blogp.get(), size_t(E * C)), logp, 2e-6, "log_prob");
    HMRT_ASSERT_OK(k_->sce_loss_backward_f32(gx, rank, c.shape.data(), gl,
                                             c.weighted ? gw : nullptr, c.reduction, c.ignore,
                                             ignore_index, gdl, gdx));
    expect_close(download<float>(bdx.get(), size_t(E * C)), dx, 2e-6, "dscores");
    // Written in bf16: the GPU's fp32 gradient rounded as the CPU rounds it.
    uint16_t* gdx16;
    BufferPtr bdx16 = upload(std::vector<uint16_t>(size_t(E * C), 0), &gdx16);
    HMRT_ASSERT_OK(k_->sce_loss_backward_f32_to_bf16(gx, rank, c.shape.data(), gl,
                                                     c.weighted ? gw : nullptr, c.reduction,
                                                     c.ignore, ignore_index, gdl, gdx16));
    std::vector<float> gpu32 = download<float>(bdx.get(), size_t(E * C));
    std::vector<uint16_t> want16(gpu32.size());
    HMRT_ASSERT_OK(hmrt_round_bf16(gpu32.data(), want16.data(), int64_t(gpu32.size())));
    EXPECT_TRUE(same_bits(download<uint16_t>(bdx16.get(), size_t(E * C)), want16));
  }
  // A label out of range: read back and refused with the CPU's message.
  const int64_t shape[2] = {4, 3};
  const std::vector<float> x(12, 0.0f);
  const std::vector<int64_t> labels = {0, 1, 5, 2};
  float *gx, *gloss;
  int64_t* gl;
  BufferPtr bx = upload(x, &gx), bl = upload(labels, &gl);
  BufferPtr bloss = upload(std::vector<float>(1, 0.0f), &gloss);
  EXPECT_EQ(k_->sce_loss_f32(gx, 2, shape, gl, nullptr, HMRT_LOSS_MEAN, 0, 0, gloss, nullptr),
            HMRT_OUT_OF_RANGE);
  EXPECT_NE(last_error().find("labels[2] = 5 is outside [0, 3)"), std::string::npos)
      << last_error();
}

struct AttnCase {
  int64_t B, H, Hk, T, S, D;
  int32_t flags;
  std::vector<int64_t> bias_dims;  // empty: no bias
  float dropout;
};

TEST_F(Cuda, AttentionMatchesCpu) {
  const AttnCase cases[] = {
      {2, 4, 2, 70, 70, 24, HMRT_ATTENTION_CAUSAL | HMRT_ATTENTION_BTHD, {}, 0.0f},
      {1, 2, 2, 37, 150, 16, 0, {1, 2, 37, 150}, 0.0f},             // several key tiles
      {2, 2, 1, 130, 130, 8, HMRT_ATTENTION_CAUSAL, {}, 0.2f},      // dropout, one kv head
      {2, 3, 3, 20, 140, 64, HMRT_ATTENTION_BTHD, {2, 1, 1, 140}, 0.0f},  // key padding
      {1, 2, 1, 200, 200, 128, HMRT_ATTENTION_CAUSAL | HMRT_ATTENTION_BTHD, {}, 0.1f},
      {1, 1, 1, 65, 65, 160, HMRT_ATTENTION_CAUSAL, {}, 0.0f},  // bf16: the scalar kernels
  };
  // With bf16 products (HMRT_ATTENTION_BF16; the tensor-core kernels up to
  // head_dim 128) both sides round the same operands, but P and dS are
  // fp32 sums of their own order before they are rounded: where the two
  // fall on either side of a bf16 rounding boundary, a term moves by one
  // bf16 ulp (2^-8 of it), so the tolerance is 2^-8 of the output's scale
  // (2^-7 for the gradients, whose dS and P' both round). lse rounds
  // nothing: the products of bf16 values are exact, so only the order of
  // the sums differs, as at fp32.
  int salt = 0;
  for (const AttnCase& plain : cases)
    for (int32_t precision : {0, HMRT_ATTENTION_BF16}) {
      AttnCase c = plain;
      c.flags |= precision;
      const bool bf16 = precision != 0;
      const double tol_out = bf16 ? 1.0 / 256 : 1e-5, tol_lse = 1e-6;
      const double tol_grad = bf16 ? 1.0 / 128 : 2e-5;
      SCOPED_TRACE("case " + std::to_string(salt) + (bf16 ? " bf16" : " fp32"));
      ++salt;
      const int64_t nq = c.B * c.H * c.T * c.D, nk = c.B * c.Hk * c.S * c.D;
      const float scale = 1.0f / std::sqrt(float(c.D));
      const std::vector<float> q = hmrt_test::random_vec(nq, 70 + salt, -1.0f, 1.0f);
      const std::vector<float> k = hmrt_test::random_vec(nk, 80 + salt, -1.0f, 1.0f);
      const std::vector<float> v = hmrt_test::random_vec(nk, 90 + salt, -1.0f, 1.0f);
      const std::vector<float> dout = hmrt_test::random_vec(nq, 100 + salt, -1.0f, 1.0f);
      std::vector<float> bias;
      if (!c.bias_dims.empty()) {
        int64_t nb = 1;
        for (int64_t d : c.bias_dims) nb *= d;
        bias = hmrt_test::random_vec(nb, 110 + salt, -2.0f, 2.0f);
        if (c.bias_dims[1] == 1)  // a padding mask: the last keys of batch 1 hidden
          for (int64_t j = c.S - 9; j < c.S; ++j) bias[size_t(c.S + j)] = -INFINITY;
      }
      const float* bp = bias.empty() ? nullptr : bias.data();
      const int64_t* bd = bias.empty() ? nullptr : c.bias_dims.data();
      const uint64_t seed = 1234, counter = 77;
      std::vector<float> out(static_cast<size_t>(nq)), lse(static_cast<size_t>(c.B * c.H * c.T));
      std::vector<float> dq(static_cast<size_t>(nq)), dk(static_cast<size_t>(nk)),
          dv(static_cast<size_t>(nk));
      HMRT_ASSERT_OK(hmrt_attention_forward(q.data(), k.data(), v.data(), bp, bd, out.data(),
                                            lse.data(), c.B, c.H, c.Hk, c.T, c.S, c.D, scale,
                                            c.flags, c.dropout, seed, counter));
      HMRT_ASSERT_OK(hmrt_attention_backward(q.data(), k.data(), v.data(), bp, bd, out.data(),
                                             lse.data(), dout.data(), dq.data(), dk.data(),
                                             dv.data(), c.B, c.H, c.Hk, c.T, c.S, c.D, scale,
                                             c.flags, c.dropout, seed, counter));
      float *gq, *gk, *gv, *gb = nullptr, *gout, *glse, *gdout, *gdq, *gdk, *gdv;
      BufferPtr bq = upload(q, &gq), bk = upload(k, &gk), bv = upload(v, &gv);
      BufferPtr bb = bias.empty() ? nullptr : upload(bias, &gb);
      BufferPtr bout = upload(std::vector<float>(size_t(nq), 0.0f), &gout);
      BufferPtr blse = upload(std::vector<float>(lse.size(), 0.0f), &glse);
      BufferPtr bdout = upload(dout, &gdout);
      BufferPtr bdq = upload(std::vector<float>(size_t(nq), 5.0f), &gdq);
      BufferPtr bdk = upload(std::vector<float>(size_t(nk), 5.0f), &gdk);
      BufferPtr bdv = upload(std::vector<float>(size_t(nk), 5.0f), &gdv);
      HMRT_ASSERT_OK(k_->attention_forward(gq, gk, gv, gb, bd, gout, glse, c.B, c.H, c.Hk, c.T, c.S,
                                           c.D, scale, c.flags, c.dropout, seed, counter));
      expect_close(download<float>(bout.get(), size_t(nq)), out, tol_out, "out");
      expect_close(download<float>(blse.get(), lse.size()), lse, tol_lse, "lse");
      // The backward from the CPU's out and lse, so that only the kernel
      // differs.
      HMRT_ASSERT_OK(hmrt_copy_from_host(bout.get(), 0, out.data(), out.size() * sizeof(float)));
      HMRT_ASSERT_OK(hmrt_copy_from_host(blse.get(), 0, lse.data(), lse.size() * sizeof(float)));
      HMRT_ASSERT_OK(k_->attention_backward(gq, gk, gv, gb, bd, gout, glse, gdout, gdq, gdk, gdv,
                                            c.B, c.H, c.Hk, c.T, c.S, c.D, scale, c.flags,
                                            c.dropout, seed, counter));
      expect_close(download<float>(bdq.get(), size_t(nq)), dq, tol_grad, "dq");
      expect_close(download<float>(bdk.get(), size_t(nk)), dk, tol_grad, "dk");
      expect_close(download<float>(bdv.get(), size_t(nk)), dv, tol_grad, "dv");
    }
  // The CPU's checks, then the GPU kernel's own limit.
  float* g;
  BufferPtr b = upload(std::vector<float>(4 * 4096, 0.0f), &g);
  EXPECT_EQ(k_->attention_forward(g, g, g, nullptr, nullptr, g, nullptr, 1, 3, 2, 1, 1, 4, 1.0f,
                                  0, 0.0f, 0, 0),
            HMRT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("must be a positive multiple of kv_heads"), std::string::npos)
      << last_error();
  EXPECT_EQ(k_->attention_forward(g, g, g, nullptr, nullptr, g, nullptr, 1, 1, 1, 1, 1, 4096,
                                  1.0f, 0, 0.0f, 0, 0),
            HMRT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("head_dim 4096 is more than the GPU kernel takes"),
            std::string::npos)
      << last_error();
}

// q, k and v read from one projection's rows (HMRT_ATTENTION_PACKED) give
// the GPU the bits of three tensors, through the tensor-core kernels
// (bf16) and the scalar ones (fp32), causal with dropout and with a mask.
TEST_F(Cuda, PackedAttentionGivesTheSameBits) {
  const hmrt_test::PackedQkv p{2, 130, 4, 2, 64};
  const int64_t B = p.B, H = p.H, Hk = p.Hk, T = p.T, D = p.D;
  const int64_t nq = B * T * H * D, nk = B * T * Hk * D;
  const std::vector<float> q = hmrt_test::random_vec(nq, 171, -1.0f, 1.0f);
  const std::vector<float> k = hmrt_test::random_vec(nk, 172, -1.0f, 1.0f);
  const std::vector<float> v = hmrt_test::random_vec(nk, 173, -1.0f, 1.0f);
  const std::vector<float> dout = hmrt_test::random_vec(nq, 174, -1.0f, 1.0f);
  const std::vector<float> bias = hmrt_test::random_vec(T * T, 175, -2.0f, 2.0f);
  const int64_t bias_dims[4] = {1, 1, T, T};
  float *gq, *gk, *gv, *gx, *gb, *gdout;
  BufferPtr bq = upload(q, &gq), bk = upload(k, &gk), bv = upload(v, &gv);
  BufferPtr bx = upload(p.pack(q, k, v), &gx), bb = upload(bias, &gb);
  BufferPtr bdout = upload(dout, &gdout);
  for (int32_t precision : {0, HMRT_ATTENTION_BF16})
    for (bool causal : {true, false}) {
      SCOPED_TRACE(std::string(precision ? "bf16" : "fp32") + (causal ? " causal" : " mask"));
      const int32_t flags =
          HMRT_ATTENTION_BTHD | precision | (causal ? HMRT_ATTENTION_CAUSAL : 0);
      const float* bp = causal ? nullptr : gb;
      const int64_t* bd = causal ? nullptr : bias_dims;
      const float dropout = causal ? 0.1f : 0.0f;
      // Three tensors.
      float *gout, *glse, *gdq, *gdk, *gdv;
      BufferPtr bout = upload(std::vector<float>(size_t(nq), 0.0f), &gout);
      BufferPtr blse = upload(std::vector<float>(size_t(B * H * T), 0.0f), &glse);
      BufferPtr bdq = upload(std::vector<float>(size_t(nq), 0.0f), &gdq);
      BufferPtr bdk = upload(std::vector<float>(size_t(nk), 0.0f), &gdk);
      BufferPtr bdv = upload(std::vector<float>(size_t(nk), 0.0f), &gdv);
      HMRT_ASSERT_OK(k_->attention_forward(gq, gk, gv, bp, bd, gout, glse, B, H, Hk, T, T, D,
                                           0.125f, flags, dropout, 9, 4));
      HMRT_ASSERT_OK(k_->attention_backward(gq, gk, gv, bp, bd, gout, glse, gdout, gdq, gdk, gdv,
                                            B, H, Hk, T, T, D, 0.125f, flags, dropout, 9, 4));
      // One packed tensor; its gradient starts as NaN, so each element
      // must be written.
      float *pout, *plse, *pdx;
      BufferPtr bpout = upload(std::vector<float>(size_t(nq), 0.0f), &pout);
      BufferPtr bplse = upload(std::vector<float>(size_t(B * H * T), 0.0f), &plse);
      BufferPtr bpdx = upload(std::vector<float>(size_t(p.size()), NAN), &pdx);
      const int32_t pf = flags | HMRT_ATTENTION_PACKED;
      HMRT_ASSERT_OK(k_->attention_forward(gx, gx + p.k_offset(), gx + p.v_offset(), bp, bd,
                                           pout, plse, B, H, Hk, T, T, D, 0.125f, pf, dropout, 9,
                                           4));
      HMRT_ASSERT_OK(k_->attention_backward(gx, gx + p.k_offset(), gx + p.v_offset(), bp, bd,
                                            gout, glse, gdout, pdx, pdx + p.k_offset(),
                                            pdx + p.v_offset(), B, H, Hk, T, T, D, 0.125f, pf,
                                            dropout, 9, 4));
      EXPECT_TRUE(same_bits(download<float>(bpout.get(), size_t(nq)),
                            download<float>(bout.get(), size_t(nq))));
      EXPECT_TRUE(same_bits(download<float>(bplse.get(), size_t(B * H * T)),
                            download<float>(blse.get(), size_t(B * H * T))));
      std::vector<float> dq, dk, dv;
      p.unpack(download<float>(bpdx.get(), size_t(p.size())), &dq, &dk, &dv);
      EXPECT_TRUE(same_bits(dq, download<float>(bdq.get(), size_t(nq))));
      EXPECT_TRUE(same_bits(dk, download<float>(bdk.get(), size_t(nk))));
      EXPECT_TRUE(same_bits(dv, download<float>(bdv.get(), size_t(nk))));
    }
}

// ONNX's optimizers and the clip coefficient: the CPU's per-element code
// (core/optim_math.h), so the same bits.
TEST_F(Cuda, OnnxOptimizersAndClipMatchCpuBitwise) {
  const int64_t n = 3001;
  const std::vector<float> x = hmrt_test::random_vec(n, 1, -2.0f, 2.0f);
  const std::vector<float> g = hmrt_test::random_vec(n, 2, -1.0f, 1.0f);
  const std::vector<float> v = hmrt_test::random_vec(n, 3, -0.5f, 0.5f);
  const std::vector<float> h = hmrt_test::random_vec(n, 4, 0.0f, 0.5f);
  float *dx, *dg, *dv, *dh, *ox, *ov, *oh;
  BufferPtr bx = upload(x, &dx), bg = upload(g, &dg), bv = upload(v, &dv), bh = upload(h, &dh);
  const std::vector<float> zeros(static_cast<size_t>(n), 0.0f);
  BufferPtr box = upload(zeros, &ox), bov = upload(zeros, &ov), boh = upload(zeros, &oh);
  std::vector<float> wx(static_cast<size_t>(n)), wv(static_cast<size_t>(n)),
      wh(static_cast<size_t>(n));
  auto same = [&](const BufferPtr& b, const std::vector<float>& want, const char* what) {
    EXPECT_TRUE(same_bits(download<float>(b.get(), size_t(n)), want)) << what;
  };
  HMRT_ASSERT_OK(hmrt_onnx_adagrad(x.data(), g.data(), h.data(), wx.data(), wh.data(), n, 0.1, 3,
                                   0.01, 0.5, 1e-6));
  HMRT_ASSERT_OK(k_->onnx_adagrad(dx, dg, dh, ox, oh, n, 0.1, 3, 0.01, 0.5, 1e-6));
  same(box, wx, "adagrad x");
  same(boh, wh, "adagrad h");
  for (int nesterov : {0, 1}) {
    HMRT_ASSERT_OK(hmrt_onnx_momentum(x.data(), g.data(), v.data(), wx.data(), wv.data(), n, 0.1,
                                      2, 0.01, 0.9, 0.8, nesterov));
    HMRT_ASSERT_OK(k_->onnx_momentum(dx, dg, dv, ox, ov, n, 0.1, 2, 0.01, 0.9, 0.8, nesterov));
    same(box, wx, "momentum x");
    same(bov, wv, "momentum v");
  }
  HMRT_ASSERT_OK(hmrt_onnx_adam(x.data(), g.data(), v.data(), h.data(), wx.data(), wv.data(),
                                wh.data(), n, 0.01, 4, 0.01, 0.001, 0.9, 0.999, 1e-8));
  HMRT_ASSERT_OK(k_->onnx_adam(dx, dg, dv, dh, ox, ov, oh, n, 0.01, 4, 0.01, 0.001, 0.9, 0.999,
                               1e-8));
  same(box, wx, "adam x");
  same(bov, wv, "adam v");
  same(boh, wh, "adam h");
  EXPECT_EQ(k_->onnx_adam(dx, dg, dv, dh, ox, ov, oh, n, 0.01, -1, 0.0, 0.0, 0.9, 0.999, 1e-8),
            HMRT_INVALID_ARGUMENT);
  for (float norm : {0.5f, 3.0f, NAN}) {
    float want = 0.0f;
    HMRT_ASSERT_OK(hmrt_clip_coefficient(norm, 1.0f, &want));
    HMRT_ASSERT_OK(k_->clip_coefficient(norm, 1.0f, ox));
    const std::vector<float> got = download<float>(box.get(), 1);
    EXPECT_EQ(std::memcmp(&got[0], &want, sizeof(float)), 0) << norm;
  }
}

// 8-bit AdamW: dequantise, update, requantise with the CPU's maps and
// search (core/quant8_math.h): params, codes and absmax bitwise.  One
// block of zero states, and a partial last block.
TEST_F(Cuda, AdamW8bitMatchesCpuBitwise) {
  const int64_t n = 5 * HMRT_QUANT_BLOCK + 77, blocks = 6;
  std::vector<float> p = hmrt_test::random_vec(n, 1, -1.0f, 1.0f);
  const std::vector<float> g = hmrt_test::random_vec(n, 2, -0.1f, 0.1f);
  std::vector<float> m = hmrt_test::random_vec(n, 3, -0.01f, 0.01f);
  std::vector<float> v = hmrt_test::random_vec(n, 4, 0.0f, 1e-4f);
  for (int64_t i = HMRT_QUANT_BLOCK; i < 2 * HMRT_QUANT_BLOCK; ++i) m[size_t(i)] = v[size_t(i)] = 0.0f;
  std::vector<uint8_t> qm(static_cast<size_t>(n)), qv(static_cast<size_t>(n));
  std::vector<float> am(static_cast<size_t>(blocks)), av(static_cast<size_t>(blocks));
  HMRT_ASSERT_OK(hmrt_quantize_blockwise(m.data(), n, 1, qm.data(), am.data()));
  HMRT_ASSERT_OK(hmrt_quantize_blockwise(v.data(), n, 0, qv.data(), av.data()));
  float *dp, *dg, *dam, *dav;
  uint8_t *dqm, *dqv;
  BufferPtr bp = upload(p, &dp), bg = upload(g, &dg), bam = upload(am, &dam), bav = upload(av, &dav);
  BufferPtr bqm = upload(qm, &dqm), bqv = upload(qv, &dqv);
  for (int64_t step = 1; step <= 3; ++step) {
    HMRT_ASSERT_OK(hmrt_adamw8bit_step(p.data(), g.data(), qm.data(), am.data(), qv.data(),
                                       av.data(), n, 1e-3, 0.9, 0.999, 1e-8, 0.01, step));
    HMRT_ASSERT_OK(k_->adamw8bit_step(dp, dg, dqm, dam, dqv, dav, n, 1e-3, 0.9, 0.999, 1e-8, 0.01,
                                      step));
    EXPECT_TRUE(same_bits(download<float>(bp.get(), size_t(n)), p)) << step;
    EXPECT_TRUE(download<uint8_t>(bqm.get(), size_t(n)) == qm) << step;
    EXPECT_TRUE(download<uint8_t>(bqv.get(), size_t(n)) == qv) << step;
    EXPECT_TRUE(same_bits(download<float>(bam.get(), size_t(blocks)), am)) << step;
    EXPECT_TRUE(same_bits(download<float>(bav.get(), size_t(blocks)), av)) << step;
  }
}

TEST_F(Cuda, TensorOpsMatchCpu) {
  // Transpose at every element size, Trilu both ways.
  const int64_t shape[4] = {3, 5, 7, 6};
  const int64_t n = 3 * 5 * 7 * 6;
  const int64_t perms[3][4] = {{0, 2, 1, 3}, {3, 2, 1, 0}, {1, 0, 3, 2}};
  for (size_t es : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
    SCOPED_TRACE("elem_size " + std::to_string(es));
    const std::vector<uint8_t> x = hmrt_test::byte_pattern(size_t(n) * es, 7);
    uint8_t *dx, *dy;
    BufferPtr bx = upload(x, &dx), by = upload(std::vector<uint8_t>(x.size(), 0), &dy);
    std::vector<uint8_t> want(x.size());
    for (const auto& perm : perms) {
      HMRT_ASSERT_OK(hmrt_transpose(x.data(), 4, shape, perm, want.data(), es));
      HMRT_ASSERT_OK(k_->transpose(dx, 4, shape, perm, dy, es));
      EXPECT_TRUE(download<uint8_t>(by.get(), want.size()) == want);
    }
    for (int64_t k : {-2, 0, 3, 100}) {
      for (int32_t upper : {0, 1}) {
        HMRT_ASSERT_OK(hmrt_trilu(x.data(), 4, shape, k, upper, want.data(), es));
        HMRT_ASSERT_OK(k_->trilu(dx, 4, shape, k, upper, dy, es));
        EXPECT_TRUE(download<uint8_t>(by.get(), want.size()) == want) << k << " " << upper;
      }
    }
  }
  const int64_t bad_perm[4] = {0, 0, 1, 2};
  float* g;
  BufferPtr bg = upload(std::vector<float>(size_t(n), 0.0f), &g);
  EXPECT_EQ(k_->transpose(g, 4, shape, bad_perm, g, 4), HMRT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("is not a permutation"), std::string::npos) << last_error();

  // Equal over broadcast shapes: floats (NaN, -0), int64, bool, float16.
  const int64_t sa[2] = {4, 9}, sb[2] = {1, 9};
  {
    std::vector<float> a = hmrt_test::random_vec(36, 8, -2.0f, 2.0f), b(9);
    for (int j = 0; j < 9; ++j) b[size_t(j)] = a[size_t(9 + j)];  // row 1 equals b
    a[0] = NAN;
    b[0] = NAN;
    a[1] = -0.0f;
    b[1] = 0.0f;
    std::vector<uint8_t> want(36);
    HMRT_ASSERT_OK(hmrt_equal(HMRT_DTYPE_F32, a.data(), 2, sa, b.data(), 2, sb, want.data(), 2, sa));
    float *da, *db;
    uint8_t* dy;
    BufferPtr ba = upload(a, &da), bb = upload(b, &db), by = upload(std::vector<uint8_t>(36, 9), &dy);
    HMRT_ASSERT_OK(k_->equal(HMRT_DTYPE_F32, da, 2, sa, db, 2, sb, dy, 2, sa));
    EXPECT_TRUE(download<uint8_t>(by.get(), 36) == want);
  }
  for (int32_t dt : {HMRT_DTYPE_I64, HMRT_DTYPE_BOOL, HMRT_DTYPE_F16, HMRT_DTYPE_I32}) {
    SCOPED_TRACE("dtype " + std::to_string(dt));
    const size_t es = hmrt_dtype_size(dt);
    std::vector<uint8_t> a = hmrt_test::byte_pattern(36 * es, 11), b(9 * es);
    for (auto& c : a) c &= 3;  // small values repeat
    std::memcpy(b.data(), a.data() + 9 * es, b.size());
    if (dt == HMRT_DTYPE_BOOL) b[3] = 2;  // truth value 1 either way
    std::vector<uint8_t> want(36);
    HMRT_ASSERT_OK(hmrt_equal(dt, a.data(), 2, sa, b.data(), 2, sb, want.data(), 2, sa));
    uint8_t *da, *db, *dy;
    BufferPtr ba = upload(a, &da), bb = upload(b, &db), by = upload(std::vector<uint8_t>(36, 9), &dy);
    HMRT_ASSERT_OK(k_->equal(dt, da, 2, sa, db, 2, sb, dy, 2, sa));
    EXPECT_TRUE(download<uint8_t>(by.get(), 36) == want);
  }

  // int64 arithmetic, wrapping, and the checks of b on the host.
  {
    std::vector<int64_t> a(36), b(9);
    for (size_t i = 0; i < a.size(); ++i) a[i] = int64_t(i * 2654435761u) - (int64_t{1} << 40);
    for (size_t j = 0; j < b.size(); ++j) b[j] = j == 4 ? -1 : int64_t(j) + 1;
    a[5] = std::numeric_limits<int64_t>::min();
    int64_t *da, *db, *dy;
    BufferPtr ba = upload(a, &da), bb = upload(b, &db), by = upload(std::vector<int64_t>(36, 0), &dy);
    for (int op = HMRT_BINARY_ADD; op <= HMRT_BINARY_MIN; ++op) {
      SCOPED_TRACE("i64 op " + std::to_string(op));
      if (op == HMRT_BINARY_POW) continue;  // b has a -1
      std::vector<int64_t> want(36);
      HMRT_ASSERT_OK(hmrt_binary_i64(hmrt_binary_op(op), a.data(), 2, sa, b.data(), 2, sb,
                                     want.data(), 2, sa));
      HMRT_ASSERT_OK(k_->binary_i64(hmrt_binary_op(op), da, 2, sa, db, 2, sb, dy, 2, sa));
      EXPECT_TRUE(download<int64_t>(by.get(), 36) == want);
    }
    EXPECT_EQ(k_->binary_i64(HMRT_BINARY_POW, da, 2, sa, db, 2, sb, dy, 2, sa),
              HMRT_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("negative integer exponent: b[4] is -1"), std::string::npos)
        << last_error();
    std::vector<int64_t> want(36);
    HMRT_ASSERT_OK(hmrt_neg_i64(a.data(), want.data(), 36));
    HMRT_ASSERT_OK(k_->neg_i64(da, dy, 36));
    EXPECT_TRUE(download<int64_t>(by.get(), 36) == want);
  }

  // Reductions over several axis sets, and ReduceMax's gradient.
  {
    const int64_t xs[3] = {6, 17, 33};
    const int64_t nx = 6 * 17 * 33;
    std::vector<float> x = hmrt_test::random_vec(nx, 13, -3.0f, 3.0f);
    x[40] = x[41];  // a tie
    const std::vector<float> dy = hmrt_test::random_vec(nx, 14, -1.0f, 1.0f);
    float *dx, *dyp, *dout, *dgrad, *dmax;
    BufferPtr bx = upload(x, &dx), bdy = upload(dy, &dyp);
    BufferPtr bo = upload(std::vector<float>(size_t(nx), 0.0f), &dout);
    BufferPtr bgr = upload(std::vector<float>(size_t(nx), 0.0f), &dgrad);
    BufferPtr bm = upload(std::vector<float>(size_t(nx), 0.0f), &dmax);
    const uint8_t axes[5][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}, {1, 0, 1}, {1, 1, 1}};
    for (const auto& ax : axes) {
      int64_t kept = 1;
      for (int d = 0; d < 3; ++d) kept *= ax[d] ? 1 : xs[d];
      for (int op : {HMRT_REDUCE_SUM, HMRT_REDUCE_MEAN, HMRT_REDUCE_MAX}) {
        SCOPED_TRACE("axes " + std::to_string(ax[0]) + std::to_string(ax[1]) +
                     std::to_string(ax[2]) + " op " + std::to_string(op));
        std::vector<float> want(static_cast<size_t>(kept));
        HMRT_ASSERT_OK(hmrt_reduce_f32(hmrt_reduce_op(op), x.data(), 3, xs, ax, want.data()));
        HMRT_ASSERT_OK(k_->reduce_f32(hmrt_reduce_op(op), dx, 3, xs, ax, dout));
        const std::vector<float> got = download<float>(bo.get(), size_t(kept));
        if (op == HMRT_REDUCE_MAX) {
          EXPECT_TRUE(same_bits(got, want));
          std::vector<float> want_dx(static_cast<size_t>(nx));
          HMRT_ASSERT_OK(hmrt_reduce_max_backward_f32(x.data(), want.data(), dy.data(), 3, xs, ax,
                                                      want_dx.data()));
          HMRT_ASSERT_OK(k_->reduce_max_backward_f32(dx, dout, dyp, 3, xs, ax, dgrad));
          EXPECT_TRUE(same_bits(download<float>(bgr.get(), size_t(nx)), want_dx));
        } else {
          // Both sum in double: equal but for a rare last-bit rounding.
          expect_close(got, want, 1e-6, "reduce");
        }
      }
    }
  }

  // Sums down to a broadcast shape (a bias's gradient): the CPU's order, its
  // bits; with the inner dim kept over one chunk of reduced rows and over
  // several, and with it summed over one block and over several (each chunk
  // or block on a thread of its own).
  {
    struct Case {
      std::vector<int64_t> sx, sy;
    };
    const Case cases[] = {{{5, 7, 33}, {33}},
                          {{6, 9, 10}, {6, 1, 10}},
                          {{3, 700, 9}, {3, 1, 9}},
                          {{8, 128, 48}, {48}},
                          {{3, 70001}, {3, 1}},
                          {{2, 300, 400}, {1}}};
    for (const Case& c : cases) {
      int64_t nx = 1, ny = 1;
      for (int64_t d : c.sx) nx *= d;
      for (int64_t d : c.sy) ny *= d;
      const std::vector<float> x = hmrt_test::random_vec(nx, 15, -2.0f, 2.0f);
      std::vector<float> want(static_cast<size_t>(ny));
      HMRT_ASSERT_OK(hmrt_reduce_to_f32(x.data(), int32_t(c.sx.size()), c.sx.data(), want.data(),
                                        int32_t(c.sy.size()), c.sy.data()));
      float *dx, *dy;
      BufferPtr bx = upload(x, &dx), by = upload(std::vector<float>(want.size(), -1.0f), &dy);
      HMRT_ASSERT_OK(k_->reduce_to_f32(dx, int32_t(c.sx.size()), c.sx.data(), dy,
                                       int32_t(c.sy.size()), c.sy.data()));
      EXPECT_TRUE(same_bits(download<float>(by.get(), want.size()), want))
          << c.sx.size() << "-d x to " << ny << " elements";
    }
  }
}

}  // namespace
