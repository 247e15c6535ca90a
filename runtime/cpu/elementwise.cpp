// Activation functions, forward and backward: GELU (exact erf form), SiLU,
// ReLU.  Pure per-element maps, split across threads in large pieces.
#include <cmath>

#include "core/internal.h"
#include "cpu/vmath.h"
#include "cpu/vec.h"
#include "hmrt/kernels.h"
#include "hmrt/tensor_ops.h"

namespace hmrt {
namespace {

constexpr int64_t kGrain = 1 << 14;  // elements per thread at least
constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;  // 1/sqrt(2*pi)

hmrt_status check_unary(const char* fn, const void* x, const void* y,
                        int64_t n) {
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_PTR(fn, x, n);
  HMRT_CHECK_PTR(fn, y, n);
  return HMRT_OK;
}

hmrt_status check_binary(const char* fn, const void* x, const void* dy,
                         const void* dx, int64_t n) {
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_PTR(fn, x, n);
  HMRT_CHECK_PTR(fn, dy, n);
  HMRT_CHECK_PTR(fn, dx, n);
  return HMRT_OK;
}

// y[i] = f(x[i]); y may alias x.
template <class F>
void map1(const float* x, float* y, int64_t n, F f) {
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) y[i] = f(x[i]);
  });
}

// dx[i] = f(x[i], dy[i]); dx may alias dy (or x).
template <class F>
void map2(const float* x, const float* dy, float* dx, int64_t n, F f) {
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) dx[i] = f(x[i], dy[i]);
  });
}

// y[i] = f(x[i]) with f on 4-lane vectors; the tail runs f on a splatted
// scalar, so every element gets the same bits wherever the split falls.
template <class F>
void vmap1(const float* x, float* y, int64_t n, F f) {
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    int64_t i = lo;
    for (; i + 4 <= hi; i += 4) vstore(y + i, f(vload(x + i)));
    for (; i < hi; ++i) y[i] = f(vsplat(x[i]))[0];
  });
}

template <class F>
void vmap2(const float* x, const float* dy, float* dx, int64_t n, F f) {
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    int64_t i = lo;
    for (; i + 4 <= hi; i += 4) vstore(dx + i, f(vload(x + i), vload(dy + i)));
    for (; i < hi; ++i) dx[i] = f(vsplat(x[i]), vsplat(dy[i]))[0];
  });
}

inline v4f vsigmoid(v4f x) { return 1.0f / (1.0f + vexp(-x)); }

}  // namespace
}  // namespace hmrt

extern "C" {

hmrt_status hmrt_gelu_forward(const float* x, float* y, int64_t n) {
  hmrt_status st = hmrt::check_unary("hmrt_gelu_forward", x, y, n);
  if (st != HMRT_OK) return st;
  hmrt::map1(x, y, n, [](float v) {
    return 0.5f * v * (1.0f + std::erf(v * hmrt::kInvSqrt2));
  });
  return HMRT_OK;
}

hmrt_status hmrt_gelu_backward(const float* x, const float* dy, float* dx,
                               int64_t n) {
  hmrt_status st = hmrt::check_binary("hmrt_gelu_backward", x, dy, dx, n);
  if (st != HMRT_OK) return st;
  // d/dx [x * Phi(x)] = Phi(x) + x * phi(x)
  hmrt::map2(x, dy, dx, n, [](float v, float g) {
    const float cdf = 0.5f * (1.0f + std::erf(v * hmrt::kInvSqrt2));
    const float pdf = hmrt::kInvSqrt2Pi * std::exp(-0.5f * v * v);
    return g * (cdf + v * pdf);
  });
  return HMRT_OK;
}

hmrt_status hmrt_silu_forward(const float* x, float* y, int64_t n) {
  hmrt_status st = hmrt::check_unary("hmrt_silu_forward", x, y, n);
  if (st != HMRT_OK) return st;
  hmrt::vmap1(x, y, n, [](hmrt::v4f v) { return v * hmrt::vsigmoid(v); });
  return HMRT_OK;
}

hmrt_status hmrt_silu_backward(const float* x, const float* dy, float* dx,
                               int64_t n) {
  hmrt_status st = hmrt::check_binary("hmrt_silu_backward", x, dy, dx, n);
  if (st != HMRT_OK) return st;
  // d/dx [x * s(x)] = s + x * s * (1 - s)
  hmrt::vmap2(x, dy, dx, n, [](hmrt::v4f v, hmrt::v4f g) {
    const hmrt::v4f s = hmrt::vsigmoid(v);
    return g * (s * (1.0f + v * (1.0f - s)));
  });
  return HMRT_OK;
}

hmrt_status hmrt_relu_forward(const float* x, float* y, int64_t n) {
  hmrt_status st = hmrt::check_unary("hmrt_relu_forward", x, y, n);
  if (st != HMRT_OK) return st;
  // NaN stays NaN, like torch.relu.
  hmrt::vmap1(x, y, n, [](hmrt::v4f v) {
    const hmrt::v4f zero = hmrt::vsplat(0.0f);
    return v > 0.0f ? v : (v != v ? v : zero);
  });
  return HMRT_OK;
}

hmrt_status hmrt_relu_backward(const float* x, const float* dy, float* dx,
                               int64_t n) {
  hmrt_status st = hmrt::check_binary("hmrt_relu_backward", x, dy, dx, n);
  if (st != HMRT_OK) return st;
  hmrt::parallel_for(n, hmrt::kGrain, [&](int64_t lo, int64_t hi) {
    hmrt::vmath::map(HMRT_FUSED_RELU_GRAD, x + lo, dy + lo, nullptr, dx + lo, hi - lo);
  });
  return HMRT_OK;
}

}  // extern "C"
