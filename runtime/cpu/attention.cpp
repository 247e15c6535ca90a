// Causal scaled-dot-product attention for (batch, heads, seq, head_dim)
// tensors, forward and backward, composed from the blocked GEMM.
//
// Forward works on blocks of kQB query rows: S = scale * Q_blk K^T over the
// keys the block may see, masked softmax (saving the row log-sum-exp), then
// O_blk = P V.  Backward recomputes P = exp(S - lse) per query block instead
// of storing the (seq x seq) probabilities:
//   dV += P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(dO * O)),
//   dQ = scale * dS K,  dK += scale * dS^T Q.
// Forward tasks are (batch, head, query block); backward tasks are
// (batch, head), walking query blocks in order so dK and dV accumulate in a
// fixed order.
#include <algorithm>
#include <cmath>

#include "core/internal.h"
#include "cpu/gemm_internal.h"
#include "cpu/vec.h"
#include "hmrt/kernels.h"

namespace hmrt {
namespace {

constexpr int64_t kQB = 64;  // query rows per block

hmrt_status check_attention(const char* fn, int64_t batch, int64_t heads,
                            int64_t seq, int64_t head_dim) {
  HMRT_CHECK_SIZE(fn, batch);
  HMRT_CHECK_SIZE(fn, heads);
  HMRT_CHECK_SIZE(fn, seq);
  HMRT_CHECK_SIZE(fn, head_dim);
  return HMRT_OK;
}

// Scratch per thread: `tiles` (kQB x seq) tiles plus GEMM packing space.
struct Scratch {
  int64_t tile_floats, gemm_floats, per_thread;
  Scratch(int64_t seq, int64_t d, int tiles) {
    tile_floats = (kQB * seq + 15) / 16 * 16;  // keep 64-byte alignment
    const int64_t qb = std::min(kQB, seq);
    gemm_floats = std::max({gemm_workspace_floats(qb, seq, d),
                            gemm_workspace_floats(qb, d, seq),
                            gemm_workspace_floats(seq, d, qb)});
    gemm_floats = (gemm_floats + 15) / 16 * 16;
    per_thread = tiles * tile_floats + gemm_floats;
  }
};

}  // namespace
}  // namespace hmrt

extern "C" {

hmrt_status hmrt_causal_attention_forward(const float* q, const float* k,
                                          const float* v, float* out,
                                          float* lse, int64_t batch,
                                          int64_t heads, int64_t seq,
                                          int64_t head_dim, float scale) {
  using namespace hmrt;
  const char* fn = "hmrt_causal_attention_forward";
  hmrt_status st = check_attention(fn, batch, heads, seq, head_dim);
  if (st != HMRT_OK) return st;
  const int64_t bh = batch * heads, T = seq, D = head_dim;
  HMRT_CHECK_PTR(fn, q, bh * T * D);
  HMRT_CHECK_PTR(fn, k, bh * T * D);
  HMRT_CHECK_PTR(fn, v, bh * T * D);
  HMRT_CHECK_PTR(fn, out, bh * T * D);
  if (bh == 0 || T == 0) return HMRT_OK;

  const Scratch sc(T, D, 1);
  const int64_t qblocks = ceil_div(T, kQB);
  const int threads =
      static_cast<int>(std::min<int64_t>(num_threads(), bh * qblocks));
  float* ws = thread_scratch(threads * sc.per_thread);
  if (ws == nullptr)
    return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate %lld floats of scratch",
                fn, (long long)(threads * sc.per_thread));

  // Later query blocks see more keys: hand them out first.
  parallel_tasks_indexed(bh * qblocks, threads, [&](int64_t task, int tid) {
    const int64_t head = task % bh, blk = qblocks - 1 - task / bh;
    const int64_t i0 = blk * kQB, i1 = std::min(T, i0 + kQB), qb = i1 - i0;
    const int64_t kend = i1;  // keys [0, i1) may be visible
    const float* qh = q + head * T * D;
    const float* kh = k + head * T * D;
    const float* vh = v + head * T * D;
    float* s = ws + tid * sc.per_thread;  // qb x kend, row stride T
    float* gws = s + sc.tile_floats;

    sgemm_serial(false, true, qb, kend, D, scale, qh + i0 * D, D, kh, D, 0.0f,
                 s, T, gws);
    for (int64_t r = 0; r < qb; ++r) {
      float* sr = s + r * T;
      const int64_t nvis = i0 + r + 1;  // keys 0..i visible
      const float m = hmrt::max(sr, nvis);
      const float sum = exp_sub_sum(sr, m, sr, nvis);
      const float inv = 1.0f / sum;
      for (int64_t j = 0; j < nvis; ++j) sr[j] *= inv;
      for (int64_t j = nvis; j < kend; ++j) sr[j] = 0.0f;
      if (lse) lse[head * T + i0 + r] = m + std::log(sum);
    }
    sgemm_serial(false, false, qb, D, kend, 1.0f, s, T, vh, D, 0.0f,
                 out + head * T * D + i0 * D, D, gws);
  });
  return HMRT_OK;
}

hmrt_status hmrt_causal_attention_backward(
    const float* q, const float* k, const float* v, const float* out,
    const float* lse, const float* dout, float* dq, float* dk, float* dv,
    int64_t batch, int64_t heads, int64_t seq, int64_t head_dim, float scale) {
  using namespace hmrt;
  const char* fn = "hmrt_causal_attention_backward";
  hmrt_status st = check_attention(fn, batch, heads, seq, head_dim);
  if (st != HMRT_OK) return st;
  const int64_t bh = batch * heads, T = seq, D = head_dim;
  const int64_t n = bh * T * D;
  HMRT_CHECK_PTR(fn, q, n);
  HMRT_CHECK_PTR(fn, k, n);
  HMRT_CHECK_PTR(fn, v, n);
  HMRT_CHECK_PTR(fn, out, n);
  HMRT_CHECK_PTR(fn, lse, bh * T);
  HMRT_CHECK_PTR(fn, dout, n);
  HMRT_CHECK_PTR(fn, dq, n);
  HMRT_CHECK_PTR(fn, dk, n);
  HMRT_CHECK_PTR(fn, dv, n);
  if (bh == 0 || T == 0) return HMRT_OK;

  const Scratch sc(T, D, 2);
  const int threads = static_cast<int>(std::min<int64_t>(num_threads(), bh));
  float* ws = thread_scratch(threads * sc.per_thread);
  if (ws == nullptr)
    return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate %lld floats of scratch",
                fn, (long long)(threads * sc.per_thread));

  parallel_tasks_indexed(bh, threads, [&](int64_t head, int tid) {
    const int64_t off = head * T * D;
    const float *qh = q + off, *kh = k + off, *vh = v + off;
    const float *oh = out + off, *doh = dout + off, *lh = lse + head * T;
    float *dqh = dq + off, *dkh = dk + off, *dvh = dv + off;
    float* p = ws + tid * sc.per_thread;  // probabilities, then dS
    float* dp = p + sc.tile_floats;
    float* gws = dp + sc.tile_floats;
    std::fill(dkh, dkh + T * D, 0.0f);
    std::fill(dvh, dvh + T * D, 0.0f);

    for (int64_t i0 = 0; i0 < T; i0 += kQB) {
      const int64_t i1 = std::min(T, i0 + kQB), qb = i1 - i0, kend = i1;
      // P = exp(scale * Q K^T - lse), zero above the diagonal.
      sgemm_serial(false, true, qb, kend, D, scale, qh + i0 * D, D, kh, D,
                   0.0f, p, T, gws);
      for (int64_t r = 0; r < qb; ++r) {
        float* pr = p + r * T;
        const int64_t nvis = i0 + r + 1;
        const float l = lh[i0 + r];
        exp_sub_scale(pr, l, 1.0f, pr, nvis);
        for (int64_t j = nvis; j < kend; ++j) pr[j] = 0.0f;
      }
      // dV[0:kend] += P^T dO_blk
      sgemm_serial(true, false, kend, D, qb, 1.0f, p, T, doh + i0 * D, D,
                   1.0f, dvh, D, gws);
      // dP = dO_blk V^T
      sgemm_serial(false, true, qb, kend, D, 1.0f, doh + i0 * D, D, vh, D,
                   0.0f, dp, T, gws);
      // dS = P * (dP - rowsum(dO * O)), written over P.
      for (int64_t r = 0; r < qb; ++r) {
        const float di = dot(doh + (i0 + r) * D, oh + (i0 + r) * D, D);
        float* pr = p + r * T;
        const float* dpr = dp + r * T;
        for (int64_t j = 0; j < kend; ++j) pr[j] *= dpr[j] - di;
      }
      // dQ_blk = scale * dS K,  dK[0:kend] += scale * dS^T Q_blk
      sgemm_serial(false, false, qb, D, kend, scale, p, T, kh, D, 0.0f,
                   dqh + i0 * D, D, gws);
      sgemm_serial(true, false, kend, D, qb, scale, p, T, qh + i0 * D, D,
                   1.0f, dkh, D, gws);
    }
  });
  return HMRT_OK;
}

}  // extern "C"
