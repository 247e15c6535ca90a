// hmrt_sgemm and hmrt_sgemm_strided_batched against the double reference.
//
// Tolerance: a float dot product of length k computed in any order has error
// at most gamma_k * sum_p |a_ip||b_pj| (Higham 3.1), gamma_k ~ k*u.  alpha
// is folded into A (one rounding), and beta*C adds one rounding and one
// addition, so each element may be off by at most
//   (k + 4) * u * (|alpha| * sum_p |a_ip||b_pj| + |beta * c_ij|).
// The bound is computed per element with the reference on |A|, |B|, |C|.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <tuple>

#include "cpu/gemm_internal.h"
#include "cpu/gemm_select.h"
#include "reference/reference.h"
#include "test_util.h"

namespace {

using hmrt::GemmEngine;
using hmrt_test::kU;

// Forces one GEMM engine for a test; afterwards engines are chosen by
// measurement again, in memory only (tests write no table file).
struct EngineScope {
  explicit EngineScope(const char* engine) { hmrt::gemm_select_reset_for_test("", engine); }
  ~EngineScope() { hmrt::gemm_select_reset_for_test("", "auto"); }
};

struct Case {
  int ta, tb;
  int64_t m, n, k;
  float alpha, beta;
  int64_t pad;  // extra columns in every leading dimension
};

std::vector<double> abs_of(const std::vector<float>& v) {
  std::vector<double> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = std::fabs(v[i]);
  return r;
}

void check_case(const Case& c, int threads, bool serial = false) {
  SCOPED_TRACE(testing::Message()
               << (serial ? "serial " : "") << "ta=" << c.ta << " tb=" << c.tb << " m=" << c.m
               << " n=" << c.n << " k=" << c.k << " alpha=" << c.alpha
               << " beta=" << c.beta << " pad=" << c.pad
               << " threads=" << threads);
  hmrt_test::ThreadScope scope(threads);
  const int64_t a_rows = c.ta ? c.k : c.m, a_cols = c.ta ? c.m : c.k;
  const int64_t b_rows = c.tb ? c.n : c.k, b_cols = c.tb ? c.k : c.n;
  const int64_t lda = a_cols + c.pad, ldb = b_cols + c.pad, ldc = c.n + c.pad;
  auto a = hmrt_test::random_vec(a_rows * lda, 1);
  auto b = hmrt_test::random_vec(b_rows * ldb, 2);
  auto cv = hmrt_test::random_vec(c.m * ldc, 3);
  if (c.beta == 0.0f)  // beta == 0 must not read C: poison it.
    for (float& x : cv) x = NAN;

  auto want = hmrt_test::to_double(cv);
  hmrt::ref::gemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha,
                  hmrt_test::to_double(a).data(), lda,
                  hmrt_test::to_double(b).data(), ldb, c.beta, want.data(),
                  ldc);
  // Error bound per element from |A| |B| and |C|.
  auto bound = c.beta == 0.0f ? std::vector<double>(cv.size(), 0.0) : abs_of(cv);
  hmrt::ref::gemm(c.ta, c.tb, c.m, c.n, c.k, std::fabs(c.alpha),
                  abs_of(a).data(), lda, abs_of(b).data(), ldb,
                  std::fabs(c.beta), bound.data(), ldc);
  for (double& x : bound) x *= (c.k + 4) * kU;

  auto got = cv;
  if (serial) {  // the one-thread form kernels call inside their own tasks
    std::vector<float> ws(hmrt::gemm_workspace_floats(c.m, c.n, c.k) + 16);
    float* wsa = reinterpret_cast<float*>(
        (reinterpret_cast<uintptr_t>(ws.data()) + 63) & ~uintptr_t(63));
    hmrt::sgemm_serial(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb,
                       c.beta, got.data(), ldc, wsa);
  } else {
    HMRT_ASSERT_OK(hmrt_sgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), lda,
                              b.data(), ldb, c.beta, got.data(), ldc));
  }
  // Padding columns of C are untouched (NaN stays NaN, compare bitwise).
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = c.n; j < ldc; ++j)
      ASSERT_EQ(std::memcmp(&got[i * ldc + j], &cv[i * ldc + j], 4), 0);
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = c.n; j < ldc; ++j) {
      want[i * ldc + j] = 0;
      got[i * ldc + j] = 0;
      bound[i * ldc + j] = 0;
    }
  EXPECT_TRUE(hmrt_test::all_close(got, want, bound));
}

// Every engine the runtime was built with, each forced in turn.
class GemmShapes : public testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(GemmShapes, MatchesReference) {
  const int ta = std::get<0>(GetParam()), tb = std::get<1>(GetParam());
  const GemmEngine engine = GemmEngine(std::get<2>(GetParam()));
  if (!hmrt::gemm_engine_built(engine))
    GTEST_SKIP() << "this runtime was built without " << hmrt::gemm_engine_name(engine)
                 << " (its library was not found at configure time)";
  EngineScope scope(hmrt::gemm_engine_name(engine));
  // Odd sizes around the micro-tile (6 x 8) and block (96 x 256 x 2048)
  // edges, vectors, and a K longer than one block.
  const Case cases[] = {
      {ta, tb, 1, 1, 1, 1.0f, 0.0f, 0},     {ta, tb, 1, 17, 5, 1.0f, 0.0f, 0},
      {ta, tb, 13, 1, 7, 1.0f, 0.0f, 3},    {ta, tb, 6, 8, 3, 1.0f, 0.0f, 0},
      {ta, tb, 7, 9, 11, 0.5f, 1.0f, 1},    {ta, tb, 31, 33, 65, -1.5f, 0.25f, 2},
      {ta, tb, 97, 65, 257, 1.0f, 1.0f, 0}, {ta, tb, 100, 130, 600, 2.0f, 0.0f, 5},
      {ta, tb, 193, 37, 300, 1.0f, -1.0f, 0}, {ta, tb, 5, 2100, 9, 1.0f, 0.0f, 0},
  };
  for (const Case& c : cases) {
    for (int t : hmrt_test::thread_counts()) check_case(c, t);
    check_case(c, 1, true);
  }
}

INSTANTIATE_TEST_SUITE_P(AllTransposesAndEngines, GemmShapes,
                         testing::Combine(testing::Values(0, 1), testing::Values(0, 1),
                                          testing::Range(0, hmrt::kGemmEngines)),
                         [](const testing::TestParamInfo<std::tuple<int, int, int>>& p) {
                           return std::string(std::get<0>(p.param) ? "T" : "N") +
                                  (std::get<1>(p.param) ? "T" : "N") + "_" +
                                  hmrt::gemm_engine_name(GemmEngine(std::get<2>(p.param)));
                         });

TEST(Gemm, DegenerateShapes) {
  // k == 0 or alpha == 0: C = beta * C; beta == 0 writes zeros over NaN.
  std::vector<float> c = {1, 2, NAN, 4};
  float dummy = 0;
  HMRT_ASSERT_OK(hmrt_sgemm(0, 0, 2, 2, 0, 1.0f, &dummy, 1, &dummy, 2, 0.5f,
                            c.data(), 2));
  EXPECT_FLOAT_EQ(c[0], 0.5f);
  EXPECT_FLOAT_EQ(c[3], 2.0f);
  HMRT_ASSERT_OK(hmrt_sgemm(0, 0, 2, 2, 0, 1.0f, &dummy, 1, &dummy, 2, 0.0f,
                            c.data(), 2));
  for (float x : c) EXPECT_EQ(x, 0.0f);
  // m == 0 or n == 0: nothing happens, NULL pointers allowed.
  HMRT_ASSERT_OK(hmrt_sgemm(0, 0, 0, 5, 3, 1.0f, nullptr, 3, nullptr, 5,
                            0.0f, nullptr, 5));
}

TEST(Gemm, RejectsBadArguments) {
  float x[16] = {};
  EXPECT_EQ(hmrt_sgemm(0, 0, -1, 2, 2, 1, x, 2, x, 2, 0, x, 2),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_sgemm(0, 0, 2, 2, 3, 1, x, 2, x, 2, 0, x, 2),
            HMRT_INVALID_ARGUMENT);  // lda < k
  EXPECT_NE(std::string(hmrt_last_error()).find("lda"), std::string::npos);
  EXPECT_EQ(hmrt_sgemm(0, 1, 2, 2, 3, 1, x, 3, x, 2, 0, x, 2),
            HMRT_INVALID_ARGUMENT);  // transposed B: ldb < k
  EXPECT_EQ(hmrt_sgemm(0, 0, 2, 3, 2, 1, x, 2, x, 3, 0, x, 2),
            HMRT_INVALID_ARGUMENT);  // ldc < n
  EXPECT_EQ(hmrt_sgemm(0, 0, 2, 2, 2, 1, nullptr, 2, x, 2, 0, x, 2),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_sgemm_strided_batched(0, 0, 2, 2, 2, 1, x, 2, 4, x, 2, 4, 0,
                                       x, 2, 3, 2),
            HMRT_INVALID_ARGUMENT);  // C matrices overlap
}

TEST(Gemm, StridedBatchedMatchesLoop) {
  // Both execution strategies: many small GEMMs (one thread each) and a few
  // large ones (threads inside each GEMM); stride_b == 0 broadcasts B.
  struct BCase {
    int ta, tb;
    int64_t m, n, k, batch;
    bool broadcast_b;
  };
  const BCase cases[] = {{0, 1, 17, 19, 23, 7, false},
                         {1, 0, 64, 48, 40, 5, true},
                         {0, 0, 150, 140, 130, 2, false},
                         {1, 1, 9, 10, 11, 1, false}};
  for (const BCase& bc : cases) {
    for (int threads : hmrt_test::thread_counts()) {
      SCOPED_TRACE(testing::Message() << "m=" << bc.m << " batch=" << bc.batch
                                      << " threads=" << threads);
      hmrt_test::ThreadScope scope(threads);
      const int64_t sa = bc.m * bc.k, sb = bc.broadcast_b ? 0 : bc.k * bc.n;
      const int64_t sc = bc.m * bc.n + 3;  // gaps between C matrices
      const int64_t lda = bc.ta ? bc.m : bc.k, ldb = bc.tb ? bc.k : bc.n;
      auto a = hmrt_test::random_vec(sa * bc.batch, 4);
      auto b = hmrt_test::random_vec(bc.k * bc.n * bc.batch, 5);
      auto c = hmrt_test::random_vec(sc * bc.batch, 6);
      auto want = hmrt_test::to_double(c);
      auto ad = hmrt_test::to_double(a), bd = hmrt_test::to_double(b);
      for (int64_t i = 0; i < bc.batch; ++i)
        hmrt::ref::gemm(bc.ta, bc.tb, bc.m, bc.n, bc.k, 0.75, ad.data() + i * sa,
                        lda, bd.data() + i * sb, ldb, 0.5,
                        want.data() + i * sc, bc.n);
      auto got = c;
      HMRT_ASSERT_OK(hmrt_sgemm_strided_batched(
          bc.ta, bc.tb, bc.m, bc.n, bc.k, 0.75f, a.data(), lda, sa, b.data(),
          ldb, sb, 0.5f, got.data(), bc.n, sc, bc.batch));
      // Inputs lie in [-1, 1]: |terms| sum to at most 0.75*k + 0.5.
      EXPECT_TRUE(hmrt_test::all_close(
          got, want, (bc.k + 4) * kU * (0.75 * bc.k + 0.5), 0.0));
    }
  }
}

TEST(Gemm, SameResultForAnyThreadCount) {
  // The runtime's own GEMM computes every element on one thread with a fixed
  // K order (the libraries are reproducible only for a fixed thread count).
  EngineScope engine("own");
  auto a = hmrt_test::random_vec(300 * 200, 7);
  auto b = hmrt_test::random_vec(200 * 250, 8);
  std::vector<float> first;
  for (int threads : {1, 2, 3, 4}) {
    hmrt_test::ThreadScope scope(threads);
    std::vector<float> c(300 * 250);
    HMRT_ASSERT_OK(hmrt_sgemm(0, 0, 300, 250, 200, 1.0f, a.data(), 200,
                              b.data(), 250, 0.0f, c.data(), 250));
    if (first.empty())
      first = c;
    else
      EXPECT_TRUE(hmrt_test::bitwise_equal(first, c)) << threads << " threads";
  }
}

// Engine selection with made-up timings: the fastest engine wins, per shape
// class; the table file keeps the choice for a later process.
double g_fake[hmrt::kGemmEngines];
int g_timed = 0;
void fake_timer(const hmrt::GemmCall&, double seconds[hmrt::kGemmEngines]) {
  ++g_timed;
  for (int i = 0; i < hmrt::kGemmEngines; ++i)
    seconds[i] = hmrt::gemm_engine_built(GemmEngine(i)) ? g_fake[i] : INFINITY;
}

std::string temp_table() {
  char dir[] = "/tmp/hmrt_gemm_table_XXXXXX";
  EXPECT_NE(mkdtemp(dir), nullptr);
  return std::string(dir) + "/gemm.tsv";
}

int last_built() {
  int e = 0;
  for (int i = 0; i < hmrt::kGemmEngines; ++i)
    if (hmrt::gemm_engine_built(GemmEngine(i))) e = i;
  return e;
}

TEST(GemmSelect, FastestEngineWinsPerClassAndPersists) {
  const std::string table = temp_table();
  hmrt::gemm_select_reset_for_test(table, "auto");
  const int fast = last_built();
  for (int i = 0; i < hmrt::kGemmEngines; ++i) g_fake[i] = 1.0 + i;
  g_fake[fast] = 0.5;
  g_timed = 0;
  const hmrt::GemmCall call{false, false, true, 2048, 768, 256, 1, 2};
  EXPECT_EQ(int(hmrt::gemm_select(call, fake_timer)), fast);
  const int timed = g_timed;
  EXPECT_GE(timed, 1);
  // The same class (each size rounded up to a power of two) is not timed again.
  hmrt::GemmCall same = call;
  same.m = 1500;
  same.n = 1000;
  EXPECT_EQ(int(hmrt::gemm_select(same, fake_timer)), fast);
  EXPECT_EQ(g_timed, timed);
  // Another class is: here the runtime's own engine is fastest.
  g_fake[int(GemmEngine::own)] = 0.1;
  hmrt::GemmCall serial = call;
  serial.serial = true;
  serial.threads = 1;
  EXPECT_EQ(hmrt::gemm_select(serial, fake_timer), GemmEngine::own);
  EXPECT_GT(g_timed, timed);

  // A new process (a reset) reads both choices from the file, timing nothing.
  hmrt::gemm_select_reset_for_test(table, "auto");
  g_timed = 0;
  EXPECT_EQ(int(hmrt::gemm_select(same, fake_timer)), fast);
  EXPECT_EQ(hmrt::gemm_select(serial, fake_timer), GemmEngine::own);
  EXPECT_EQ(g_timed, 0);
  std::ifstream in(table);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("# hmrt: the GEMM engine per shape class"), std::string::npos);
  EXPECT_NE(text.find("threaded 0 1 11 10 8 0 2 "), std::string::npos) << text;

  // Lines that do not parse are ignored: the class is measured again.
  {
    std::ofstream out(table);
    out << "# hmrt: the GEMM engine per shape class\n"
        << "threaded 0 1 11 10 8 0 2 fastest\nnot a line\nserial 2 0 1 1 1 0 1 own\n";
  }
  hmrt::gemm_select_reset_for_test(table, "auto");
  g_fake[int(GemmEngine::own)] = 1.0;
  g_timed = 0;
  EXPECT_EQ(int(hmrt::gemm_select(call, fake_timer)), fast);
  EXPECT_GE(g_timed, 1);

  // A file that is no table is neither read nor written.
  {
    std::ofstream out(table);
    out << "threaded 0 1 11 10 8 0 2 own\n";  // no header: somebody else's file
  }
  hmrt::gemm_select_reset_for_test(table, "auto");
  g_timed = 0;
  EXPECT_EQ(int(hmrt::gemm_select(call, fake_timer)), fast);
  EXPECT_GE(g_timed, 1);
  {
    std::ifstream in2(table);
    const std::string kept((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
    EXPECT_EQ(kept, "threaded 0 1 11 10 8 0 2 own\n");
  }

  // A forced engine is never timed.
  hmrt::gemm_select_reset_for_test(table, "own");
  g_timed = 0;
  EXPECT_EQ(hmrt::gemm_select(call, fake_timer), GemmEngine::own);
  EXPECT_EQ(g_timed, 0);
  EXPECT_STREQ(hmrt_gemm_backend(), "own");
  hmrt::gemm_select_reset_for_test("", "auto");
  EXPECT_STREQ(hmrt_gemm_backend(), "auto");
  std::remove(table.c_str());
  ::rmdir(table.substr(0, table.rfind('/')).c_str());
}

}  // namespace
