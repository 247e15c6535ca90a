// Block-wise 8-bit quantisation with dynamic (tree) maps and the 8-bit AdamW
// step built on it, after bitsandbytes (Dettmers et al., "8-bit Optimizers
// via Block-wise Quantization", 2022).  Own code; the maps follow the
// construction of bitsandbytes' create_dynamic_map.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/internal.h"
#include "core/quant8_math.h"
#include "cpu/adamw_update.h"
#include "cpu/arg_checks.h"
#include "hmrt/kernels.h"

namespace hmrt {
namespace {

constexpr int64_t kBlock = HMRT_QUANT_BLOCK;

struct Maps {
  QuantMap s{true}, u{false};
};

const Maps& maps() {
  static const Maps m;  // thread-safe initialisation (C++11)
  return m;
}

// Quantises len values with the block's absmax already known.
void quantize_block(const QuantMap& qm, const float* x, int64_t len,
                    float absmax, uint8_t* codes) {
  if (!(absmax > 0.0f)) {  // all zero, or NaN (kept in absmax): codes unused
    std::fill(codes, codes + len, qm.zero);
    return;
  }
  const float inv = 1.0f / absmax;
  for (int64_t i = 0; i < len; ++i) codes[i] = qm.nearest(x[i] * inv);
}

// max |x|; a NaN anywhere makes it NaN, so the block dequantises to NaN
// (as an fp32 state would stay NaN) instead of silently dropping it.
float block_absmax(const float* x, int64_t len) {
  float m = 0.0f;
  for (int64_t i = 0; i < len; ++i) {
    m = absmax_step(m, x[i]);
    if (m != m) break;
  }
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

const QuantMap& quant_map(bool is_signed) { return is_signed ? maps().s : maps().u; }

}  // namespace hmrt

extern "C" {

void hmrt_dynamic_map(int is_signed, float map[256]) {
  const float* src = hmrt::quant_map(is_signed != 0).map;
  std::copy(src, src + 256, map);
}

hmrt_status hmrt_quantize_blockwise(const float* x, int64_t n, int is_signed,
                                    uint8_t* codes, float* absmax) {
  using namespace hmrt;
  hmrt_status st = check_quant("hmrt_quantize_blockwise", x, codes, absmax, n);
  if (st != HMRT_OK) return st;
  const QuantMap& qm = quant_map(is_signed != 0);
  parallel_for(ceil_div(n, kBlock), 16, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      const int64_t base = b * kBlock, len = std::min(kBlock, n - base);
      absmax[b] = block_absmax(x + base, len);
      quantize_block(qm, x + base, len, absmax[b], codes + base);
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
  const float* map = quant_map(is_signed != 0).map;
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
  hmrt_status st = check_adamw_args(fn, step, beta1, beta2);
  if (st != HMRT_OK) return st;
  const AdamWScalars s(lr, beta1, beta2, eps, weight_decay, step);
  const QuantMap& smap = quant_map(true);
  const QuantMap& umap = quant_map(false);
  parallel_for(ceil_div(n, kBlock), 16, [&](int64_t lo, int64_t hi) {
    float m[kBlock], v[kBlock];
    for (int64_t b = lo; b < hi; ++b) {
      const int64_t base = b * kBlock, len = std::min(kBlock, n - base);
      uint8_t* qm = exp_avg_codes + base;
      uint8_t* qv = exp_avg_sq_codes + base;
      const float am = exp_avg_absmax[b], av = exp_avg_sq_absmax[b];
      for (int64_t i = 0; i < len; ++i) {
        m[i] = smap.map[qm[i]] * am;
        v[i] = umap.map[qv[i]] * av;
      }
      adamw_update_n(s, grad + base, param + base, m, v, len);
      const float new_am = block_absmax(m, len);
      const float new_av = block_absmax(v, len);
      exp_avg_absmax[b] = new_am;
      exp_avg_sq_absmax[b] = new_av;
      quantize_block(smap, m, len, new_am, qm);
      quantize_block(umap, v, len, new_av, qv);
    }
  });
  return HMRT_OK;
}

}  // extern "C"
