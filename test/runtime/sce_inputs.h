// The SoftmaxCrossEntropyLoss cases of the tests that check another
// evaluation of its gradient against hmrt_sce_loss_backward_f32
// (cuda_nn_test.cpp: the GPU's kernels; to_bf16_test.cpp: the CPU's bf16
// gradient): (tokens, vocabulary) with the mean and no weights (the fp32
// kernel's fast path), weights, an ignored label, each reduction, and dims
// after the classes (fewer than one tile of columns, and more).
#ifndef HMRT_TEST_SCE_INPUTS_H
#define HMRT_TEST_SCE_INPUTS_H

#include <cstdint>
#include <vector>

#include "hmrt/nn_ops.h"
#include "test_util.h"

namespace hmrt_test {

struct SceCase {
  std::vector<int64_t> shape;
  hmrt_loss_reduction reduction;
  bool weighted, ignore;
};

inline const std::vector<SceCase>& sce_cases() {
  static const std::vector<SceCase> cases = {
      {{64, 1000}, HMRT_LOSS_MEAN, false, false},  // GPT's (tokens, vocabulary)
      {{40, 77}, HMRT_LOSS_MEAN, false, true},
      {{9, 13}, HMRT_LOSS_SUM, true, true},
      {{3, 5, 4, 2}, HMRT_LOSS_NONE, true, false},
      {{3, 5, 4}, HMRT_LOSS_MEAN, true, true},
      {{3, 5, 70}, HMRT_LOSS_MEAN, true, true},
  };
  return cases;
}

// Case c's inputs, drawn from `salt`: scores in [-6, 6], label e at
// (7e + salt) mod C, label 1's class ignored where c.ignore, class weights
// in [0.5, 2] (wp null unless c.weighted), and the loss's gradient (E
// elements for "none", else 1).
struct SceInputs {
  SceInputs(const SceCase& c, uint32_t salt)
      : rank(int32_t(c.shape.size())), C(c.shape[1]), E(c.shape[0] * trailing(c.shape)),
        nl(c.reduction == HMRT_LOSS_NONE ? E : 1),
        x(random_vec(E * C, 40 + salt, -6.0f, 6.0f)),
        labels(labels_for(E, C, salt)),
        ignore_index(c.ignore ? labels[1] : 0),
        w(random_vec(C, 50 + salt, 0.5f, 2.0f)),
        wp(c.weighted ? w.data() : nullptr),
        dloss(random_vec(nl, 60 + salt, 0.5f, 1.5f)) {}

  const int32_t rank;
  const int64_t C, E, nl;
  const std::vector<float> x;
  const std::vector<int64_t> labels;
  const int64_t ignore_index;
  const std::vector<float> w;
  const float* const wp;
  const std::vector<float> dloss;

 private:
  static int64_t trailing(const std::vector<int64_t>& shape) {
    int64_t d = 1;
    for (size_t i = 2; i < shape.size(); ++i) d *= shape[i];
    return d;
  }
  static std::vector<int64_t> labels_for(int64_t E, int64_t C, uint32_t salt) {
    std::vector<int64_t> l(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) l[size_t(e)] = (e * 7 + salt) % C;
    return l;
  }
};

}  // namespace hmrt_test

#endif  // HMRT_TEST_SCE_INPUTS_H
