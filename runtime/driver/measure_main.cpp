// hmrt-measure: measures the machine it runs on with the runtime's own
// kernels and I/O, and writes a device profile (the JSON that
// hmcc --device-profile reads; docs/device-profile.md).  hmcc
// --measure-device runs it.
//
//   hmrt-measure -o FILE.json [--device cpu|cuda] [--storage DIR] [--quick] [--force]
//
// Each figure is the best of a few timed repetitions after a warm-up:
//   peak_flops.f32      hmrt_sgemm on a large square problem
//   memory_bandwidth    bytes read and written by a copy inside the device tier
//   links               copies between the device and host tiers (each way,
//                       and both at once from two threads), host to host
//   storage             sequential writes and reads through the runtime's storage
//                       tier in DIR (O_DIRECT and io_uring where it can)
//                       (without DIR: not measured, the cpu built-in's figures)
//   host_optimizer      hmrt_adamw_step / hmrt_adamw8bit_step on a stream's
//                       worker (as programs run host updates), parameters per s
//   launch_overhead     a one-element kernel call
//   efficiency          a representative kernel of each op kind, as the
//                       fraction of the roofline the cost model would predict
//                       for it at peak (hmcc's tg/Analysis/Cost.h counts)
// With --device cuda (a build linked with the CUDA backend) the compute
// figures are the GPU's, through the backend's kernel table on device
// memory filled with data (not zeros): peak_flops.bf16 (and f16) from a
// large GEMM of bf16 operands (hmrt_matmul_bf16), peak_flops.f32 from an
// fp32 one, the launch overhead of a one-element
// kernel (the table's kernels each wait for the GPU), and the efficiency
// of each kind on transformer-sized work (GEMMs and attention with bf16
// products, against the bf16 peak: `matmul` on fp32 operands, rounded by
// the backend first, `matmul_bf16` on bf16 ones); links, storage and the host optimizer
// as above, between the GPU and pinned host memory.
// --quick uses small sizes (seconds, for tests); the figures are rougher.

#include "hmrt/device.h"
#include "hmrt/kernel_table.h"
#include "hmrt/kernels.h"
#include "hmrt/tensor_ops.h"
#include "measure_gelu.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Best seconds of `reps` calls of `f` after one warm-up call.
double best(int reps, const std::function<void()>& f) {
  f();
  double t = 1e30;
  for (int i = 0; i < reps; ++i) {
    double start = now();
    f();
    t = std::min(t, now() - start);
  }
  return std::max(t, 1e-9);
}

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "hmrt-measure: error: %s\n", message.c_str());
  std::exit(1);
}

void check(hmrt_status st, const char* what) {
  if (st != HMRT_OK) die(std::string(what) + ": " + hmrt_last_error());
}

void note(const char* what, double value, const char* unit) {
  std::fprintf(stderr, "  %-34s %10.3g %s\n", what, value, unit);
}

/// Sequential writes and reads of `bytes` through the runtime's storage
/// tier (a storage buffer in `dir`, as a program's storage arena; O_DIRECT
/// and io_uring where the runtime can, with its notice where not), in
/// requests of 64 MiB from a host buffer, as plan-staging's copies are;
/// bytes per second each way. Then the fixed cost of one transfer: reads
/// and writes of 64 KiB (a small parameter's or chunk's slice), each the
/// time its bytes take at those rates plus `latency` seconds.
void storage(hmrt_device* dev, const std::string& dir, uint64_t bytes, double* write_bw,
             double* read_bw, double* latency) {
  ::setenv("HMRT_STORAGE_DIR", dir.c_str(), 1);
  const uint64_t block = std::min<uint64_t>(bytes, uint64_t{64} << 20);
  hmrt_buffer* file = nullptr;
  hmrt_buffer* host = nullptr;
  check(hmrt_buffer_alloc(dev, HMRT_TIER_STORAGE, bytes, &file), "storage buffer");
  check(hmrt_buffer_alloc(dev, HMRT_TIER_HOST, block, &host), "host buffer");
  check(hmrt_memset(host, 0, 1, block), "memset");
  auto pass = [&](bool write) {
    const double start = now();
    for (uint64_t done = 0; done < bytes; done += block)
      check(write ? hmrt_copy(file, done, host, 0, block) : hmrt_copy(host, 0, file, done, block),
            write ? "storage write" : "storage read");
    return double(bytes) / std::max(now() - start, 1e-9);
  };
  *write_bw = pass(true);
  *read_bw = pass(false);
  const uint64_t small = 64 << 10;
  const int count = int(std::min<uint64_t>(256, bytes / small));
  auto each = [&](bool write) {
    const double start = now();
    for (int i = 0; i < count; ++i)
      check(write ? hmrt_copy(file, i * small, host, 0, small)
                  : hmrt_copy(host, 0, file, i * small, small),
            write ? "storage write" : "storage read");
    return (now() - start) / std::max(count, 1);
  };
  const double w = each(true) - double(small) / *write_bw;
  const double r = each(false) - double(small) / *read_bw;
  *latency = std::max(0.0, (w + r) / 2);
  hmrt_buffer_free(host);
  hmrt_buffer_free(file);
}

/// Records efficiency.`kind`: the cost model's roofline time over the
/// measured one, within [0.01, 1].
void recordEfficiency(nlohmann::json& j, const char* kind, double roofline, double seconds) {
  const double e = std::clamp(roofline / seconds, 0.01, 1.0);
  char what[64];
  std::snprintf(what, sizeof what, "efficiency.%s", kind);
  note(what, e, "of the roofline");
  j["efficiency"][kind] = e;
}

/// Writes the profile `j` to `out` (through a temporary file, renamed).
void write(const std::string& out, const nlohmann::json& j) {
  std::string text = j.dump(2) + "\n";
  std::string tmp = out + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) die("cannot write " + out + ": " + std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), out.c_str()) != 0) {
    std::remove(tmp.c_str());
    die("cannot write " + out + ": " + std::strerror(errno));
  }
  std::fprintf(stderr, "hmrt-measure: wrote %s\n", out.c_str());
}

/// Float buffers in a device's device tier, freed with it, filled with
/// values in [-1, 1) (a GPU's arithmetic can run faster on zeros than on
/// data); other types zeroed.
struct DeviceFloats {
  hmrt_device* dev;
  std::vector<hmrt_buffer*> buffers;
  std::vector<float> pattern;  // copied over each float buffer
  ~DeviceFloats() {
    for (hmrt_buffer* b : buffers) hmrt_buffer_free(b);
  }
  template <class T = float>
  T* get(int64_t count) {
    hmrt_buffer* b = nullptr;
    const uint64_t bytes = uint64_t(std::max<int64_t>(count, 1)) * sizeof(T);
    check(hmrt_buffer_alloc(dev, HMRT_TIER_DEVICE, bytes, &b), "allocating device memory");
    buffers.push_back(b);
    if constexpr (std::is_same_v<T, float>) {
      if (pattern.empty()) {
        pattern.resize(size_t(1) << 22);
        uint64_t state = 0x9e3779b97f4a7c15ull;
        for (float& v : pattern) {
          state = state * 6364136223846793005ull + 1442695040888963407ull;
          v = float(int32_t(state >> 32)) * 0x1p-31f;
        }
      }
      const uint64_t chunk = pattern.size() * sizeof(float);
      for (uint64_t at = 0; at < bytes; at += chunk)
        check(hmrt_copy_from_host(b, at, pattern.data(), std::min(chunk, bytes - at)),
              "filling device memory");
    } else {
      check(hmrt_memset(b, 0, 0, bytes), "memset");
    }
    void* p = nullptr;
    check(hmrt_buffer_device_ptr(b, 0, bytes, &p), "device address");
    return static_cast<T*>(p);
  }
};

/// The compute figures of a GPU (--device cuda): peaks, launch overhead and
/// the efficiency of each kind, through the backend's kernel table on
/// device memory (timed until the GPU is done). `bandwidth` is
/// the device tier's copy bandwidth measured before.
void measureGpu(hmrt_device* dev, bool quick, int reps, double bandwidth, nlohmann::json& j) {
  const hmrt_kernels* k = hmrt_device_kernels(dev);
  DeviceFloats mem{dev, {}, {}};
  // The kernels run asynchronously: each timing ends when the GPU is done
  // (a read of device memory waits for the kernels queued before it).
  mem.get(1);
  hmrt_buffer* doneBuffer = mem.buffers.back();
  auto bestGpu = [&](const std::function<void()>& f) {
    return best(reps, [&] {
      f();
      float x = 0;
      check(hmrt_copy_to_host(&x, doneBuffer, 0, sizeof x), "waiting for the GPU");
    });
  };
  // Peaks: square GEMMs, with bf16 products (f32 operands rounded as they
  // are read, as programs call them) and in fp32.
  auto gemm = [&](bool bf16, int64_t m, int64_t n, int64_t kk, float* a, float* b, float* y) {
    const int64_t sa[2] = {m, kk}, sb[2] = {kk, n}, sy[2] = {m, n};
    check((bf16 ? k->matmul_f32_bf16 : k->matmul_f32)(a, 2, sa, 0, b, 2, sb, 0, y, 2, sy),
          "matmul");
  };
  double peak16 = 0, peak32 = 0;
  {
    // The tensor cores' peak: bf16 operands (as the GEMMs of programs with
    // bf16 storage read them); "matmul" below measures fp32 operands.
    const int64_t n = quick ? 1024 : 8192;
    float *a = mem.get(n * n), *b = mem.get(n * n), *y = mem.get(n * n);
    uint16_t *a16 = mem.get<uint16_t>(n * n), *b16 = mem.get<uint16_t>(n * n);
    check(k->round_bf16(a, a16, n * n), "rounding to bf16");
    check(k->round_bf16(b, b16, n * n), "rounding to bf16");
    const int64_t sq[2] = {n, n};
    peak16 = 2.0 * double(n) * n * n / bestGpu([&] {
      check(k->matmul_bf16(a16, 2, sq, 0, b16, 2, sq, 0, y, 2, sq), "matmul");
    });
    const int64_t n32 = quick ? 512 : 4096;
    peak32 = 2.0 * double(n32) * n32 * n32 / bestGpu([&] { gemm(false, n32, n32, n32, a, b, y); });
  }
  note("peak_flops.bf16 (bf16 operands)", peak16 / 1e12, "TFLOP/s");
  note("peak_flops.f32", peak32 / 1e12, "TFLOP/s");
  j["peak_flops"] = {{"f32", peak32}, {"bf16", peak16}, {"f16", peak16}};

  // The fixed cost of one op: a one-element add.
  float* one = mem.get(1);
  const int64_t shape1[1] = {1};
  const int calls = quick ? 200 : 2000;
  const double launch = bestGpu([&] {
    for (int i = 0; i < calls; ++i)
      check(k->binary_f32(HMRT_BINARY_ADD, one, 1, shape1, one, 1, shape1, one, 1, shape1),
            "add");
  }) / calls;
  note("launch_overhead", launch * 1e6, "us");
  j["launch_overhead"] = launch;

  auto efficiency = [&](const char* kind, double flops, double bytes, double peak,
                        double seconds) {
    recordEfficiency(j, kind, std::max(flops / peak, bytes / bandwidth) + launch, seconds);
  };
  {  // matmul: a GPT layer's GEMMs for 8192 tokens of width 2048 (bf16 products)
    const int64_t rows = quick ? 1024 : 8192, w = quick ? 256 : 2048;
    float *x = mem.get(rows * 4 * w), *wt = mem.get(4 * w * 4 * w), *y = mem.get(rows * 4 * w);
    double flops = 0, bytes = 0, sec = 0;
    // The same GEMMs of bf16 operands (matmul_bf16: as --bf16-storage keeps
    // them, nothing to round first).
    uint16_t *x16 = mem.get<uint16_t>(rows * 4 * w), *wt16 = mem.get<uint16_t>(4 * w * 4 * w);
    check(k->round_bf16(x, x16, rows * 4 * w), "rounding to bf16");
    check(k->round_bf16(wt, wt16, 4 * w * 4 * w), "rounding to bf16");
    double bytes16 = 0, sec16 = 0;
    for (auto [kk, n] : {std::pair<int64_t, int64_t>{w, w}, {w, 3 * w}, {w, 4 * w}, {4 * w, w}}) {
      sec += bestGpu([&] { gemm(true, rows, n, kk, x, wt, y); });
      const int64_t sa[2] = {rows, kk}, sb[2] = {kk, n}, sy[2] = {rows, n};
      sec16 += bestGpu([&] {
        check(k->matmul_bf16(x16, 2, sa, 0, wt16, 2, sb, 0, y, 2, sy), "matmul");
      });
      flops += 2.0 * rows * n * kk;
      bytes += 4.0 * (rows * kk + kk * n + rows * n);
      bytes16 += 2.0 * (rows * kk + kk * n) + 4.0 * rows * n;
    }
    efficiency("matmul", flops, bytes, peak16, sec);
    efficiency("matmul_bf16", flops, bytes16, peak16, sec16);
  }
  const int64_t rows = quick ? 1024 : 16384, cols = 4096, ne = rows * cols;
  float *x = mem.get(ne), *y = mem.get(ne), *z = mem.get(ne);
  const int64_t shape[1] = {ne}, dims2[2] = {rows, cols};
  efficiency("elementwise", double(ne), 12.0 * ne, peak32, bestGpu([&] {
               check(k->binary_f32(HMRT_BINARY_ADD, x, 1, shape, y, 1, shape, z, 1, shape), "add");
             }));
  efficiency("transcendental", double(ne), 8.0 * ne, peak32, bestGpu([&] {
               check(k->unary_f32(HMRT_UNARY_EXP, x, y, ne), "exp");
             }));
  {  // fused: bias + GELU (erf), 6 ops per element (driver/measure_gelu.h)
    float* bias = mem.get(cols);
    float* c = mem.get(3);  // sqrt(2), 1 and 1/2: zeros time the same
    const void* in[5] = {bias, x, c, c + 1, c + 2};
    const int64_t is_bool[5] = {0, 0, 0, 0, 0};
    const int64_t in_dims[10] = {1, cols, rows, cols, 1, 1, 1, 1, 1, 1};
    efficiency("fused", 6.0 * ne, 8.0 * ne, peak32, bestGpu([&] {
                 check(k->fused_f32(hmrt::kMeasureGeluInstructions, hmrt::kMeasureGeluCode,
                                    hmrt::kMeasureGeluInputs, in, is_bool, in_dims, y, 2, dims2),
                       "fused");
               }));
  }
  {  // attention: the 1.3 B GPT's (8 x 16 heads of 1024 causal keys, 128
     // dims; quick: smaller), forward and backward with bf16 products, its
     // work as tg/Analysis/Cost.h counts it (7 GEMMs of T x T x D per head,
     // halved by the mask; every operand and result once)
    const int64_t B = quick ? 1 : 8, H = quick ? 2 : 16, T = quick ? 256 : 1024, D = 128;
    const int64_t n = B * H * T * D;
    float *q = mem.get(n), *o = mem.get(n), *dq = mem.get(n), *dk = mem.get(n),
          *dv = mem.get(n), *lse = mem.get(B * H * T);
    const int32_t flags = HMRT_ATTENTION_CAUSAL | HMRT_ATTENTION_BTHD | HMRT_ATTENTION_BF16;
    const float scale = 0.088f;
    double sec = bestGpu([&] {
      check(k->attention_forward(q, q, q, nullptr, nullptr, o, lse, B, H, H, T, T, D, scale,
                                 flags, 0.0f, 0, 0), "attention");
      check(k->attention_backward(q, q, q, nullptr, nullptr, o, lse, q, dq, dk, dv, B, H, H, T,
                                  T, D, scale, flags, 0.0f, 0, 0), "attention backward");
    });
    efficiency("attention", 7.0 * n * T, 4.0 * (12.0 * n + 2.0 * B * H * T), peak16, sec);
  }
  efficiency("softmax", 5.0 * ne, 8.0 * ne, peak32, bestGpu([&] {
               check(k->softmax_axis_f32(x, 2, dims2, 1, 0, y), "softmax");
             }));
  {
    float *gamma = mem.get(cols), *beta = mem.get(cols), *mean = mem.get(rows),
          *rstd = mem.get(rows);
    efficiency("norm", 8.0 * ne, 4.0 * (2.0 * ne + 2 * cols), peak32, bestGpu([&] {
                 check(k->layer_norm_f32(x, 2, dims2, 1, gamma, beta, 1e-5f, y, mean, rstd),
                       "layer norm");
               }));
  }
  {
    double* acc = mem.get<double>(2);
    efficiency("reduction", double(ne), 4.0 * ne + 4, peak32, bestGpu([&] {
                 check(k->add_sum_of_squares(x, ne, acc, acc + 1), "sum of squares");
               }));
  }
  {
    const int64_t perm[2] = {1, 0};
    efficiency("data", 0.0, 8.0 * ne, peak32, bestGpu([&] {
                 check(k->transpose(x, 2, dims2, perm, y, sizeof(float)), "transpose");
               }));
  }
  {  // the optimizer kind: AdamW on the device, 12 flops and 28 bytes per parameter
    const int64_t np = quick ? (1 << 20) : (1 << 26);
    float *p = mem.get(np), *g = mem.get(np), *m = mem.get(np), *v = mem.get(np);
    int64_t step = 0;
    efficiency("optimizer", 12.0 * np, 28.0 * np, peak32, bestGpu([&] {
                 check(k->adamw_step(p, g, m, v, np, 1e-3, 0.9, 0.999, 1e-8, 0.01, ++step),
                       "adamw");
               }));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string out, dir, backend = "cpu";
  bool quick = false, force = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-o" && i + 1 < argc)
      out = argv[++i];
    else if (a == "--storage" && i + 1 < argc)
      dir = argv[++i];
    else if (a == "--device" && i + 1 < argc)
      backend = argv[++i];
    else if (a == "--quick")
      quick = true;
    else if (a == "--force")
      force = true;
    else if (a == "--help" || a == "-h") {
      std::printf("usage: hmrt-measure -o FILE.json [--device cpu|cuda] [--storage DIR] [--quick] "
                  "[--force]\n"
                  "  --device   the backend to measure (default cpu; cuda needs a build linked\n"
                  "             with the CUDA backend, as bench/gpu-check.sh makes)\n"
                  "  --force    replaces FILE.json when it exists\n");
      return 0;
    } else {
      die("unknown argument '" + a + "' (hmrt-measure --help)");
    }
  }
  if (out.empty()) die("no output: give -o FILE.json");
  struct stat existing;
  if (!force && ::lstat(out.c_str(), &existing) == 0)
    die(out + " exists; pass --force to replace it");

  hmrt_device* device = nullptr;
  check(hmrt_device_open(backend.c_str(), &device),
        ("opening the " + backend + " backend").c_str());
  const bool gpu = backend != "cpu";
  const int reps = quick ? 2 : 5;
  nlohmann::json j;
  j["name"] = gpu ? "measured-" + backend : "measured";
  j["shared_host"] = !gpu;
  std::fprintf(stderr, "hmrt-measure: measuring this machine%s%s\n",
               gpu ? (" (" + backend + ")").c_str() : "", quick ? " (quick)" : "");

  // Compute: a large GEMM (on a GPU, measureGpu below).
  double t = 0, peak = 0;
  if (!gpu) {
    const int64_t n = quick ? 512 : 2048;
    std::vector<float> a(size_t(n * n), 0.5f), b(size_t(n * n), 0.25f),
        c(static_cast<size_t>(n * n));
    t = best(reps, [&] {
      check(hmrt_sgemm(0, 0, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n),
            "sgemm");
    });
    peak = 2.0 * double(n) * n * n / t;
    note("peak_flops.f32 (sgemm)", peak / 1e9, "GFLOP/s");
    j["peak_flops"] = {{"f32", peak}};
  }

  // Memory: copies within a tier and between tiers.
  const uint64_t bytes = quick ? (32ull << 20) : (256ull << 20);
  hmrt_buffer *d0 = nullptr, *d1 = nullptr, *h0 = nullptr, *h1 = nullptr;
  check(hmrt_buffer_alloc(device, HMRT_TIER_DEVICE, bytes, &d0), "allocating");
  check(hmrt_buffer_alloc(device, HMRT_TIER_DEVICE, bytes, &d1), "allocating");
  check(hmrt_buffer_alloc(device, HMRT_TIER_HOST, bytes, &h0), "allocating");
  check(hmrt_buffer_alloc(device, HMRT_TIER_HOST, bytes, &h1), "allocating");
  for (hmrt_buffer* x : {d0, d1, h0, h1}) check(hmrt_memset(x, 0, 1, bytes), "memset");
  auto copy = [&](hmrt_buffer* dst, hmrt_buffer* src) {
    return best(reps, [&] { check(hmrt_copy(dst, 0, src, 0, bytes), "copy"); });
  };
  const double bandwidth = 2.0 * double(bytes) / copy(d1, d0);  // read + write
  note("memory_bandwidth (read + write)", bandwidth / 1e9, "GB/s");
  j["memory_bandwidth"] = bandwidth;
  const double h2d = double(bytes) / copy(d0, h0), d2h = double(bytes) / copy(h0, d0);
  const double hostCopy = double(bytes) / copy(h1, h0);
  const double both = 2.0 * double(bytes) / best(reps, [&] {
    std::thread up([&] { check(hmrt_copy(d0, 0, h0, 0, bytes), "copy"); });
    check(hmrt_copy(h1, 0, d1, 0, bytes), "copy");
    up.join();
  });
  note("links.host_to_device", h2d / 1e9, "GB/s");
  note("links.device_to_host", d2h / 1e9, "GB/s");
  note("links.both_directions", both / 1e9, "GB/s");
  note("links.host_copy", hostCopy / 1e9, "GB/s");
  double storageWrite = 0.8e9, storageRead = 1.0e9, storageLatency = 0;
  if (!dir.empty()) {
    storage(device, dir, quick ? (uint64_t{64} << 20) : (uint64_t{1} << 30), &storageWrite,
            &storageRead, &storageLatency);
    note("links.storage_write", storageWrite / 1e9, "GB/s");
    note("links.storage_read", storageRead / 1e9, "GB/s");
    note("links.storage_latency", storageLatency * 1e6, "us");
  } else {
    std::fprintf(stderr, "  storage not measured (no --storage DIR): the cpu built-in's "
                         "figures\n");
  }
  j["links"] = {{"host_to_device", h2d},       {"device_to_host", d2h},
                {"both_directions", both},     {"host_copy", hostCopy},
                {"storage_read", storageRead}, {"storage_write", storageWrite}};
  if (storageLatency > 0)  // a profile's links are positive
    j["links"]["storage_latency"] = storageLatency;

  // The host optimizer, as a program runs it: a task on a stream of its own
  // (on the CPU backend, a worker thread that computes alone; on CUDA's,
  // one that computes on the runtime's threads).
  const int64_t np = quick ? (1 << 20) : (1 << 24);
  hmrt_stream* worker = nullptr;
  check(hmrt_stream_create(device, &worker), "stream");
  auto onWorker = [&](std::function<hmrt_status()> task) {
    check(hmrt_launch_host_func(
              worker,
              [](void* f) { return (*static_cast<std::function<hmrt_status()>*>(f))(); }, &task),
          "launch");
    check(hmrt_stream_synchronize(worker), "host optimizer");
  };
  std::vector<float> p(size_t(np), 0.1f), g(size_t(np), 0.01f), m(size_t(np), 0.0f),
      v(size_t(np), 0.0f);
  int64_t step = 0;
  t = best(reps, [&] {
    onWorker([&] {
      return hmrt_adamw_step(p.data(), g.data(), m.data(), v.data(), np, 1e-3, 0.9, 0.999, 1e-8,
                             0.01, ++step);
    });
  });
  const double adamw = double(np) / t;
  std::vector<uint8_t> mc(static_cast<size_t>(np)), vc(static_cast<size_t>(np));
  std::vector<float> ma(static_cast<size_t>(np / 256 + 1)), va(static_cast<size_t>(np / 256 + 1));
  step = 0;
  t = best(reps, [&] {
    onWorker([&] {
      return hmrt_adamw8bit_step(p.data(), g.data(), mc.data(), ma.data(), vc.data(), va.data(),
                                 np, 1e-3, 0.9, 0.999, 1e-8, 0.01, ++step);
    });
  });
  hmrt_stream_destroy(worker);
  const double adamw8 = double(np) / t;
  note("host_optimizer.f32", adamw / 1e6, "M params/s");
  note("host_optimizer.8bit", adamw8 / 1e6, "M params/s");
  j["host_optimizer"] = {{"f32", adamw}, {"8bit", adamw8}};
  if (gpu) {
    measureGpu(device, quick, reps, bandwidth, j);
    for (hmrt_buffer* buf : {d0, d1, h0, h1}) hmrt_buffer_free(buf);
    hmrt_device_close(device);
    write(out, j);
    return 0;
  }

  // The fixed cost of one op.
  float one = 1.0f, out1 = 0.0f;
  const int64_t shape1[1] = {1};
  const int calls = quick ? 2000 : 20000;
  t = best(reps, [&] {
    for (int i = 0; i < calls; ++i)
      hmrt_binary_f32(HMRT_BINARY_ADD, &one, 1, shape1, &one, 1, shape1, &out1, 1, shape1);
  });
  // A call alone costs little; an op large enough to be split across the
  // threads also pays for waking them: the time of an add of 64 Ki elements
  // beyond what its bytes take at the measured bandwidth.
  const int64_t small = 1 << 16;
  std::vector<float> sa(static_cast<size_t>(small), 1.0f), sb(static_cast<size_t>(small), 2.0f),
      sc(static_cast<size_t>(small));
  const int64_t shapeSmall[1] = {small};
  const int smallCalls = quick ? 200 : 2000;
  double parallel = best(reps, [&] {
    for (int i = 0; i < smallCalls; ++i)
      hmrt_binary_f32(HMRT_BINARY_ADD, sa.data(), 1, shapeSmall, sb.data(), 1, shapeSmall,
                      sc.data(), 1, shapeSmall);
  }) / smallCalls;
  const double launch = std::max(t / calls, parallel - 12.0 * double(small) / bandwidth);
  note("launch_overhead", launch * 1e6, "us");
  j["launch_overhead"] = launch;

  // Efficiency per kind: the cost model's roofline time at peak over the
  // measured time (flops and bytes as tg/Analysis/Cost.h counts them).
  auto roofline = [&](double flops, double bytes_) {
    return std::max(flops / peak, bytes_ / bandwidth) + launch;
  };
  auto efficiency = [&](const char* kind, double flops, double bytes_, double seconds) {
    recordEfficiency(j, kind, roofline(flops, bytes_), seconds);
  };
  {  // matmul: transformer-sized products (512 rows, width w, to w or 4w
     // columns), small to large, as one total
    const int64_t rows = 512;
    double flops = 0, bytes_ = 0, s = 0;
    for (int64_t width : {128, 256, 512, 1024}) {
      if (quick && width > 256) break;
      for (int64_t cols_ : {width, 4 * width}) {
        std::vector<float> x(static_cast<size_t>(rows * width), 0.5f),
            w(static_cast<size_t>(width * cols_), 0.25f), y(static_cast<size_t>(rows * cols_));
        s += best(reps, [&] {
          check(hmrt_sgemm(0, 0, rows, cols_, width, 1.0f, x.data(), width, w.data(), cols_,
                           0.0f, y.data(), cols_), "sgemm");
        });
        flops += 2.0 * rows * cols_ * width;
        bytes_ += 4.0 * (rows * width + width * cols_ + rows * cols_);
      }
    }
    // Smaller products can run faster than the large one (caches): the
    // peak is the best seen.
    if (flops / s > peak) {
      peak = flops / s;
      note("peak_flops.f32 (transformer shapes)", peak / 1e9, "GFLOP/s");
      j["peak_flops"] = {{"f32", peak}};
    }
    efficiency("matmul", flops, bytes_, s);
  }
  const int64_t rows = quick ? 1024 : 8192, cols = 1024, ne = rows * cols;
  std::vector<float> x(size_t(ne), 0.5f), y(static_cast<size_t>(ne)), z(static_cast<size_t>(ne));
  const int64_t shape[1] = {ne};
  {
    double s = best(reps, [&] {
      check(hmrt_binary_f32(HMRT_BINARY_ADD, x.data(), 1, shape, y.data(), 1, shape, z.data(), 1,
                            shape), "add");
    });
    efficiency("elementwise", double(ne), 12.0 * ne, s);
  }
  {  // exp, erf, tanh and their kin: one flop per element in the cost model
    double s = best(reps, [&] {
      check(hmrt_unary_f32(HMRT_UNARY_EXP, x.data(), y.data(), ne), "exp");
    });
    efficiency("transcendental", double(ne), 8.0 * ne, s);
  }
  {  // fused: bias + GELU (erf), 6 ops per element (driver/measure_gelu.h)
    std::vector<float> bias(static_cast<size_t>(cols), 0.1f);
    const float c2 = 1.41421354f, one = 1.0f, half = 0.5f;
    const void* in[5] = {bias.data(), x.data(), &c2, &one, &half};
    const int64_t is_bool[5] = {0, 0, 0, 0, 0};
    const int64_t dims2[2] = {rows, cols};
    const int64_t in_dims[10] = {1, cols, rows, cols, 1, 1, 1, 1, 1, 1};
    double s = best(reps, [&] {
      check(hmrt_fused_f32(hmrt::kMeasureGeluInstructions, hmrt::kMeasureGeluCode,
                           hmrt::kMeasureGeluInputs, in, is_bool, in_dims, y.data(), 2, dims2),
            "fused");
    });
    efficiency("fused", 6.0 * ne, 8.0 * ne, s);
  }
  {  // attention: the kernel forward and backward on causal heads of 256
     // keys and 32 dims, its work as tg/Analysis/Cost.h counts it (7 GEMMs
     // of T x T x D per head, halved by the mask; every operand and result
     // once)
    const int64_t B = quick ? 1 : 4, H = 8, T = 256, D = 32, n = B * H * T * D;
    const size_t un = static_cast<size_t>(n);
    std::vector<float> q(un, 0.01f), o(un), dq(un), dk(un), dv(un),
        lse(static_cast<size_t>(B * H * T));
    double s = best(reps, [&] {
      check(hmrt_attention_forward(q.data(), q.data(), q.data(), nullptr, nullptr, o.data(),
                                   lse.data(), B, H, H, T, T, D, 0.17f, HMRT_ATTENTION_CAUSAL,
                                   0.0f, 0, 0), "attention");
      check(hmrt_attention_backward(q.data(), q.data(), q.data(), nullptr, nullptr, o.data(),
                                    lse.data(), q.data(), dq.data(), dk.data(), dv.data(), B, H,
                                    H, T, T, D, 0.17f, HMRT_ATTENTION_CAUSAL, 0.0f, 0, 0),
            "attention backward");
    });
    efficiency("attention", 7.0 * n * T, 4.0 * (12.0 * n + 2.0 * B * H * T), s);
  }
  {
    double s = best(reps, [&] {
      check(hmrt_softmax_forward(x.data(), y.data(), rows, cols), "softmax");
    });
    efficiency("softmax", 5.0 * ne, 8.0 * ne, s);
  }
  {
    std::vector<float> gamma(size_t(cols), 1.0f), beta(static_cast<size_t>(cols)), mean(static_cast<size_t>(rows)),
        rstd(static_cast<size_t>(rows));
    double s = best(reps, [&] {
      check(hmrt_layernorm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(),
                                   rstd.data(), rows, cols, 1e-5f), "layernorm");
    });
    efficiency("norm", 8.0 * ne, 4.0 * (2.0 * ne + 2 * cols), s);
  }
  {
    double sum = 0;
    double s = best(reps, [&] { check(hmrt_sum_of_squares(x.data(), ne, &sum), "reduce"); });
    efficiency("reduction", double(ne), 4.0 * ne + 4, s);
  }
  {
    const int64_t dims[2] = {rows, cols}, perm[2] = {1, 0};
    double s = best(reps, [&] {
      check(hmrt_transpose(x.data(), 2, dims, perm, y.data(), sizeof(float)), "transpose");
    });
    efficiency("data", 0.0, 8.0 * ne, s);
  }
  // The optimizer kind: AdamW's 12 flops and 28 bytes per parameter
  // (gradient read, parameter and both moments read and written).
  efficiency("optimizer", 12.0 * np, 28.0 * np, double(np) / adamw);

  for (hmrt_buffer* buf : {d0, d1, h0, h1}) hmrt_buffer_free(buf);
  hmrt_device_close(device);
  write(out, j);
  return 0;
}
