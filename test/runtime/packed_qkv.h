// q, k and v as one projection makes them (HMRT_ATTENTION_PACKED): a
// (batch, seq, heads + 2 kv_heads, head_dim) tensor holding each row's
// query heads, then its key heads, then its value heads. The tests that
// check packed attention against three tensors (attention_test.cpp on the
// CPU, cuda_nn_test.cpp on the GPU) pack and unpack with this.
#ifndef HMRT_TEST_PACKED_QKV_H
#define HMRT_TEST_PACKED_QKV_H

#include <algorithm>
#include <cstdint>
#include <vector>

namespace hmrt_test {

struct PackedQkv {
  int64_t B, T, H, Hk, D;

  int64_t row() const { return (H + 2 * Hk) * D; }
  int64_t size() const { return B * T * row(); }
  // Where k and v begin in the packed tensor (q at 0).
  int64_t k_offset() const { return H * D; }
  int64_t v_offset() const { return (H + Hk) * D; }

  // q (B, T, H, D), k and v (B, T, Hk, D) packed.
  std::vector<float> pack(const std::vector<float>& q, const std::vector<float>& k,
                          const std::vector<float>& v) const {
    std::vector<float> x(static_cast<size_t>(size()));
    for (int64_t r = 0; r < B * T; ++r) {
      float* dst = x.data() + r * row();
      std::copy_n(q.data() + r * H * D, H * D, dst);
      std::copy_n(k.data() + r * Hk * D, Hk * D, dst + k_offset());
      std::copy_n(v.data() + r * Hk * D, Hk * D, dst + v_offset());
    }
    return x;
  }

  // The three tensors of a packed one.
  void unpack(const std::vector<float>& x, std::vector<float>* q, std::vector<float>* k,
              std::vector<float>* v) const {
    q->assign(static_cast<size_t>(B * T * H * D), 0.0f);
    k->assign(static_cast<size_t>(B * T * Hk * D), 0.0f);
    v->assign(k->size(), 0.0f);
    for (int64_t r = 0; r < B * T; ++r) {
      const float* src = x.data() + r * row();
      std::copy_n(src, H * D, q->data() + r * H * D);
      std::copy_n(src + k_offset(), Hk * D, k->data() + r * Hk * D);
      std::copy_n(src + v_offset(), Hk * D, v->data() + r * Hk * D);
    }
  }
};

}  // namespace hmrt_test

#endif  // HMRT_TEST_PACKED_QKV_H
