// GEMM throughput: prints GFLOP/s of hmrt_sgemm for square and
// transformer-like shapes at 1 and at all threads.  Not a test.
//   hmrt_gemm_bench [max_threads] [sizes...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "hmrt/kernels.h"

namespace {

struct Shape {
  int ta, tb;
  int64_t m, n, k;
};

double seconds_per_call(const Shape& s, const float* a, const float* b,
                        float* c) {
  auto run = [&] {
    hmrt_status st = hmrt_sgemm(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a,
                                s.ta ? s.m : s.k, b, s.tb ? s.k : s.n, 0.0f,
                                c, s.n);
    if (st != HMRT_OK) {
      std::fprintf(stderr, "hmrt_sgemm: %s\n", hmrt_last_error());
      std::exit(1);
    }
  };
  run();  // warm up: page faults, packing buffers
  const double flops = 2.0 * s.m * s.n * s.k;
  const int reps = std::max(1, static_cast<int>(1e9 / flops));
  double best = 1e30;
  // Best of many short trials: robust to other processes on the machine.
  for (int trial = 0; trial < 10; ++trial) {
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) run();
    double dt = std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - t0)
                    .count() /
                reps;
    best = std::min(best, dt);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int max_threads = argc > 1 ? std::atoi(argv[1]) : 0;
  hmrt_set_num_threads(max_threads);
  max_threads = hmrt_get_num_threads();

  std::vector<Shape> shapes;
  for (int i = 2; i < argc; ++i) {
    int64_t n = std::atoll(argv[i]);
    shapes.push_back({0, 0, n, n, n});
  }
  if (shapes.empty()) {
    shapes = {{0, 0, 512, 512, 512},    {0, 0, 1024, 1024, 1024},
              {0, 1, 1024, 1024, 1024}, {1, 0, 1024, 1024, 1024},
              {0, 1, 2048, 768, 768},   {0, 1, 2048, 3072, 768},
              {1, 0, 768, 3072, 2048}};
  }

  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::printf("%-4s %-4s %6s %6s %6s %8s %10s\n", "ta", "tb", "m", "n", "k",
              "threads", "GFLOP/s");
  for (const Shape& s : shapes) {
    std::vector<float> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n);
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
    for (int t : {1, max_threads}) {
      hmrt_set_num_threads(t);
      double sec = seconds_per_call(s, a.data(), b.data(), c.data());
      std::printf("%-4d %-4d %6lld %6lld %6lld %8d %10.1f\n", s.ta, s.tb,
                  (long long)s.m, (long long)s.n, (long long)s.k, t,
                  2.0 * s.m * s.n * s.k / sec * 1e-9);
      if (max_threads == 1) break;
    }
  }
  return 0;
}
