// Blocked, multithreaded single-precision GEMM (row-major).
//
// The structure is the classic Goto/BLIS one:
//   for jc in N step NC:            B panel  (KC x NC)  packed, shared, ~L3
//     for pc in K step KC:
//       pack op(B)[pc:pc+KC, jc:jc+NC] into NR-wide micro-panels
//       for ic in M step MC:        A block  (MC x KC)  packed per thread, ~L2
//         pack alpha*op(A)[ic:ic+MC, pc:pc+KC] into MR-tall micro-panels
//         for jr, ir: micro-kernel  C[MR x NR] (+)= A_panel * B_panel
// The micro-kernel keeps the MR x NR tile of C in registers.  It is written
// with GCC/Clang generic vectors (4 floats = one SSE register, the x86-64
// baseline; with -march flags the same code uses wider units) so it needs
// no intrinsics and no -march.  The A panel is stored pre-broadcast (each
// value 4 times) because baseline x86-64 has no broadcast load.
// Transposes are absorbed by the packing routines, alpha by the A packing and
// beta by the first K block's store.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/internal.h"
#include "cpu/gemm_internal.h"
#include "hmrt/kernels.h"

#ifdef HMRT_HAVE_CBLAS
#include <cblas.h>
#endif
#ifdef HMRT_HAVE_DNNL
#include <dnnl.h>
#endif

#include <chrono>
#include <cmath>
#include <vector>

#include "cpu/gemm_select.h"

namespace hmrt {
namespace {

typedef float v4f __attribute__((vector_size(16)));

constexpr int kVec = 4;             // floats per vector
constexpr int MR = 6;               // rows of C per micro-tile
constexpr int NR = 8;               // columns of C per micro-tile
constexpr int NV = NR / kVec;       // vectors per micro-tile row
constexpr int64_t KC = 256;         // depth of one packed block
constexpr int64_t MC = 96;          // rows of A per packed block (mult. of MR)
constexpr int64_t NC = 2048;        // columns of B per packed panel (mult. of NR)

inline v4f load(const float* p) {
  v4f v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void store(float* p, v4f v) { std::memcpy(p, &v, sizeof(v)); }

// One element of op(X) where X is stored row-major with leading dimension ld.
struct Operand {
  const float* p;
  int64_t ld;
  bool trans;
};

// Packs rows [i0, i0+mc) x depth [p0, p0+kc) of alpha*op(A) as ceil(mc/MR)
// micro-panels; panel layout [p][r][4 copies], rows past mc are zero.
void pack_a(const Operand& A, int64_t i0, int64_t p0, int64_t mc, int64_t kc,
            float alpha, float* dst) {
  for (int64_t ip = 0; ip < mc; ip += MR) {
    const int64_t mr = std::min<int64_t>(MR, mc - ip);
    float* panel = dst + ip * kVec * kc;
    for (int64_t p = 0; p < kc; ++p) {
      float* out = panel + p * MR * kVec;
      for (int64_t r = 0; r < MR; ++r) {
        float x = 0.0f;
        if (r < mr) {
          const int64_t i = i0 + ip + r, kk = p0 + p;
          x = alpha * (A.trans ? A.p[kk * A.ld + i] : A.p[i * A.ld + kk]);
        }
        store(out + r * kVec, v4f{x, x, x, x});
      }
    }
  }
}

// Packs depth [p0, p0+kc) x columns [j0+jp0, j0+jp1) of op(B), where jp0
// and jp1 are multiples of NR relative to j0 and nc the panel width; panel
// layout [p][c], columns past nc are zero.
void pack_b(const Operand& B, int64_t p0, int64_t j0, int64_t kc, int64_t nc,
            int64_t jp0, int64_t jp1, float* dst) {
  for (int64_t jp = jp0; jp < jp1; jp += NR) {
    const int64_t nr = std::min<int64_t>(NR, nc - jp);
    float* panel = dst + jp * kc;
    if (!B.trans) {
      for (int64_t p = 0; p < kc; ++p) {
        const float* src = B.p + (p0 + p) * B.ld + j0 + jp;
        float* out = panel + p * NR;
        int64_t c = 0;
        for (; c < nr; ++c) out[c] = src[c];
        for (; c < NR; ++c) out[c] = 0.0f;
      }
    } else {
      for (int64_t c = 0; c < NR; ++c) {
        if (c < nr) {
          const float* src = B.p + (j0 + jp + c) * B.ld + p0;
          for (int64_t p = 0; p < kc; ++p) panel[p * NR + c] = src[p];
        } else {
          for (int64_t p = 0; p < kc; ++p) panel[p * NR + c] = 0.0f;
        }
      }
    }
  }
}

// C[mr x nr] = beta*C + A_panel * B_panel over depth kc; beta == 0 means C
// is not read.  mr <= MR, nr <= NR select the valid part of an edge tile.
void micro_kernel(int64_t kc, const float* __restrict a,
                  const float* __restrict b, float* __restrict c, int64_t ldc,
                  float beta, int64_t mr, int64_t nr) {
  v4f acc[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = v4f{0, 0, 0, 0};

  for (int64_t p = 0; p < kc; ++p) {
    v4f bv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) bv[j] = load(b + j * kVec);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const v4f av = load(a + i * kVec);
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] += av * bv[j];
    }
    a += MR * kVec;
    b += NR;
  }

  if (mr == MR && nr == NR) {
    const v4f vbeta = {beta, beta, beta, beta};
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      float* row = c + i * ldc;
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) {
        v4f r = acc[i][j];
        if (beta == 1.0f)
          r += load(row + j * kVec);
        else if (beta != 0.0f)
          r += vbeta * load(row + j * kVec);
        store(row + j * kVec, r);
      }
    }
    return;
  }
  float tile[MR][NR];
  std::memcpy(tile, acc, sizeof(tile));
  for (int64_t i = 0; i < mr; ++i) {
    float* row = c + i * ldc;
    for (int64_t j = 0; j < nr; ++j) {
      float r = tile[i][j];
      if (beta == 1.0f)
        r += row[j];
      else if (beta != 0.0f)
        r += beta * row[j];
      row[j] = r;
    }
  }
}

// C = beta*C for the degenerate cases (k == 0 or alpha == 0).
void scale_c(int64_t m, int64_t n, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    if (beta == 0.0f)
      std::fill(row, row + n, 0.0f);
    else if (beta != 1.0f)
      for (int64_t j = 0; j < n; ++j) row[j] *= beta;
  }
}

int64_t round_up(int64_t x, int64_t m) { return ceil_div(x, m) * m; }

// Block sizes for one problem: the A block height is balanced so the last
// block is not a sliver, and everything is clipped to the problem.
struct Blocking {
  int64_t mc, kc, nc;
};
Blocking blocking(int64_t m, int64_t n, int64_t k) {
  Blocking bl;
  const int64_t mblocks = ceil_div(std::max<int64_t>(m, 1), MC);
  bl.mc = round_up(ceil_div(std::max<int64_t>(m, 1), mblocks), MR);
  bl.kc = std::min<int64_t>(KC, std::max<int64_t>(k, 1));
  bl.nc = std::min<int64_t>(NC, round_up(std::max<int64_t>(n, 1), NR));
  return bl;
}

int64_t a_pack_floats(const Blocking& bl) { return bl.mc * bl.kc * kVec; }
int64_t b_pack_floats(const Blocking& bl) { return bl.kc * bl.nc; }

// The blocked GEMM.  threads == 1 runs inline; otherwise B packing and the
// (A block x column group) tasks are spread over `threads` threads, thread t
// packing A into a_packs + t * a_pack_floats.
void gemm_blocked(const Operand& A, const Operand& B, int64_t m, int64_t n,
                  int64_t k, float alpha, float beta, float* c, int64_t ldc,
                  int threads, float* b_pack, float* a_packs) {
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == 0.0f) {
    scale_c(m, n, beta, c, ldc);
    return;
  }
  const Blocking bl = blocking(m, n, k);
  const int64_t a_stride = a_pack_floats(bl);
  const int64_t mblocks = ceil_div(m, bl.mc);

  for (int64_t jc = 0; jc < n; jc += bl.nc) {
    const int64_t nc = std::min(bl.nc, n - jc);
    const int64_t npanels = ceil_div(nc, NR);
    // Column groups per A block: enough tasks to balance the threads, but
    // each group at least 4 micro-panels wide so A packing stays cheap.
    int64_t groups = 1;
    if (threads > 1 && mblocks % threads != 0)
      groups = std::max<int64_t>(1, std::min<int64_t>(threads, npanels / 4));
    const int64_t panels_per_group = ceil_div(npanels, groups);

    for (int64_t pc = 0; pc < k; pc += bl.kc) {
      const int64_t kc = std::min(bl.kc, k - pc);
      const float beta_eff = pc == 0 ? beta : 1.0f;

      auto pack_b_range = [&](int64_t lo, int64_t hi) {
        pack_b(B, pc, jc, kc, nc, lo * NR, hi * NR, b_pack);
      };
      auto run_task = [&](int64_t task, int tid) {
        const int64_t ib = task / groups, g = task % groups;
        const int64_t ic = ib * bl.mc;
        const int64_t mc = std::min(bl.mc, m - ic);
        const int64_t p_lo = g * panels_per_group;
        const int64_t p_hi = std::min(npanels, p_lo + panels_per_group);
        if (p_lo >= p_hi) return;
        float* a_pack = a_packs + tid * a_stride;
        pack_a(A, ic, pc, mc, kc, alpha, a_pack);
        for (int64_t jp = p_lo; jp < p_hi; ++jp) {
          const int64_t j = jp * NR;
          const int64_t nr = std::min<int64_t>(NR, nc - j);
          for (int64_t ip = 0; ip < mc; ip += MR) {
            const int64_t mr = std::min<int64_t>(MR, mc - ip);
            micro_kernel(kc, a_pack + ip * kVec * kc, b_pack + j * kc,
                         c + (ic + ip) * ldc + jc + j, ldc, beta_eff, mr, nr);
          }
        }
      };

      if (threads <= 1) {
        pack_b_range(0, npanels);
        for (int64_t t = 0; t < mblocks * groups; ++t) run_task(t, 0);
      } else {
        parallel_for(npanels, 4, pack_b_range);
        parallel_tasks_indexed(mblocks * groups, threads, run_task);
      }
    }
  }
}

// Threads worth using for one GEMM: about 2*64^3 flops per thread at least.
int useful_threads(int64_t m, int64_t n, int64_t k, int available) {
  const double flops = 2.0 * double(m) * double(n) * double(k);
  const double per_thread = 2.0 * 64 * 64 * 64;
  const double t = std::max(1.0, flops / per_thread);
  return t < available ? static_cast<int>(t) : available;
}

hmrt_status check_gemm(const char* fn, int trans_a, int trans_b, int64_t m,
                       int64_t n, int64_t k, const float* a, int64_t lda,
                       const float* b, int64_t ldb, const float* c,
                       int64_t ldc) {
  HMRT_CHECK_SIZE(fn, m);
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_SIZE(fn, k);
  const int64_t a_cols = trans_a ? m : k;
  const int64_t b_cols = trans_b ? k : n;
  HMRT_CHECK_ARG(lda >= std::max<int64_t>(1, a_cols),
                 "%s: lda = %lld is smaller than the %lld columns of A", fn,
                 (long long)lda, (long long)a_cols);
  HMRT_CHECK_ARG(ldb >= std::max<int64_t>(1, b_cols),
                 "%s: ldb = %lld is smaller than the %lld columns of B", fn,
                 (long long)ldb, (long long)b_cols);
  HMRT_CHECK_ARG(ldc >= std::max<int64_t>(1, n),
                 "%s: ldc = %lld is smaller than the %lld columns of C", fn,
                 (long long)ldc, (long long)n);
  // An operand is read only when C is non-empty and k > 0.
  const int64_t reads = m * n > 0 ? k : 0;
  HMRT_CHECK_PTR(fn, a, m * reads);
  HMRT_CHECK_PTR(fn, b, reads * n);
  HMRT_CHECK_PTR(fn, c, m * n);
  return HMRT_OK;
}

}  // namespace

int64_t gemm_workspace_floats(int64_t m, int64_t n, int64_t k) {
  // blocking() is not monotone in m (balanced blocks), so bound mc by MC.
  Blocking bl = blocking(m, n, k);
  bl.mc = std::min<int64_t>(MC, round_up(std::max<int64_t>(m, 1), MR));
  return a_pack_floats(bl) + b_pack_floats(bl);
}

namespace {

// C = alpha*op(A)*op(B) + beta*C through a library engine (OpenBLAS or
// oneDNN, row-major); false when `e` is the runtime's own or the library
// refused (it then wrote nothing). Threads: the library's OpenMP build uses
// the calling thread's team, which inside a kernel's parallel tasks is the
// calling thread alone.
bool library_sgemm(GemmEngine e, bool trans_a, bool trans_b, int64_t m, int64_t n,
                   int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                   int64_t ldb, float beta, float* c, int64_t ldc) {
#ifdef HMRT_HAVE_CBLAS
  if (e == GemmEngine::openblas) {
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
                static_cast<blasint>(ldc));
    return true;
  }
#endif
#ifdef HMRT_HAVE_DNNL
  if (e == GemmEngine::onednn)
    return dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b,
                      ldb, beta, c, ldc) == dnnl_success;
#endif
#if !defined(HMRT_HAVE_CBLAS) && !defined(HMRT_HAVE_DNNL)  // no library built in
  (void)e, (void)trans_a, (void)trans_b, (void)m, (void)n, (void)k, (void)alpha, (void)a;
  (void)lda, (void)b, (void)ldb, (void)beta, (void)c, (void)ldc;
#endif
  return false;
}

// C = alpha*op(A)*op(B) + beta*C on the calling thread with engine `e`.
void serial_on(GemmEngine e, bool trans_a, bool trans_b, int64_t m, int64_t n,
               int64_t k, float alpha, const float* a, int64_t lda, const float* b,
               int64_t ldb, float beta, float* c, int64_t ldc, float* workspace) {
  if (m == 0 || n == 0 ||
      library_sgemm(e, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
    return;
  sgemm_own_serial(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                   workspace);
}

void time_engines(const GemmCall& call, double seconds[kGemmEngines]);

}  // namespace

void sgemm_serial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  float alpha, const float* a, int64_t lda, const float* b,
                  int64_t ldb, float beta, float* c, int64_t ldc,
                  float* workspace) {
  const GemmEngine e =
      gemm_select({true, trans_a, trans_b, m, n, k, 1, 1}, time_engines);
  serial_on(e, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
            workspace);
}

void sgemm_own_serial(bool trans_a, bool trans_b, int64_t m, int64_t n,
                      int64_t k, float alpha, const float* a, int64_t lda,
                      const float* b, int64_t ldb, float beta, float* c,
                      int64_t ldc, float* workspace) {
  const Blocking bl = blocking(m, n, k);
  gemm_blocked({a, lda, trans_a}, {b, ldb, trans_b}, m, n, k, alpha, beta, c,
               ldc, 1, workspace + a_pack_floats(bl), workspace);
}

}  // namespace hmrt

namespace hmrt {
namespace {

// C_i = alpha*op(A_i)*op(B_i) + beta*C_i for i < batch_count with engine
// `e` on the runtime's threads; arguments already checked, nothing empty.
hmrt_status batched_on(GemmEngine e, const char* fn, bool trans_a, bool trans_b,
                       int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                       int64_t lda, int64_t stride_a, const float* b, int64_t ldb,
                       int64_t stride_b, float beta, float* c, int64_t ldc,
                       int64_t stride_c, int64_t batch_count) {
  if (e != GemmEngine::own) {
#ifdef HMRT_HAVE_CBLAS
    // OpenBLAS with the runtime's thread count (oneDNN takes this thread's
    // OpenMP setting, which the runtime keeps at it).
    static std::atomic<int> blas_threads{0};
    const int want = num_threads();
    if (e == GemmEngine::openblas && blas_threads.exchange(want) != want)
      openblas_set_num_threads(want);
#endif
    int64_t i = 0;
    while (i < batch_count &&
           library_sgemm(e, trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda,
                         b + i * stride_b, ldb, beta, c + i * stride_c, ldc))
      ++i;
    if (i == batch_count) return HMRT_OK;
    // Refused (it wrote nothing): the rest on the runtime's own GEMM.
    a += i * stride_a, b += i * stride_b, c += i * stride_c, batch_count -= i;
  }
  const int available = num_threads();
  const int per_gemm = useful_threads(m, n, k, available);
  const Blocking bl = blocking(m, n, k);
  const int64_t a_floats = a_pack_floats(bl), b_floats = b_pack_floats(bl);

  // Many GEMMs: one thread per GEMM, each with its own A and B packs.
  const bool across_batch =
      available > 1 && per_gemm < available && batch_count > 1;
  if (across_batch) {
    const int threads =
        static_cast<int>(std::min<int64_t>(available, batch_count));
    float* ws = thread_scratch(threads * (a_floats + b_floats));
    if (ws == nullptr)
      return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate packing buffers",
                  fn);
    parallel_tasks_indexed(batch_count, threads, [&](int64_t i, int tid) {
      float* mine = ws + tid * (a_floats + b_floats);
      gemm_blocked({a + i * stride_a, lda, trans_a}, {b + i * stride_b, ldb, trans_b},
                   m, n, k, alpha, beta, c + i * stride_c, ldc, 1, mine + a_floats,
                   mine);
    });
    return HMRT_OK;
  }

  // Few large GEMMs: one after another, each spread over the threads.
  float* ws = thread_scratch(b_floats + per_gemm * a_floats);
  if (ws == nullptr)
    return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate packing buffers", fn);
  for (int64_t i = 0; i < batch_count; ++i)
    gemm_blocked({a + i * stride_a, lda, trans_a}, {b + i * stride_b, ldb, trans_b},
                 m, n, k, alpha, beta, c + i * stride_c, ldc, per_gemm, ws,
                 ws + b_floats);
  return HMRT_OK;
}

// What one call of `call`'s shape takes on each built engine, timed on
// scratch operands: after a warm-up call each, the engines take turns for
// kRounds rounds and each keeps its best round, so that a stall (another
// process on the cores, a descheduled OpenMP thread) hits a round, not an
// engine. Shapes above ~1 GFLOP (or with a matrix above 4 M floats) are
// timed at a scaled-down size: fewer batch entries first, then the largest
// dimension halved; the times are scaled back to the shape asked about.
void time_engines(const GemmCall& call, double seconds[kGemmEngines]) {
  constexpr int kRounds = 5;
  int64_t m = std::max<int64_t>(call.m, 1), n = std::max<int64_t>(call.n, 1);
  int64_t k = std::max<int64_t>(call.k, 1), batch = std::max<int64_t>(call.batch, 1);
  auto flops = [&] { return 2.0 * double(m) * double(n) * double(k) * double(batch); };
  constexpr int64_t kMaxFloats = int64_t(1) << 22;
  while (flops() > 1e9 && batch > 1) batch = (batch + 1) / 2;
  while (flops() > 1e9 || m * k > kMaxFloats || k * n > kMaxFloats ||
         m * n > kMaxFloats) {
    int64_t& d = m >= n && m >= k ? m : (n >= k ? n : k);
    if (d == 1) break;
    d = (d + 1) / 2;
  }
  const int64_t lda = call.trans_a ? m : k, ldb = call.trans_b ? k : n;
  std::vector<float> A(size_t(batch * m * k)), B(size_t(batch * k * n)),
      C(size_t(batch * m * n), 0.0f);
  for (size_t i = 0; i < A.size(); ++i) A[i] = float(int(i % 17) - 8) * 0.0625f;
  for (size_t i = 0; i < B.size(); ++i) B[i] = float(int(i % 13) - 6) * 0.125f;
  std::vector<float> ws;
  if (call.serial) ws.resize(size_t(gemm_workspace_floats(m, n, k) + 16));
  float* wsa = reinterpret_cast<float*>(
      (reinterpret_cast<uintptr_t>(ws.data()) + 63) & ~uintptr_t(63));
  auto once = [&](GemmEngine e) {
    if (call.serial) {
      for (int64_t i = 0; i < batch; ++i)
        serial_on(e, call.trans_a, call.trans_b, m, n, k, 1.0f, A.data() + i * m * k,
                  lda, B.data() + i * k * n, ldb, 0.0f, C.data() + i * m * n, n, wsa);
      return true;
    }
    return batched_on(e, "gemm timing", call.trans_a, call.trans_b, m, n, k, 1.0f,
                      A.data(), lda, m * k, B.data(), ldb, k * n, 0.0f, C.data(), n,
                      m * n, batch) == HMRT_OK;
  };
  bool usable[kGemmEngines];
  for (int i = 0; i < kGemmEngines; ++i) {
    seconds[i] = INFINITY;
    // The warm-up call (oneDNN compiles its kernels here).
    usable[i] = gemm_engine_built(GemmEngine(i)) && once(GemmEngine(i));
  }
  const int reps = static_cast<int>(std::clamp(2e7 / flops(), 1.0, 200.0));
  for (int round = 0; round < kRounds; ++round)
    for (int i = 0; i < kGemmEngines; ++i) {
      if (!usable[i]) continue;
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) once(GemmEngine(i));
      seconds[i] = std::min(seconds[i], std::chrono::duration<double>(
                                            std::chrono::steady_clock::now() - t0).count() / reps);
    }
  const double scale = 2.0 * double(call.m) * double(call.n) * double(call.k) *
                       double(std::max<int64_t>(call.batch, 1)) / flops();
  for (int i = 0; i < kGemmEngines; ++i) seconds[i] *= scale;
}

// Both public entry points; `fn` names the caller in error messages.
hmrt_status sgemm_batched(const char* fn, int trans_a, int trans_b, int64_t m,
                          int64_t n, int64_t k, float alpha, const float* a,
                          int64_t lda, int64_t stride_a, const float* b,
                          int64_t ldb, int64_t stride_b, float beta, float* c,
                          int64_t ldc, int64_t stride_c, int64_t batch_count) {
  hmrt_status st = check_gemm(fn, trans_a, trans_b, m, n, k, a, lda, b, ldb,
                              c, ldc);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_SIZE(fn, batch_count);
  HMRT_CHECK_ARG(stride_a >= 0 && stride_b >= 0 && stride_c >= 0,
                 "%s: strides must be >= 0", fn);
  HMRT_CHECK_ARG(batch_count <= 1 || m == 0 || n == 0 ||
                     stride_c >= (m - 1) * ldc + n,
                 "%s: stride_c = %lld makes the C matrices overlap", fn,
                 (long long)stride_c);
  if (batch_count == 0 || m == 0 || n == 0) return HMRT_OK;
  const GemmEngine e = gemm_select(
      {false, trans_a != 0, trans_b != 0, m, n, k, batch_count, num_threads()},
      time_engines);
  return batched_on(e, fn, trans_a != 0, trans_b != 0, m, n, k, alpha, a, lda,
                    stride_a, b, ldb, stride_b, beta, c, ldc, stride_c, batch_count);
}

}  // namespace
}  // namespace hmrt

extern "C" {

const char* hmrt_gemm_backend(void) { return hmrt::gemm_select_mode(); }

hmrt_status hmrt_sgemm(int trans_a, int trans_b, int64_t m, int64_t n,
                       int64_t k, float alpha, const float* a, int64_t lda,
                       const float* b, int64_t ldb, float beta, float* c,
                       int64_t ldc) {
  return hmrt::sgemm_batched("hmrt_sgemm", trans_a, trans_b, m, n, k, alpha, a,
                             lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
}

hmrt_status hmrt_sgemm_strided_batched(int trans_a, int trans_b, int64_t m,
                                       int64_t n, int64_t k, float alpha,
                                       const float* a, int64_t lda,
                                       int64_t stride_a, const float* b,
                                       int64_t ldb, int64_t stride_b,
                                       float beta, float* c, int64_t ldc,
                                       int64_t stride_c, int64_t batch_count) {
  return hmrt::sgemm_batched("hmrt_sgemm_strided_batched", trans_a, trans_b, m,
                             n, k, alpha, a, lda, stride_a, b, ldb, stride_b,
                             beta, c, ldc, stride_c, batch_count);
}

}  // extern "C"
