// Block-wise 8-bit quantisation with dynamic (tree) maps and the 8-bit AdamW
// step built on it, after bitsandbytes (Dettmers et al., "8-bit Optimizers
// via Block-wise Quantization", 2022).  Own code; the maps follow the
// construction of bitsandbytes' create_dynamic_map.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/internal.h"
#include "core/quant8_math.h"
#include "cpu/adamw_update.h"
#include "cpu/arg_checks.h"
#include "cpu/quant8_table.h"
#include "cpu/vec.h"
#include "hmrt/kernels.h"

namespace hmrt {
namespace {

constexpr int64_t kBlock = HMRT_QUANT_BLOCK;

struct Maps {
  QuantMap s{true}, u{false};
  CodeTable sc{s}, uc{u};
};

const Maps& maps() {
  static const Maps m;  // thread-safe initialisation (C++11)
  return m;
}

const CodeTable& code_table(bool is_signed) { return is_signed ? maps().sc : maps().uc; }

// Whether the kernels below may take their AVX2 paths (asked once).
bool has_avx2() {
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return avx2;
}

// Quantises len values with the block's absmax already known.
void quantize_block(const QuantMap& qm, const CodeTable& table, const float* x,
                    int64_t len, float absmax, uint8_t* codes) {
  if (!(absmax > 0.0f)) {  // all zero, or NaN (kept in absmax): codes unused
    std::fill(codes, codes + len, qm.zero);
    return;
  }
  const float inv = 1.0f / absmax;
  if (table.exact()) {
    table.codes(x, len, inv, codes);
  } else {
    for (int64_t i = 0; i < len; ++i) codes[i] = qm.nearest(x[i] * inv);
  }
}

// max |x|; a NaN anywhere makes it NaN, so the block dequantises to NaN
// (as an fp32 state would stay NaN) instead of silently dropping it.  Four
// lanes first (the maximum of magnitudes does not depend on their order);
// a block with a NaN is scanned again one by one, so that the NaN kept is
// the first one's, as ever.
float block_absmax(const float* x, int64_t len) {
  int64_t i = 0;
  v4f m4 = vsplat(0.0f);
  v4i nan4 = v4i{};
  for (; i + 4 <= len; i += 4) {
    const v4f a = vabs(vload(x + i));
    m4 = a > m4 ? a : m4;
    nan4 |= a != a;
  }
  float m = std::max(std::max(m4[0], m4[1]), std::max(m4[2], m4[3]));
  bool nan = (nan4[0] | nan4[1] | nan4[2] | nan4[3]) != 0;
  for (; i < len && !nan; ++i) {
    m = absmax_step(m, x[i]);
    nan = m != m;
  }
  if (!nan) return m;
  m = 0.0f;
  for (i = 0; i < len; ++i) {
    m = absmax_step(m, x[i]);
    if (m != m) break;
  }
  return m;
}

// A block's moments decoded into m and v (code's entry times the absmax),
// then AdamW on the block: eight lanes where the CPU has AVX2, else four.
// The same operations per element either way (lane-wise, no fused
// multiply-add), so the same bits.
__attribute__((target("avx2"))) void update_block_avx2(
    const AdamWScalars& s, const float* smap, const float* umap, const uint8_t* qm, float am,
    const uint8_t* qv, float av, const float* g, float* p, float* m, float* v, int64_t len) {
  const __m256 vam = _mm256_set1_ps(am), vav = _mm256_set1_ps(av);
  const __m256 decay = _mm256_set1_ps(s.decay), beta1 = _mm256_set1_ps(s.beta1),
               omb1 = _mm256_set1_ps(s.one_minus_beta1), beta2 = _mm256_set1_ps(s.beta2),
               omb2 = _mm256_set1_ps(s.one_minus_beta2), bc2 = _mm256_set1_ps(s.bc2_sqrt),
               eps = _mm256_set1_ps(s.eps), nss = _mm256_set1_ps(s.neg_step_size);
  int64_t i = 0;
  for (; i + 8 <= len; i += 8) {
    __m128i cm, cv;
    std::memcpy(&cm, qm + i, 8);
    std::memcpy(&cv, qv + i, 8);
    __m256 mv = _mm256_mul_ps(_mm256_i32gather_ps(smap, _mm256_cvtepu8_epi32(cm), 4), vam);
    __m256 vv = _mm256_mul_ps(_mm256_i32gather_ps(umap, _mm256_cvtepu8_epi32(cv), 4), vav);
    const __m256 gv = _mm256_loadu_ps(g + i);
    __m256 pv = _mm256_mul_ps(_mm256_loadu_ps(p + i), decay);
    mv = _mm256_add_ps(_mm256_mul_ps(mv, beta1), _mm256_mul_ps(omb1, gv));
    vv = _mm256_add_ps(_mm256_mul_ps(vv, beta2), _mm256_mul_ps(_mm256_mul_ps(omb2, gv), gv));
    const __m256 denom = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(vv), bc2), eps);
    pv = _mm256_add_ps(pv, _mm256_div_ps(_mm256_mul_ps(nss, mv), denom));
    _mm256_storeu_ps(p + i, pv);
    _mm256_storeu_ps(m + i, mv);
    _mm256_storeu_ps(v + i, vv);
  }
  for (; i < len; ++i) {
    m[i] = smap[qm[i]] * am;
    v[i] = umap[qv[i]] * av;
    adamw_update(s, g[i], p[i], m[i], v[i]);
  }
}

void update_block(const AdamWScalars& s, const float* smap, const float* umap, const uint8_t* qm,
                  float am, const uint8_t* qv, float av, const float* g, float* p, float* m,
                  float* v, int64_t len) {
  if (has_avx2()) return update_block_avx2(s, smap, umap, qm, am, qv, av, g, p, m, v, len);
  for (int64_t i = 0; i < len; ++i) {
    m[i] = smap[qm[i]] * am;
    v[i] = umap[qv[i]] * av;
  }
  adamw_update_n(s, g, p, m, v, len);
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

void CodeTable::codes(const float* x, int64_t n, float inv, uint8_t* out) const {
  if (has_avx2()) return codes_avx2(x, n, inv, out);
  for (int64_t i = 0; i < n; ++i) out[i] = code(x[i] * inv);
}

// code() on eight lanes: the same product, bucket, loads and comparison.
__attribute__((target("avx2"))) void CodeTable::codes_avx2(const float* x, int64_t n,
                                                          float inv, uint8_t* out) const {
  const __m256 scale = _mm256_set1_ps(inv);
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff);
  const __m256i first = _mm256_set1_epi32(static_cast<int>(kFirst));
  const __m256i last = _mm256_set1_epi32(static_cast<int>(kFirst + kCount - 1));
  const __m256i count = _mm256_set1_epi32(kCount);
  const __m256i low_byte = _mm256_set1_epi32(0xff);
  // Byte 0 of each 32-bit lane to the first 4 bytes of its 128-bit half.
  const __m256i pack = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                        -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                        -1, -1);
  const int* base = reinterpret_cast<const int*>(base_);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 y = _mm256_mul_ps(_mm256_loadu_ps(x + i), scale);
    const __m256i bits = _mm256_castps_si256(y);
    __m256i key = _mm256_srli_epi32(_mm256_and_si256(bits, magnitude), 23 - kBits);
    key = _mm256_min_epi32(_mm256_max_epi32(key, first), last);
    const __m256i index = _mm256_add_epi32(_mm256_sub_epi32(key, first),
                                           _mm256_mullo_epi32(_mm256_srli_epi32(bits, 31), count));
    const __m256 threshold = _mm256_i32gather_ps(threshold_, index, 4);
    const __m256i code = _mm256_sub_epi32(  // a true comparison is -1
        _mm256_and_si256(_mm256_i32gather_epi32(base, index, 1), low_byte),
        _mm256_castps_si256(_mm256_cmp_ps(y, threshold, _CMP_GE_OQ)));
    const __m256i bytes = _mm256_shuffle_epi8(code, pack);
    const int lo = _mm256_extract_epi32(bytes, 0), hi = _mm256_extract_epi32(bytes, 4);
    std::memcpy(out + i, &lo, 4);
    std::memcpy(out + i + 4, &hi, 4);
  }
  for (; i < n; ++i) out[i] = code(x[i] * inv);
}

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
  const CodeTable& table = code_table(is_signed != 0);
  parallel_for(ceil_div(n, kBlock), 16, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      const int64_t base = b * kBlock, len = std::min(kBlock, n - base);
      absmax[b] = block_absmax(x + base, len);
      quantize_block(qm, table, x + base, len, absmax[b], codes + base);
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
  const CodeTable& stable = code_table(true);
  const CodeTable& utable = code_table(false);
  parallel_for(ceil_div(n, kBlock), 16, [&](int64_t lo, int64_t hi) {
    float m[kBlock], v[kBlock];
    for (int64_t b = lo; b < hi; ++b) {
      const int64_t base = b * kBlock, len = std::min(kBlock, n - base);
      uint8_t* qm = exp_avg_codes + base;
      uint8_t* qv = exp_avg_sq_codes + base;
      update_block(s, smap.map, umap.map, qm, exp_avg_absmax[b], qv, exp_avg_sq_absmax[b],
                   grad + base, param + base, m, v, len);
      const float new_am = block_absmax(m, len);
      const float new_av = block_absmax(v, len);
      exp_avg_absmax[b] = new_am;
      exp_avg_sq_absmax[b] = new_av;
      quantize_block(smap, stable, m, len, new_am, qm);
      quantize_block(umap, utable, v, len, new_av, qv);
    }
  });
  return HMRT_OK;
}

}  // extern "C"
