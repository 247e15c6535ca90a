// The shape and memory layout of a scaled-dot-product attention call
// (hmrt_attention_forward / _backward), shared by the CPU kernel
// (cpu/attention.cpp) and the CUDA backend's: which rows of q, k, v (and
// out, dout, dq, dk, dv) belong to a head, and where a bias element is.
#ifndef HMRT_CORE_ATTENTION_LAYOUT_H
#define HMRT_CORE_ATTENTION_LAYOUT_H

#include <cstdint>

#include "core/host_device.h"
#include "hmrt/hmrt.h"
#include "hmrt/kernels.h"

namespace hmrt {

struct AttnLayout {
  int64_t B, H, Hk, T, S, D;  // batch, heads, kv heads, q_len, kv_len, head_dim
  int64_t group;              // query heads per kv head
  float scale;
  bool causal;
  bool bthd;       // tensors are (batch, seq, heads, head_dim)
  bool bf16;       // bf16 products with fp32 sums (HMRT_ATTENTION_BF16)
  bool packed;     // q, k, v (and dq, dk, dv) share rows (HMRT_ATTENTION_PACKED)
  int64_t bst[4];  // bias element strides over (b, h, i, j), 0 if broadcast

  // Row strides of q and dq, of k, v, dk and dv, and of out and dout.
  HMRT_HD int64_t ldq() const { return !bthd ? D : packed ? (H + 2 * Hk) * D : H * D; }
  HMRT_HD int64_t ldk() const { return !bthd ? D : packed ? (H + 2 * Hk) * D : Hk * D; }
  HMRT_HD int64_t ldo() const { return bthd ? H * D : D; }
  // Row 0 of query head h in q and dq, of kv head kvh in k, v, dk and dv,
  // and of query head h in out and dout.
  HMRT_HD int64_t q_off(int64_t b, int64_t h) const {
    return bthd ? b * T * ldq() + h * D : (b * H + h) * T * D;
  }
  HMRT_HD int64_t kv_off(int64_t b, int64_t kvh) const {
    return bthd ? b * S * ldk() + kvh * D : (b * Hk + kvh) * S * D;
  }
  HMRT_HD int64_t o_off(int64_t b, int64_t h) const {
    return bthd ? b * T * H * D + h * D : (b * H + h) * T * D;
  }
  // Elements from the first to one past the last of q (dq) and of k (v,
  // dk, dv): their counts, unless packed.
  HMRT_HD int64_t q_span() const {
    return !packed || B * T == 0 ? B * H * T * D : (B * T - 1) * ldq() + H * D;
  }
  HMRT_HD int64_t kv_span() const {
    return !packed || B * S == 0 ? B * Hk * S * D : (B * S - 1) * ldk() + Hk * D;
  }
  // The bias element of query row i and key j of head (b, h).
  HMRT_HD int64_t bias_off(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return b * bst[0] + h * bst[1] + i * bst[2] + j * bst[3];
  }
  // The flat index of probability (i, j) of head (b, h) in the (B, H, T, S)
  // tensor hmrt_dropout_f32 would drop; head = b * H + h.
  HMRT_HD uint64_t prob_index(int64_t head, int64_t i, int64_t j) const {
    return uint64_t((head * T + i) * S + j);
  }

  // From the kernel's arguments (flags: HMRT_ATTENTION_*); bias_dims may be
  // NULL without a bias.
  static AttnLayout make(const int64_t* bias_dims, int64_t B, int64_t H, int64_t Hk, int64_t T,
                         int64_t S, int64_t D, float scale, int32_t flags) {
    AttnLayout a{B,     H,     Hk,
                 T,     S,     D,
                 Hk > 0 ? H / Hk : 1, scale, (flags & HMRT_ATTENTION_CAUSAL) != 0,
                 (flags & HMRT_ATTENTION_BTHD) != 0, (flags & HMRT_ATTENTION_BF16) != 0,
                 (flags & HMRT_ATTENTION_PACKED) != 0, {0, 0, 0, 0}};
    if (bias_dims) {
      for (int64_t s = 1, d = 3; d >= 0; --d) {
        a.bst[d] = bias_dims[d] == 1 ? 0 : s;
        s *= bias_dims[d];
      }
    }
    return a;
  }
};

// The argument checks of the attention kernels (cpu/attention.cpp), with
// their messages: sizes, heads a multiple of kv heads, causal and packed
// needing q_len == kv_len, packed needing bthd, a bias's dims each 1 or the
// full size, dropout in [0, 1].
hmrt_status check_attention(const char* fn, const AttnLayout& a, const float* bias,
                            const int64_t* bias_dims, float dropout);
// With a.packed, that k and v (or dk and dv) are where q's (dq's) tensor
// holds them: k = q + H*D, v = k + Hk*D.
hmrt_status check_packed(const char* fn, const AttnLayout& a, const float* q, const float* k,
                         const float* v);

}  // namespace hmrt

#endif  // HMRT_CORE_ATTENTION_LAYOUT_H
