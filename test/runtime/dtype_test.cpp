// The 16-bit and unsigned element types (F16, BF16, U16, I16, U32, U64):
// hmrt_cast on known bit patterns and on ONNX's backend test data for Cast,
// round trips, and hmrt_equal / hmrt_where on them.  The all-pairs check
// against the scalar reference is in tensor_ops_test.cpp.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "hmrt/tensor_ops.h"
#include "test_util.h"

namespace {

using Bits = std::vector<uint16_t>;

uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float bits_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint64_t double_bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}
double bits_double(uint64_t b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}

Bits to16(int32_t to, const std::vector<float>& x) {
  Bits y(x.size(), 0xDEAD);
  EXPECT_EQ(hmrt_cast(HMRT_DTYPE_F32, x.data(), to, y.data(), int64_t(x.size())),
            HMRT_OK)
      << hmrt_last_error();
  return y;
}
Bits to16(int32_t to, const std::vector<double>& x) {
  Bits y(x.size(), 0xDEAD);
  EXPECT_EQ(hmrt_cast(HMRT_DTYPE_F64, x.data(), to, y.data(), int64_t(x.size())),
            HMRT_OK)
      << hmrt_last_error();
  return y;
}
std::vector<float> from16(int32_t from, const Bits& x) {
  std::vector<float> y(x.size(), -7.0f);
  EXPECT_EQ(hmrt_cast(from, x.data(), HMRT_DTYPE_F32, y.data(), int64_t(x.size())),
            HMRT_OK)
      << hmrt_last_error();
  return y;
}

// ---- float16 ------------------------------------------------------------------

TEST(DtypeF16, KnownValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {
      1.0f, -2.0f, 0.0f, -0.0f, 65504.0f, 0.5f, 0.333333343f, inf, -inf,
      // 65504 is the largest half; from 65520 (halfway to 2^16) up: inf.
      65519.0f, 65520.0f, -65520.0f, 1e10f,
      // Ties round to even: 1 + 2^-11 -> 1, 1 + 3 * 2^-11 -> 1 + 2^-9.
      1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 2049.0f, 2051.0f,
      // Subnormals: 2^-24 is the smallest; 2^-25 ties to 0, 3 * 2^-25 to
      // 2^-23; the largest subnormal; rounding up into the normals.
      0x1p-24f, 0x1p-25f, 3 * 0x1p-25f, 1023 * 0x1p-24f, 0x1p-14f,
      0x1p-14f - 0x1p-26f, 1e-8f, -0x1p-24f, 0x1p-26f};
  const Bits want = {
      0x3C00, 0xC000, 0x0000, 0x8000, 0x7BFF, 0x3800, 0x3555, 0x7C00, 0xFC00,
      0x7BFF, 0x7C00, 0xFC00, 0x7C00,
      0x3C00, 0x3C02, 0x6800, 0x6802,
      0x0001, 0x0000, 0x0002, 0x03FF, 0x0400,
      0x0400, 0x0000, 0x8001, 0x0000};
  ASSERT_EQ(x.size(), want.size());
  const Bits got = to16(HMRT_DTYPE_F16, x);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(got[i], want[i]) << "x = " << x[i] << " (element " << i << ")";
  // Back to float exactly.
  const std::vector<float> back = from16(HMRT_DTYPE_F16, {0x3C00, 0xC000, 0x8000,
                                                          0x7BFF, 0x0001, 0x03FF,
                                                          0x7C00, 0xFC00, 0x3555});
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1], -2.0f);
  EXPECT_EQ(float_bits(back[2]), 0x80000000u);  // -0
  EXPECT_EQ(back[3], 65504.0f);
  EXPECT_EQ(back[4], 0x1p-24f);
  EXPECT_EQ(back[5], 1023 * 0x1p-24f);
  EXPECT_EQ(back[6], inf);
  EXPECT_EQ(back[7], -inf);
  EXPECT_EQ(back[8], 0.333251953125f);
}

TEST(DtypeF16, NaNStaysNaN) {
  const std::vector<float> x = {std::numeric_limits<float>::quiet_NaN(),
                                -std::numeric_limits<float>::quiet_NaN(),
                                bits_float(0x7F800001u),   // signalling, low payload
                                bits_float(0x7FA00000u)};  // signalling, high payload
  const Bits h = to16(HMRT_DTYPE_F16, x);
  for (size_t i = 0; i < h.size(); ++i) {
    EXPECT_GT(h[i] & 0x7FFF, 0x7C00) << i;  // a NaN, not inf
    EXPECT_TRUE(h[i] & 0x0200) << i;         // quiet
    EXPECT_EQ(h[i] >> 15, float_bits(x[i]) >> 31) << i;  // sign kept
  }
  EXPECT_EQ(h[0], 0x7E00);
  EXPECT_EQ(h[3], 0x7F00);  // payload's top bits kept, quiet bit set
  for (float f : from16(HMRT_DTYPE_F16, {0x7E00, 0xFE00, 0x7C01, 0x7FFF}))
    EXPECT_TRUE(std::isnan(f));
  // F16 -> BF16 and integers: NaN is NaN, resp. 0.
  Bits b(1);
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_F16, Bits{0x7E00}.data(), HMRT_DTYPE_BF16,
                      b.data(), 1),
            HMRT_OK);
  EXPECT_GT(b[0] & 0x7FFF, 0x7F80);
  int32_t i32 = 5;
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_F16, Bits{0x7E00}.data(), HMRT_DTYPE_I32, &i32, 1),
            HMRT_OK);
  EXPECT_EQ(i32, 0);
}

// Double -> half rounds once, not through float: 1 + 2^-11 + 2^-40 rounds
// up to 1 + 2^-10 directly, but through float (24 bits) it would become the
// tie 1 + 2^-11 and round down to 1.
TEST(DtypeF16, DoubleRoundsOnce) {
  const Bits h = to16(HMRT_DTYPE_F16, std::vector<double>{
                                          1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-11,
                                          65519.999, 65520.0, 0x1p-25 + 0x1p-60,
                                          1e-300, -1e300});
  EXPECT_EQ(h, (Bits{0x3C01, 0x3C00, 0x7BFF, 0x7C00, 0x0001, 0x0000, 0xFC00}));
}

// Every half: to float and back, and to double and back, is the identity
// (NaNs stay NaNs with the same sign and, being quiet, the same bits).
TEST(DtypeF16, RoundTripsEveryValue) {
  Bits all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = uint16_t(i);
  std::vector<float> f(65536);
  std::vector<double> d(65536);
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_F16, all.data(), HMRT_DTYPE_F32, f.data(), 65536),
            HMRT_OK);
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_F16, all.data(), HMRT_DTYPE_F64, d.data(), 65536),
            HMRT_OK);
  const Bits bf = to16(HMRT_DTYPE_F16, f), bd = to16(HMRT_DTYPE_F16, d);
  for (uint32_t i = 0; i < 65536; ++i) {
    const bool nan = (i & 0x7FFF) > 0x7C00;
    EXPECT_EQ(std::isnan(f[i]), nan) << i;
    if (!nan) {
      EXPECT_EQ(double(f[i]), d[i]) << i;
    }
    const uint16_t want = nan ? uint16_t(i | 0x0200) : uint16_t(i);
    EXPECT_EQ(bf[i], want) << i;
    EXPECT_EQ(bd[i], want) << i;
  }
}

// ---- bfloat16 -------------------------------------------------------------------

TEST(DtypeBF16, KnownValuesTruncate) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {
      1.0f, -2.0f, 0.0f, -0.0f, inf, -inf, 3.0f,
      // Truncation: 1 + 2^-8 (a tie) and 1 + 255 * 2^-16 (just below the
      // next value) both become 1; -(1 + 2^-7 + 2^-8) becomes -(1 + 2^-7).
      1.0f + 0x1p-8f, 1.0f + 255 * 0x1p-16f, -(1.0f + 0x1p-7f + 0x1p-8f),
      // The largest float stays finite; float subnormals truncate.
      std::numeric_limits<float>::max(), 0x1p-149f, 0x1p-133f,
      std::numeric_limits<float>::min()};
  const Bits want = {0x3F80, 0xC000, 0x0000, 0x8000, 0x7F80, 0xFF80, 0x4040,
                     0x3F80, 0x3F80, 0xBF81,
                     0x7F7F, 0x0000, 0x0001, 0x0080};
  ASSERT_EQ(x.size(), want.size());
  const Bits got = to16(HMRT_DTYPE_BF16, x);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(got[i], want[i]) << "x = " << x[i] << " (element " << i << ")";
  const std::vector<float> back =
      from16(HMRT_DTYPE_BF16, {0x3F80, 0xC000, 0x8000, 0x7F7F, 0x0001, 0x7F80});
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1], -2.0f);
  EXPECT_EQ(float_bits(back[2]), 0x80000000u);
  EXPECT_EQ(float_bits(back[3]), 0x7F7F0000u);
  EXPECT_EQ(back[4], 0x1p-133f);
  EXPECT_EQ(back[5], inf);
  // F64 -> BF16 rounds to float first: 1e39 overflows float to inf.
  EXPECT_EQ(to16(HMRT_DTYPE_BF16, std::vector<double>{1e39, -1e39, 1.0 + 0x1p-30}),
            (Bits{0x7F80, 0xFF80, 0x3F80}));
}

TEST(DtypeBF16, NaNStaysNaN) {
  // 0x7F800001 would truncate to 0x7F80 (inf) without the NaN rule.
  const std::vector<float> x = {std::numeric_limits<float>::quiet_NaN(),
                                bits_float(0x7F800001u), bits_float(0xFF800001u),
                                bits_float(0x7FC12345u)};
  EXPECT_EQ(to16(HMRT_DTYPE_BF16, x), (Bits{0x7FC0, 0x7FC0, 0xFFC0, 0x7FC1}));
  for (float f : from16(HMRT_DTYPE_BF16, {0x7FC0, 0xFFC0, 0x7F81}))
    EXPECT_TRUE(std::isnan(f));
}

TEST(DtypeBF16, RoundTripsEveryValue) {
  Bits all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = uint16_t(i);
  const std::vector<float> f = from16(HMRT_DTYPE_BF16, all);
  const Bits back = to16(HMRT_DTYPE_BF16, f);
  for (uint32_t i = 0; i < 65536; ++i) {
    EXPECT_EQ(float_bits(f[i]), i << 16) << i;  // exact widening, NaNs too
    const bool nan = (i & 0x7FFF) > 0x7F80;
    EXPECT_EQ(back[i], nan ? uint16_t(i | 0x0040) : uint16_t(i)) << i;
  }
}

// ---- ONNX backend test data (onnx 1.12, backend/test/data/node) -----------------
// The inputs and expected outputs of test_cast_* test_data_set_0, as bits.

TEST(DtypeOnnx, CastFloatToBfloat16) {
  // Generated by truncation: round-to-nearest-even would give 0x3ef6,
  // 0x3f00, 0x3f52, 0x3ef1 and 0x3e58 for elements 1, 2, 3, 4 and 6.
  const uint32_t in[] = {0x3ef535b8, 0x3ef5eeb0, 0x3effd6b2, 0x3f51b0e5,
                         0x3ef0cccc, 0x3f51040c, 0x3e57eed1, 0x3f391039,
                         0x7fc00000, 0x7f800000, 0x7f800000, 0xff800000};
  const Bits want = {0x3ef5, 0x3ef5, 0x3eff, 0x3f51, 0x3ef0, 0x3f51,
                     0x3e57, 0x3f39, 0x7fc0, 0x7f80, 0x7f80, 0xff80};
  std::vector<float> x;
  for (uint32_t b : in) x.push_back(bits_float(b));
  EXPECT_EQ(to16(HMRT_DTYPE_BF16, x), want);
}

TEST(DtypeOnnx, CastBfloat16ToFloat) {
  const Bits in = {0x3ef5, 0x3ef5, 0x3eff, 0x3f51, 0x3ef0, 0x3f51,
                   0x3e57, 0x3f39, 0x7fc0, 0x7f80, 0x7f80, 0xff80};
  const std::vector<float> y = from16(HMRT_DTYPE_BF16, in);
  for (size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(float_bits(y[i]), uint32_t(in[i]) << 16) << i;
}

TEST(DtypeOnnx, CastFloatToFloat16) {
  const uint32_t in[] = {0x3f0c7f0b, 0x3f3716a6, 0x3f1a4eb3, 0x3f0b7d77,
                         0x3ed8e948, 0x3f255951, 0x3ee00b6e, 0x3f644b3c,
                         0x3f76b29a, 0x3ec45272, 0x3f4aae7e, 0x3f0765a8};
  const Bits want = {0x3864, 0x39b9, 0x38d2, 0x385c, 0x36c7, 0x392b,
                     0x3700, 0x3b22, 0x3bb6, 0x3623, 0x3a55, 0x383b};
  std::vector<float> x;
  for (uint32_t b : in) x.push_back(bits_float(b));
  EXPECT_EQ(to16(HMRT_DTYPE_F16, x), want);
}

TEST(DtypeOnnx, CastDoubleToFloat16) {
  const uint64_t in[] = {0x3fc4591d85687aac, 0x3fbc418b95979228, 0x3fe500a6e944d088,
                         0x3fc1affa9c741a64, 0x3fc9299c5f317168, 0x3fd79931754cdae2,
                         0x3fea4593980de5b9, 0x3fb8dba113ee5ae8, 0x3fead071d6b1d3d4,
                         0x3fb899e7bf1a2c60, 0x3fef3f27eb834526, 0x3fddfe619c13b5f0};
  const Bits want = {0x3116, 0x2f10, 0x3940, 0x306c, 0x324a, 0x35e6,
                     0x3a91, 0x2e37, 0x3ab4, 0x2e26, 0x3bd0, 0x3780};
  std::vector<double> x;
  for (uint64_t b : in) x.push_back(bits_double(b));
  EXPECT_EQ(to16(HMRT_DTYPE_F16, x), want);
}

TEST(DtypeOnnx, CastFloat16ToFloatAndDouble) {
  const Bits in_f = {0x2f92, 0x391f, 0x3096, 0x3b8f, 0x382d, 0x36a2,
                     0x343c, 0x3a32, 0x374c, 0x388c, 0x24cf, 0x38f1};
  const uint32_t want_f[] = {0x3df24000, 0x3f23e000, 0x3e12c000, 0x3f71e000,
                             0x3f05a000, 0x3ed44000, 0x3e878000, 0x3f464000,
                             0x3ee98000, 0x3f118000, 0x3c99e000, 0x3f1e2000};
  const std::vector<float> yf = from16(HMRT_DTYPE_F16, in_f);
  for (size_t i = 0; i < in_f.size(); ++i) EXPECT_EQ(float_bits(yf[i]), want_f[i]) << i;
  const Bits in_d = {0x38e6, 0x38ef, 0x3b8d, 0x3974, 0x35c1, 0x36fe,
                     0x3995, 0x2bb5, 0x3956, 0x395d, 0x32bb, 0x3020};
  const uint64_t want_d[] = {0x3fe3980000000000, 0x3fe3bc0000000000, 0x3fee340000000000,
                             0x3fe5d00000000000, 0x3fd7040000000000, 0x3fdbf80000000000,
                             0x3fe6540000000000, 0x3faed40000000000, 0x3fe5580000000000,
                             0x3fe5740000000000, 0x3fcaec0000000000, 0x3fc0800000000000};
  std::vector<double> yd(in_d.size());
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_F16, in_d.data(), HMRT_DTYPE_F64, yd.data(),
                      int64_t(in_d.size())),
            HMRT_OK);
  for (size_t i = 0; i < in_d.size(); ++i) EXPECT_EQ(double_bits(yd[i]), want_d[i]) << i;
}

// ---- integers and mixed ---------------------------------------------------------

TEST(DtypeCast, SixteenBitFloatsAndIntegers) {
  // F16 -> integers truncate and saturate; integers -> F16 round to nearest
  // even and overflow to inf.
  const Bits h = {0x4170 /* 2.71875 */, 0xC170, 0x7BFF /* 65504 */,
                  0xFBFF, 0x7C00, 0x3800 /* 0.5 */};
  int16_t i16[6];
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_F16, h.data(), HMRT_DTYPE_I16, i16, 6), HMRT_OK);
  EXPECT_EQ(std::vector<int16_t>(i16, i16 + 6),
            (std::vector<int16_t>{2, -2, 32767, -32768, 32767, 0}));
  uint16_t u16[6];
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_F16, h.data(), HMRT_DTYPE_U16, u16, 6), HMRT_OK);
  EXPECT_EQ(std::vector<uint16_t>(u16, u16 + 6),
            (std::vector<uint16_t>{2, 0, 65504, 0, 65535, 0}));
  const uint64_t big[] = {2049, 2051, 65519, 65520, UINT64_MAX};
  Bits out(5);
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_U64, big, HMRT_DTYPE_F16, out.data(), 5), HMRT_OK);
  EXPECT_EQ(out, (Bits{0x6800, 0x6802, 0x7BFF, 0x7C00, 0x7C00}));
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_U64, big, HMRT_DTYPE_BF16, out.data(), 5), HMRT_OK);
  // 2049 = 0x45001000 in float -> 0x4500 (2048); 2^64 -> 0x5F80.
  EXPECT_EQ(out, (Bits{0x4500, 0x4500, 0x477F, 0x477F, 0x5F80}));
  // U64 <-> floats and other integers.
  const double d[] = {1.8e19, -1.0, 2.5, NAN, 3e19};
  uint64_t u64[5];
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_F64, d, HMRT_DTYPE_U64, u64, 5), HMRT_OK);
  EXPECT_EQ(std::vector<uint64_t>(u64, u64 + 5),
            (std::vector<uint64_t>{18000000000000000000ull, 0, 2, 0, UINT64_MAX}));
  double back[1];
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_U64, big + 4, HMRT_DTYPE_F64, back, 1), HMRT_OK);
  EXPECT_EQ(back[0], 0x1p64);
  const int64_t neg[] = {-1, 70000};
  uint32_t u32[2];
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_I64, neg, HMRT_DTYPE_U32, u32, 2), HMRT_OK);
  EXPECT_EQ(u32[0], 0xFFFFFFFFu);  // wraps
  EXPECT_EQ(u32[1], 70000u);
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_I64, neg, HMRT_DTYPE_I16, i16, 2), HMRT_OK);
  EXPECT_EQ(i16[0], -1);
  EXPECT_EQ(i16[1], int16_t(70000 - 65536));
  // BOOL <-> 16-bit floats.
  const uint8_t truth[] = {0, 1, 7};
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_BOOL, truth, HMRT_DTYPE_F16, out.data(), 3), HMRT_OK);
  EXPECT_EQ(Bits(out.begin(), out.begin() + 3), (Bits{0x0000, 0x3C00, 0x3C00}));
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_BOOL, truth, HMRT_DTYPE_BF16, out.data(), 3), HMRT_OK);
  EXPECT_EQ(Bits(out.begin(), out.begin() + 3), (Bits{0x0000, 0x3F80, 0x3F80}));
  uint8_t b[4];
  const Bits z = {0x8000, 0x0001, 0x7E00, 0x0000};
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_F16, z.data(), HMRT_DTYPE_BOOL, b, 4), HMRT_OK);
  EXPECT_EQ(std::vector<uint8_t>(b, b + 4), (std::vector<uint8_t>{0, 1, 1, 0}));
  // F16 <-> BF16: BF16 -> F16 rounds to nearest even, F16 -> BF16 truncates.
  const Bits f16 = {0x3C01 /* 1 + 2^-10 */, 0x7BFF};
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_F16, f16.data(), HMRT_DTYPE_BF16, out.data(), 2),
            HMRT_OK);
  EXPECT_EQ(Bits(out.begin(), out.begin() + 2), (Bits{0x3F80, 0x477F}));
  const Bits bf = {0x3F81 /* 1 + 2^-7 */, 0x4780 /* 65536 */, 0x3380 /* 2^-24 */};
  ASSERT_EQ(hmrt_cast(HMRT_DTYPE_BF16, bf.data(), HMRT_DTYPE_F16, out.data(), 3),
            HMRT_OK);
  EXPECT_EQ(Bits(out.begin(), out.begin() + 3), (Bits{0x3C08, 0x7C00, 0x0001}));
}

TEST(DtypeCast, InPlaceBetweenTwoByteTypes) {
  // F16 -> BF16 -> I16 -> U16 in place, on several threads.
  const int64_t n = 100000;
  for (int threads : hmrt_test::thread_counts()) {
    hmrt_test::ThreadScope scope(threads);
    Bits v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = uint16_t(0x3C00 + (i % 1000));  // [1, 2)
    ASSERT_EQ(hmrt_cast(HMRT_DTYPE_F16, v.data(), HMRT_DTYPE_BF16, v.data(), n), HMRT_OK);
    for (int64_t i = 0; i < n; ++i) {
      // 1 + m/1024 truncated to 7 fraction bits.
      ASSERT_EQ(v[i], uint16_t(0x3F80 + (i % 1000) / 8)) << i;
    }
    ASSERT_EQ(hmrt_cast(HMRT_DTYPE_BF16, v.data(), HMRT_DTYPE_I16, v.data(), n), HMRT_OK);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v[i], 1) << i;
  }
}

// ---- equal and where ------------------------------------------------------------

TEST(DtypeEqual, SixteenBitFloatsByValue) {
  const int64_t s4[] = {4};
  uint8_t y[4];
  // +0 == -0, NaN != NaN.
  const Bits a = {0x0000, 0x7E00, 0x3C00, 0x3C00};
  const Bits b = {0x8000, 0x7E00, 0x3C00, 0x3C01};
  ASSERT_EQ(hmrt_equal(HMRT_DTYPE_F16, a.data(), 1, s4, b.data(), 1, s4, y, 1, s4),
            HMRT_OK);
  EXPECT_EQ(std::vector<uint8_t>(y, y + 4), (std::vector<uint8_t>{1, 0, 1, 0}));
  const Bits c = {0x8000, 0x7FC0, 0x3F80, 0x3F81};
  const Bits d = {0x0000, 0x7FC0, 0x3F80, 0x3F80};
  ASSERT_EQ(hmrt_equal(HMRT_DTYPE_BF16, c.data(), 1, s4, d.data(), 1, s4, y, 1, s4),
            HMRT_OK);
  EXPECT_EQ(std::vector<uint8_t>(y, y + 4), (std::vector<uint8_t>{1, 0, 1, 0}));
  const uint64_t e[] = {UINT64_MAX, 0, 1, 2}, f[] = {UINT64_MAX, 1, 1, 0};
  ASSERT_EQ(hmrt_equal(HMRT_DTYPE_U64, e, 1, s4, f, 1, s4, y, 1, s4), HMRT_OK);
  EXPECT_EQ(std::vector<uint8_t>(y, y + 4), (std::vector<uint8_t>{1, 0, 1, 0}));
}

TEST(DtypeWhere, TwoByteElements) {
  const int64_t s3[] = {3}, s1[] = {1};
  const uint8_t cond[] = {1, 0, 1};
  const Bits x = {0x3C00, 0x4000, 0x4200}, z = {0xBC00};
  Bits y(3);
  ASSERT_EQ(hmrt_where(cond, 1, s3, x.data(), 1, s3, z.data(), 1, s1, y.data(), 1,
                       s3, 2),
            HMRT_OK);
  EXPECT_EQ(y, (Bits{0x3C00, 0xBC00, 0x4200}));
}

}  // namespace
