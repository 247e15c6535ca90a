// Sums in a fixed order with every thread: the column sums of cpu/norm.cpp
// (LayerNorm's and RMSNorm's parameter gradients) and of reduce_to over
// leading dims with fewer outputs than threads (cpu/tensor_ops.cpp: the
// bias gradients), which sum each column in chunks of rows, each chunk from
// zero, then the chunks in order (what the CUDA backend sums in parallel).
#ifndef HMRT_CPU_ORDERED_SUMS_H
#define HMRT_CPU_ORDERED_SUMS_H

#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

#include "core/internal.h"

namespace hmrt {

// total[t * width + i] = the sum over chunks k = 0, 1, ... of `chunks`, in
// that order, of chunk k's sum for task t, which add(t, k, acc) adds into
// acc[0, width) from zero. The (task, chunk) pairs run in parallel, enough
// chunks at a time to give every thread work (at most 64, so that their
// sums stay small); the order, and so the bits, do not depend on the
// threads. False when the sums' memory cannot be had.
template <class Add>
bool ordered_chunk_sums(int64_t tasks, int64_t chunks, int64_t width, std::vector<double>* total,
                        Add add) {
  const int64_t most = std::clamp<int64_t>(ceil_div(4 * num_threads(), std::max<int64_t>(tasks, 1)),
                                           1, 64);
  std::vector<double> partial;
  try {
    total->assign(size_t(tasks * width), 0.0);
    partial.reserve(size_t(tasks * std::min(most, chunks) * width));
  } catch (const std::bad_alloc&) {
    return false;
  }
  for (int64_t k0 = 0; k0 < chunks; k0 += most) {
    const int64_t batch = std::min(most, chunks - k0);
    partial.assign(size_t(tasks * batch * width), 0.0);
    parallel_for(tasks * batch, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t u = lo; u < hi; ++u) add(u / batch, k0 + u % batch, partial.data() + u * width);
    });
    parallel_for(tasks, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t)
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t i = 0; i < width; ++i)
            (*total)[size_t(t * width + i)] += partial[size_t((t * batch + b) * width + i)];
    });
  }
  return true;
}

}  // namespace hmrt

#endif  // HMRT_CPU_ORDERED_SUMS_H
