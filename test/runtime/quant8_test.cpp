// Block-wise 8-bit quantisation and 8-bit AdamW.
#include <cmath>
#include <cstring>
#include <thread>

#include "core/optim_math.h"
#include "core/quant8_math.h"
#include "cpu/quant8_table.h"
#include "test_util.h"

namespace {

using hmrt_test::kU;

std::vector<float> map_of(bool is_signed) {
  std::vector<float> m(256);
  hmrt_dynamic_map(is_signed, m.data());
  return m;
}

TEST(DynamicMap, MatchesBitsandbytesConstruction) {
  // Entries printed by bitsandbytes' create_dynamic_map (float32 torch
  // arithmetic); ours is computed in double, so allow 4 ulp.
  struct Entry {
    int index;
    float value;
  };
  const Entry signed_entries[] = {
      {0, -0x1.fc6666p-1f},   {1, -0x1.f53332p-1f}, {126, -0x1.27476ep-21f},
      {127, 0.0f},            {128, 0x1.27476ep-21f}, {129, 0x1.b43528p-19f},
      {200, 0x1.de6668p-3f},  {254, 0x1.fc6666p-1f}, {255, 1.0f}};
  const Entry unsigned_entries[] = {
      {0, 0.0f},             {1, 0x1.5cf754p-22f},  {126, 0x1.96b852p-4f},
      {127, 0x1.a8p-4f},     {128, 0x1.c4ccccp-4f}, {129, 0x1.e1999ap-4f},
      {200, 0x1.3bccccp-1f}, {254, 0x1.fe3334p-1f}, {255, 1.0f}};
  const auto sm = map_of(true), um = map_of(false);
  for (const Entry& e : signed_entries)
    EXPECT_NEAR(sm[e.index], e.value, 8 * kU * std::fabs(e.value)) << e.index;
  for (const Entry& e : unsigned_entries)
    EXPECT_NEAR(um[e.index], e.value, 8 * kU * std::fabs(e.value)) << e.index;
  for (int i = 1; i < 256; ++i) {
    EXPECT_LT(sm[i - 1], sm[i]) << i;
    EXPECT_LT(um[i - 1], um[i]) << i;
  }
}

// The table's codes are nearest()'s for every float of magnitude 2^-24 to
// 2 (each one; a state divided by its block's absmax lies within 1), and
// for a sample of those below and above, of either sign, through the batch
// path (AVX2 where the CPU has it) and code() alike.  One thread per sign.
TEST(CodeTable, EveryFloatGetsNearestCode) {
  for (bool is_signed : {true, false}) {
    SCOPED_TRACE(testing::Message() << "signed=" << is_signed);
    const hmrt::QuantMap& qm = hmrt::quant_map(is_signed);
    const hmrt::CodeTable table(qm);
    ASSERT_TRUE(table.exact());
    // Mismatches of the floats [from, to) of `sign` taken `stride` apart,
    // and the first of them.
    struct Found {
      int64_t count = 0;
      float first = 0;
    };
    auto check = [&](uint32_t from, uint32_t to, uint32_t stride, uint32_t sign, Found& found) {
      constexpr int64_t kChunk = 1 << 16;
      std::vector<float> x(kChunk);
      std::vector<uint8_t> codes(kChunk);
      for (uint64_t u = from; u < to;) {
        int64_t n = 0;
        for (; n < kChunk && u < to; ++n, u += stride) {
          const uint32_t bits = static_cast<uint32_t>(u) | sign;
          std::memcpy(&x[n], &bits, 4);
        }
        table.codes(x.data(), n, 1.0f, codes.data());
        for (int64_t i = 0; i < n; ++i) {
          const uint8_t want = qm.nearest(x[i]);
          if (codes[i] != want || (i % 61 == 0 && table.code(x[i]) != want))
            if (found.count++ == 0) found.first = x[i];
        }
      }
    };
    Found found[2];
    std::vector<std::thread> threads;
    for (int s = 0; s < 2; ++s)
      threads.emplace_back([&, s] {
        const uint32_t sign = s ? 0x80000000u : 0u;
        check(0x33800000u, 0x40000000u, 1, sign, found[s]);     // 2^-24 <= |y| < 2
        check(0u, 0x33800000u, 997, sign, found[s]);            // below: the zero code
        check(0x40000000u, 0x7f800001u, 4099, sign, found[s]);  // above, to infinity
      });
    for (auto& t : threads) t.join();
    for (const Found& f : found) EXPECT_EQ(f.count, 0) << "first at y=" << f.first;
  }
}

// The batch path scales as the kernels do: codes(x, inv) is code(x * inv).
TEST(CodeTable, ScaledBatchMatchesNearest) {
  const hmrt::QuantMap& qm = hmrt::quant_map(true);
  const hmrt::CodeTable table(qm);
  for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{8}, int64_t{255}, int64_t{1001}}) {
    auto x = hmrt_test::normal_vec(n, 7);
    float absmax = 0;
    for (float v : x) absmax = std::max(absmax, std::fabs(v));
    const float inv = 1.0f / absmax;
    std::vector<uint8_t> codes(n);
    table.codes(x.data(), n, inv, codes.data());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(codes[i], qm.nearest(x[i] * inv)) << i;
  }
}

// A block's absmax is NaN when the block holds one, the first NaN's bits
// with the sign cleared (its payload kept), wherever it lies (in the four
// lanes' part or the tail); an infinity is the absmax of its block.
TEST(Quantize, AbsmaxKeepsTheFirstNaN) {
  auto nan_with = [](uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  };
  auto bits_of = [](float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  };
  for (int64_t at : {int64_t{5}, int64_t{254}}) {  // in the lanes' part, in the tail of 255
    const int64_t n = 255;
    std::vector<float> x = hmrt_test::normal_vec(n, 171);
    x[size_t(at)] = nan_with(0xffc00123u);  // negative, payload 0x123
    if (at + 1 < n) x[size_t(at) + 1] = nan_with(0x7fc00456u);
    x[0] = -INFINITY;
    std::vector<uint8_t> q(n);
    float absmax = 0;
    HMRT_ASSERT_OK(hmrt_quantize_blockwise(x.data(), n, 1, q.data(), &absmax));
    EXPECT_EQ(bits_of(absmax), 0x7fc00123u) << at;
  }
  std::vector<float> x = hmrt_test::normal_vec(300, 172);
  x[3] = -INFINITY;
  std::vector<uint8_t> q(300);
  float absmax[2] = {0, 0};
  HMRT_ASSERT_OK(hmrt_quantize_blockwise(x.data(), 300, 1, q.data(), absmax));
  EXPECT_EQ(absmax[0], INFINITY);
  EXPECT_TRUE(std::isfinite(absmax[1]));
}

// The largest gap between neighbouring entries is 0.9/64 (signed, exponent
// 6: 64 intervals on [0.1, 1]; also -1 to the smallest entry -0.99297) and
// 0.9/128 (unsigned), so nearest-entry rounding is off by at most half of
// it, times the block absmax.
constexpr double kSignedHalfGap = 0.9 / 64 / 2 + 1e-6;
constexpr double kUnsignedHalfGap = 0.9 / 128 / 2 + 1e-6;

TEST(Quantize, RoundTripErrorBoundAndNearestCode) {
  for (bool is_signed : {true, false}) {
    for (int64_t n : {int64_t{1}, int64_t{255}, int64_t{256}, int64_t{1000},
                      int64_t{70000}}) {
      for (int threads : hmrt_test::thread_counts()) {
        SCOPED_TRACE(testing::Message() << "signed=" << is_signed << " n=" << n
                                        << " threads=" << threads);
        hmrt_test::ThreadScope scope(threads);
        // Values spanning several decades, as optimizer states do.
        auto x = hmrt_test::normal_vec(n, 131);
        auto e = hmrt_test::random_vec(n, 132, -4.0f, 0.0f);
        for (int64_t i = 0; i < n; ++i) {
          x[i] *= std::pow(10.0f, e[i]);
          if (!is_signed) x[i] = x[i] * x[i];
        }
        const int64_t blocks = (n + 255) / 256;
        std::vector<uint8_t> q(n);
        std::vector<float> absmax(blocks), y(n);
        HMRT_ASSERT_OK(hmrt_quantize_blockwise(x.data(), n, is_signed, q.data(),
                                               absmax.data()));
        HMRT_ASSERT_OK(hmrt_dequantize_blockwise(q.data(), absmax.data(), n,
                                                 is_signed, y.data()));
        const auto map = map_of(is_signed);
        for (int64_t b = 0; b < blocks; ++b) {
          float m = 0;
          for (int64_t i = b * 256; i < std::min(n, b * 256 + 256); ++i)
            m = std::max(m, std::fabs(x[i]));
          ASSERT_EQ(absmax[b], m) << "block " << b;
        }
        const double gap = is_signed ? kSignedHalfGap : kUnsignedHalfGap;
        for (int64_t i = 0; i < n; ++i) {
          const float am = absmax[i / 256];
          ASSERT_LE(std::fabs(y[i] - x[i]), gap * am) << i;
          // The chosen code is the nearest entry (neighbours are no closer).
          const double t = double(x[i]) / am;
          const int c = q[i];
          const double d = std::fabs(t - map[c]);
          if (c > 0) {
            ASSERT_LE(d, std::fabs(t - map[c - 1]) + 4 * kU) << i;
          }
          if (c < 255) {
            ASSERT_LE(d, std::fabs(t - map[c + 1]) + 4 * kU) << i;
          }
        }
      }
    }
  }
}

TEST(Quantize, ZeroBytesAreZeroState) {
  std::vector<uint8_t> q(300, 0);
  std::vector<float> absmax(2, 0.0f), y(300, 1.0f);
  for (int is_signed : {0, 1}) {
    HMRT_ASSERT_OK(hmrt_dequantize_blockwise(q.data(), absmax.data(), 300,
                                             is_signed, y.data()));
    for (float v : y) EXPECT_EQ(v, 0.0f);
  }
  // Quantising zeros gives absmax 0 and dequantises to zeros.
  std::vector<float> zeros(300, 0.0f);
  HMRT_ASSERT_OK(hmrt_quantize_blockwise(zeros.data(), 300, 1, q.data(),
                                         absmax.data()));
  EXPECT_EQ(absmax[0], 0.0f);
  HMRT_ASSERT_OK(hmrt_dequantize_blockwise(q.data(), absmax.data(), 300, 1,
                                           y.data()));
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

// Each step is, bit for bit: decode the moments, the scalar AdamW of
// core/optim_math.h on each element, encode the new moments block-wise; with
// a tail shorter than a vector and a partial last block, over five steps.
TEST(AdamW8bit, StepIsDecodeUpdateEncode) {
  const int64_t n = 1003, blocks = 4;
  auto p = hmrt_test::random_vec(n, 151), want = p;
  std::vector<uint8_t> qm(n), qv(n), want_qm(n), want_qv(n);
  std::vector<float> am(blocks), av(blocks), want_am(blocks), want_av(blocks);
  auto m0 = hmrt_test::normal_vec(n, 152), v0 = hmrt_test::random_vec(n, 153, 0.0f, 1e-4f);
  HMRT_ASSERT_OK(hmrt_quantize_blockwise(m0.data(), n, 1, qm.data(), am.data()));
  HMRT_ASSERT_OK(hmrt_quantize_blockwise(v0.data(), n, 0, qv.data(), av.data()));
  want_qm = qm, want_qv = qv, want_am = am, want_av = av;
  for (int64_t step = 1; step <= 5; ++step) {
    SCOPED_TRACE(testing::Message() << "step " << step);
    auto g = hmrt_test::normal_vec(n, 160 + step);
    HMRT_ASSERT_OK(hmrt_adamw8bit_step(p.data(), g.data(), qm.data(), am.data(), qv.data(),
                                       av.data(), n, 1e-3, 0.9, 0.999, 1e-8, 0.01, step));
    std::vector<float> m(n), v(n);
    HMRT_ASSERT_OK(hmrt_dequantize_blockwise(want_qm.data(), want_am.data(), n, 1, m.data()));
    HMRT_ASSERT_OK(hmrt_dequantize_blockwise(want_qv.data(), want_av.data(), n, 0, v.data()));
    const hmrt::AdamWScalars s(1e-3, 0.9, 0.999, 1e-8, 0.01, step);
    for (int64_t i = 0; i < n; ++i) hmrt::adamw_update(s, g[i], want[i], m[i], v[i]);
    HMRT_ASSERT_OK(hmrt_quantize_blockwise(m.data(), n, 1, want_qm.data(), want_am.data()));
    HMRT_ASSERT_OK(hmrt_quantize_blockwise(v.data(), n, 0, want_qv.data(), want_av.data()));
    ASSERT_TRUE(hmrt_test::bitwise_equal(p, want));
    ASSERT_EQ(qm, want_qm);
    ASSERT_EQ(qv, want_qv);
    ASSERT_TRUE(hmrt_test::bitwise_equal(am, want_am));
    ASSERT_TRUE(hmrt_test::bitwise_equal(av, want_av));
  }
}

TEST(AdamW8bit, FirstStepEqualsFp32) {
  // From the zero state the dequantised moments are exactly 0, and the
  // parameter update uses the unquantised new moments: bitwise fp32 AdamW.
  const int64_t n = 1000;
  auto p32 = hmrt_test::random_vec(n, 141), g = hmrt_test::normal_vec(n, 142);
  auto p8 = p32;
  std::vector<float> m(n, 0), v(n, 0);
  HMRT_ASSERT_OK(hmrt_adamw_step(p32.data(), g.data(), m.data(), v.data(), n,
                                 1e-3, 0.9, 0.999, 1e-8, 0.01, 1));
  std::vector<uint8_t> qm(n, 0), qv(n, 0);
  std::vector<float> am(4, 0), av(4, 0);
  HMRT_ASSERT_OK(hmrt_adamw8bit_step(p8.data(), g.data(), qm.data(), am.data(),
                                     qv.data(), av.data(), n, 1e-3, 0.9, 0.999,
                                     1e-8, 0.01, 1));
  EXPECT_TRUE(hmrt_test::bitwise_equal(p32, p8));
  // The stored states are the fp32 ones up to quantisation error.
  std::vector<float> m8(n), v8(n);
  HMRT_ASSERT_OK(hmrt_dequantize_blockwise(qm.data(), am.data(), n, 1, m8.data()));
  HMRT_ASSERT_OK(hmrt_dequantize_blockwise(qv.data(), av.data(), n, 0, v8.data()));
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_LE(std::fabs(m8[i] - m[i]), kSignedHalfGap * am[i / 256]) << i;
    EXPECT_LE(std::fabs(v8[i] - v[i]), kUnsignedHalfGap * av[i / 256]) << i;
  }
}

// A noisy quadratic: f(p) = 0.5 * sum a_i (p_i - t_i)^2, gradient
// a_i (p_i - t_i) + noise.  8-bit AdamW should follow fp32 AdamW closely
// over hundreds of steps (bitsandbytes reports matching fp32 training).
TEST(AdamW8bit, TracksFp32OnQuadratic) {
  const int64_t n = 5000;  // 20 blocks, the last one partial
  const int steps = 400;
  const double lr = 1e-2;
  auto a = hmrt_test::random_vec(n, 151, 0.5f, 2.0f);
  auto t = hmrt_test::normal_vec(n, 152);
  auto p0 = hmrt_test::normal_vec(n, 153);
  auto p32 = p0, p8 = p0;
  std::vector<float> m(n, 0), v(n, 0), g32(n), g8(n);
  std::vector<uint8_t> qm(n, 0), qv(n, 0);
  std::vector<float> am(20, 0), av(20, 0);
  auto loss = [&](const std::vector<float>& p) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += 0.5 * a[i] * (p[i] - t[i]) * (p[i] - t[i]);
    return s;
  };
  const double loss0 = loss(p0);
  for (int s = 1; s <= steps; ++s) {
    auto noise = hmrt_test::normal_vec(n, 1000 + s, 0.1f);
    for (int64_t i = 0; i < n; ++i) {
      g32[i] = a[i] * (p32[i] - t[i]) + noise[i];
      g8[i] = a[i] * (p8[i] - t[i]) + noise[i];
    }
    HMRT_ASSERT_OK(hmrt_adamw_step(p32.data(), g32.data(), m.data(), v.data(),
                                   n, lr, 0.9, 0.999, 1e-8, 0.0, s));
    HMRT_ASSERT_OK(hmrt_adamw8bit_step(p8.data(), g8.data(), qm.data(),
                                       am.data(), qv.data(), av.data(), n, lr,
                                       0.9, 0.999, 1e-8, 0.0, s));
    if (s % 100 == 0) {
      const double l32 = loss(p32), l8 = loss(p8);
      // Both make real progress, and the 8-bit loss stays within 5% of
      // the starting loss of the fp32 one.
      EXPECT_LT(l32, loss0);
      EXPECT_NEAR(l8, l32, 0.05 * loss0) << "step " << s;
    }
  }
  const double l32 = loss(p32), l8 = loss(p8);
  EXPECT_LT(l32, 0.05 * loss0);
  EXPECT_LT(l8, 0.05 * loss0);
  // Parameters stay close: RMS difference well below the distance travelled.
  double diff = 0, travel = 0;
  for (int64_t i = 0; i < n; ++i) {
    diff += double(p8[i] - p32[i]) * (p8[i] - p32[i]);
    travel += double(p32[i] - p0[i]) * (p32[i] - p0[i]);
  }
  EXPECT_LT(std::sqrt(diff), 0.05 * std::sqrt(travel));
}

TEST(AdamW8bit, IndependentOfThreads) {
  const int64_t n = 20000;
  auto p0 = hmrt_test::random_vec(n, 161);
  std::vector<float> first;
  for (int threads : {1, 2, 3}) {
    hmrt_test::ThreadScope scope(threads);
    auto p = p0;
    std::vector<uint8_t> qm(n, 0), qv(n, 0);
    std::vector<float> am(79, 0), av(79, 0);
    for (int s = 1; s <= 3; ++s) {
      auto g = hmrt_test::normal_vec(n, 170 + s);
      HMRT_ASSERT_OK(hmrt_adamw8bit_step(p.data(), g.data(), qm.data(), am.data(),
                                         qv.data(), av.data(), n, 1e-3, 0.9,
                                         0.999, 1e-8, 0.0, s));
    }
    if (first.empty())
      first = p;
    else
      EXPECT_TRUE(hmrt_test::bitwise_equal(first, p));
  }
}

TEST(Quantize, RejectsBadArguments) {
  float x = 0;
  uint8_t q = 0;
  EXPECT_EQ(hmrt_quantize_blockwise(&x, 1, 1, &q, nullptr), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_adamw8bit_step(&x, &x, &q, &x, &q, &x, 1, 1e-3, 0.9, 0.999,
                                1e-8, 0, 0),
            HMRT_INVALID_ARGUMENT);
}

}  // namespace
