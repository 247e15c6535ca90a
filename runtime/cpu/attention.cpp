// Scaled-dot-product attention, forward and backward, flash-style: the
// (q_len x kv_len) probabilities are never stored, only each row's
// log-sum-exp.  Work is cut into blocks of kQB query rows and tiles of kKB
// keys, composed from the blocked GEMM, so scratch does not grow with the
// sequence.
//
// Forward, per (batch, head, query block), over the key tiles the block may
// see (causal: keys up to its last row), with online softmax: S = scale *
// Q_blk K_tile^T (+ bias); each row's running maximum m and running sum l
// are updated, P = exp(S - m) is added into the output accumulator as
// O += P V_tile after O and l are rescaled by exp(m_old - m); at the end
// O /= l and lse = m + log l.  Backward recomputes P = exp(S - lse) tile by
// tile:
//   dV += P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(dO * O)),
//   dQ += scale * dS K,  dK += scale * dS^T Q.
// With dropout, each probability is dropped as hmrt_dropout_f32 would drop
// the (batch, heads, q_len, kv_len) tensor, and the same mask is drawn
// again in the backward.
// Grouped heads: query head h reads kv head h / (heads / kv_heads).  With
// HMRT_ATTENTION_BTHD the tensors are (batch, seq, heads, head_dim), as the
// projections make them: a head's rows are strided, which the GEMM takes as
// its leading dimension, so no transpose is needed on either side; with
// HMRT_ATTENTION_PACKED q, k and v are read from one projection's rows (and
// dq, dk, dv written into one), wider strides of the same GEMMs.
// Backward tasks are (batch, kv head), walking the group's query heads and
// their query blocks in order, so dK and dV accumulate in a fixed order and
// results never depend on the thread count.
// With HMRT_ATTENTION_BF16 the GEMMs multiply bf16 values: q, k, v and dO
// are read from copies rounded once per call, and P (after its row sums
// and the dropout) and dS are rounded in their tiles before they are
// multiplied; the products of bf16 values are exact in fp32, so each GEMM
// is a bf16 GEMM with fp32 sums.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/attention_layout.h"
#include "core/float16.h"
#include "core/internal.h"
#include "cpu/dropout_mask.h"
#include "cpu/gemm_internal.h"
#include "cpu/vec.h"
#include "cpu/vmath.h"
#include "hmrt/tensor_ops.h"
#include "hmrt/kernels.h"

namespace hmrt {
namespace {

constexpr int64_t kQB = 64;   // query rows per block
constexpr int64_t kKB = 256;  // keys per tile

// The layout (core/attention_layout.h) with the bias and the dropout mask.
struct Attn : AttnLayout {
  const float* bias;
  const DropoutMask* drop;  // null without dropout

  // Drops the probabilities of keys [j0, j0 + n) of row i of head
  // (b, h), held in row[0, n): element ((b*H + h)*T + i)*S + j of the
  // (B, H, T, S) probabilities.
  void dropout(const float* row, int64_t head, int64_t i, int64_t j0, int64_t n,
               float* out) const {
    const uint64_t base = prob_index(head, i, j0);
    for (int64_t j = 0; j < n; ++j)
      out[j] = drop->keep(base + uint64_t(j)) ? row[j] * drop->scale : 0.0f;
  }

  template <class F>
  F* q_head(F* q, int64_t b, int64_t h) const { return q + q_off(b, h); }
  template <class F>
  F* kv_head(F* k, int64_t b, int64_t h) const { return k + kv_off(b, h / group); }
  template <class F>
  F* o_head(F* out, int64_t b, int64_t h) const { return out + o_off(b, h); }
  // Keys a block of rows [i0, i1) may see.
  int64_t kend(int64_t i1) const { return causal ? std::min(S, i1) : S; }
};

Attn make(const float* bias, const int64_t* bias_dims, int64_t B, int64_t H,
          int64_t Hk, int64_t T, int64_t S, int64_t D, float scale,
          int32_t flags, const DropoutMask* drop) {
  return Attn{AttnLayout::make(bias ? bias_dims : nullptr, B, H, Hk, T, S, D, scale, flags),
              bias, drop};
}

// Scratch per thread: `tiles` (kQB x kKB) tiles, `rows` floats per query
// row of a block, plus GEMM packing space.
struct Scratch {
  int64_t tile_floats, gemm_floats, per_thread;
  Scratch(int64_t D, int tiles, int64_t rows) {
    tile_floats = kQB * kKB;  // a multiple of 16: keeps 64-byte alignment
    gemm_floats = std::max({gemm_workspace_floats(kQB, kKB, D),
                            gemm_workspace_floats(kQB, D, kKB),
                            gemm_workspace_floats(kKB, D, kQB)});
    gemm_floats = (gemm_floats + 15) / 16 * 16;
    per_thread = tiles * tile_floats + (kQB * rows + 15) / 16 * 16 + gemm_floats;
  }
};

// s (qb x kn, row stride kKB) = scale * Q_blk K_tile^T + bias, for query
// rows [i0, i0 + qb) of head (b, h) and keys [j0, j0 + kn).
void scores(const Attn& a, const float* q, const float* k, int64_t b,
            int64_t h, int64_t i0, int64_t qb, int64_t j0, int64_t kn, float* s,
            float* gws) {
  sgemm_serial(false, true, qb, kn, a.D, a.scale, a.q_head(q, b, h) + i0 * a.ldq(),
               a.ldq(), a.kv_head(k, b, h) + j0 * a.ldk(), a.ldk(), 0.0f, s, kKB,
               gws);
  if (!a.bias) return;
  for (int64_t r = 0; r < qb; ++r) {
    const float* br = a.bias + b * a.bst[0] + h * a.bst[1] + (i0 + r) * a.bst[2];
    float* sr = s + r * kKB;
    if (a.bst[3] == 1)
      for (int64_t j = 0; j < kn; ++j) sr[j] += br[j0 + j];
    else
      for (int64_t j = 0; j < kn; ++j) sr[j] += br[0];
  }
}

// Keys of the tile [j0, j0 + kn) that query row i sees (a prefix of it).
inline int64_t visible(const Attn& a, int64_t i, int64_t j0, int64_t kn) {
  return a.causal ? std::clamp<int64_t>(i + 1 - j0, 0, kn) : kn;
}

// x[j] = exp(x[j] - c) for j < n, at the CPU's vector width (vmath's exp
// gives the same bits at every width). Row sums are taken apart, with
// hmrt::sum's fixed order, so that they too do not depend on the width.
inline void exp_shifted(float* x, float c, int64_t n) {
  for (int64_t j = 0; j < n; ++j) x[j] -= c;
  vmath::map(HMRT_FUSED_EXP, x, nullptr, nullptr, x, n);
}

// x[j] rounded to bf16 (nearest even) for j < n, kept as fp32.
inline void round_bf16(float* x, int64_t n) {
  for (int64_t j = 0; j < n; ++j) x[j] = round_to_bf16(x[j]);
}

// The operands the GEMMs read: x itself, or with a.bf16 a copy of its n
// elements rounded to bf16 in `copy`. Null when the copy cannot be had.
const float* gemm_operand(const Attn& a, const float* x, int64_t n, std::vector<float>* copy) {
  if (!a.bf16 || n == 0) return x;  // nothing to round (no keys: no bytes to copy)
  return bf16_values(x, n, copy) ? copy->data() : nullptr;
}

// q, k and v as the GEMMs read them (gemm_operand); packed, one copy of
// the projection they share, k and v at their places in it.
void qkv_operands(const Attn& a, const float** q, const float** k, const float** v,
                  std::vector<float>* qc, std::vector<float>* kc, std::vector<float>* vc) {
  if (!a.packed) {
    *q = gemm_operand(a, *q, a.q_span(), qc);
    *k = gemm_operand(a, *k, a.kv_span(), kc);
    *v = gemm_operand(a, *v, a.kv_span(), vc);
    return;
  }
  *q = gemm_operand(a, *q, a.B * a.T * a.ldq(), qc);
  *k = *q ? *q + a.H * a.D : nullptr;
  *v = *k ? *k + a.Hk * a.D : nullptr;
}

}  // namespace
}  // namespace hmrt

hmrt_status hmrt::check_attention(const char* fn, const AttnLayout& a, const float* bias,
                                  const int64_t* bias_dims, float dropout) {
  HMRT_CHECK_ARG(dropout >= 0.0f && dropout <= 1.0f,
                 "%s: dropout must be in [0, 1], got %g", fn, double(dropout));
  HMRT_CHECK_SIZE(fn, a.B);
  HMRT_CHECK_SIZE(fn, a.T);
  HMRT_CHECK_SIZE(fn, a.S);
  HMRT_CHECK_ARG(a.H >= 1 && a.Hk >= 1 && a.H % a.Hk == 0,
                 "%s: heads (%lld) must be a positive multiple of kv_heads (%lld)",
                 fn, (long long)a.H, (long long)a.Hk);
  HMRT_CHECK_ARG(a.D >= 1, "%s: head_dim must be >= 1, got %lld", fn,
                 (long long)a.D);
  HMRT_CHECK_ARG(!a.causal || a.T == a.S,
                 "%s: causal attention needs q_len == kv_len (%lld, %lld)", fn,
                 (long long)a.T, (long long)a.S);
  HMRT_CHECK_ARG(!a.packed || (a.bthd && a.T == a.S),
                 "%s: packed q, k and v need the bthd layout and q_len == kv_len (%lld, %lld)",
                 fn, (long long)a.T, (long long)a.S);
  if (bias) {
    HMRT_CHECK_ARG(bias_dims != nullptr, "%s: bias without bias_dims", fn);
    const int64_t full[4] = {a.B, a.H, a.T, a.S};
    for (int d = 0; d < 4; ++d)
      HMRT_CHECK_ARG(bias_dims[d] == 1 || bias_dims[d] == full[d],
                     "%s: bias dim %d is %lld: it must be 1 or %lld", fn, d,
                     (long long)bias_dims[d], (long long)full[d]);
  }
  return HMRT_OK;
}

hmrt_status hmrt::check_packed(const char* fn, const AttnLayout& a, const float* q,
                              const float* k, const float* v) {
  HMRT_CHECK_ARG(!a.packed || (k == q + a.H * a.D && v == k + a.Hk * a.D),
                 "%s: packed q, k and v must be one tensor's heads in order: k at q + "
                 "heads * head_dim, v at k + kv_heads * head_dim",
                 fn);
  return HMRT_OK;
}

extern "C" {

hmrt_status hmrt_attention_forward(const float* q, const float* k,
                                   const float* v, const float* bias,
                                   const int64_t* bias_dims, float* out,
                                   float* lse, int64_t batch, int64_t heads,
                                   int64_t kv_heads, int64_t q_len,
                                   int64_t kv_len, int64_t head_dim,
                                   float scale, int32_t flags, float dropout,
                                   uint64_t seed, uint64_t counter) {
  using namespace hmrt;
  const char* fn = "hmrt_attention_forward";
  const DropoutMask mask(dropout, seed, counter);
  const Attn a = make(bias, bias_dims, batch, heads, kv_heads, q_len, kv_len,
                      head_dim, scale, flags, dropout > 0.0f ? &mask : nullptr);
  hmrt_status st = check_attention(fn, a, bias, bias_dims, dropout);
  if (st == HMRT_OK) st = check_packed(fn, a, q, k, v);
  if (st != HMRT_OK) return st;
  const int64_t T = a.T, D = a.D;
  HMRT_CHECK_PTR(fn, q, a.q_span());
  HMRT_CHECK_PTR(fn, k, a.kv_span());
  HMRT_CHECK_PTR(fn, v, a.kv_span());
  HMRT_CHECK_PTR(fn, out, a.B * a.H * T * D);
  const int64_t bh = a.B * a.H;
  if (bh == 0 || T == 0) return HMRT_OK;
  std::vector<float> qc, kc, vc;
  qkv_operands(a, &q, &k, &v, &qc, &kc, &vc);
  if (!q || !k || !v)
    return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate the bf16 operands", fn);

  // Per thread: the score tile, then per query row its output accumulator
  // (D floats), running maximum and running sum.
  const Scratch sc(D, 1, D + 2);
  const int64_t qblocks = ceil_div(T, kQB);
  const int threads =
      static_cast<int>(std::min<int64_t>(num_threads(), bh * qblocks));
  float* ws = thread_scratch(threads * sc.per_thread);
  if (ws == nullptr)
    return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate %lld floats of scratch",
                fn, (long long)(threads * sc.per_thread));

  // Under a causal mask later query blocks see more keys: hand them out first.
  parallel_tasks_indexed(bh * qblocks, threads, [&](int64_t task, int tid) {
    const int64_t head = task % bh, blk = qblocks - 1 - task / bh;
    const int64_t b = head / a.H, h = head % a.H;
    const int64_t i0 = blk * kQB, i1 = std::min(T, i0 + kQB), qb = i1 - i0;
    const int64_t kend = a.kend(i1);
    float* s = ws + tid * sc.per_thread;  // qb x kn, row stride kKB
    float* acc = s + sc.tile_floats;      // qb x D
    float* mx = acc + kQB * D;            // running row maximum
    float* sum = mx + kQB;                // running sum of exp(s - mx)
    float* gws = s + sc.per_thread - sc.gemm_floats;
    std::fill(acc, acc + qb * D, 0.0f);
    std::fill(mx, mx + qb, -INFINITY);
    std::fill(sum, sum + qb, 0.0f);
    // Online softmax over key tiles: each tile's exponentials are taken
    // against the running maximum, and what was accumulated before is
    // rescaled when the maximum grows.
    for (int64_t j0 = 0; j0 < kend; j0 += kKB) {
      const int64_t kn = std::min(kKB, kend - j0);
      scores(a, q, k, b, h, i0, qb, j0, kn, s, gws);
      for (int64_t r = 0; r < qb; ++r) {
        float* sr = s + r * kKB;
        const int64_t nvis = visible(a, i0 + r, j0, kn);
        const float m = nvis > 0 ? std::max(mx[r], hmrt::max(sr, nvis)) : mx[r];
        if (m == -INFINITY) {  // nothing seen yet
          std::fill(sr, sr + kn, 0.0f);
          continue;
        }
        exp_shifted(sr, m, nvis);
        std::fill(sr + nvis, sr + kn, 0.0f);
        const float corr = vexp1(mx[r] - m);  // 0 on the first visible tile
        sum[r] = sum[r] * corr + hmrt::sum(sr, nvis);
        mx[r] = m;
        if (corr != 1.0f)
          for (float *o = acc + r * D, *oe = o + D; o < oe; ++o) *o *= corr;
        if (a.drop) a.dropout(sr, head, i0 + r, j0, nvis, sr);
        if (a.bf16) round_bf16(sr, nvis);
      }
      sgemm_serial(false, false, qb, D, kn, 1.0f, s, kKB,
                   a.kv_head(v, b, h) + j0 * a.ldk(), a.ldk(), 1.0f, acc, D, gws);
    }
    float* oh = a.o_head(out, b, h) + i0 * a.ldo();
    for (int64_t r = 0; r < qb; ++r) {
      const float inv = 1.0f / sum[r];
      for (int64_t d = 0; d < D; ++d) oh[r * a.ldo() + d] = acc[r * D + d] * inv;
      if (lse) lse[head * T + i0 + r] = mx[r] + std::log(sum[r]);
    }
  });
  return HMRT_OK;
}

hmrt_status hmrt_attention_backward(
    const float* q, const float* k, const float* v, const float* bias,
    const int64_t* bias_dims, const float* out, const float* lse,
    const float* dout, float* dq, float* dk, float* dv, int64_t batch,
    int64_t heads, int64_t kv_heads, int64_t q_len, int64_t kv_len,
    int64_t head_dim, float scale, int32_t flags, float dropout, uint64_t seed,
    uint64_t counter) {
  using namespace hmrt;
  const char* fn = "hmrt_attention_backward";
  const DropoutMask mask(dropout, seed, counter);
  const Attn a = make(bias, bias_dims, batch, heads, kv_heads, q_len, kv_len,
                      head_dim, scale, flags, dropout > 0.0f ? &mask : nullptr);
  hmrt_status st = check_attention(fn, a, bias, bias_dims, dropout);
  if (st == HMRT_OK) st = check_packed(fn, a, q, k, v);
  if (st == HMRT_OK) st = check_packed(fn, a, dq, dk, dv);
  if (st != HMRT_OK) return st;
  const int64_t T = a.T, S = a.S, D = a.D;
  const int64_t nq = a.q_span(), nk = a.kv_span(), no = a.B * a.H * T * D;
  HMRT_CHECK_PTR(fn, q, nq);
  HMRT_CHECK_PTR(fn, k, nk);
  HMRT_CHECK_PTR(fn, v, nk);
  HMRT_CHECK_PTR(fn, out, no);
  HMRT_CHECK_PTR(fn, lse, a.B * a.H * T);
  HMRT_CHECK_PTR(fn, dout, no);
  HMRT_CHECK_PTR(fn, dq, nq);
  HMRT_CHECK_PTR(fn, dk, nk);
  HMRT_CHECK_PTR(fn, dv, nk);
  const int64_t tasks = a.B * a.Hk;
  if (tasks == 0 || S == 0) return HMRT_OK;
  if (T == 0) {  // no query reads a key (never packed: that has T == S)
    std::fill(dk, dk + nk, 0.0f);
    std::fill(dv, dv + nk, 0.0f);
    return HMRT_OK;
  }
  // What the GEMMs multiply (bf16 copies with a.bf16); rowsum(dO * O)
  // reads dout itself.
  std::vector<float> qc, kc, vc, doc;
  const float *qm = q, *km = k, *vm = v;
  qkv_operands(a, &qm, &km, &vm, &qc, &kc, &vc);
  const float* dom = gemm_operand(a, dout, no, &doc);
  if (!qm || !km || !vm || !dom)
    return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate the bf16 operands", fn);

  // Per thread: the probability tile (then dS), dP, the probabilities that
  // weigh dO (dropped, or rounded to bf16) when they differ from P, and
  // rowsum(dO * O) per query row.
  const bool own_pd = a.drop || a.bf16;
  const Scratch sc(D, own_pd ? 3 : 2, 1);
  const int threads = static_cast<int>(std::min<int64_t>(num_threads(), tasks));
  float* ws = thread_scratch(threads * sc.per_thread);
  if (ws == nullptr)
    return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate %lld floats of scratch",
                fn, (long long)(threads * sc.per_thread));

  const int64_t ldq = a.ldq(), ldk = a.ldk(), ldo = a.ldo();
  parallel_tasks_indexed(tasks, threads, [&](int64_t task, int tid) {
    const int64_t b = task / a.Hk, kvh = task % a.Hk;
    const float* kh = km + a.kv_off(b, kvh);
    const float* vh = vm + a.kv_off(b, kvh);
    float *dkh = dk + a.kv_off(b, kvh), *dvh = dv + a.kv_off(b, kvh);
    float* p = ws + tid * sc.per_thread;  // probabilities, then dS
    float* dp = p + sc.tile_floats;
    float* pd = own_pd ? dp + sc.tile_floats : p;  // the probabilities dO is weighed by
    float* di = (own_pd ? pd : dp) + sc.tile_floats;  // rowsum(dO * O)
    float* gws = p + sc.per_thread - sc.gemm_floats;
    for (int64_t j = 0; j < S; ++j) {
      std::fill(dkh + j * ldk, dkh + j * ldk + D, 0.0f);
      std::fill(dvh + j * ldk, dvh + j * ldk + D, 0.0f);
    }

    for (int64_t h = kvh * a.group; h < (kvh + 1) * a.group; ++h) {
      const int64_t head = b * a.H + h, off = a.q_off(b, h), ooff = a.o_off(b, h);
      const float *qh = qm + off, *oh = out + ooff, *doh = dom + ooff;
      const float* lh = lse + head * T;
      float* dqh = dq + off;
      for (int64_t i0 = 0; i0 < T; i0 += kQB) {
        const int64_t i1 = std::min(T, i0 + kQB), qb = i1 - i0;
        const int64_t kend = a.kend(i1);
        for (int64_t r = 0; r < qb; ++r)
          di[r] = dot(dout + ooff + (i0 + r) * ldo, oh + (i0 + r) * ldo, D);
        for (int64_t j0 = 0; j0 < kend; j0 += kKB) {
          const int64_t kn = std::min(kKB, kend - j0);
          // P = exp(scale * Q K^T + bias - lse), zero where masked.
          scores(a, qm, km, b, h, i0, qb, j0, kn, p, gws);
          for (int64_t r = 0; r < qb; ++r) {
            float* pr = p + r * kKB;
            const int64_t nvis = visible(a, i0 + r, j0, kn);
            exp_shifted(pr, lh[i0 + r], nvis);
            std::fill(pr + nvis, pr + kn, 0.0f);
            if (a.drop)
              a.dropout(pr, head, i0 + r, j0, kn, pd + r * kKB);
            else if (a.bf16)
              std::copy(pr, pr + kn, pd + r * kKB);
            if (a.bf16) round_bf16(pd + r * kKB, kn);
          }
          // dV[tile] += P'^T dO_blk, P' = P with the dropout applied
          sgemm_serial(true, false, kn, D, qb, 1.0f, pd, kKB, doh + i0 * ldo, ldo,
                       1.0f, dvh + j0 * ldk, ldk, gws);
          // dP = dO_blk V_tile^T
          sgemm_serial(false, true, qb, kn, D, 1.0f, doh + i0 * ldo, ldo,
                       vh + j0 * ldk, ldk, 0.0f, dp, kKB, gws);
          // dS = P * (dP - rowsum(dO * O)), written over P; with dropout
          // dP is the dropped probabilities' gradient masked and scaled
          // alike: dS = P' * dP' - P * rowsum(dO * O).  With bf16 products
          // P' is rounded, so the mask is applied to dP instead:
          // dS = P * (dP' - rowsum(dO * O)).
          for (int64_t r = 0; r < qb; ++r) {
            float* pr = p + r * kKB;
            float* dpr = dp + r * kKB;
            if (a.drop && !a.bf16) {
              const float* pdr = pd + r * kKB;
              for (int64_t j = 0; j < kn; ++j) pr[j] = pdr[j] * dpr[j] - pr[j] * di[r];
            } else {
              if (a.drop) a.dropout(dpr, head, i0 + r, j0, kn, dpr);
              for (int64_t j = 0; j < kn; ++j) pr[j] *= dpr[j] - di[r];
            }
            if (a.bf16) round_bf16(pr, kn);
          }
          // dQ_blk (+)= scale * dS K_tile,  dK[tile] += scale * dS^T Q_blk
          sgemm_serial(false, false, qb, D, kn, a.scale, p, kKB, kh + j0 * ldk, ldk,
                       j0 == 0 ? 0.0f : 1.0f, dqh + i0 * ldq, ldq, gws);
          sgemm_serial(true, false, kn, D, qb, a.scale, p, kKB, qh + i0 * ldq, ldq,
                       1.0f, dkh + j0 * ldk, ldk, gws);
        }
      }
    }
  });
  return HMRT_OK;
}

}  // extern "C"
