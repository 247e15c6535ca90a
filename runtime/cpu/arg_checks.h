// The scalar-argument rules of the optimizer and dropout kernels, shared by
// the CPU kernels and the CUDA backend's, so that both refuse the same
// arguments with the same messages.
#ifndef HMRT_CPU_ARG_CHECKS_H
#define HMRT_CPU_ARG_CHECKS_H

#include <cstdint>

#include "core/internal.h"

namespace hmrt {

// AdamW (fp32 and 8-bit): a 1-based step, betas in [0, 1).
inline hmrt_status check_adamw_args(const char* fn, int64_t step, double beta1, double beta2) {
  HMRT_CHECK_ARG(step >= 1, "%s: step must be >= 1 (1-based), got %lld", fn, (long long)step);
  HMRT_CHECK_ARG(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1,
                 "%s: betas must be in [0, 1), got %g and %g", fn, beta1, beta2);
  return HMRT_OK;
}

// SGD: Nesterov momentum as torch.optim.SGD allows it.
inline hmrt_status check_sgd_args(const char* fn, double momentum, double dampening,
                                  int nesterov) {
  HMRT_CHECK_ARG(!nesterov || (momentum > 0.0 && dampening == 0.0),
                 "%s: nesterov needs momentum > 0 and dampening == 0", fn);
  return HMRT_OK;
}

// Dropout: a ratio in [0, 1].
inline hmrt_status check_dropout_ratio(const char* fn, float ratio) {
  HMRT_CHECK_ARG(ratio >= 0.0f && ratio <= 1.0f, "%s: ratio must be in [0, 1], got %g", fn,
                 double(ratio));
  return HMRT_OK;
}

// ONNX's optimizers: the update count T.
inline hmrt_status check_update_count(const char* fn, int64_t t) {
  HMRT_CHECK_ARG(t >= 0, "%s: the update count T must be >= 0, got %lld", fn, (long long)t);
  return HMRT_OK;
}

}  // namespace hmrt

#endif  // HMRT_CPU_ARG_CHECKS_H
