// Block-wise 8-bit quantisation with dynamic (tree) maps and the 8-bit AdamW
// step built on it, after bitsandbytes (Dettmers et al., "8-bit Optimizers
// via Block-wise Quantization", 2022).  Own code; the maps follow the
// construction of bitsandbytes' create_dynamic_map.
#include <algorithm>
#include <cmath>

#include "core/internal.h"
#include "cpu/adamw_update.h"
#include "hmrt/kernels.h"

namespace hmrt {
namespace {

constexpr int64_t kBlock = HMRT_QUANT_BLOCK;

// create_dynamic_map(signed, max_exponent_bits=7, total_bits=8): for each
// exponent e = 0..6, split [0.1, 1] evenly into 2^e (signed) or 2^(e+1)
// (unsigned) intervals and take their midpoints, scaled by 10^(e-6); signed
// maps add the negatives; 0 and 1 complete the 256 entries.  Computed in
// double, rounded to float, sorted ascending.
void build_map(bool is_signed, float* out) {
  double data[256];
  int n = 0;
  for (int e = 0; e < 7; ++e) {
    const int items = is_signed ? (1 << e) : (1 << (e + 1));
    const double scale = std::pow(10.0, e - 6);
    for (int i = 0; i < items; ++i) {
      const double lo = 0.1 + 0.9 * i / items;
      const double hi = 0.1 + 0.9 * (i + 1) / items;
      const double mid = scale * (lo + hi) / 2.0;
      data[n++] = mid;
      if (is_signed) data[n++] = -mid;
    }
  }
  data[n++] = 0.0;
  data[n++] = 1.0;
  std::sort(data, data + n);
  for (int i = 0; i < 256; ++i) out[i] = static_cast<float>(data[i]);
}

struct Maps {
  float signed_map[256];
  float unsigned_map[256];
  uint8_t signed_zero, unsigned_zero;  // codes of 0.0
  Maps() {
    build_map(true, signed_map);
    build_map(false, unsigned_map);
    signed_zero = static_cast<uint8_t>(
        std::find(signed_map, signed_map + 256, 0.0f) - signed_map);
    unsigned_zero = static_cast<uint8_t>(
        std::find(unsigned_map, unsigned_map + 256, 0.0f) - unsigned_map);
  }
};

const Maps& maps() {
  static const Maps m;  // thread-safe initialisation (C++11)
  return m;
}

// Index of the map entry nearest to y; ties go to the larger entry.
// Branch-free binary search: pos ends as the largest i with map[i] <= y
// (or 0), then pos or pos+1 is the nearest.
inline uint8_t nearest(const float* map, float y) {
  int pos = 0;
  for (int step = 128; step >= 1; step >>= 1)
    pos += (map[pos + step] <= y) ? step : 0;
  if (pos < 255 && map[pos + 1] - y <= y - map[pos]) ++pos;
  return static_cast<uint8_t>(pos);
}

// Quantises len values with the block's absmax already known.
void quantize_block(const float* map, uint8_t zero_code, const float* x,
                    int64_t len, float absmax, uint8_t* codes) {
  if (!(absmax > 0.0f)) {  // all zero (or NaN: keep codes defined)
    std::fill(codes, codes + len, zero_code);
    return;
  }
  const float inv = 1.0f / absmax;
  for (int64_t i = 0; i < len; ++i) codes[i] = nearest(map, x[i] * inv);
}

float block_absmax(const float* x, int64_t len) {
  float m = 0.0f;
  for (int64_t i = 0; i < len; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}

hmrt_status check_quant(const char* fn, const void* x, const void* codes,
                        const void* absmax, int64_t n) {
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_PTR(fn, x, n);
  HMRT_CHECK_PTR(fn, codes, n);
  HMRT_CHECK_PTR(fn, absmax, ceil_div(n, kBlock));
  return HMRT_OK;
}

}  // namespace
}  // namespace hmrt

extern "C" {

void hmrt_dynamic_map(int is_signed, float map[256]) {
  const hmrt::Maps& m = hmrt::maps();
  const float* src = is_signed ? m.signed_map : m.unsigned_map;
  std::copy(src, src + 256, map);
}

hmrt_status hmrt_quantize_blockwise(const float* x, int64_t n, int is_signed,
                                    uint8_t* codes, float* absmax) {
  using namespace hmrt;
  hmrt_status st = check_quant("hmrt_quantize_blockwise", x, codes, absmax, n);
  if (st != HMRT_OK) return st;
  const Maps& m = maps();
  const float* map = is_signed ? m.signed_map : m.unsigned_map;
  const uint8_t zero = is_signed ? m.signed_zero : m.unsigned_zero;
  parallel_for(ceil_div(n, kBlock), 16, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      const int64_t base = b * kBlock, len = std::min(kBlock, n - base);
      absmax[b] = block_absmax(x + base, len);
      quantize_block(map, zero, x + base, len, absmax[b], codes + base);
    }
  });
  return HMRT_OK;
}

hmrt_status hmrt_dequantize_blockwise(const uint8_t* codes,
                                      const float* absmax, int64_t n,
                                      int is_signed, float* x) {
  using namespace hmrt;
  hmrt_status st =
      check_quant("hmrt_dequantize_blockwise", x, codes, absmax, n);
  if (st != HMRT_OK) return st;
  const float* map = is_signed ? maps().signed_map : maps().unsigned_map;
  parallel_for(ceil_div(n, kBlock), 16, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      const int64_t base = b * kBlock, len = std::min(kBlock, n - base);
      for (int64_t i = 0; i < len; ++i)
        x[base + i] = map[codes[base + i]] * absmax[b];
    }
  });
  return HMRT_OK;
}

hmrt_status hmrt_adamw8bit_step(float* param, const float* grad,
                                uint8_t* exp_avg_codes, float* exp_avg_absmax,
                                uint8_t* exp_avg_sq_codes,
                                float* exp_avg_sq_absmax, int64_t n, double lr,
                                double beta1, double beta2, double eps,
                                double weight_decay, int64_t step) {
  using namespace hmrt;
  const char* fn = "hmrt_adamw8bit_step";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_PTR(fn, param, n);
  HMRT_CHECK_PTR(fn, grad, n);
  HMRT_CHECK_PTR(fn, exp_avg_codes, n);
  HMRT_CHECK_PTR(fn, exp_avg_sq_codes, n);
  HMRT_CHECK_PTR(fn, exp_avg_absmax, ceil_div(n, kBlock));
  HMRT_CHECK_PTR(fn, exp_avg_sq_absmax, ceil_div(n, kBlock));
  HMRT_CHECK_ARG(step >= 1, "%s: step must be >= 1 (1-based), got %lld", fn,
                 (long long)step);
  HMRT_CHECK_ARG(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1,
                 "%s: betas must be in [0, 1), got %g and %g", fn, beta1,
                 beta2);
  const AdamWScalars s(lr, beta1, beta2, eps, weight_decay, step);
  const Maps& mp = maps();
  parallel_for(ceil_div(n, kBlock), 16, [&](int64_t lo, int64_t hi) {
    float m[kBlock], v[kBlock];
    for (int64_t b = lo; b < hi; ++b) {
      const int64_t base = b * kBlock, len = std::min(kBlock, n - base);
      uint8_t* qm = exp_avg_codes + base;
      uint8_t* qv = exp_avg_sq_codes + base;
      const float am = exp_avg_absmax[b], av = exp_avg_sq_absmax[b];
      for (int64_t i = 0; i < len; ++i) {
        m[i] = mp.signed_map[qm[i]] * am;
        v[i] = mp.unsigned_map[qv[i]] * av;
      }
      adamw_update_n(s, grad + base, param + base, m, v, len);
      float new_am = 0.0f, new_av = 0.0f;
      for (int64_t i = 0; i < len; ++i) {
        new_am = std::max(new_am, std::fabs(m[i]));
        new_av = std::max(new_av, v[i]);
      }
      exp_avg_absmax[b] = new_am;
      exp_avg_sq_absmax[b] = new_av;
      quantize_block(mp.signed_map, mp.signed_zero, m, len, new_am, qm);
      quantize_block(mp.unsigned_map, mp.unsigned_zero, v, len, new_av, qv);
    }
  });
  return HMRT_OK;
}

}  // extern "C"
