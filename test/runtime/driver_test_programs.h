// Hand-written programs implementing the hmrt_program ABI (hmrt/program.h)
// with plain C++ loops, for the driver tests: what hmcc would generate for
// two tiny models.
//
//  - bigram: a token model.  Inputs idx and targets [4, 16] int64 (roles
//    TOKENS / TARGETS), one parameter wte [8, 8] (row i holds the logits of
//    the token after token i), its SGD momentum buffer as optimizer state, and
//    the mean cross-entropy loss as output.  SGD with momentum 0.9 (PyTorch
//    semantics), gradient clipping at clip_norm, cosine learning-rate schedule.
//  - linreg: linear regression fed with --feed.  Inputs x [8, 2] and y [8]
//    float32, parameters w [2] and b (a scalar), no optimizer state, outputs
//    loss and pred [8].  Plain SGD, constant learning rate.
//  - linreg_host: linreg with its parameters in the host tier's arena (a
//    plan a later planner may make), for the driver's per-tier paths.
//
// Each entry point starts as generated code does: the base of the device
// tier's arena (and here of the host tier's) from hmrt_exec_base.
//
// Failure injection for the driver's error paths: g_fail_at_step makes step
// number N return HMRT_INTERNAL (as a crash would stop the run), and
// g_nan_at_step makes step N report a NaN loss.
#ifndef HMRT_DRIVER_TEST_PROGRAMS_H
#define HMRT_DRIVER_TEST_PROGRAMS_H

#include <cmath>
#include <cstdint>
#include <cstring>

#include "hmrt/program.h"

namespace hmrt_test_programs {

inline int64_t g_fail_at_step = 0;
inline int64_t g_nan_at_step = 0;

// ---- bigram ---------------------------------------------------------------------
namespace bigram {

constexpr int64_t V = 8, B = 4, T = 16;
constexpr uint64_t kIdx = 0, kTgt = 512, kW = 1024, kMom = 1280, kLoss = 1536,
                   kGrad = 1600, kArena = 1920;

inline const int64_t kTokShape[] = {B, T};
inline const int64_t kWShape[] = {V, V};

inline const hmrt_tensor_desc kInputs[] = {
    {"idx", HMRT_DTYPE_I64, 2, kTokShape, kIdx, B * T * 8, HMRT_ROLE_TOKENS,
     HMRT_TIER_DEVICE, 0, nullptr},
    {"targets", HMRT_DTYPE_I64, 2, kTokShape, kTgt, B * T * 8,
     HMRT_ROLE_TARGETS, HMRT_TIER_DEVICE, 0, nullptr},
};
inline const hmrt_tensor_desc kOutputs[] = {
    {"loss", HMRT_DTYPE_F32, 0, nullptr, kLoss, 4, 0, HMRT_TIER_DEVICE, 0, nullptr},
};
inline const hmrt_tensor_desc kParams[] = {
    {"wte", HMRT_DTYPE_F32, 2, kWShape, kW, V * V * 4, 0, HMRT_TIER_DEVICE, 0, nullptr},
};
inline const hmrt_tensor_desc kStates[] = {
    {"wte.momentum_buffer", HMRT_DTYPE_F32, 2, kWShape, kMom, V * V * 4, 0,
     HMRT_TIER_DEVICE, 0, nullptr},
};

// Loss (and, when train, the gradient in the grad slot) of the batch.
inline hmrt_status loss_and_grad(uint8_t* arena, bool train, float* loss) {
  const int64_t* idx = reinterpret_cast<const int64_t*>(arena + kIdx);
  const int64_t* tgt = reinterpret_cast<const int64_t*>(arena + kTgt);
  const float* w = reinterpret_cast<const float*>(arena + kW);
  float* grad = reinterpret_cast<float*>(arena + kGrad);
  if (train) std::memset(grad, 0, V * V * sizeof(float));
  const int64_t n = B * T;
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    if (idx[i] < 0 || idx[i] >= V || tgt[i] < 0 || tgt[i] >= V)
      return HMRT_OUT_OF_RANGE;
    const float* row = w + idx[i] * V;
    double mx = row[0];
    for (int64_t v = 1; v < V; ++v) mx = row[v] > mx ? row[v] : mx;
    double sum = 0.0;
    for (int64_t v = 0; v < V; ++v) sum += std::exp(row[v] - mx);
    total += std::log(sum) + mx - row[tgt[i]];
    if (train) {
      for (int64_t v = 0; v < V; ++v) {
        const double p = std::exp(row[v] - mx) / sum;
        grad[idx[i] * V + v] +=
            static_cast<float>((p - (v == tgt[i] ? 1.0 : 0.0)) / double(n));
      }
    }
  }
  *loss = static_cast<float>(total / double(n));
  return HMRT_OK;
}

inline const hmrt_program* program();

inline hmrt_status step(hmrt_exec* exec, int64_t step, float lr, float* loss,
                        float* grad_norm) {
  uint8_t* arena = hmrt_exec_base(exec, HMRT_TIER_DEVICE);
  if (arena == nullptr) return HMRT_INVALID_ARGUMENT;
  if (step == g_fail_at_step) return HMRT_INTERNAL;
  float l = 0.0f;
  hmrt_status st = loss_and_grad(arena, true, &l);
  if (st != HMRT_OK) return st;
  float* w = reinterpret_cast<float*>(arena + kW);
  float* mom = reinterpret_cast<float*>(arena + kMom);
  float* grad = reinterpret_cast<float*>(arena + kGrad);
  double sq = 0.0;
  for (int64_t i = 0; i < V * V; ++i) sq += double(grad[i]) * grad[i];
  const float norm = static_cast<float>(std::sqrt(sq));
  const hmrt_hyperparams& h = program()->hyper;
  const float scale =
      h.clip_norm > 0 && norm > h.clip_norm ? h.clip_norm / norm : 1.0f;
  for (int64_t i = 0; i < V * V; ++i) {
    mom[i] = h.momentum * mom[i] + grad[i] * scale;
    w[i] -= lr * mom[i];
  }
  *reinterpret_cast<float*>(arena + kLoss) = l;
  *loss = step == g_nan_at_step ? NAN : l;
  *grad_norm = norm;
  return HMRT_OK;
}

inline hmrt_status forward(hmrt_exec* exec) {
  uint8_t* arena = hmrt_exec_base(exec, HMRT_TIER_DEVICE);
  if (arena == nullptr) return HMRT_INVALID_ARGUMENT;
  float l = 0.0f;
  hmrt_status st = loss_and_grad(arena, false, &l);
  *reinterpret_cast<float*>(arena + kLoss) = l;
  return st;
}

inline const hmrt_program kProgram = {
    HMRT_PROGRAM_ABI_VERSION,
    "bigram",
    "cpu",
    kArena, 0, 0,  // device, host and storage arenas
    2, kInputs,
    1, kOutputs,
    1, kParams,
    1, kStates,
    V,
    // optimizer, lr, beta1, beta2, eps, weight_decay, momentum, clip_norm,
    // lr_schedule, warmup_steps, decay_steps, min_lr
    {HMRT_OPT_SGD, 1.0f, 0.9f, 0.999f, 1e-8f, 0.0f, 0.9f, 1.0f,
     HMRT_LR_COSINE, 5, 0, 0.1f},
    step,
    forward,
    0, nullptr,  // no op names: these programs do not call hmrt_trace_op
    0, nullptr,
};

inline const hmrt_program* program() { return &kProgram; }

}  // namespace bigram

// ---- linreg ---------------------------------------------------------------------
namespace linreg {

constexpr int64_t N = 8, D = 2;
constexpr uint64_t kX = 0, kY = 64, kWt = 128, kB = 192, kLoss = 256,
                   kPred = 320, kArena = 384;
// linreg_host: w and b in the host tier's arena, the rest where it was.
constexpr uint64_t kHostWt = 0, kHostB = 64, kHostArena = 128;

inline const int64_t kXShape[] = {N, D};
inline const int64_t kYShape[] = {N};
inline const int64_t kWShape[] = {D};

inline const hmrt_tensor_desc kInputs[] = {
    {"x", HMRT_DTYPE_F32, 2, kXShape, kX, N * D * 4, HMRT_ROLE_OTHER,
     HMRT_TIER_DEVICE, 0, nullptr},
    {"y", HMRT_DTYPE_F32, 1, kYShape, kY, N * 4, HMRT_ROLE_OTHER,
     HMRT_TIER_DEVICE, 0, nullptr},
};
inline const hmrt_tensor_desc kOutputs[] = {
    {"loss", HMRT_DTYPE_F32, 0, nullptr, kLoss, 4, 0, HMRT_TIER_DEVICE, 0, nullptr},
    {"pred", HMRT_DTYPE_F32, 1, kYShape, kPred, N * 4, 0, HMRT_TIER_DEVICE, 0, nullptr},
};
inline const hmrt_tensor_desc kParams[] = {
    {"w", HMRT_DTYPE_F32, 1, kWShape, kWt, D * 4, 0, HMRT_TIER_DEVICE, 0, nullptr},
    {"b", HMRT_DTYPE_F32, 0, nullptr, kB, 4, 0, HMRT_TIER_DEVICE, 0, nullptr},
};
inline const hmrt_tensor_desc kHostParams[] = {
    {"w", HMRT_DTYPE_F32, 1, kWShape, kHostWt, D * 4, 0, HMRT_TIER_HOST},
    {"b", HMRT_DTYPE_F32, 0, nullptr, kHostB, 4, 0, HMRT_TIER_HOST},
};

// The arena bases and where w and b are.
struct Bases {
  uint8_t* dev;
  float* w;
  float* b;
};

template <bool kHost>
inline bool bases(hmrt_exec* exec, Bases* out) {
  out->dev = hmrt_exec_base(exec, HMRT_TIER_DEVICE);
  uint8_t* par = kHost ? hmrt_exec_base(exec, HMRT_TIER_HOST) : out->dev;
  if (out->dev == nullptr || par == nullptr) return false;
  out->w = reinterpret_cast<float*>(par + (kHost ? kHostWt : kWt));
  out->b = reinterpret_cast<float*>(par + (kHost ? kHostB : kB));
  return true;
}

// pred = x w + b and the mean squared error; returns the loss.
inline float forward_pass(const Bases& a) {
  const float* x = reinterpret_cast<const float*>(a.dev + kX);
  const float* y = reinterpret_cast<const float*>(a.dev + kY);
  const float* w = a.w;
  const float b = *a.b;
  float* pred = reinterpret_cast<float*>(a.dev + kPred);
  double total = 0.0;
  for (int64_t i = 0; i < N; ++i) {
    float p = b;
    for (int64_t j = 0; j < D; ++j) p += x[i * D + j] * w[j];
    pred[i] = p;
    total += double(p - y[i]) * double(p - y[i]);
  }
  const float loss = static_cast<float>(total / double(N));
  *reinterpret_cast<float*>(a.dev + kLoss) = loss;
  return loss;
}

template <bool kHost>
inline hmrt_status step(hmrt_exec* exec, int64_t step, float lr, float* loss,
                        float* grad_norm) {
  Bases a;
  if (!bases<kHost>(exec, &a)) return HMRT_INVALID_ARGUMENT;
  if (step == g_fail_at_step) return HMRT_INTERNAL;
  const float l = forward_pass(a);
  const float* x = reinterpret_cast<const float*>(a.dev + kX);
  const float* y = reinterpret_cast<const float*>(a.dev + kY);
  const float* pred = reinterpret_cast<const float*>(a.dev + kPred);
  float* w = a.w;
  float* b = a.b;
  double dw[D] = {0.0, 0.0}, db = 0.0;
  for (int64_t i = 0; i < N; ++i) {
    const double e = 2.0 * (pred[i] - y[i]) / double(N);
    for (int64_t j = 0; j < D; ++j) dw[j] += e * x[i * D + j];
    db += e;
  }
  double sq = db * db;
  for (int64_t j = 0; j < D; ++j) {
    sq += dw[j] * dw[j];
    w[j] -= static_cast<float>(lr * dw[j]);
  }
  *b -= static_cast<float>(lr * db);
  *loss = step == g_nan_at_step ? NAN : l;
  *grad_norm = static_cast<float>(std::sqrt(sq));
  return HMRT_OK;
}

template <bool kHost>
inline hmrt_status forward(hmrt_exec* exec) {
  Bases a;
  if (!bases<kHost>(exec, &a)) return HMRT_INVALID_ARGUMENT;
  forward_pass(a);
  return HMRT_OK;
}

inline const hmrt_program kProgram = {
    HMRT_PROGRAM_ABI_VERSION,
    "linreg",
    "cpu",
    kArena, 0, 0,  // device, host and storage arenas
    2, kInputs,
    2, kOutputs,
    2, kParams,
    0, nullptr,
    0,
    {HMRT_OPT_SGD, 0.1f, 0.9f, 0.999f, 1e-8f, 0.0f, 0.0f, 0.0f,
     HMRT_LR_CONSTANT, 0, 0, 0.0f},
    step<false>,
    forward<false>,
    0, nullptr,  // no op names: these programs do not call hmrt_trace_op
    0, nullptr,
};

inline const hmrt_program* program() { return &kProgram; }

// The same model with w and b in the host tier; the backend left to the
// default (NULL).
inline const hmrt_program kHostProgram = {
    HMRT_PROGRAM_ABI_VERSION,
    "linreg",
    nullptr,
    kArena, kHostArena, 0,
    2, kInputs,
    2, kOutputs,
    2, kHostParams,
    0, nullptr,
    0,
    {HMRT_OPT_SGD, 0.1f, 0.9f, 0.999f, 1e-8f, 0.0f, 0.0f, 0.0f,
     HMRT_LR_CONSTANT, 0, 0, 0.0f},
    step<true>,
    forward<true>,
    0, nullptr,
    0, nullptr,
};

inline const hmrt_program* host_program() { return &kHostProgram; }

}  // namespace linreg
}  // namespace hmrt_test_programs

#endif  // HMRT_DRIVER_TEST_PROGRAMS_H
