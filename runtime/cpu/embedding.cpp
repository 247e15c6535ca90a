// Token embedding: gather rows of the table (forward) and scatter-add the
// output gradient back into the table's gradient (backward).
// Backward splits the embedding dimension across threads, so every thread
// visits all tokens in order and repeated ids are summed in the same order
// whatever the thread count.
#include <algorithm>
#include <cstring>

#include "core/internal.h"
#include "hmrt/kernels.h"

namespace hmrt {
namespace {

hmrt_status check_ids(const char* fn, const int64_t* ids, int64_t n,
                      int64_t vocab) {
  for (int64_t i = 0; i < n; ++i)
    if (ids[i] < 0 || ids[i] >= vocab)
      return fail(HMRT_OUT_OF_RANGE,
                  "%s: ids[%lld] = %lld is outside the vocabulary [0, %lld)",
                  fn, (long long)i, (long long)ids[i], (long long)vocab);
  return HMRT_OK;
}

hmrt_status check_embedding(const char* fn, const int64_t* ids,
                            const float* table, const float* rows, int64_t n,
                            int64_t vocab, int64_t dim) {
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_SIZE(fn, vocab);
  HMRT_CHECK_SIZE(fn, dim);
  HMRT_CHECK_PTR(fn, ids, n);
  HMRT_CHECK_PTR(fn, table, vocab * dim);
  HMRT_CHECK_PTR(fn, rows, n * dim);
  return check_ids(fn, ids, n, vocab);
}

}  // namespace
}  // namespace hmrt

extern "C" {

hmrt_status hmrt_embedding_forward(const int64_t* ids, const float* weight,
                                   float* out, int64_t n, int64_t vocab,
                                   int64_t dim) {
  using namespace hmrt;
  hmrt_status st = check_embedding("hmrt_embedding_forward", ids, weight, out,
                                   n, vocab, dim);
  if (st != HMRT_OK) return st;
  if (dim == 0) return HMRT_OK;
  const int64_t grain = std::max<int64_t>(1, 8192 / dim);
  parallel_for(n, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      std::memcpy(out + i * dim, weight + ids[i] * dim, dim * sizeof(float));
  });
  return HMRT_OK;
}

hmrt_status hmrt_embedding_backward(const int64_t* ids, const float* dout,
                                    float* dweight, int64_t n, int64_t vocab,
                                    int64_t dim) {
  using namespace hmrt;
  hmrt_status st = check_embedding("hmrt_embedding_backward", ids, dweight,
                                   dout, n, vocab, dim);
  if (st != HMRT_OK) return st;
  // Threads own column ranges of at least 64 floats (whole cache lines).
  parallel_for(ceil_div(dim, 16), 4, [&](int64_t lo, int64_t hi) {
    const int64_t c0 = lo * 16, c1 = std::min(dim, hi * 16);
    for (int64_t i = 0; i < n; ++i) {
      const float* src = dout + i * dim;
      float* dst = dweight + ids[i] * dim;
      for (int64_t c = c0; c < c1; ++c) dst[c] += src[c];
    }
  });
  return HMRT_OK;
}

}  // extern "C"
