// core/plan.h: the element offsets a GPU thread computes for a flat index
// (Plan::offsets) are those of the broadcast rule, on merged plans of every
// broadcasting pattern, and the CPU's run walk visits the same offsets.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/plan.h"

namespace {

// The offset of y's flat index i in an operand of shape (r, s) broadcast to
// y's shape (ry, sy): the naive rule.
int64_t broadcast_offset(int64_t i, int32_t r, const int64_t* s, int32_t ry,
                         const int64_t* sy) {
  int64_t off = 0, stride = 1;
  for (int d = ry - 1; d >= 0; --d) {
    const int64_t idx = i % sy[d];
    i /= sy[d];
    const int64_t e = hmrt::aligned_dim(r, s, ry, d);
    if (e != 1) off += idx * stride;
    stride *= e;
  }
  return off;
}

TEST(Plan, OffsetsFollowTheBroadcastRule) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    const int32_t ry = 1 + int32_t(rng() % 5);
    std::vector<int64_t> sy(static_cast<size_t>(ry)), sa, sb;
    for (auto& d : sy) d = 1 + int64_t(rng() % 4);
    // Each input: a suffix of y's shape with some dims set to 1.
    auto input = [&](std::vector<int64_t>& s) {
      const int32_t r = int32_t(rng() % (ry + 1));
      s.assign(sy.end() - r, sy.end());
      for (auto& d : s)
        if (rng() % 3 == 0) d = 1;
    };
    input(sa);
    input(sb);
    const int32_t ranks[2] = {int32_t(sa.size()), int32_t(sb.size())};
    const int64_t* shapes[2] = {sa.data(), sb.data()};
    hmrt::Plan p;
    ASSERT_TRUE(hmrt::broadcast_plan(p, 2, ranks, shapes, ry, sy.data()));
    for (int64_t i = 0; i < p.total; ++i) {
      int64_t off[hmrt::kMaxOps];
      p.offsets(i, off);
      ASSERT_EQ(off[0], i) << "trial " << trial;
      ASSERT_EQ(off[1], broadcast_offset(i, ranks[0], sa.data(), ry, sy.data()))
          << "trial " << trial << " i " << i;
      ASSERT_EQ(off[2], broadcast_offset(i, ranks[1], sb.data(), ry, sy.data()))
          << "trial " << trial << " i " << i;
    }
  }
}

}  // namespace
