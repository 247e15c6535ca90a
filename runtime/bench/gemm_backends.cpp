// The GEMM engines side by side on the CPU benchmark's shapes
// (bench/cpu_vs_pytorch.py: B*T = 2048 rows, width 256, MLP 1024, QKV 768)
// and on attention's per-block GEMMs (64 query rows, head_dim 32, 256
// keys): the runtime's own blocked GEMM, OpenBLAS (cblas_sgemm) and oneDNN
// (dnnl_sgemm), GFLOP/s, best of several trials, on one thread and, for the
// libraries, on all.  Not a test; built when OpenBLAS and oneDNN
// (libdnnl-dev) are both found.
//   hmrt_gemm_backends [threads]
#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "cpu/gemm_internal.h"

namespace {

struct Shape {
  const char* what;
  bool ta, tb;
  int64_t m, n, k;
};

template <class F>
double gflops(F f, double flops) {
  f();  // warm up
  const int reps = std::max(1, static_cast<int>(2e8 / flops));
  double best = 1e30;
  for (int trial = 0; trial < 7; ++trial) {
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) f();
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - t0).count() / reps);
  }
  return flops / best / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : omp_get_max_threads();
  if (argc > 2 || threads < 1 || threads > 1024) {
    std::fprintf(stderr, "usage: hmrt_gemm_backends [threads, 1 to 1024]\n");
    return 2;
  }
  const Shape shapes[] = {
      {"qkv forward", false, true, 2048, 768, 256},
      {"mlp up forward", false, true, 2048, 1024, 256},
      {"mlp down forward", false, true, 2048, 256, 1024},
      {"out proj forward", false, true, 2048, 256, 256},
      {"mlp up dX", false, false, 2048, 256, 1024},
      {"mlp up dW", true, false, 1024, 256, 2048},
      {"qkv dW", true, false, 768, 256, 2048},
      {"attn S = QK^T", false, true, 64, 256, 32},
      {"attn O = PV", false, false, 64, 32, 256},
      {"attn dK += dS^TQ", true, false, 256, 32, 64},
  };
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> a(2048 * 1024), b(2048 * 1024), c(2048 * 1024);
  for (float& x : a) x = d(rng);
  for (float& x : b) x = d(rng);
  std::vector<float> ws(hmrt::gemm_workspace_floats(2048, 2048, 2048) + 16);
  float* wsa = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(ws.data()) + 63) & ~uintptr_t(63));

  std::printf("GFLOP/s; %d threads in the last two columns\n", threads);
  std::printf("%-18s %5s %5s %5s | %8s %8s %8s | %8s %8s\n", "shape", "m", "n", "k",
              "own 1T", "oblas 1T", "dnnl 1T", "oblas", "dnnl");
  for (const Shape& s : shapes) {
    const int64_t lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n;
    const double flops = 2.0 * s.m * s.n * s.k;
    auto own = [&] {
      hmrt::sgemm_own_serial(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), lda, b.data(), ldb,
                             0.0f, c.data(), s.n, wsa);
    };
    auto oblas = [&] {
      cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans,
                  s.tb ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, 1.0f, a.data(), lda,
                  b.data(), ldb, 0.0f, c.data(), s.n);
    };
    auto dnnl = [&] {
      dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.m, s.n, s.k, 1.0f, a.data(), lda,
                 b.data(), ldb, 0.0f, c.data(), s.n);
    };
    openblas_set_num_threads(1);
    omp_set_num_threads(1);
    const double own1 = gflops(own, flops), ob1 = gflops(oblas, flops), dn1 = gflops(dnnl, flops);
    openblas_set_num_threads(threads);
    omp_set_num_threads(threads);
    const double obn = gflops(oblas, flops), dnn = gflops(dnnl, flops);
    std::printf("%-18s %5lld %5lld %5lld | %8.1f %8.1f %8.1f | %8.1f %8.1f\n", s.what,
                (long long)s.m, (long long)s.n, (long long)s.k, own1, ob1, dn1, obn, dnn);
  }
  return 0;
}
