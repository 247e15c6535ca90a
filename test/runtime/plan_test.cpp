// What the CUDA backend's threads compute, run here on the host against the
// CPU kernels: the element offsets of a flat index in an iteration plan
// (core/plan.h's Plan::offsets) follow the broadcast rule on merged plans of
// every broadcasting pattern, and the per-element sums of ReduceTo
// (core/reduce_math.h) and the LayerNorm row (core/norm_math.h) give the CPU
// kernels' bits; so do the elementwise ops of core/ew_math.h and the
// fused-program element of cuda/nn_kernels.h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <random>
#include <vector>

#include "core/ew_math.h"
#include "core/plan.h"
#include "core/norm_math.h"
#include "core/reduce_math.h"
#include "cpu/fused_program.h"
#include "cuda/nn_kernels.h"
#include "driver/measure_gelu_kernel.h"
#include "hmrt/kernels.h"
#include "hmrt/tensor_ops.h"
#include "fused_inputs.h"
#include "test_util.h"

namespace {

// The offset of y's flat index i in an operand of shape (r, s) broadcast to
// y's shape (ry, sy): the naive rule.
int64_t broadcast_offset(int64_t i, int32_t r, const int64_t* s, int32_t ry,
                         const int64_t* sy) {
  int64_t off = 0, stride = 1;
  for (int d = ry - 1; d >= 0; --d) {
    const int64_t idx = i % sy[d];
    i /= sy[d];
    const int64_t e = hmrt::aligned_dim(r, s, ry, d);
    if (e != 1) off += idx * stride;
    stride *= e;
  }
  return off;
}

TEST(Plan, OffsetsFollowTheBroadcastRule) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    const int32_t ry = 1 + int32_t(rng() % 5);
    std::vector<int64_t> sy(static_cast<size_t>(ry)), sa, sb;
    for (auto& d : sy) d = 1 + int64_t(rng() % 4);
    // Each input: a suffix of y's shape with some dims set to 1.
    auto input = [&](std::vector<int64_t>& s) {
      const int32_t r = int32_t(rng() % (ry + 1));
      s.assign(sy.end() - r, sy.end());
      for (auto& d : s)
        if (rng() % 3 == 0) d = 1;
    };
    input(sa);
    input(sb);
    const int32_t ranks[2] = {int32_t(sa.size()), int32_t(sb.size())};
    const int64_t* shapes[2] = {sa.data(), sb.data()};
    hmrt::Plan p;
    ASSERT_TRUE(hmrt::broadcast_plan(p, 2, ranks, shapes, ry, sy.data()));
    for (int64_t i = 0; i < p.total; ++i) {
      int64_t off[hmrt::kMaxOps], wide[hmrt::kMaxOps];
      p.offsets(i, off);  // 32-bit divisions here: few elements
      p.offsets_wide(i, wide);
      for (int k = 0; k < p.nops; ++k) ASSERT_EQ(off[k], wide[k]) << "trial " << trial;
      ASSERT_EQ(off[0], i) << "trial " << trial;
      ASSERT_EQ(off[1], broadcast_offset(i, ranks[0], sa.data(), ry, sy.data()))
          << "trial " << trial << " i " << i;
      ASSERT_EQ(off[2], broadcast_offset(i, ranks[1], sb.data(), ry, sy.data()))
          << "trial " << trial << " i " << i;
    }
  }
}

// core/reduce_math.h's per-element sums (what a GPU thread computes for
// hmrt_reduce_to_f32) give the CPU kernel's bits, with y's inner dim kept
// or summed, over several summing blocks of 65536 elements too.
TEST(Plan, ReduceToElementsMatchTheCpuKernel) {
  struct Case {
    std::vector<int64_t> sx, sy;
  };
  const Case cases[] = {
      {{5, 7, 33}, {33}},          {{5, 7, 33}, {7, 1}},       {{5, 7, 33}, {1, 7, 33}},
      {{6, 9, 10}, {6, 1, 10}},    {{3, 70001}, {3, 1}},       {{2, 300, 400}, {1}},
      {{4, 1, 5}, {4, 1, 5}},      {{2, 3, 4, 5}, {3, 1, 5}},  {{9}, {1}},
      // Several chunks of reduced rows, runs cut at their ends.
      {{40, 29, 33}, {33}},        {{3, 700, 9}, {3, 1, 9}},
  };
  for (const Case& c : cases) {
    int64_t nx = 1, ny = 1;
    for (int64_t d : c.sx) nx *= d;
    for (int64_t d : c.sy) ny *= d;
    const std::vector<float> x = hmrt_test::random_vec(nx, 7, -2.0f, 2.0f);
    std::vector<float> want(static_cast<size_t>(ny)), got(static_cast<size_t>(ny), -1.0f);
    ASSERT_EQ(hmrt_reduce_to_f32(x.data(), int32_t(c.sx.size()), c.sx.data(), want.data(),
                                 int32_t(c.sy.size()), c.sy.data()),
              HMRT_OK);
    const hmrt::ReducePlan plan(int32_t(c.sx.size()), c.sx.data(), int32_t(c.sy.size()),
                                c.sy.data());
    ASSERT_GT(plan.p.rank, 0);
    const bool rows = plan.p.st[1][plan.p.rank - 1] != 0;
    for (int64_t e = 0; e < ny; ++e) {
      if (rows)
        hmrt::reduce_to_row_element(plan, x.data(), e, got.data());
      else
        hmrt::reduce_to_run_element(plan, x.data(), e, got.data());
    }
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
        << "x rank " << c.sx.size() << " -> y rank " << c.sy.size() << (rows ? " (rows)" : " (runs)");
    // As the GPU sums them: every chunk's (or block's) sum first
    // (partials[k * ny + e]), then each element's in order.
    const int64_t parts = rows ? hmrt::reduce_to_row_chunks(plan) : hmrt::reduce_to_run_blocks(plan);
    std::vector<double> partials(static_cast<size_t>(parts * ny));
    for (int64_t t = 0; t < parts * ny; ++t) {
      int64_t xo, yo;
      if (rows) {
        hmrt::reduce_to_row_offsets(plan, t % ny, &xo, &yo);
        partials[size_t(t)] = hmrt::reduce_to_row_chunk(plan, x.data() + xo, t / ny);
      } else {
        hmrt::unravel_xy(plan.p, plan.kept, plan.nk, t % ny, &xo, &yo);
        partials[size_t(t)] = hmrt::reduce_to_run_block(plan, x.data() + xo, t / ny);
      }
    }
    std::fill(got.begin(), got.end(), -1.0f);
    for (int64_t e = 0; e < ny; ++e) {
      if (rows)
        hmrt::reduce_to_row_element(plan, x.data(), e, got.data(), partials.data(), ny);
      else
        hmrt::reduce_to_run_element(plan, x.data(), e, got.data(), partials.data(), ny);
    }
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
        << "from partials: x rank " << c.sx.size() << " -> y rank " << c.sy.size();
  }
}

// Summing down to rows goes chunk by chunk (kReduceRowChunk reduced rows
// each, from zero, then the chunks in order), on data where that order
// shows: 2^53 swallows the quarters of its own chunk only, and -2^53 at the
// end cancels it, leaving the other chunks' quarters.
TEST(Plan, ReduceToRowsSumsInChunks) {
  const int64_t rows = 4 * hmrt::kReduceRowChunk, sx[2] = {rows, 2}, sy[1] = {2};
  std::vector<float> x(static_cast<size_t>(rows * 2), 0.0f);
  for (int64_t r = 0; r < rows; ++r) x[size_t(2 * r)] = 0.25f;
  x[0] = 9007199254740992.0f;  // 2^53
  x[size_t(2 * (rows - 1))] = -9007199254740992.0f;
  auto sum = [&](int64_t lo, int64_t hi) {  // four at a time, pairwise, in double
    double acc = 0.0;
    for (int64_t r = lo; r < hi; r += 4)
      acc += (double(x[size_t(2 * r)]) + double(x[size_t(2 * r + 2)])) +
             (double(x[size_t(2 * r + 4)]) + double(x[size_t(2 * r + 6)]));
    return acc;
  };
  double chunked = 0.0;
  for (int64_t k = 0; k < rows; k += hmrt::kReduceRowChunk)
    chunked += sum(k, k + hmrt::kReduceRowChunk);
  ASSERT_NE(static_cast<float>(chunked), static_cast<float>(sum(0, rows)));  // the order shows
  std::vector<float> y(2, -1.0f), element(2, -1.0f);
  ASSERT_EQ(hmrt_reduce_to_f32(x.data(), 2, sx, y.data(), 1, sy), HMRT_OK);
  EXPECT_EQ(y[0], static_cast<float>(chunked));
  EXPECT_EQ(y[1], 0.0f);
  const hmrt::ReducePlan plan(2, sx, 1, sy);
  hmrt::reduce_to_row_element(plan, x.data(), 0, element.data());
  EXPECT_EQ(element[0], y[0]);
}

// With fewer (row, block of columns) tasks than threads (a bias gradient)
// the CPU kernel sums each task's chunks in parallel too: every element
// still has reduce_to_row_element's bits, at 1 and 4 threads, over more
// chunks than it sums at once (at most 64, cpu/ordered_sums.h), and the
// chunks go into the total in order: sums 2^53, 1, 1, ..., -2^53 (chunk 64,
// past the first batch) total 0 in that order.
TEST(Plan, ReduceToRowsChunksInParallelKeepTheirOrder) {
  struct Case {
    std::vector<int64_t> sx, sy;
  };
  const Case cases[] = {{{16700, 3}, {3}}, {{700, 300}, {300}}, {{5, 300, 7}, {1, 1, 7}}};
  for (const Case& c : cases) {
    int64_t nx = 1, ny = 1;
    for (int64_t d : c.sx) nx *= d;
    for (int64_t d : c.sy) ny *= d;
    const std::vector<float> x = hmrt_test::random_vec(nx, 31, -2.0f, 2.0f);
    const hmrt::ReducePlan plan(int32_t(c.sx.size()), c.sx.data(), int32_t(c.sy.size()),
                                c.sy.data());
    std::vector<float> want(static_cast<size_t>(ny));
    for (int64_t e = 0; e < ny; ++e) hmrt::reduce_to_row_element(plan, x.data(), e, want.data());
    for (int threads : {1, 4}) {
      hmrt_test::ThreadScope scope(threads);
      std::vector<float> y(static_cast<size_t>(ny), -1.0f);
      ASSERT_EQ(hmrt_reduce_to_f32(x.data(), int32_t(c.sx.size()), c.sx.data(), y.data(),
                                   int32_t(c.sy.size()), c.sy.data()),
                HMRT_OK);
      EXPECT_EQ(std::memcmp(y.data(), want.data(), want.size() * sizeof(float)), 0)
          << c.sx[0] << " threads " << threads;
    }
  }
  hmrt_test::ThreadScope scope(4);
  const int64_t rows = 65 * hmrt::kReduceRowChunk, sx[2] = {rows, 2}, sy[1] = {2};
  std::vector<float> x(static_cast<size_t>(2 * rows), 0.0f);  // column 1 all zeros
  x[0] = 9007199254740992.0f;                                        // 2^53
  x[size_t(2 * hmrt::kReduceRowChunk)] = 1.0f;                       // chunk 1
  x[size_t(4 * hmrt::kReduceRowChunk)] = 1.0f;                       // chunk 2
  x[size_t(128 * hmrt::kReduceRowChunk)] = -9007199254740992.0f;     // chunk 64
  std::vector<float> y(2, -1.0f);
  ASSERT_EQ(hmrt_reduce_to_f32(x.data(), 2, sx, y.data(), 1, sy), HMRT_OK);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 0.0f);
}

// core/norm_math.h's LayerNorm row (what a GPU thread computes; its sums
// mirror cpu/vec.h's reduce_sum lane for lane) gives the CPU kernel's bits,
// with and without a tail after the eight lanes.
TEST(Plan, LayerNormRowMatchesTheCpuKernel) {
  for (int64_t cols : {1, 7, 8, 64, 201, 1027}) {
    const int64_t rows = 5;
    const std::vector<float> x = hmrt_test::random_vec(rows * cols, 11, -3.0f, 3.0f);
    const std::vector<float> w = hmrt_test::random_vec(cols, 12, 0.5f, 1.5f);
    const std::vector<float> b = hmrt_test::random_vec(cols, 13, -1.0f, 1.0f);
    std::vector<float> y(static_cast<size_t>(rows * cols)), mean(5), rstd(5);
    ASSERT_EQ(hmrt_layernorm_forward(x.data(), w.data(), b.data(), y.data(), mean.data(),
                                     rstd.data(), rows, cols, 1e-5f),
              HMRT_OK);
    std::vector<float> gy(y.size()), gmean(5), grstd(5);
    for (int64_t r = 0; r < rows; ++r)
      hmrt::layernorm_forward_row(x.data() + r * cols, w.data(), b.data(), 1e-5f,
                                  gy.data() + r * cols, &gmean[size_t(r)], &grstd[size_t(r)],
                                  cols);
    EXPECT_EQ(std::memcmp(gy.data(), y.data(), y.size() * sizeof(float)), 0) << cols;
    EXPECT_EQ(std::memcmp(gmean.data(), mean.data(), 5 * sizeof(float)), 0) << cols;
    EXPECT_EQ(std::memcmp(grstd.data(), rstd.data(), 5 * sizeof(float)), 0) << cols;
  }
}

// LayerNorm's bias gradient goes chunk by chunk too (kNormRowChunk rows
// from zero, then the chunks in order), on data where the order shows (as
// ReduceToRowsSumsInChunks).
TEST(Plan, LayerNormParamGradientsSumInChunks) {
  const int64_t rows = 4 * hmrt::kNormRowChunk, cols = 1;
  std::vector<float> dy(static_cast<size_t>(rows), 0.25f), x(static_cast<size_t>(rows), 0.0f);
  dy[0] = 9007199254740992.0f;  // 2^53
  dy[size_t(rows - 1)] = -9007199254740992.0f;
  std::vector<float> mean(static_cast<size_t>(rows), 0.0f), rstd(static_cast<size_t>(rows), 1.0f);
  std::vector<float> dx(dy.size()), dw(1), db(1);
  ASSERT_EQ(hmrt_layernorm_backward(dy.data(), x.data(), nullptr, mean.data(), rstd.data(),
                                    dx.data(), dw.data(), db.data(), rows, cols),
            HMRT_OK);
  double chunked = 0.0, whole = 0.0;
  for (int64_t k = 0; k < rows; k += hmrt::kNormRowChunk) {
    double acc = 0.0;
    for (int64_t r = k; r < k + hmrt::kNormRowChunk; ++r) acc += dy[size_t(r)];
    chunked += acc;
  }
  for (float d : dy) whole += d;
  ASSERT_NE(static_cast<float>(chunked), static_cast<float>(whole));  // the order shows
  EXPECT_EQ(db[0], static_cast<float>(chunked));
}

// The chunks' sums go into the total in chunk order, across the batches of
// chunks the CPU kernel sums at once (at most 64): chunk sums 2^53, 1, 1,
// ..., -2^53 (chunk 64, past the first batch) total 0 in that order (2^53 +
// 1 rounds to 2^53), 2 with the first batch's chunks in reverse.
TEST(Plan, LayerNormParamGradientChunksInOrder) {
  const int64_t chunks = 65, rows = chunks * hmrt::kNormRowChunk;
  std::vector<float> dy(static_cast<size_t>(rows), 0.0f), x(dy.size(), 0.0f);
  dy[0] = 9007199254740992.0f;                                     // 2^53
  dy[size_t(hmrt::kNormRowChunk)] = 1.0f;                          // chunk 1
  dy[size_t(2 * hmrt::kNormRowChunk)] = 1.0f;                      // chunk 2
  dy[size_t(64 * hmrt::kNormRowChunk)] = -9007199254740992.0f;     // chunk 64
  std::vector<float> mean(static_cast<size_t>(rows), 0.0f), rstd(mean.size(), 1.0f);
  std::vector<float> dx(dy.size()), dw(1), db(1);
  ASSERT_EQ(hmrt_layernorm_backward(dy.data(), x.data(), nullptr, mean.data(), rstd.data(),
                                    dx.data(), dw.data(), db.data(), rows, 1),
            HMRT_OK);
  EXPECT_EQ(db[0], 0.0f);
}

// The CUDA LayerNorm kernels' decomposition, run here: eight lanes
// (sum8_lane) combined as their shuffles combine them, then the tail, give
// reduce_sum8's sum; and the weight and bias gradients as the GPU sums them
// (each chunk of rows on a thread, then the chunks in order) give the CPU
// kernel's bits, over several chunks and a partial last one, two tiles of
// columns, and more chunks than the CPU kernel sums at once (at most 64).
TEST(Plan, LayerNormGpuDecompositionMatchesTheCpuKernel) {
  for (int64_t n : {1, 7, 8, 9, 64, 1027}) {
    const std::vector<float> v = hmrt_test::random_vec(n, 21, -3.0f, 3.0f);
    auto f = [&](int64_t i) { return v[size_t(i)]; };
    float lanes[8], b[8];
    for (int l = 0; l < 8; ++l) lanes[l] = hmrt::sum8_lane(n, l, f);
    for (int l = 0; l < 8; ++l) b[l] = lanes[l] + (l + 4 < 8 ? lanes[l + 4] : lanes[l]);
    float pair[8];
    for (int l = 0; l < 8; ++l) pair[l] = b[l] + (l + 1 < 8 ? b[l + 1] : b[l]);
    float s = pair[0] + pair[2];
    for (int64_t i = n / 8 * 8; i < n; ++i) s += f(i);
    const float want = hmrt::reduce_sum8(n, f);
    EXPECT_EQ(std::memcmp(&s, &want, sizeof(float)), 0) << n;
  }
  const std::pair<int64_t, int64_t> shapes[] = {{1, 37}, {256, 37}, {700, 300}, {16700, 3}};
  for (auto [rows, cols] : shapes) {
    const std::vector<float> x = hmrt_test::random_vec(rows * cols, 22, -3.0f, 3.0f);
    const std::vector<float> dy = hmrt_test::random_vec(rows * cols, 23, -1.0f, 1.0f);
    const std::vector<float> w = hmrt_test::random_vec(cols, 24, 0.5f, 1.5f);
    std::vector<float> y(x.size()), mean(static_cast<size_t>(rows)), rstd(static_cast<size_t>(rows)),
        dx(x.size());
    std::vector<float> dw(static_cast<size_t>(cols)), db(static_cast<size_t>(cols));
    ASSERT_EQ(hmrt_layernorm_forward(x.data(), w.data(), nullptr, y.data(), mean.data(),
                                     rstd.data(), rows, cols, 1e-5f),
              HMRT_OK);
    ASSERT_EQ(hmrt_layernorm_backward(dy.data(), x.data(), w.data(), mean.data(), rstd.data(),
                                      dx.data(), dw.data(), db.data(), rows, cols),
              HMRT_OK);
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<float> row(static_cast<size_t>(cols));
      hmrt::layernorm_dx_row(dy.data() + r * cols, x.data() + r * cols, w.data(), mean[size_t(r)],
                             rstd[size_t(r)], row.data(), cols);
      ASSERT_EQ(std::memcmp(row.data(), dx.data() + r * cols, cols * sizeof(float)), 0) << r;
    }
    const int64_t chunks = hmrt::norm_row_chunks(rows);
    for (int64_t c = 0; c < cols; ++c) {
      double tw = 0.0, tb = 0.0;
      for (int64_t k = 0; k < chunks; ++k) {
        double pw, pb;
        hmrt::layernorm_dparams_chunk(dy.data(), x.data(), mean.data(), rstd.data(), rows, cols,
                                      k, c, &pw, &pb);
        tw += pw;
        tb += pb;
      }
      const float gw = 0.0f + static_cast<float>(tw), gb = 0.0f + static_cast<float>(tb);
      EXPECT_EQ(std::memcmp(&gw, &dw[size_t(c)], sizeof(float)), 0) << rows << " " << c;
      EXPECT_EQ(std::memcmp(&gb, &db[size_t(c)], sizeof(float)), 0) << rows << " " << c;
    }
  }
}

}  // namespace

namespace ew_math_test {

// Inputs over exp's whole range and its edges, with the special values.
std::vector<float> sweep() {
  std::vector<float> x = hmrt_test::random_vec(20000, 9, -110.0f, 95.0f);
  const std::vector<float> small = hmrt_test::random_vec(4000, 10, -4.5f, 4.5f);
  x.insert(x.end(), small.begin(), small.end());
  const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 88.72283f, 88.7229f, -103.97208f,
                           -103.98f, -87.5f, -100.0f, 4.0f, -4.0f, 1e-30f, -1e-30f,
                           INFINITY, -INFINITY, NAN};
  x.insert(x.end(), std::begin(special), std::end(special));
  return x;
}

// exp, erf, sigmoid and the exact unary ops of core/ew_math.h, one element
// at a time as a GPU thread computes them, have the bits of cpu/vmath's
// vector code (hmrt_unary_f32).
TEST(EwMath, UnaryOpsMatchVmathBitwise) {
  const std::vector<float> x = sweep();
  const int64_t n = int64_t(x.size());
  for (int op = HMRT_UNARY_EXP; op <= HMRT_UNARY_SIGN; ++op) {
    if (op == HMRT_UNARY_TANH || op == HMRT_UNARY_LOG || op == HMRT_UNARY_IDENTITY) continue;
    SCOPED_TRACE("unary op " + std::to_string(op));
    std::vector<float> want(static_cast<size_t>(n));
    HMRT_ASSERT_OK(hmrt_unary_f32(hmrt_unary_op(op), x.data(), want.data(), n));
    const int64_t f = hmrt::ew::fused_of_unary(op);
    for (int64_t i = 0; i < n; ++i) {
      const float got = hmrt::ew::fused_apply(f, x[size_t(i)], 0.0f, 0.0f);
      ASSERT_EQ(std::memcmp(&got, &want[size_t(i)], sizeof(float)), 0)
          << "x = " << x[size_t(i)] << ": " << got << " vs " << want[size_t(i)];
    }
  }
}

// A fused program with every kind of input (in place, broadcast row,
// scalar, bool mask) evaluated element by element with the GPU kernel's
// code (cuda/nn_kernels.h's fused_element over the operands the backend
// builds from check_fused) gives hmrt_fused_f32's bits.
TEST(EwMath, FusedElementMatchesTheCpuKernel) {
  const hmrt_test::FusedInputs f;
  const int64_t* dims = f.dims;
  const int64_t n = f.n;
  const std::vector<int64_t> code = {
      HMRT_FUSED_ADD, 0, 1, -1,  HMRT_FUSED_MUL, 4, 2, -1,     HMRT_FUSED_ERF, 5, -1, -1,
      HMRT_FUSED_SUB, 6, 1, -1,  HMRT_FUSED_DIV, 7, 4, -1,     HMRT_FUSED_SIGMOID, 0, -1, -1,
      HMRT_FUSED_WHERE, 3, 8, 9, HMRT_FUSED_RELU_GRAD, 0, 10, -1, HMRT_FUSED_MIN, 11, 2, -1,
      HMRT_FUSED_EXP, 12, -1, -1};
  const void* const* in = f.host;
  const int64_t n_code = int64_t(code.size() / 4);
  std::vector<float> want(static_cast<size_t>(n));
  HMRT_ASSERT_OK(hmrt_fused_f32(n_code, code.data(), 4, in, f.in_bool.data(), f.in_dims.data(),
                                want.data(), 3, dims));
  int64_t count = 0;
  std::vector<hmrt::FusedInput> inputs;
  HMRT_ASSERT_OK(hmrt::check_fused("test", n_code, code.data(), 4, in, f.in_bool.data(),
                                   f.in_dims.data(), 3, dims, &count, &inputs));
  ASSERT_EQ(count, n);
  std::vector<hmrt::cuda::FusedOperand> ops;
  for (int j = 0; j < 4; ++j) ops.push_back(hmrt::cuda::fused_operand(inputs[size_t(j)], in[j], 3));
  float r[hmrt::cuda::kFusedSlots];
  // Indices by fast division (fewer than 2^31 elements), and by int64_t
  // division as for larger outputs.
  for (int small : {1, 0}) {
    hmrt::cuda::FusedHeader h =
        hmrt::cuda::fused_header(3, dims, n, ops.data(), 4, int32_t(n_code));
    ASSERT_EQ(h.small, 1);
    ASSERT_EQ(h.all_dense, 0);
    ASSERT_EQ(ops[2].splat, 1);  // the scalar: loaded once, before the elements
    h.small = small;
    hmrt::cuda::fused_splats(h, ops.data(), r);
    for (int64_t i = 0; i < n; ++i) {
      const float got = hmrt::cuda::fused_element(h, ops.data(), code.data(), i, r);
      ASSERT_EQ(std::memcmp(&got, &want[size_t(i)], sizeof(float)), 0)
          << "element " << i << " (small " << small << "): " << got << " vs " << want[size_t(i)];
    }
  }
}

// hmrt-measure-cuda's bias + GELU written as a generated kernel
// (driver/measure_gelu_kernel.h) computes what the CPU kernel computes for
// its code (driver/measure_gelu.h): the two cannot drift apart unseen.
TEST(EwMath, MeasuredGeluKernelMatchesTheCpuKernel) {
  const int64_t rows = 37, cols = 129, n = rows * cols;
  const std::vector<float> x = hmrt_test::random_vec(n, 13, -4.0f, 4.0f);
  const std::vector<float> bias = hmrt_test::random_vec(cols, 14, -1.0f, 1.0f);
  const float c2 = 1.41421354f, one = 1.0f, half = 0.5f;
  const void* in[5] = {bias.data(), x.data(), &c2, &one, &half};
  const int64_t is_bool[5] = {0, 0, 0, 0, 0};
  const int64_t dims[2] = {rows, cols};
  const int64_t in_dims[10] = {1, cols, rows, cols, 1, 1, 1, 1, 1, 1};
  const int64_t n_code = hmrt::kMeasureGeluInstructions, n_in = hmrt::kMeasureGeluInputs;
  std::vector<float> want(static_cast<size_t>(n));
  HMRT_ASSERT_OK(hmrt_fused_f32(n_code, hmrt::kMeasureGeluCode, n_in, in, is_bool, in_dims,
                                want.data(), 2, dims));
  int64_t count = 0;
  std::vector<hmrt::FusedInput> inputs;
  HMRT_ASSERT_OK(hmrt::check_fused("test", n_code, hmrt::kMeasureGeluCode, n_in, in, is_bool,
                                   in_dims, 2, dims, &count, &inputs));
  std::vector<hmrt::cuda::FusedOperand> ops;
  for (int j = 0; j < n_in; ++j)
    ops.push_back(hmrt::cuda::fused_operand(inputs[size_t(j)], in[j], 2));
  const hmrt::cuda::FusedHeader h =
      hmrt::cuda::fused_header(2, dims, n, ops.data(), int32_t(n_in), int32_t(n_code));
  float r[hmrt::MeasureGelu::kInputs];
  hmrt::cuda::fused_splats(h, ops.data(), r);
  for (int64_t i = 0; i < n; ++i) {
    const float got = hmrt::cuda::generated_element<hmrt::MeasureGelu>(h, ops.data(), i, r);
    ASSERT_EQ(std::memcmp(&got, &want[size_t(i)], sizeof(float)), 0)
        << "element " << i << ": " << got << " vs " << want[size_t(i)];
  }
}

}  // namespace ew_math_test
