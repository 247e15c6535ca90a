// Attention forward/backward (hmrt_attention_*) against the double
// reference, which materialises the full (q_len x kv_len) probabilities.
//
// Tolerance: a score s_ij = scale * q_i.k_j has float error up to
// D*u*scale*sum_d |q_id k_jd| <= D*u*scale*|q_i||k_j|; through exp that is a
// relative error of the probabilities; the output and gradient rows are then
// float sums over at most seq keys or D dims.  So we allow
//   (reduction_tol(kv_len * group + D) + D*u*scale*max|q||k|) * scale_of_tensor
// (dk and dv sum over the group's query heads too).
#include <cmath>

#include "core/float16.h"
#include "hmrt/tensor_ops.h"
#include "packed_qkv.h"
#include "reference/reference.h"
#include "test_util.h"

namespace {

using hmrt_test::all_close;
using hmrt_test::max_abs;
using hmrt_test::to_double;
using Dims = std::vector<int64_t>;

struct Case {
  int64_t batch, heads, kv_heads, q_len, kv_len, dim;
  bool causal;
  int bias;  // 0: none, 1: (1, 1, q_len, kv_len), 2: (batch, heads, q_len, kv_len)
  float dropout = 0.0f;
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

// An additive mask: random values, and -inf on about a quarter of the
// entries except key 0, so no row is fully masked.
std::vector<float> make_bias(const Case& c, Dims* dims) {
  *dims = c.bias == 1 ? Dims{1, 1, c.q_len, c.kv_len}
                      : Dims{c.batch, c.heads, c.q_len, c.kv_len};
  const int64_t n = (*dims)[0] * (*dims)[1] * c.q_len * c.kv_len;
  auto b = hmrt_test::normal_vec(n, 72);
  for (int64_t i = 0; i < n; ++i)
    if (i % c.kv_len != 0 && (i * 2654435761u) % 4 == 0) b[i] = -INFINITY;
  return b;
}

// Forward and backward against the double reference, which materialises
// the full probabilities: causal and not, T not a multiple of the 64-row
// query block, S over several 256-key tiles and not a multiple of them,
// grouped kv heads, q_len != kv_len, additive masks broadcast or not.
// Forward and backward of case `c` against the double reference, fp32 or
// with bf16 products (HMRT_ATTENTION_BF16).  With bf16 the reference is
// still exact, and the tolerance adds the error bound of bf16 factors
// (unit roundoff u = 2^-8 each) with fp32 sums:
//  - scores: |ds| <= delta = (2u + u^2) * scale * max|q| * max|k| (row
//    norms), so each probability is within a factor e^(+-2 delta);
//  - out and dv are sums of P' (rounded) times a rounded factor:
//    eps1 = (1 + u)^2 e^(2 delta) - 1 of sum_j P'_ij |v_j| <= g max|v|
//    (g = 1/(1 - dropout); for dv, of g max|dO| times the largest column
//    sum of P, taken from the reference with dO = 1 and no dropout);
//  - dq and dk are sums of dS (rounded) times a rounded factor, with
//    |dP - rowsum(dO * O)| <= 2 g M (M = max|dO| max|v|, row norms):
//    eps2 = (2 (e^(2 delta) - 1) + 4u e^(2 delta)) (1 + u)^2 + 2u of
//    scale g M max|k| (dq, where P's rows sum to 1) or max|q| times the
//    largest column sum (dk);
//  - lse moves by at most delta.
void check_against_reference(const Case& c, bool bf16) {
  Dims bias_dims;
  std::vector<float> bias;
  if (c.bias) bias = make_bias(c, &bias_dims);
  std::vector<double> biasd = to_double(bias);
  hmrt::ref::AttentionShape shape{c.batch, c.heads, c.kv_heads, c.q_len, c.kv_len,
                                  c.dim, 0, c.causal};
  // The dropout multipliers: hmrt_dropout_f32 of ones with the same
  // arguments (the kernel must draw that mask).
  std::vector<double> drop;
  if (c.dropout > 0) {
    const int64_t np = c.batch * c.heads * c.q_len * c.kv_len;
    std::vector<float> ones(np, 1.0f), kept(np);
    HMRT_ASSERT_OK(hmrt_dropout_f32(ones.data(), kept.data(), nullptr, np, c.dropout, 7, 11));
    drop = to_double(kept);
    shape.drop = drop.data();
  }
  if (c.bias) {
    shape.bias = biasd.data();
    const int64_t full[4] = {c.batch, c.heads, c.q_len, c.kv_len};
    for (int64_t st = 1, d = 3; d >= 0; --d) {
      shape.bias_strides[d] = bias_dims[d] == 1 && full[d] != 1 ? 0 : st;
      st *= bias_dims[d];
    }
  }
  const int32_t flags = (c.causal ? HMRT_ATTENTION_CAUSAL : 0) | (bf16 ? HMRT_ATTENTION_BF16 : 0);
  for (int threads : hmrt_test::thread_counts()) {
    SCOPED_TRACE(testing::Message() << "B=" << c.batch << " H=" << c.heads
                                    << " Hk=" << c.kv_heads << " T=" << c.q_len
                                    << " S=" << c.kv_len << " D=" << c.dim
                                    << " causal=" << c.causal << " bias=" << c.bias
                                    << " dropout=" << c.dropout << " bf16=" << bf16
                                    << " threads=" << threads);
    hmrt_test::ThreadScope scope(threads);
    const int64_t nq = c.batch * c.heads * c.q_len * c.dim;
    const int64_t nk = c.batch * c.kv_heads * c.kv_len * c.dim;
    const int64_t nl = c.batch * c.heads * c.q_len;
    const float scale = 1.0f / std::sqrt(float(c.dim));
    shape.scale = scale;
    auto q = hmrt_test::normal_vec(nq, 61), k = hmrt_test::normal_vec(nk, 62);
    auto v = hmrt_test::normal_vec(nk, 63), dout = hmrt_test::normal_vec(nq, 64);
    auto qd = to_double(q), kd = to_double(k), vd = to_double(v);
    const float* bp = c.bias ? bias.data() : nullptr;
    const int64_t* bd = c.bias ? bias_dims.data() : nullptr;

    std::vector<double> out_ref(nq), lse_ref(nl);
    hmrt::ref::attention_forward(qd.data(), kd.data(), vd.data(), out_ref.data(),
                                 lse_ref.data(), shape);
    std::vector<float> out(nq), lse(nl);
    HMRT_ASSERT_OK(hmrt_attention_forward(
        q.data(), k.data(), v.data(), bp, bd, out.data(), lse.data(), c.batch,
        c.heads, c.kv_heads, c.q_len, c.kv_len, c.dim, scale, flags, c.dropout, 7, 11));
    const double mq = max_row_norm(q, c.dim), mk = max_row_norm(k, c.dim);
    const double tol = hmrt_test::reduction_tol(c.kv_len * (c.heads / c.kv_heads) + c.dim) +
                       c.dim * hmrt_test::kU * scale * mq * mk;

    // The bf16 terms (zero in fp32).
    const double u = bf16 ? 1.0 / 256 : 0.0, g = 1.0 / (1.0 - c.dropout);
    const double delta = (2 * u + u * u) * scale * mq * mk, e2 = std::exp(2 * delta);
    const double eps1 = (1 + u) * (1 + u) * e2 - 1;
    const double eps2 = (2 * (e2 - 1) + 4 * u * e2) * (1 + u) * (1 + u) + 2 * u;
    const double mv = max_row_norm(v, c.dim), mdo = max_row_norm(dout, c.dim);
    double colsum = 0;  // the largest sum over queries (and the group) of P_ij
    if (bf16) {
      hmrt::ref::AttentionShape plain = shape;
      plain.drop = nullptr;
      std::vector<double> ones(nq, 1.0), dq1(nq), dk1(nk), dv1(nk);
      hmrt::ref::attention_backward(qd.data(), kd.data(), vd.data(), ones.data(), dq1.data(),
                                    dk1.data(), dv1.data(), plain);
      colsum = max_abs(dv1);
    }
    EXPECT_TRUE(all_close(out, out_ref, tol * max_abs(out_ref) + eps1 * g * mv, 0));
    EXPECT_TRUE(all_close(lse, lse_ref, tol * (max_abs(lse_ref) + 1) + delta, 0));

    std::vector<double> dq_ref(nq), dk_ref(nk), dv_ref(nk);
    hmrt::ref::attention_backward(qd.data(), kd.data(), vd.data(),
                                  to_double(dout).data(), dq_ref.data(),
                                  dk_ref.data(), dv_ref.data(), shape);
    // Outputs start as garbage: backward overwrites them.
    std::vector<float> dq(nq, NAN), dk(nk, NAN), dv(nk, NAN);
    HMRT_ASSERT_OK(hmrt_attention_backward(
        q.data(), k.data(), v.data(), bp, bd, out.data(), lse.data(), dout.data(),
        dq.data(), dk.data(), dv.data(), c.batch, c.heads, c.kv_heads, c.q_len,
        c.kv_len, c.dim, scale, flags, c.dropout, 7, 11));
    const double gm = scale * g * mdo * mv;
    EXPECT_TRUE(all_close(dq, dq_ref, tol * max_abs(dq_ref) + eps2 * gm * mk, 0));
    EXPECT_TRUE(all_close(dk, dk_ref, tol * max_abs(dk_ref) + eps2 * gm * mq * colsum, 0));
    EXPECT_TRUE(all_close(dv, dv_ref, tol * max_abs(dv_ref) + eps1 * g * mdo * colsum, 0));
  }
}

// The cases: causal and not, T not a multiple of the 64-row query block, S
// over several 256-key tiles and not a multiple of them, grouped kv heads,
// q_len != kv_len, additive masks broadcast or not, dropout.
const Case kCases[] = {
    {1, 1, 1, 1, 1, 1, true, 0},     {1, 2, 2, 5, 5, 3, true, 0},
    {2, 3, 3, 17, 17, 8, true, 0},   {1, 1, 1, 64, 64, 16, true, 0},
    {1, 2, 2, 65, 65, 32, true, 0},  {2, 1, 1, 130, 130, 64, true, 0},
    {2, 4, 2, 70, 70, 16, true, 0},  {1, 6, 2, 33, 33, 8, true, 1},
    {2, 2, 2, 17, 40, 8, false, 0},  {1, 4, 1, 66, 129, 16, false, 1},
    {2, 2, 1, 9, 9, 4, false, 2},    {1, 2, 2, 70, 70, 8, true, 2},
    // several 256-key tiles, the last one partial
    {1, 2, 2, 300, 300, 16, true, 0}, {1, 4, 2, 20, 530, 8, false, 1},
    {1, 1, 1, 513, 513, 8, true, 2},
    // dropout: the mask of hmrt_dropout_f32 over the probabilities
    {2, 4, 2, 70, 70, 8, true, 0, 0.2f}, {1, 2, 2, 17, 40, 8, false, 1, 0.5f},
    {1, 2, 1, 270, 270, 8, true, 0, 0.1f}};

TEST(Attention, MatchesReference) {
  for (const Case& c : kCases) check_against_reference(c, false);
}

// bf16 products stay within their error bound of the exact result.
TEST(Attention, Bf16ProductsMatchReference) {
  for (const Case& c : kCases) check_against_reference(c, true);
}

std::vector<float> rounded_bf16(std::vector<float> x) {
  for (float& e : x) e = hmrt::round_to_bf16(e);
  return x;
}

// With bf16 products q, k and v are rounded where they are multiplied (so
// rounding them first changes no bit), and so are the probabilities and
// dS (so the results differ from fp32's on the rounded inputs).
TEST(Attention, Bf16ProductsRoundTheirFactors) {
  const int64_t B = 2, H = 4, Hk = 2, T = 70, S = 70, D = 16;
  const int64_t nq = B * H * T * D, nk = B * Hk * S * D, nl = B * H * T;
  const auto q = hmrt_test::normal_vec(nq, 91), k = hmrt_test::normal_vec(nk, 92);
  const auto v = hmrt_test::normal_vec(nk, 93), dout = hmrt_test::normal_vec(nq, 94);
  const auto qr = rounded_bf16(q), kr = rounded_bf16(k), vr = rounded_bf16(v);
  for (float dropout : {0.0f, 0.2f}) {
    std::vector<float> results[3];
    const struct { const std::vector<float>*q, *k, *v; int32_t flags; } runs[3] = {
        {&q, &k, &v, HMRT_ATTENTION_CAUSAL | HMRT_ATTENTION_BF16},
        {&qr, &kr, &vr, HMRT_ATTENTION_CAUSAL | HMRT_ATTENTION_BF16},
        {&qr, &kr, &vr, HMRT_ATTENTION_CAUSAL}};
    for (int r = 0; r < 3; ++r) {
      std::vector<float> out(nq), lse(nl), dq(nq), dk(nk), dv(nk);
      const auto& x = runs[r];
      HMRT_ASSERT_OK(hmrt_attention_forward(x.q->data(), x.k->data(), x.v->data(), nullptr,
                                            nullptr, out.data(), lse.data(), B, H, Hk, T, S,
                                            D, 0.25f, x.flags, dropout, 3, 4));
      HMRT_ASSERT_OK(hmrt_attention_backward(
          x.q->data(), x.k->data(), x.v->data(), nullptr, nullptr, out.data(), lse.data(),
          dout.data(), dq.data(), dk.data(), dv.data(), B, H, Hk, T, S, D, 0.25f, x.flags,
          dropout, 3, 4));
      for (auto* t : {&out, &lse, &dq, &dk, &dv})
        results[r].insert(results[r].end(), t->begin(), t->end());
    }
    EXPECT_TRUE(hmrt_test::bitwise_equal(results[0], results[1])) << dropout;
    // out, dq, dk and dv change; lse is fp32 in both.
    size_t differ = 0;
    for (size_t i = 0; i < results[1].size(); ++i) differ += results[1][i] != results[2][i];
    EXPECT_GT(differ, results[1].size() / 2) << dropout;
  }
}

// (b, h, t, d) <-> (b, t, h, d)
std::vector<float> swap_heads_seq(const std::vector<float>& x, int64_t B, int64_t A,
                                  int64_t C, int64_t D) {
  std::vector<float> y(x.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < A; ++i)
      for (int64_t j = 0; j < C; ++j)
        for (int64_t d = 0; d < D; ++d)
          y[((b * C + j) * A + i) * D + d] = x[((b * A + i) * C + j) * D + d];
  return y;
}

// The (batch, seq, heads, head_dim) layout computes the same bits as the
// (batch, heads, seq, head_dim) one, grouped heads and a mask included.
TEST(Attention, SeqMajorLayoutGivesTheSameBits) {
  const int64_t B = 2, H = 4, Hk = 2, T = 70, S = 70, D = 8;
  const int64_t nq = B * H * T * D, nk = B * Hk * S * D;
  auto q = hmrt_test::normal_vec(nq, 81), k = hmrt_test::normal_vec(nk, 82);
  auto v = hmrt_test::normal_vec(nk, 83), dout = hmrt_test::normal_vec(nq, 84);
  auto bias = hmrt_test::normal_vec(T * S, 85);
  const int64_t bias_dims[4] = {1, 1, T, S};
  for (int32_t flags : {0, HMRT_ATTENTION_CAUSAL}) {
    std::vector<float> out(nq), lse(B * H * T), dq(nq), dk(nk), dv(nk);
    HMRT_ASSERT_OK(hmrt_attention_forward(q.data(), k.data(), v.data(), bias.data(),
                                          bias_dims, out.data(), lse.data(), B, H, Hk,
                                          T, S, D, 0.3f, flags, 0.2f, 3, 5));
    HMRT_ASSERT_OK(hmrt_attention_backward(
        q.data(), k.data(), v.data(), bias.data(), bias_dims, out.data(), lse.data(),
        dout.data(), dq.data(), dk.data(), dv.data(), B, H, Hk, T, S, D, 0.3f, flags, 0.2f, 3, 5));
    auto qs = swap_heads_seq(q, B, H, T, D), ks = swap_heads_seq(k, B, Hk, S, D);
    auto vs = swap_heads_seq(v, B, Hk, S, D), dos = swap_heads_seq(dout, B, H, T, D);
    std::vector<float> out2(nq), lse2(B * H * T), dq2(nq), dk2(nk), dv2(nk);
    const int32_t f2 = flags | HMRT_ATTENTION_BTHD;
    HMRT_ASSERT_OK(hmrt_attention_forward(qs.data(), ks.data(), vs.data(), bias.data(),
                                          bias_dims, out2.data(), lse2.data(), B, H, Hk,
                                          T, S, D, 0.3f, f2, 0.2f, 3, 5));
    HMRT_ASSERT_OK(hmrt_attention_backward(
        qs.data(), ks.data(), vs.data(), bias.data(), bias_dims, out2.data(), lse2.data(),
        dos.data(), dq2.data(), dk2.data(), dv2.data(), B, H, Hk, T, S, D, 0.3f, f2, 0.2f, 3, 5));
    EXPECT_TRUE(hmrt_test::bitwise_equal(lse, lse2));
    EXPECT_TRUE(hmrt_test::bitwise_equal(out, swap_heads_seq(out2, B, T, H, D)));
    EXPECT_TRUE(hmrt_test::bitwise_equal(dq, swap_heads_seq(dq2, B, T, H, D)));
    EXPECT_TRUE(hmrt_test::bitwise_equal(dk, swap_heads_seq(dk2, B, S, Hk, D)));
    EXPECT_TRUE(hmrt_test::bitwise_equal(dv, swap_heads_seq(dv2, B, S, Hk, D)));
  }
}

// q, k and v read from one projection's rows, and dq, dk, dv written
// into one such tensor (HMRT_ATTENTION_PACKED), give the bits of three
// tensors: grouped heads, a mask and dropout, at both precisions. Every
// element of the packed gradient is written (it starts as NaN).
TEST(Attention, PackedQkvGivesTheSameBits) {
  const hmrt_test::PackedQkv p{2, 70, 4, 2, 8};
  const int64_t B = p.B, H = p.H, Hk = p.Hk, T = p.T, D = p.D;
  const int64_t nq = B * T * H * D, nk = B * T * Hk * D;
  auto q = hmrt_test::normal_vec(nq, 181), k = hmrt_test::normal_vec(nk, 182);
  auto v = hmrt_test::normal_vec(nk, 183), dout = hmrt_test::normal_vec(nq, 184);
  auto bias = hmrt_test::normal_vec(T * T, 185);
  const int64_t bias_dims[4] = {1, 1, T, T};
  const std::vector<float> qkv = p.pack(q, k, v);
  for (int32_t extra : {0, HMRT_ATTENTION_CAUSAL, HMRT_ATTENTION_BF16,
                        HMRT_ATTENTION_CAUSAL | HMRT_ATTENTION_BF16}) {
    SCOPED_TRACE(extra);
    const int32_t flags = HMRT_ATTENTION_BTHD | extra;
    std::vector<float> out(nq), lse(B * H * T), dq(nq), dk(nk), dv(nk);
    HMRT_ASSERT_OK(hmrt_attention_forward(q.data(), k.data(), v.data(), bias.data(), bias_dims,
                                          out.data(), lse.data(), B, H, Hk, T, T, D, 0.3f,
                                          flags, 0.2f, 3, 5));
    HMRT_ASSERT_OK(hmrt_attention_backward(q.data(), k.data(), v.data(), bias.data(), bias_dims,
                                           out.data(), lse.data(), dout.data(), dq.data(),
                                           dk.data(), dv.data(), B, H, Hk, T, T, D, 0.3f, flags,
                                           0.2f, 3, 5));
    const int32_t pf = flags | HMRT_ATTENTION_PACKED;
    const float* x = qkv.data();
    std::vector<float> out2(nq), lse2(B * H * T), dx(p.size(), NAN);
    HMRT_ASSERT_OK(hmrt_attention_forward(x, x + p.k_offset(), x + p.v_offset(), bias.data(),
                                          bias_dims, out2.data(), lse2.data(), B, H, Hk, T, T,
                                          D, 0.3f, pf, 0.2f, 3, 5));
    HMRT_ASSERT_OK(hmrt_attention_backward(
        x, x + p.k_offset(), x + p.v_offset(), bias.data(), bias_dims, out.data(), lse.data(),
        dout.data(), dx.data(), dx.data() + p.k_offset(), dx.data() + p.v_offset(), B, H, Hk, T,
        T, D, 0.3f, pf, 0.2f, 3, 5));
    EXPECT_TRUE(hmrt_test::bitwise_equal(out, out2));
    EXPECT_TRUE(hmrt_test::bitwise_equal(lse, lse2));
    std::vector<float> dq2, dk2, dv2;
    p.unpack(dx, &dq2, &dk2, &dv2);
    EXPECT_TRUE(hmrt_test::bitwise_equal(dq, dq2));
    EXPECT_TRUE(hmrt_test::bitwise_equal(dk, dk2));
    EXPECT_TRUE(hmrt_test::bitwise_equal(dv, dv2));
  }
}

TEST(Attention, FirstCausalRowCopiesV) {
  // Query 0 sees only key 0, so out[0] = v[0] exactly and lse[0] = s_00.
  const int64_t T = 4, D = 3;
  auto q = hmrt_test::normal_vec(T * D, 65), k = hmrt_test::normal_vec(T * D, 66);
  auto v = hmrt_test::normal_vec(T * D, 67);
  std::vector<float> out(T * D), lse(T);
  HMRT_ASSERT_OK(hmrt_attention_forward(q.data(), k.data(), v.data(), nullptr,
                                        nullptr, out.data(), lse.data(), 1, 1, 1,
                                        T, T, D, 0.5f, 1, 0.0f, 0, 0));
  for (int d = 0; d < D; ++d) EXPECT_EQ(out[d], v[d]);
  const double s00 = 0.5 * (double(q[0]) * k[0] + double(q[1]) * k[1] + double(q[2]) * k[2]);
  EXPECT_NEAR(lse[0], s00, 1e-5);
}

TEST(Attention, IndependentOfThreads) {
  const int64_t B = 2, H = 4, Hk = 2, T = 70, D = 16, n = B * H * T * D, nk = n / 2;
  auto q = hmrt_test::normal_vec(n, 68), k = hmrt_test::normal_vec(nk, 69);
  auto v = hmrt_test::normal_vec(nk, 70), dout = hmrt_test::normal_vec(n, 71);
  std::vector<float> first;
  for (int threads : {1, 2, 4}) {
    hmrt_test::ThreadScope scope(threads);
    std::vector<float> out(n), lse(B * H * T), dq(n), dk(nk), dv(nk);
    HMRT_ASSERT_OK(hmrt_attention_forward(q.data(), k.data(), v.data(), nullptr,
                                          nullptr, out.data(), lse.data(), B, H,
                                          Hk, T, T, D, 0.25f, 1, 0.1f, 1, 2));
    HMRT_ASSERT_OK(hmrt_attention_backward(
        q.data(), k.data(), v.data(), nullptr, nullptr, out.data(), lse.data(),
        dout.data(), dq.data(), dk.data(), dv.data(), B, H, Hk, T, T, D, 0.25f, 1, 0.1f, 1, 2));
    std::vector<float> all = out;
    for (auto* t : {&dq, &dk, &dv}) all.insert(all.end(), t->begin(), t->end());
    if (first.empty())
      first = all;
    else
      EXPECT_TRUE(hmrt_test::bitwise_equal(first, all)) << threads;
  }
}

// Without keys every row is masked: NaN at both precisions (nothing to
// round is not a failed allocation).
TEST(Attention, NoKeysGiveNanAtBothPrecisions) {
  const int64_t T = 2, D = 4;
  auto q = hmrt_test::normal_vec(T * D, 95);
  float kv = 0.0f;
  for (int32_t flags : {0, HMRT_ATTENTION_BF16}) {
    std::vector<float> out(T * D, 0.0f), lse(T, 0.0f);
    HMRT_ASSERT_OK(hmrt_attention_forward(q.data(), &kv, &kv, nullptr, nullptr, out.data(),
                                          lse.data(), 1, 1, 1, T, 0, D, 0.5f, flags, 0.0f, 0, 0));
    for (float o : out) EXPECT_TRUE(std::isnan(o)) << flags;
  }
}

TEST(Attention, RejectsBadArguments) {
  float x = 0;
  const int64_t dims[4] = {1, 1, 2, 1};
  EXPECT_FAILS(hmrt_attention_forward(&x, &x, &x, nullptr, nullptr, &x, nullptr,
                                      1, 1, 1, -1, -1, 1, 1.0f, 0, 0.0f, 0, 0),
               HMRT_INVALID_ARGUMENT, "must be >= 0");
  EXPECT_FAILS(hmrt_attention_forward(&x, &x, &x, nullptr, nullptr, &x, nullptr,
                                      1, 3, 2, 1, 1, 1, 1.0f, 0, 0.0f, 0, 0),
               HMRT_INVALID_ARGUMENT, "heads (3) must be a positive multiple of kv_heads (2)");
  EXPECT_FAILS(hmrt_attention_forward(&x, &x, &x, nullptr, nullptr, &x, nullptr,
                                      1, 1, 1, 1, 2, 1, 1.0f, 1, 0.0f, 0, 0),
               HMRT_INVALID_ARGUMENT, "causal attention needs q_len == kv_len (1, 2)");
  EXPECT_FAILS(hmrt_attention_forward(&x, &x, &x, &x, dims, &x, nullptr, 1, 1, 1,
                                      1, 1, 1, 1.0f, 0, 0.0f, 0, 0),
               HMRT_INVALID_ARGUMENT, "bias dim 2 is 2: it must be 1 or 1");
  EXPECT_FAILS(hmrt_attention_forward(&x, &x, &x, nullptr, nullptr, &x, nullptr, 1, 1, 1, 1, 1,
                                      1, 1.0f, HMRT_ATTENTION_PACKED, 0.0f, 0, 0),
               HMRT_INVALID_ARGUMENT, "packed q, k and v need the bthd layout");
  EXPECT_FAILS(hmrt_attention_forward(&x, &x, &x, nullptr, nullptr, &x, nullptr, 1, 1, 1, 1, 2,
                                      1, 1.0f, HMRT_ATTENTION_PACKED | HMRT_ATTENTION_BTHD, 0.0f,
                                      0, 0),
               HMRT_INVALID_ARGUMENT, "and q_len == kv_len (1, 2)");
  float qkv[12] = {};  // (1, 1, 3 heads, 4)
  EXPECT_FAILS(hmrt_attention_forward(qkv, qkv + 8, qkv + 4, nullptr, nullptr, qkv, nullptr, 1,
                                      1, 1, 1, 1, 4, 1.0f,
                                      HMRT_ATTENTION_PACKED | HMRT_ATTENTION_BTHD, 0.0f, 0, 0),
               HMRT_INVALID_ARGUMENT, "packed q, k and v must be one tensor's heads in order");
  EXPECT_FAILS(hmrt_attention_backward(&x, &x, &x, nullptr, nullptr, &x, nullptr,
                                       &x, &x, &x, &x, 1, 1, 1, 1, 1, 1, 1.0f, 1, 0.0f, 0, 0),
               HMRT_INVALID_ARGUMENT, "lse is NULL");
}

}  // namespace
