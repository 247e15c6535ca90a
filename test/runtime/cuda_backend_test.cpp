// The CUDA backend (runtime/cuda) against the CPU backend: the registry,
// buffers and copies between every pair of tiers (storage through the
// pinned bounce buffers), memset, streams and events, and every kernel of
// the table compared with the CPU kernel on the same inputs: bitwise for
// the elementwise and broadcasting kernels, dropout, the casts and the
// gradient norm, within the fp32 dot-product error bound for the GEMMs.
//
// Without a usable GPU only the registry and the open's message are
// checked; the rest is skipped with the CUDA runtime's reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cfloat>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "hmrt/device.h"
#include "hmrt/kernel_table.h"
#include "hmrt/kernels.h"
#include "hmrt/nn_ops.h"
#include "hmrt/program.h"
#include "hmrt/tensor_ops.h"
#include "cuda_test_fixture.h"
#include "test_util.h"

namespace {

using namespace hmrt_cuda_test;

TEST(CudaRegistry, ListsCudaAndOpensOrSaysWhyNot) {
  ASSERT_EQ(hmrt_backend_count(), 2);
  EXPECT_STREQ(hmrt_backend_name(0), "cpu");  // still the default
  EXPECT_STREQ(hmrt_backend_name(1), "cuda");
  hmrt_device* d = nullptr;
  const hmrt_status st = hmrt_device_open("cuda", &d);
  if (st != HMRT_OK) {
    EXPECT_EQ(st, HMRT_IO_ERROR);
    EXPECT_EQ(d, nullptr);
    EXPECT_NE(last_error().find("hmrt_device_open: the cuda backend finds no GPU it can use: "),
              std::string::npos)
        << last_error();
    return;
  }
  DevicePtr dev(d);
  EXPECT_STREQ(hmrt_device_backend(d), "cuda");
  const hmrt_kernels* k = hmrt_device_kernels(d);
  ASSERT_NE(k, nullptr);
  EXPECT_STREQ(k->backend, "cuda");
  EXPECT_EQ(k->size, sizeof(hmrt_kernels));
  // Every kernel generated programs call is there: the entries after the
  // header are all function pointers.
  const size_t first = offsetof(hmrt_kernels, sgemm);
  for (size_t off = first; off < sizeof(hmrt_kernels); off += sizeof(void (*)())) {
    void (*entry)() = nullptr;
    std::memcpy(&entry, reinterpret_cast<const char*>(k) + off, sizeof(entry));
    EXPECT_NE(entry, nullptr) << "entry " << (off - first) / sizeof(entry) << " is missing";
  }
}

// Every pair of tiers, blocking and on a stream, at unaligned offsets and
// over more than one bounce buffer (4 MiB) for storage.
TEST_F(Cuda, CopiesBetweenEveryPairOfTiers) {
  constexpr uint64_t kSize = (uint64_t{9} << 20) + 77;
  hmrt_stream* stream = nullptr;
  HMRT_ASSERT_OK(hmrt_stream_create(dev_.get(), &stream));
  int salt = 0;
  for (int32_t from : kTiers)
    for (int32_t to : kTiers)
      for (bool async : {false, true}) {
        SCOPED_TRACE(std::string(hmrt_tier_name(from)) + " -> " + hmrt_tier_name(to) +
                     (async ? " async" : ""));
        ++salt;
        BufferPtr src = alloc(from, kSize), dst = alloc(to, kSize);
        const std::vector<uint8_t> a = hmrt_test::byte_pattern(kSize, salt);
        const std::vector<uint8_t> b = hmrt_test::byte_pattern(kSize, salt + 1000);
        HMRT_ASSERT_OK(hmrt_copy_from_host(src.get(), 0, a.data(), kSize));
        HMRT_ASSERT_OK(hmrt_copy_from_host(dst.get(), 0, b.data(), kSize));
        const uint64_t so = 13, doff = 4099, n = (uint64_t{8} << 20) + 5;
        if (async) {
          HMRT_ASSERT_OK(hmrt_copy_async(dst.get(), doff, src.get(), so, n, stream));
          HMRT_ASSERT_OK(hmrt_stream_synchronize(stream));
        } else {
          HMRT_ASSERT_OK(hmrt_copy(dst.get(), doff, src.get(), so, n));
        }
        std::vector<uint8_t> want = b;
        std::memcpy(want.data() + doff, a.data() + so, n);
        EXPECT_TRUE(read_all(dst.get()) == want);
        EXPECT_TRUE(read_all(src.get()) == a);
      }
  hmrt_stream_destroy(stream);
}

TEST_F(Cuda, MemsetEveryTierAndAddresses) {
  constexpr uint64_t kSize = (uint64_t{5} << 20) + 3;
  for (int32_t t : kTiers) {
    SCOPED_TRACE(hmrt_tier_name(t));
    BufferPtr b = alloc(t, kSize);
    HMRT_ASSERT_OK(hmrt_memset(b.get(), 0, 0x5a, kSize));
    HMRT_ASSERT_OK(hmrt_memset(b.get(), 7, 0x11, 100));
    std::vector<uint8_t> want(kSize, 0x5a);
    std::memset(want.data() + 7, 0x11, 100);
    EXPECT_TRUE(read_all(b.get()) == want);
    void* p = nullptr;
    const hmrt_status host = hmrt_buffer_host_ptr(b.get(), 0, 4, &p);
    const hmrt_status kernel = hmrt_buffer_device_ptr(b.get(), 0, 4, &p);
    EXPECT_EQ(host == HMRT_OK, t == HMRT_TIER_HOST);
    EXPECT_EQ(kernel == HMRT_OK, t != HMRT_TIER_STORAGE);
  }
}

// A copy on one stream waits for an event recorded after a copy on another.
TEST_F(Cuda, StreamsOrderedByEvents) {
  constexpr uint64_t kSize = uint64_t{64} << 20;
  hmrt_stream *s1 = nullptr, *s2 = nullptr;
  hmrt_event* e = nullptr;
  HMRT_ASSERT_OK(hmrt_stream_create(dev_.get(), &s1));
  HMRT_ASSERT_OK(hmrt_stream_create(dev_.get(), &s2));
  HMRT_ASSERT_OK(hmrt_event_create(dev_.get(), &e));
  BufferPtr host = alloc(HMRT_TIER_HOST, kSize), dev = alloc(HMRT_TIER_DEVICE, kSize),
            back = alloc(HMRT_TIER_HOST, kSize);
  const std::vector<uint8_t> a = hmrt_test::byte_pattern(kSize, 3);
  HMRT_ASSERT_OK(hmrt_copy_from_host(host.get(), 0, a.data(), kSize));
  HMRT_ASSERT_OK(hmrt_copy_async(dev.get(), 0, host.get(), 0, kSize, s1));
  HMRT_ASSERT_OK(hmrt_event_record(e, s1));
  HMRT_ASSERT_OK(hmrt_stream_wait_event(s2, e));
  HMRT_ASSERT_OK(hmrt_copy_async(back.get(), 0, dev.get(), 0, kSize, s2));
  HMRT_ASSERT_OK(hmrt_stream_synchronize(s2));
  EXPECT_TRUE(read_all(back.get()) == a);
  HMRT_ASSERT_OK(hmrt_stream_synchronize(s1));
  hmrt_event_destroy(e);
  hmrt_stream_destroy(s1);
  hmrt_stream_destroy(s2);
}

// |gpu - cpu| within the error bound of an fp32 dot product of length k on
// both sides: 2 * k * eps * sum |a_il| |b_lj| (+ beta's term).
void expect_gemm_close(const std::vector<float>& gpu, const std::vector<float>& cpu,
                       const std::vector<double>& bound) {
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < gpu.size(); ++i)
    ASSERT_LE(std::fabs(double(gpu[i]) - double(cpu[i])), bound[i]) << "element " << i;
}

TEST_F(Cuda, GemmMatchesCpuWithinTheDotProductBound) {
  const int64_t m = 37, n = 53, k = 301, batch = 3;
  for (int ta : {0, 1})
    for (int tb : {0, 1})
      for (float beta : {0.0f, 0.5f}) {
        SCOPED_TRACE("ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) +
                     " beta=" + std::to_string(beta));
        const int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 1, ldc = n + 2;
        const int64_t sa = (ta ? k : m) * lda, sb = 0 /* broadcast B */, sc = m * ldc;
        const std::vector<float> a = hmrt_test::random_vec(batch * sa, 1, -2.0f, 2.0f);
        const std::vector<float> b = hmrt_test::random_vec((tb ? n : k) * ldb, 2, -2.0f, 2.0f);
        std::vector<float> c = hmrt_test::random_vec(batch * sc, 3, -2.0f, 2.0f);
        // Bound per element from |A| |B|.
        std::vector<double> bound(c.size(), 0.0);
        for (int64_t q = 0; q < batch; ++q)
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double s = 0;
              for (int64_t l = 0; l < k; ++l) {
                const float x = ta ? a[q * sa + l * lda + i] : a[q * sa + i * lda + l];
                const float y = tb ? b[j * ldb + l] : b[l * ldb + j];
                s += std::fabs(double(x) * double(y));
              }
              const size_t at = size_t(q * sc + i * ldc + j);
              bound[at] = 2.0 * double(k + 2) * FLT_EPSILON *
                          (s + std::fabs(double(beta) * c[at])) + 1e-30;
            }
        std::vector<float> want = c;
        HMRT_ASSERT_OK(hmrt_sgemm_strided_batched(ta, tb, m, n, k, 1.25f, a.data(), lda, sa,
                                                  b.data(), ldb, sb, beta, want.data(), ldc,
                                                  sc, batch));
        float *da, *db, *dc;
        BufferPtr ba = upload(a, &da), bb = upload(b, &db), bc = upload(c, &dc);
        HMRT_ASSERT_OK(k_->sgemm_strided_batched(ta, tb, m, n, k, 1.25f, da, lda, sa, db, ldb,
                                                 sb, beta, dc, ldc, sc, batch));
        expect_gemm_close(download<float>(bc.get(), c.size()), want, bound);
        // The single GEMM on the second matrix of the batch.
        std::vector<float> want1(c.begin() + sc, c.begin() + 2 * sc);
        HMRT_ASSERT_OK(hmrt_sgemm(ta, tb, m, n, k, 1.25f, a.data() + sa, lda, b.data(), ldb,
                                  beta, want1.data(), ldc));
        std::vector<float> c1(c.begin() + sc, c.begin() + 2 * sc);
        float* dc1;
        BufferPtr bc1 = upload(c1, &dc1);
        HMRT_ASSERT_OK(k_->sgemm(ta, tb, m, n, k, 1.25f, da + sa, lda, db, ldb, beta, dc1, ldc));
        std::vector<double> bound1(bound.begin() + sc, bound.begin() + 2 * sc);
        expect_gemm_close(download<float>(bc1.get(), c1.size()), want1, bound1);
      }
}

// Elementwise kernels, casts and the gradient norm: the CPU's bits.
TEST_F(Cuda, ElementwiseKernelsMatchCpuBitwise) {
  const size_t n = 100003;  // odd, several blocks and norm chunks
  const std::vector<float> g = hmrt_test::random_vec(int64_t(n), 11, -2.0f, 2.0f);
  const std::vector<float> p0 = hmrt_test::random_vec(int64_t(n), 12, -2.0f, 2.0f);
  const std::vector<float> m0 = hmrt_test::random_vec(int64_t(n), 13, -2.0f, 2.0f);
  const std::vector<float> v0 = hmrt_test::random_vec(int64_t(n), 14, 0.0f, 1.0f);
  for (int64_t step : {1, 7}) {
    std::vector<float> p = p0, m = m0, v = v0;
    HMRT_ASSERT_OK(hmrt_adamw_step(p.data(), g.data(), m.data(), v.data(), int64_t(n), 1e-3,
                                   0.9, 0.999, 1e-8, 0.01, step));
    float *dp, *dg, *dm, *dv;
    BufferPtr bp = upload(p0, &dp), bg = upload(g, &dg), bm = upload(m0, &dm), bv = upload(v0, &dv);
    HMRT_ASSERT_OK(k_->adamw_step(dp, dg, dm, dv, int64_t(n), 1e-3, 0.9, 0.999, 1e-8, 0.01, step));
    EXPECT_TRUE(same_bits(download<float>(bp.get(), n), p)) << "adamw param, step " << step;
    EXPECT_TRUE(same_bits(download<float>(bm.get(), n), m)) << "adamw exp_avg";
    EXPECT_TRUE(same_bits(download<float>(bv.get(), n), v)) << "adamw exp_avg_sq";
  }
  for (int nesterov : {0, 1})
    for (int first : {0, 1}) {
      std::vector<float> p = p0, buf = m0;
      HMRT_ASSERT_OK(hmrt_sgd_step(p.data(), g.data(), buf.data(), int64_t(n), 0.1, 0.9, 0.0,
                                   1e-4, nesterov, first));
      float *dp, *dg, *db;
      BufferPtr bp = upload(p0, &dp), bg = upload(g, &dg), bb = upload(m0, &db);
      HMRT_ASSERT_OK(k_->sgd_step(dp, dg, db, int64_t(n), 0.1, 0.9, 0.0, 1e-4, nesterov, first));
      EXPECT_TRUE(same_bits(download<float>(bp.get(), n), p)) << "sgd " << nesterov << first;
      EXPECT_TRUE(same_bits(download<float>(bb.get(), n), buf));
    }
  {
    std::vector<float> x = p0;
    HMRT_ASSERT_OK(hmrt_scale(x.data(), int64_t(n), 0.37f));
    float* dx;
    BufferPtr bx = upload(p0, &dx);
    HMRT_ASSERT_OK(k_->scale(dx, int64_t(n), 0.37f));
    EXPECT_TRUE(same_bits(download<float>(bx.get(), n), x));
  }
  // Fill at every element size.
  for (size_t es : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
    const uint64_t value = 0x0123456789abcdefull;
    std::vector<uint8_t> want(1001 * es);
    HMRT_ASSERT_OK(hmrt_fill(want.data(), 1001, &value, es));
    uint8_t* dy;
    BufferPtr by = upload(std::vector<uint8_t>(want.size(), 0), &dy);
    HMRT_ASSERT_OK(k_->fill(dy, 1001, &value, es));
    EXPECT_TRUE(download<uint8_t>(by.get(), want.size()) == want) << "elem_size " << es;
  }
  // Casts among float, float16 and bfloat16, with specials and subnormals.
  std::vector<float> xs = hmrt_test::random_vec(4096, 15, -70000.0f, 70000.0f);
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 65504.0f, 65520.0f,
                            5.96e-8f, 2.98e-8f, 1e-40f, 6.1e-5f, -3.0e-7f};
  xs.insert(xs.end(), std::begin(specials), std::end(specials));
  for (float s : hmrt_test::random_vec(2000, 16, -1e-4f, 1e-4f)) xs.push_back(s);
  const int32_t floats[] = {HMRT_DTYPE_F32, HMRT_DTYPE_F16, HMRT_DTYPE_BF16};
  for (int32_t from : floats)
    for (int32_t to : floats) {
      SCOPED_TRACE("cast " + std::to_string(from) + " -> " + std::to_string(to));
      const size_t fs = from == HMRT_DTYPE_F32 ? 4 : 2, ts = to == HMRT_DTYPE_F32 ? 4 : 2;
      std::vector<uint8_t> src(xs.size() * fs);
      HMRT_ASSERT_OK(hmrt_cast(HMRT_DTYPE_F32, xs.data(), from, src.data(), int64_t(xs.size())));
      std::vector<uint8_t> want(xs.size() * ts);
      HMRT_ASSERT_OK(hmrt_cast(from, src.data(), to, want.data(), int64_t(xs.size())));
      uint8_t *dx, *dy;
      BufferPtr bx = upload(src, &dx), by = upload(std::vector<uint8_t>(want.size(), 0), &dy);
      HMRT_ASSERT_OK(k_->cast(from, dx, to, dy, int64_t(xs.size())));
      EXPECT_TRUE(download<uint8_t>(by.get(), want.size()) == want);
    }
  // Gradient norm over buffers below, at and above one 4096-element chunk,
  // and of 4098 chunks (their partial sums added in three tiles of 2048).
  const std::vector<int64_t> sizes = {0, 5, 4096, 4097, int64_t(n), 4096 * 4096 + 4096 + 1};
  std::vector<std::vector<float>> host;
  std::vector<BufferPtr> held;
  std::vector<const float*> hp, dp;
  for (size_t i = 0; i < sizes.size(); ++i) {
    host.push_back(hmrt_test::random_vec(sizes[i], uint32_t(20 + i), -2.0f, 2.0f));
    float* d;
    held.push_back(upload(host.back(), &d));
    hp.push_back(host.back().data());
    dp.push_back(d);
  }
  float want = 0, got = 0;
  HMRT_ASSERT_OK(hmrt_global_norm(hp.data(), sizes.data(), int64_t(sizes.size()), &want));
  HMRT_ASSERT_OK(k_->global_norm(dp.data(), sizes.data(), int64_t(sizes.size()), &got));
  EXPECT_EQ(std::memcmp(&want, &got, sizeof want), 0) << want << " vs " << got;
  // The same norm in two steps on the device, as generated programs take
  // it: a running sum of squares over the buffers, then its norm; each
  // running sum the CPU's.
  double* dsums;
  BufferPtr bsums = upload(std::vector<double>(sizes.size(), 0.0), &dsums);
  std::vector<double> want_sums(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    HMRT_ASSERT_OK(hmrt_add_sum_of_squares(hp[i], sizes[i], i ? &want_sums[i - 1] : nullptr,
                                           &want_sums[i]));
    HMRT_ASSERT_OK(k_->add_sum_of_squares(dp[i], sizes[i], i ? dsums + i - 1 : nullptr,
                                          dsums + i));
  }
  EXPECT_TRUE(download<double>(bsums.get(), sizes.size()) == want_sums);
  float* dnorm;
  BufferPtr bnorm = upload(std::vector<float>(1, 0.0f), &dnorm);
  HMRT_ASSERT_OK(k_->norm_of_sum(dsums + sizes.size() - 1, dnorm));
  got = download<float>(bnorm.get(), 1)[0];
  EXPECT_EQ(std::memcmp(&want, &got, sizeof want), 0) << want << " vs " << got;
}

// MatMul (batch broadcasting, transposes, vectors) and Gemm (C broadcast):
// the CPU's code over cuBLAS, within the dot-product bound.
TEST_F(Cuda, MatMulAndGemmMatchCpu) {
  const int64_t K = 64;
  // Entries in [-2, 2]: |products| <= 4, so a sum of K of them is within
  // 2 (K + 2) eps 4 K of the exact one on either side.
  const double tol = 2.0 * double(K + 2) * FLT_EPSILON * 4.0 * double(K);
  struct Case {
    std::vector<int64_t> sa, sb, sy;
    int ta, tb;
  };
  const Case cases[] = {
      {{2, 3, 37, K}, {3, K, 29}, {2, 3, 37, 29}, 0, 0},
      {{2, 1, K, 37}, {3, 29, K}, {2, 3, 37, 29}, 1, 1},
      {{5, 37, K}, {K, 29}, {5, 37, 29}, 0, 0},  // one GEMM of 5 * 37 rows
      {{K}, {4, K, 29}, {4, 29}, 0, 0},          // a row vector
      {{37, K}, {K}, {37}, 0, 0},                // a column vector
  };
  // Operands as fp32 (multiplied as they are, or rounded to bf16 by the
  // kernel), and as bf16 rounded from them (hmrt_round_bf16, the GPU's the
  // same bits as the CPU's): only the order of the fp32 sums differs.
  auto bf16_of = [&](const std::vector<float>& x) {
    std::vector<uint16_t> cpu(x.size());
    EXPECT_EQ(hmrt_round_bf16(x.data(), cpu.data(), int64_t(x.size())), HMRT_OK);
    float* dx;
    uint16_t* d16;
    BufferPtr bx = upload(x, &dx);
    BufferPtr b16 = upload(std::vector<uint16_t>(x.size(), 0), &d16);
    EXPECT_EQ(k_->round_bf16(dx, d16, int64_t(x.size())), HMRT_OK);
    EXPECT_EQ(download<uint16_t>(b16.get(), x.size()), cpu);
    return cpu;
  };
  auto matmul = [&](const Case& c, const auto& a, const auto& b, auto cpu, auto gpu) {
    int64_t ny = 1;
    for (int64_t d : c.sy) ny *= d;
    std::vector<float> want(static_cast<size_t>(ny));
    HMRT_ASSERT_OK(cpu(a.data(), int32_t(c.sa.size()), c.sa.data(), c.ta, b.data(),
                       int32_t(c.sb.size()), c.sb.data(), c.tb, want.data(),
                       int32_t(c.sy.size()), c.sy.data()));
    typename std::decay_t<decltype(a)>::value_type* da;
    typename std::decay_t<decltype(b)>::value_type* db;
    float* dy;
    BufferPtr ba = upload(a, &da), bb = upload(b, &db);
    BufferPtr by = upload(std::vector<float>(size_t(ny), 0.0f), &dy);
    HMRT_ASSERT_OK(gpu(da, int32_t(c.sa.size()), c.sa.data(), c.ta, db, int32_t(c.sb.size()),
                       c.sb.data(), c.tb, dy, int32_t(c.sy.size()), c.sy.data()));
    const std::vector<float> got = download<float>(by.get(), size_t(ny));
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << i;
  };
  for (const Case& c : cases) {
    int64_t na = 1, nb = 1;
    for (int64_t d : c.sa) na *= d;
    for (int64_t d : c.sb) nb *= d;
    const std::vector<float> a = hmrt_test::random_vec(na, 51, -2.0f, 2.0f);
    const std::vector<float> b = hmrt_test::random_vec(nb, 52, -2.0f, 2.0f);
    {
      SCOPED_TRACE("fp32");
      matmul(c, a, b, hmrt_matmul_f32, k_->matmul_f32);
    }
    {
      SCOPED_TRACE("bf16 products of fp32 operands");
      matmul(c, a, b, hmrt_matmul_f32_bf16, k_->matmul_f32_bf16);
    }
    {
      SCOPED_TRACE("bf16 operands");
      matmul(c, bf16_of(a), bf16_of(b), hmrt_matmul_bf16, k_->matmul_bf16);
    }
    // One of each: the entry takes void pointers and which one is bf16.
    auto mixed = [](auto kernel, int32_t a_bf16) {
      return [=](const auto* a, int32_t ra, const int64_t* sa, int32_t ta, const auto* b,
                 int32_t rb, const int64_t* sb, int32_t tb, float* y, int32_t ry,
                 const int64_t* sy) { return kernel(a, a_bf16, ra, sa, ta, b, rb, sb, tb, y, ry, sy); };
    };
    {
      SCOPED_TRACE("a bf16, b fp32");
      matmul(c, bf16_of(a), b, mixed(hmrt_matmul_mixed_bf16, 1),
             mixed(k_->matmul_mixed_bf16, 1));
    }
    SCOPED_TRACE("a fp32, b bf16");
    matmul(c, a, bf16_of(b), mixed(hmrt_matmul_mixed_bf16, 0), mixed(k_->matmul_mixed_bf16, 0));
  }
  // Gemm: y = 0.75 op(A) op(B) + 0.5 C, C of shape [N] broadcast to [M, N].
  const int64_t M = 33, N = 45;
  auto gemm = [&](int t, const auto& a, const auto& b, const std::vector<float>& cv, auto cpu,
                  auto gpu) {
    const int64_t sc[1] = {N};
    std::vector<float> want(static_cast<size_t>(M * N));
    HMRT_ASSERT_OK(cpu(a.data(), b.data(), cv.data(), 1, sc, M, N, K, t, t, 0.75f, 0.5f,
                       want.data()));
    typename std::decay_t<decltype(a)>::value_type* da;
    typename std::decay_t<decltype(b)>::value_type* db;
    float *dc, *dy;
    BufferPtr ba = upload(a, &da), bb = upload(b, &db), bc = upload(cv, &dc);
    BufferPtr by = upload(std::vector<float>(size_t(M * N), 0.0f), &dy);
    HMRT_ASSERT_OK(gpu(da, db, dc, 1, sc, M, N, K, t, t, 0.75f, 0.5f, dy));
    const std::vector<float> got = download<float>(by.get(), size_t(M * N));
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << i;
  };
  for (int t : {0, 1}) {
    const std::vector<float> a = hmrt_test::random_vec(M * K, 61, -2.0f, 2.0f);
    const std::vector<float> b = hmrt_test::random_vec(K * N, 62, -2.0f, 2.0f);
    const std::vector<float> cv = hmrt_test::random_vec(N, 63, -2.0f, 2.0f);
    {
      SCOPED_TRACE("Gemm, fp32");
      gemm(t, a, b, cv, hmrt_gemm_f32, k_->gemm_f32);
    }
    {
      SCOPED_TRACE("Gemm, bf16 products of fp32 operands");
      gemm(t, a, b, cv, hmrt_gemm_f32_bf16, k_->gemm_f32_bf16);
    }
    {
      SCOPED_TRACE("Gemm, bf16 operands");
      gemm(t, bf16_of(a), bf16_of(b), cv, hmrt_gemm_bf16, k_->gemm_bf16);
    }
    auto mixed = [](auto kernel, int32_t a_bf16) {
      return [=](const auto* a, const auto* b, const float* c, int32_t rc, const int64_t* sc,
                 int64_t m, int64_t n, int64_t k, int32_t ta, int32_t tb, float alpha,
                 float beta, float* y) {
        return kernel(a, a_bf16, b, c, rc, sc, m, n, k, ta, tb, alpha, beta, y);
      };
    };
    {
      SCOPED_TRACE("Gemm, a bf16, b fp32");
      gemm(t, bf16_of(a), b, cv, mixed(hmrt_gemm_mixed_bf16, 1), mixed(k_->gemm_mixed_bf16, 1));
    }
    SCOPED_TRACE("Gemm, a fp32, b bf16");
    gemm(t, a, bf16_of(b), cv, mixed(hmrt_gemm_mixed_bf16, 0), mixed(k_->gemm_mixed_bf16, 0));
  }
}

// bf16 products of fp32 operands too large for the backend's scratch:
// rounded and multiplied a block at a time, the inner dimension in pieces
// past 8192.  Entries are small integers, so every product and sum is exact
// in any order and the GPU must give the CPU's bits.
TEST_F(Cuda, Bf16ProductsOfLargeOperandsInBlocks) {
  struct Case {
    int64_t m, k, n;
    int ta, tb;
  };
  const Case cases[] = {
      {2100, 8192, 2100, 0, 0},   // two blocks of rows and of columns
      {1000, 20000, 1000, 1, 1},  // the inner dimension in three pieces
      {1000, 20000, 1000, 0, 1},
  };
  auto integers = [](int64_t n, uint32_t seed) {
    std::vector<float> v = hmrt_test::random_vec(n, seed, -2.49f, 2.49f);
    for (float& x : v) x = std::nearbyint(x);
    return v;
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.m) + " x " + std::to_string(c.k) + " x " + std::to_string(c.n) +
                 ", transposes " + std::to_string(c.ta) + std::to_string(c.tb));
    const int64_t sa[2] = {c.ta ? c.k : c.m, c.ta ? c.m : c.k};
    const int64_t sb[2] = {c.tb ? c.n : c.k, c.tb ? c.k : c.n};
    const int64_t sy[2] = {c.m, c.n};
    const std::vector<float> a = integers(c.m * c.k, 71), b = integers(c.k * c.n, 72);
    std::vector<float> want(static_cast<size_t>(c.m * c.n));
    HMRT_ASSERT_OK(hmrt_matmul_f32_bf16(a.data(), 2, sa, c.ta, b.data(), 2, sb, c.tb,
                                        want.data(), 2, sy));
    float *da, *db, *dy;
    BufferPtr ba = upload(a, &da), bb = upload(b, &db);
    BufferPtr by = upload(std::vector<float>(want.size(), -1.0f), &dy);
    HMRT_ASSERT_OK(k_->matmul_f32_bf16(da, 2, sa, c.ta, db, 2, sb, c.tb, dy, 2, sy));
    EXPECT_TRUE(same_bits(download<float>(by.get(), want.size()), want));
    // One operand bf16 (small integers are exact in it), read in place
    // block by block while the other is rounded.
    std::vector<uint16_t> a16(a.size()), b16(b.size());
    HMRT_ASSERT_OK(hmrt_round_bf16(a.data(), a16.data(), int64_t(a.size())));
    HMRT_ASSERT_OK(hmrt_round_bf16(b.data(), b16.data(), int64_t(b.size())));
    uint16_t *da16, *db16;
    BufferPtr ba16 = upload(a16, &da16), bb16 = upload(b16, &db16);
    HMRT_ASSERT_OK(k_->matmul_mixed_bf16(da16, 1, 2, sa, c.ta, db, 2, sb, c.tb, dy, 2, sy));
    EXPECT_TRUE(same_bits(download<float>(by.get(), want.size()), want)) << "a bf16";
    HMRT_ASSERT_OK(k_->matmul_mixed_bf16(da, 0, 2, sa, c.ta, db16, 2, sb, c.tb, dy, 2, sy));
    EXPECT_TRUE(same_bits(download<float>(by.get(), want.size()), want)) << "b bf16";
  }
}

// The broadcasting tensor kernels and dropout: the CPU's bits (pow within
// a few ulps: CUDA's powf is not glibc's).
TEST_F(Cuda, TensorKernelsMatchCpu) {
  const int64_t sy[3] = {7, 33, 65}, sa[3] = {7, 1, 65}, sb[2] = {33, 1};
  const int64_t ny = 7 * 33 * 65, na = 7 * 65, nb = 33;
  const std::vector<float> a = hmrt_test::random_vec(na, 31, 0.5f, 2.0f);
  const std::vector<float> b = hmrt_test::random_vec(nb, 32, -2.0f, 2.0f);
  float *da, *db, *dy;
  BufferPtr ba = upload(a, &da), bb = upload(b, &db);
  BufferPtr by = upload(std::vector<float>(size_t(ny), 0.0f), &dy);
  for (int op = HMRT_BINARY_ADD; op <= HMRT_BINARY_MIN; ++op) {
    SCOPED_TRACE("binary op " + std::to_string(op));
    std::vector<float> want(static_cast<size_t>(ny));
    HMRT_ASSERT_OK(hmrt_binary_f32(hmrt_binary_op(op), a.data(), 3, sa, b.data(), 2, sb,
                                   want.data(), 3, sy));
    HMRT_ASSERT_OK(k_->binary_f32(hmrt_binary_op(op), da, 3, sa, db, 2, sb, dy, 3, sy));
    const std::vector<float> got = download<float>(by.get(), size_t(ny));
    if (op != HMRT_BINARY_POW) {
      EXPECT_TRUE(same_bits(got, want));
    } else {
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 4e-7 * std::fabs(want[i]) + 1e-30) << i;
    }
  }
  // Expand and where, at every element size the GPU has.
  for (size_t es : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
    SCOPED_TRACE("elem_size " + std::to_string(es));
    const std::vector<uint8_t> x = hmrt_test::byte_pattern(size_t(na) * es, 1);
    const std::vector<uint8_t> z = hmrt_test::byte_pattern(size_t(ny) * es, 2);
    std::vector<uint8_t> cond = hmrt_test::byte_pattern(size_t(nb), 3);
    for (auto& c : cond) c &= 1;
    std::vector<uint8_t> want(size_t(ny) * es), want_where(size_t(ny) * es);
    HMRT_ASSERT_OK(hmrt_expand(x.data(), 3, sa, want.data(), 3, sy, es));
    HMRT_ASSERT_OK(hmrt_where(cond.data(), 2, sb, x.data(), 3, sa, z.data(), 3, sy,
                              want_where.data(), 3, sy, es));
    uint8_t *dx, *dz, *dc, *dout;
    BufferPtr bx = upload(x, &dx), bz = upload(z, &dz), bc = upload(cond, &dc);
    BufferPtr bout = upload(std::vector<uint8_t>(want.size(), 0), &dout);
    HMRT_ASSERT_OK(k_->expand(dx, 3, sa, dout, 3, sy, es));
    EXPECT_TRUE(download<uint8_t>(bout.get(), want.size()) == want);
    HMRT_ASSERT_OK(k_->where(dc, 2, sb, dx, 3, sa, dz, 3, sy, dout, 3, sy, es));
    EXPECT_TRUE(download<uint8_t>(bout.get(), want.size()) == want_where);
  }
  // Slices and their gradients: strided (a negative step too); rows
  // contiguous on both sides (a split along the last dim: pitched rows;
  // whole rows: one run), which the backend copies with the CUDA runtime's
  // copies.
  struct SliceCase {
    const char* what;
    int32_t rank;
    int64_t shape[3], starts[3], steps[3], out[3];
  };
  const SliceCase slices[] = {
      {"strided", 3, {7, 33, 65}, {1, 32, 3}, {2, -3, 5}, {3, 11, 13}},
      {"pitched rows", 2, {6, 40}, {0, 8}, {1, 1}, {6, 16}},
      {"whole rows", 2, {6, 40}, {2, 0}, {1, 1}, {3, 40}}};
  for (const SliceCase& c : slices) {
    SCOPED_TRACE(c.what);
    int64_t nx = 1, ns = 1;
    for (int32_t d = 0; d < c.rank; ++d) {
      nx *= c.shape[d];
      ns *= c.out[d];
    }
    const std::vector<float> x = hmrt_test::random_vec(nx, 71, -2.0f, 2.0f);
    std::vector<float> want(static_cast<size_t>(ns)), want_dx(static_cast<size_t>(nx));
    HMRT_ASSERT_OK(hmrt_slice(x.data(), c.rank, c.shape, c.starts, c.steps, c.out, want.data(), 4));
    HMRT_ASSERT_OK(hmrt_slice_backward_f32(want.data(), c.rank, c.shape, c.starts, c.steps, c.out,
                                           want_dx.data()));
    float *dx, *ds, *ddx;
    BufferPtr bx = upload(x, &dx), bs = upload(std::vector<float>(size_t(ns), 0.0f), &ds);
    BufferPtr bdx = upload(std::vector<float>(size_t(nx), 9.0f), &ddx);
    HMRT_ASSERT_OK(k_->slice(dx, c.rank, c.shape, c.starts, c.steps, c.out, ds, 4));
    EXPECT_TRUE(same_bits(download<float>(bs.get(), size_t(ns)), want));
    HMRT_ASSERT_OK(k_->slice_backward_f32(ds, c.rank, c.shape, c.starts, c.steps, c.out, ddx));
    EXPECT_TRUE(same_bits(download<float>(bdx.get(), size_t(nx)), want_dx));
  }
  // Gather (an embedding: repeated and negative int64 indices; and int32
  // indices on a middle axis) and its gradient, summed in index order.
  {
    const int64_t shape[2] = {50, 16};
    std::vector<int64_t> idx(40);
    for (size_t j = 0; j < idx.size(); ++j) idx[j] = int64_t((j * 7) % 13) - 6;
    const std::vector<float> x = hmrt_test::random_vec(50 * 16, 81, -2.0f, 2.0f);
    const std::vector<float> dy = hmrt_test::random_vec(40 * 16, 82, -2.0f, 2.0f);
    std::vector<float> want(40 * 16), want_dx(50 * 16);
    HMRT_ASSERT_OK(hmrt_gather(x.data(), 2, shape, 0, HMRT_DTYPE_I64, idx.data(), 40,
                               want.data(), 4));
    HMRT_ASSERT_OK(hmrt_gather_backward_f32(dy.data(), 2, shape, 0, HMRT_DTYPE_I64, idx.data(),
                                            40, want_dx.data()));
    float *dx, *dg, *ddy, *ddx;
    int64_t* didx;
    BufferPtr bx = upload(x, &dx), bi = upload(idx, &didx), bdy = upload(dy, &ddy);
    BufferPtr bg = upload(std::vector<float>(want.size(), 0.0f), &dg);
    BufferPtr bdx = upload(std::vector<float>(want_dx.size(), 5.0f), &ddx);
    HMRT_ASSERT_OK(k_->gather(dx, 2, shape, 0, HMRT_DTYPE_I64, didx, 40, dg, 4));
    EXPECT_TRUE(same_bits(download<float>(bg.get(), want.size()), want));
    HMRT_ASSERT_OK(k_->gather_backward_f32(ddy, 2, shape, 0, HMRT_DTYPE_I64, didx, 40, ddx));
    EXPECT_TRUE(same_bits(download<float>(bdx.get(), want_dx.size()), want_dx));
    // int32 indices along axis 1 of [3, 10, 4], 2-byte elements.
    const int64_t shape3[3] = {3, 10, 4};
    const std::vector<int32_t> idx32 = {9, -1, 0, 3, 3};
    const std::vector<uint8_t> x3 = hmrt_test::byte_pattern(3 * 10 * 4 * 2, 4);
    std::vector<uint8_t> want3(3 * 5 * 4 * 2);
    HMRT_ASSERT_OK(hmrt_gather(x3.data(), 3, shape3, 1, HMRT_DTYPE_I32, idx32.data(), 5,
                               want3.data(), 2));
    uint8_t *dx3, *dy3;
    int32_t* di32;
    BufferPtr bx3 = upload(x3, &dx3), bi32 = upload(idx32, &di32);
    BufferPtr by3 = upload(std::vector<uint8_t>(want3.size(), 0), &dy3);
    HMRT_ASSERT_OK(k_->gather(dx3, 3, shape3, 1, HMRT_DTYPE_I32, di32, 5, dy3, 2));
    EXPECT_TRUE(download<uint8_t>(by3.get(), want3.size()) == want3);
    // An index out of range: the CPU's message.
    const std::vector<int64_t> bad = {3, 50};
    int64_t* dbad;
    BufferPtr bbad = upload(bad, &dbad);
    EXPECT_EQ(k_->gather(dx, 2, shape, 0, HMRT_DTYPE_I64, dbad, 2, dg, 4), HMRT_OUT_OF_RANGE);
    EXPECT_NE(last_error().find("index 50 at position 1 is out of range [-50, 50)"),
              std::string::npos)
        << last_error();
  }
  // LayerNormalization over the last two dims (cols 3 * 67: a tail after
  // the eight lanes), forward and gradients: the CPU's order, its bits; and
  // over 700 rows (several blocks of row groups, the last one partial, and
  // three chunks of rows for the weight and bias gradients).
  for (int64_t many : {0, 1})
  for (bool affine : {true, false}) {
    const int64_t rows = many ? 700 : 9, inner = many ? 1 : 3, cols = inner * (many ? 75 : 67);
    const int64_t shape[3] = {rows, inner, cols / inner};
    const std::vector<float> x = hmrt_test::random_vec(rows * cols, 91, -2.0f, 2.0f);
    const std::vector<float> dy = hmrt_test::random_vec(rows * cols, 92, -2.0f, 2.0f);
    const std::vector<float> w = hmrt_test::random_vec(cols, 93, 0.5f, 1.5f);
    const std::vector<float> bias = hmrt_test::random_vec(cols, 94, -1.0f, 1.0f);
    std::vector<float> y(static_cast<size_t>(rows * cols)), mean(static_cast<size_t>(rows)),
        rstd(static_cast<size_t>(rows));
    std::vector<float> dx(static_cast<size_t>(rows * cols)), dw(static_cast<size_t>(cols)),
        db(static_cast<size_t>(cols));
    HMRT_ASSERT_OK(hmrt_layer_norm_f32(x.data(), 3, shape, 1, affine ? w.data() : nullptr,
                                       affine ? bias.data() : nullptr, 1e-5f, y.data(),
                                       mean.data(), rstd.data()));
    HMRT_ASSERT_OK(hmrt_layer_norm_backward_f32(dy.data(), x.data(), 3, shape, 1,
                                                affine ? w.data() : nullptr, mean.data(),
                                                rstd.data(), dx.data(), dw.data(), db.data()));
    float *gx, *gdy, *gw, *gb, *gy, *gm, *gr, *gdx, *gdw, *gdb;
    BufferPtr bx = upload(x, &gx), bdy = upload(dy, &gdy), bw = upload(w, &gw),
              bb = upload(bias, &gb);
    BufferPtr by = upload(std::vector<float>(y.size(), 0.0f), &gy),
              bm = upload(std::vector<float>(mean.size(), 0.0f), &gm),
              br = upload(std::vector<float>(rstd.size(), 0.0f), &gr),
              bdx = upload(std::vector<float>(dx.size(), 0.0f), &gdx),
              bdw = upload(std::vector<float>(dw.size(), 3.0f), &gdw),
              bdb = upload(std::vector<float>(db.size(), 3.0f), &gdb);
    HMRT_ASSERT_OK(k_->layer_norm_f32(gx, 3, shape, 1, affine ? gw : nullptr,
                                      affine ? gb : nullptr, 1e-5f, gy, gm, gr));
    HMRT_ASSERT_OK(k_->layer_norm_backward_f32(gdy, gx, 3, shape, 1, affine ? gw : nullptr, gm,
                                               gr, gdx, gdw, gdb));
    EXPECT_TRUE(same_bits(download<float>(by.get(), y.size()), y)) << affine << " " << rows;
    EXPECT_TRUE(same_bits(download<float>(bm.get(), mean.size()), mean));
    EXPECT_TRUE(same_bits(download<float>(br.get(), rstd.size()), rstd));
    EXPECT_TRUE(same_bits(download<float>(bdx.get(), dx.size()), dx));
    EXPECT_TRUE(same_bits(download<float>(bdw.get(), dw.size()), dw));
    EXPECT_TRUE(same_bits(download<float>(bdb.get(), db.size()), db));
    // y written in bf16 (hmrt_layer_norm_f32_to_bf16): the CPU's bits.
    std::vector<uint16_t> y16(y.size());
    HMRT_ASSERT_OK(hmrt_layer_norm_f32_to_bf16(x.data(), 3, shape, 1,
                                               affine ? w.data() : nullptr,
                                               affine ? bias.data() : nullptr, 1e-5f, y16.data(),
                                               nullptr, nullptr));
    uint16_t* gy16;
    BufferPtr by16 = upload(std::vector<uint16_t>(y.size(), 0), &gy16);
    HMRT_ASSERT_OK(k_->layer_norm_f32_to_bf16(gx, 3, shape, 1, affine ? gw : nullptr,
                                              affine ? gb : nullptr, 1e-5f, gy16, nullptr,
                                              nullptr));
    EXPECT_TRUE(same_bits(download<uint16_t>(by16.get(), y.size()), y16));
  }
  // Concat along a middle axis, an empty input among them, 8-byte elements.
  {
    const int64_t out[3] = {4, 9, 5}, sizes[3] = {2, 0, 7};
    std::vector<std::vector<uint8_t>> parts;
    std::vector<BufferPtr> held;
    std::vector<const void*> host, dev;
    for (int i = 0; i < 3; ++i) {
      parts.push_back(hmrt_test::byte_pattern(size_t(4 * sizes[i] * 5 * 8), 10 + i));
      uint8_t* d;
      held.push_back(upload(parts.back(), &d));
      host.push_back(parts.back().data());
      dev.push_back(d);
    }
    std::vector<uint8_t> want(4 * 9 * 5 * 8);
    HMRT_ASSERT_OK(hmrt_concat(3, host.data(), sizes, 3, out, 1, want.data(), 8));
    uint8_t* dy;
    BufferPtr by = upload(std::vector<uint8_t>(want.size(), 0), &dy);
    HMRT_ASSERT_OK(k_->concat(3, dev.data(), sizes, 3, out, 1, dy, 8));
    EXPECT_TRUE(download<uint8_t>(by.get(), want.size()) == want);
  }
  // Dropout: the CPU's mask and values, forward and backward.
  for (float ratio : {0.0f, 0.1f, 0.5f, 1.0f}) {
    SCOPED_TRACE("ratio " + std::to_string(ratio));
    const int64_t n = 100001;
    const std::vector<float> x = hmrt_test::random_vec(n, 41, -2.0f, 2.0f);
    std::vector<float> want(static_cast<size_t>(n)), want_dx(static_cast<size_t>(n));
    std::vector<uint8_t> want_mask(static_cast<size_t>(n));
    HMRT_ASSERT_OK(hmrt_dropout_f32(x.data(), want.data(), want_mask.data(), n, ratio, 9, 77));
    HMRT_ASSERT_OK(hmrt_dropout_backward_f32(x.data(), want_mask.data(), want_dx.data(), n,
                                             ratio));
    float *dx, *dout, *ddx;
    uint8_t* dmask;
    BufferPtr bx = upload(x, &dx), bout = upload(std::vector<float>(size_t(n), 0.0f), &dout);
    BufferPtr bmask = upload(std::vector<uint8_t>(size_t(n), 7), &dmask);
    BufferPtr bdx = upload(std::vector<float>(size_t(n), 0.0f), &ddx);
    HMRT_ASSERT_OK(k_->dropout_f32(dx, dout, dmask, n, ratio, 9, 77));
    HMRT_ASSERT_OK(k_->dropout_backward_f32(dx, dmask, ddx, n, ratio));
    EXPECT_TRUE(same_bits(download<float>(bout.get(), size_t(n)), want));
    EXPECT_TRUE(download<uint8_t>(bmask.get(), size_t(n)) == want_mask);
    EXPECT_TRUE(same_bits(download<float>(bdx.get(), size_t(n)), want_dx));
  }
}

// Host memory the GPU cannot address is refused with a message, not a
// fault; so is a cast the GPU does not have.
TEST_F(Cuda, KernelsRefuseWhatTheyCannotRun) {
  std::vector<float> x(16, 1.0f);
  EXPECT_EQ(k_->scale(x.data(), 16, 2.0f), HMRT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("hmrt_scale (cuda): x is not memory the GPU can address"),
            std::string::npos)
      << last_error();
  float* d;
  BufferPtr b = upload(x, &d);
  EXPECT_EQ(k_->cast(HMRT_DTYPE_F32, d, HMRT_DTYPE_I32, d, 4), HMRT_UNIMPLEMENTED);
  EXPECT_NE(last_error().find("float, float16 and bfloat16 only"), std::string::npos)
      << last_error();
  EXPECT_EQ(k_->sgemm(0, 0, 4, 4, 4, 1.0f, d, 2, d, 4, 0.0f, d, 4), HMRT_INVALID_ARGUMENT);
}

}  // namespace
