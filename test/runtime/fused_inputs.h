// The inputs of the tests that check another evaluation of a fused program
// against hmrt_fused_f32 (cuda_nn_test.cpp: the GPU kernel; plan_test.cpp:
// the GPU thread's element code on the host): one of every kind, over an
// output of (3, 37, 129): 0 x in place, 1 a bias row (1, 1, 129), 2 a scalar
// 0.5, 3 a bool mask over the leading dims (3, 37, 1).
#ifndef HMRT_TEST_FUSED_INPUTS_H
#define HMRT_TEST_FUSED_INPUTS_H

#include <cstdint>
#include <vector>

#include "test_util.h"

namespace hmrt_test {

struct FusedInputs {
  static constexpr int32_t kRank = 3;
  const int64_t dims[kRank] = {3, 37, 129};
  const int64_t n = 3 * 37 * 129;
  const std::vector<float> x = random_vec(n, 11, -4.0f, 4.0f);
  const std::vector<float> bias = random_vec(129, 12, -1.0f, 1.0f);
  const std::vector<float> half = {0.5f};
  const std::vector<uint8_t> mask = [] {
    std::vector<uint8_t> m(3 * 37);
    for (size_t i = 0; i < m.size(); ++i) m[i] = uint8_t((i * 5) % 3 == 0);
    return m;
  }();
  const std::vector<int64_t> in_dims = {3, 37, 129, 1, 1, 129, 1, 1, 1, 3, 37, 1};
  const std::vector<int64_t> in_bool = {0, 0, 0, 1};
  const void* const host[4] = {x.data(), bias.data(), half.data(), mask.data()};
};

}  // namespace hmrt_test

#endif  // HMRT_TEST_FUSED_INPUTS_H
