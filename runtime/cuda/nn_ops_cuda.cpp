// The CUDA backend's kernel-table entries for attention, fused programs,
// the one-op elementwise kernels, softmax and SoftmaxCrossEntropyLoss: the
// CPU kernels' argument checks (shared with them, so the messages are the
// same), then the kernels of cuda/nn_kernels.cu on the context's stream.
//
// What the checks need to read from device memory (the loss's labels,
// class weights and incoming gradient) is copied to the host first; the
// loss's per-label terms come back to be summed on the host in the CPU's
// order (chunks of 1024 labels in double).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>
#include <vector>

#include "core/ew_math.h"
#include "core/internal.h"
#include "cpu/fused_program.h"
#include "cpu/nn_ops_shared.h"
#include "cuda/context.h"
#include "cuda/fused_generated.h"
#include "cuda/nn_kernels.h"

namespace hmrt {
namespace {

// One block per row: the grid's x dimension.
hmrt_status check_rows(const char* fn, int64_t rows) {
  HMRT_CHECK_ARG(rows <= INT_MAX,
                 "%s: %lld rows are more than the GPU kernel's grid takes (%d)", fn,
                 (long long)rows, INT_MAX);
  return HMRT_OK;
}

hmrt_status cuda_unary_f32(hmrt_unary_op op, const float* x, float* y, int64_t n) {
  const char* fn = "hmrt_unary_f32 (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  const int64_t f = ew::fused_of_unary(op);
  HMRT_CHECK_ARG(f >= 0 || op == HMRT_UNARY_IDENTITY, "%s: unknown op %d", fn, (int)op);
  HMRT_CHECK_GPU(fn, x, n);
  HMRT_CHECK_GPU(fn, y, n);
  if (n == 0) return HMRT_OK;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  if (f < 0) {
    if (x != y)
      HMRT_CUDA_CALL(fn, "the copy",
                     cudaMemcpyAsync(y, x, size_t(n) * sizeof(float), cudaMemcpyDeviceToDevice,
                                     g_context->stream));
    return finish(fn, 0);
  }
  return finish(fn, cuda::map(g_context->stream, f, x, nullptr, y, n));
}

hmrt_status cuda_relu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  const char* fn = "hmrt_relu_backward (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_GPU(fn, x, n);
  HMRT_CHECK_GPU(fn, dy, n);
  HMRT_CHECK_GPU(fn, dx, n);
  if (n == 0) return HMRT_OK;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::map(g_context->stream, HMRT_FUSED_RELU_GRAD, x, dy, dx, n));
}

// y in fp32, or rounded to bf16 (Out = uint16_t).
template <class Out>
hmrt_status fused_to(const char* fn, int64_t n_code, const int64_t* code, int64_t n_in,
                     const void* const* in, const int64_t* in_bool, const int64_t* in_dims,
                     Out* y, int32_t rank, const int64_t* dims) {
  int64_t n = 0;
  std::vector<FusedInput> inputs;
  hmrt_status st =
      check_fused(fn, n_code, code, n_in, in, in_bool, in_dims, rank, dims, &n, &inputs);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_GPU(fn, y, n);
  if (n == 0) return HMRT_OK;
  static_assert(kMaxFusedInputs + kMaxFusedCode <= cuda::kFusedSlots,
                "the GPU's fused kernel holds every input and instruction");
  std::vector<cuda::FusedOperand> ops(static_cast<size_t>(n_in));
  for (int64_t j = 0; j < n_in; ++j) {
    const FusedInput& x = inputs[size_t(j)];
    st = check_gpu_ptr(fn, "an input", in[j], x.count);
    if (st != HMRT_OK) return st;
    ops[size_t(j)] = cuda::fused_operand(x, in[j], rank);
  }
  const cuda::FusedHeader h =
      cuda::fused_header(rank, dims, n, ops.data(), int32_t(n_in), int32_t(n_code));
  // The program's own kernel, where the program brought one
  // (cuda/fused_generated.h): the operands go as its parameter.
  if (const cuda::GeneratedFused* g = cuda::find_generated_fused(code, n_code, n_in)) {
    std::lock_guard<std::mutex> lock(g_context->mutex);
    return finish(fn, g->launch(g_context->stream, h, ops.data(), y,
                                int(std::is_same<Out, uint16_t>::value), n));
  }
  // Else the interpreter: the operands, then the code, in one block of
  // device scratch.
  const size_t op_bytes = ops.size() * sizeof(cuda::FusedOperand);
  const size_t code_bytes = size_t(4 * n_code) * sizeof(int64_t);
  std::vector<unsigned char> blob(op_bytes + code_bytes);
  if (op_bytes) std::memcpy(blob.data(), ops.data(), op_bytes);
  std::memcpy(blob.data() + op_bytes, code, code_bytes);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  void* dev = nullptr;
  if ((st = scratch(fn, blob.size(), &dev)) != HMRT_OK) return st;
  HMRT_CUDA_CALL(fn, "writing the program",
                 cudaMemcpyAsync(dev, blob.data(), blob.size(), cudaMemcpyHostToDevice,
                                 g_context->stream));
  unsigned char* base = static_cast<unsigned char*>(dev);
  return finish(fn, cuda::fused(g_context->stream, h,
                                reinterpret_cast<const cuda::FusedOperand*>(base),
                                reinterpret_cast<const int64_t*>(base + op_bytes), y, n));
}

hmrt_status cuda_fused_f32(int64_t n_code, const int64_t* code, int64_t n_in,
                           const void* const* in, const int64_t* in_bool, const int64_t* in_dims,
                           float* y, int32_t rank, const int64_t* dims) {
  return fused_to("hmrt_fused_f32 (cuda)", n_code, code, n_in, in, in_bool, in_dims, y, rank,
                  dims);
}

hmrt_status cuda_fused_f32_to_bf16(int64_t n_code, const int64_t* code, int64_t n_in,
                                   const void* const* in, const int64_t* in_bool,
                                   const int64_t* in_dims, uint16_t* y, int32_t rank,
                                   const int64_t* dims) {
  return fused_to("hmrt_fused_f32_to_bf16 (cuda)", n_code, code, n_in, in, in_bool, in_dims, y,
                  rank, dims);
}

hmrt_status cuda_softmax_axis_f32(const float* x, int32_t rank, const int64_t* shape,
                                  int32_t axis, int32_t log, float* y) {
  const char* fn = "hmrt_softmax_axis_f32 (cuda)";
  int64_t outer, n, inner;
  hmrt_status st = check_softmax_axis(fn, "x", rank, shape, axis, &outer, &n, &inner);
  if (st != HMRT_OK) return st;
  const int64_t count = outer * n * inner;
  HMRT_CHECK_GPU(fn, x, count);
  HMRT_CHECK_GPU(fn, y, count);
  if (count == 0) return HMRT_OK;
  if ((st = check_rows(fn, outer * inner)) != HMRT_OK) return st;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::softmax(g_context->stream, x, y, outer, n, inner, log));
}

hmrt_status cuda_softmax_axis_backward_f32(const float* y, const float* dy, int32_t rank,
                                           const int64_t* shape, int32_t axis, int32_t log,
                                           float* dx) {
  const char* fn = "hmrt_softmax_axis_backward_f32 (cuda)";
  int64_t outer, n, inner;
  hmrt_status st = check_softmax_axis(fn, "y", rank, shape, axis, &outer, &n, &inner);
  if (st != HMRT_OK) return st;
  const int64_t count = outer * n * inner;
  HMRT_CHECK_GPU(fn, y, count);
  HMRT_CHECK_GPU(fn, dy, count);
  HMRT_CHECK_GPU(fn, dx, count);
  if (count == 0) return HMRT_OK;
  if ((st = check_rows(fn, outer * inner)) != HMRT_OK) return st;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::softmax_backward(g_context->stream, y, dy, dx, outer, n, inner, log));
}

// ---- SoftmaxCrossEntropyLoss ---------------------------------------------------------

// `count` elements of device memory read to the host.
template <class T>
hmrt_status read_back(const char* fn, const char* what, const T* dev, int64_t count,
                      std::vector<T>* host) {
  host->resize(size_t(count));
  if (count == 0) return HMRT_OK;
  return copy_with_kernels(fn, what, host->data(), dev, size_t(count) * sizeof(T));
}

// The shape, the pointers, and the labels (with the class weights) read to
// the host and checked there.
hmrt_status check_sce_on_gpu(const char* fn, const float* scores, int32_t rank,
                             const int64_t* shape, const int64_t* labels, const float* weights,
                             hmrt_loss_reduction reduction, int32_t has_ignore,
                             int64_t ignore_index, Sce* s) {
  hmrt_status st = check_sce_shape(fn, rank, shape, reduction, s);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_GPU(fn, scores, s->E * s->C);
  HMRT_CHECK_GPU(fn, labels, s->E);
  if (weights != nullptr) HMRT_CHECK_GPU(fn, weights, s->C);
  std::vector<int64_t> hl;
  std::vector<float> hw;
  if ((st = read_back(fn, "reading the labels", labels, s->E, &hl)) != HMRT_OK) return st;
  if (weights != nullptr && s->E > 0 &&
      (st = read_back(fn, "reading the class weights", weights, s->C, &hw)) != HMRT_OK)
    return st;
  st = check_sce_labels(fn, hl.data(), weights ? hw.data() : nullptr, has_ignore, ignore_index,
                        s);
  if (st != HMRT_OK) return st;
  return check_rows(fn, s->E);
}

hmrt_status write_scalar(const char* fn, float* dev, float v) {
  return copy_with_kernels(fn, "writing the loss", dev, &v, sizeof(v));
}

hmrt_status cuda_sce_loss_f32(const float* scores, int32_t rank, const int64_t* shape,
                              const int64_t* labels, const float* weights,
                              hmrt_loss_reduction reduction, int32_t has_ignore,
                              int64_t ignore_index, float* loss, float* log_prob) {
  const char* fn = "hmrt_sce_loss_f32 (cuda)";
  Sce s;
  hmrt_status st = check_sce_on_gpu(fn, scores, rank, shape, labels, weights, reduction,
                                    has_ignore, ignore_index, &s);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_GPU(fn, loss, reduction == HMRT_LOSS_NONE ? s.E : 1);
  if (log_prob != nullptr) HMRT_CHECK_GPU(fn, log_prob, s.E * s.C);
  if (s.E == 0) {
    if (reduction == HMRT_LOSS_MEAN)
      return write_scalar(fn, loss, std::numeric_limits<float>::quiet_NaN());
    if (reduction == HMRT_LOSS_SUM) return write_scalar(fn, loss, 0.0f);
    return HMRT_OK;
  }
  std::lock_guard<std::mutex> lock(g_context->mutex);
  void* dev = nullptr;
  if ((st = scratch(fn, size_t(s.E) * (sizeof(double) + sizeof(float)), &dev)) != HMRT_OK)
    return st;
  double* per = static_cast<double*>(dev);
  float* lse = reinterpret_cast<float*>(per + s.E);
  int launch = cuda::sce_lse(g_context->stream, scores, s.N, s.C, s.D, lse);
  if (launch == 0)
    launch = cuda::sce_forward(g_context->stream, scores, labels, weights, lse, s.N, s.C, s.D,
                               s.ignore, s.ignore_index, per,
                               reduction == HMRT_LOSS_NONE ? loss : nullptr, log_prob);
  if ((st = finish(fn, launch)) != HMRT_OK || reduction == HMRT_LOSS_NONE) return st;
  std::vector<double> terms;
  if ((st = read_back(fn, "reading the loss terms", per, s.E, &terms)) != HMRT_OK) return st;
  // The CPU's order: chunks of 1024 labels, then the chunks in order.
  constexpr int64_t kChunk = 1024;
  double total = 0.0;
  for (int64_t c0 = 0; c0 < s.E; c0 += kChunk) {
    double acc = 0.0;
    for (int64_t e = c0; e < std::min(s.E, c0 + kChunk); ++e) acc += terms[size_t(e)];
    total += acc;
  }
  if (reduction == HMRT_LOSS_SUM) return write_scalar(fn, loss, static_cast<float>(total));
  return write_scalar(fn, loss,
                      s.denom != 0.0 ? static_cast<float>(total / s.denom)
                                     : std::numeric_limits<float>::quiet_NaN());
}

// dscores in fp32, or rounded to bf16 (Out = uint16_t).
template <class Out>
hmrt_status sce_loss_backward_to(const char* fn, const float* scores, int32_t rank,
                                 const int64_t* shape, const int64_t* labels,
                                 const float* weights, hmrt_loss_reduction reduction,
                                 int32_t has_ignore, int64_t ignore_index, const float* dloss,
                                 Out* dscores) {
  Sce s;
  hmrt_status st = check_sce_on_gpu(fn, scores, rank, shape, labels, weights, reduction,
                                    has_ignore, ignore_index, &s);
  if (st != HMRT_OK) return st;
  const int64_t nd = reduction == HMRT_LOSS_NONE ? s.E : 1;
  HMRT_CHECK_GPU(fn, dloss, nd);
  HMRT_CHECK_GPU(fn, dscores, s.E * s.C);
  if (s.E == 0) return HMRT_OK;
  std::vector<float> hd, hw;
  std::vector<int64_t> hl;
  if ((st = read_back(fn, "reading the loss gradient", dloss, nd, &hd)) != HMRT_OK ||
      (st = read_back(fn, "reading the labels", labels, s.E, &hl)) != HMRT_OK ||
      (weights && (st = read_back(fn, "reading the class weights", weights, s.C, &hw)) != HMRT_OK))
    return st;
  // coef[e] = d loss / d l[e] * w[label] (the CPU's), 0 where skipped.
  const double g = reduction == HMRT_LOSS_MEAN
                       ? (s.denom != 0.0 ? double(hd[0]) / s.denom : 0.0)
                       : double(hd[0]);
  std::vector<float> coef(size_t(s.E), 0.0f);
  for (int64_t e = 0; e < s.E; ++e) {
    const int64_t t = hl[size_t(e)];
    if (s.skip(t)) continue;
    const double w = weights ? double(hw[size_t(t)]) : 1.0;
    coef[size_t(e)] =
        static_cast<float>(w * (reduction == HMRT_LOSS_NONE ? double(hd[size_t(e)]) : g));
  }
  std::lock_guard<std::mutex> lock(g_context->mutex);
  void* dev = nullptr;
  if ((st = scratch(fn, size_t(s.E) * 2 * sizeof(float), &dev)) != HMRT_OK) return st;
  float* lse = static_cast<float*>(dev);
  float* dcoef = lse + s.E;
  HMRT_CUDA_CALL(fn, "writing the coefficients",
                 cudaMemcpyAsync(dcoef, coef.data(), coef.size() * sizeof(float),
                                 cudaMemcpyHostToDevice, g_context->stream));
  int launch = cuda::sce_lse(g_context->stream, scores, s.N, s.C, s.D, lse);
  if (launch == 0)
    launch = cuda::sce_backward(g_context->stream, scores, labels, lse, dcoef, s.N, s.C, s.D,
                                s.ignore, s.ignore_index, dscores);
  return finish(fn, launch);
}

hmrt_status cuda_sce_loss_backward_f32(const float* scores, int32_t rank, const int64_t* shape,
                                       const int64_t* labels, const float* weights,
                                       hmrt_loss_reduction reduction, int32_t has_ignore,
                                       int64_t ignore_index, const float* dloss,
                                       float* dscores) {
  return sce_loss_backward_to("hmrt_sce_loss_backward_f32 (cuda)", scores, rank, shape, labels,
                              weights, reduction, has_ignore, ignore_index, dloss, dscores);
}

hmrt_status cuda_sce_loss_backward_f32_to_bf16(const float* scores, int32_t rank,
                                               const int64_t* shape, const int64_t* labels,
                                               const float* weights,
                                               hmrt_loss_reduction reduction,
                                               int32_t has_ignore, int64_t ignore_index,
                                               const float* dloss, uint16_t* dscores) {
  return sce_loss_backward_to("hmrt_sce_loss_backward_f32_to_bf16 (cuda)", scores, rank, shape,
                              labels, weights, reduction, has_ignore, ignore_index, dloss,
                              dscores);
}

// ---- attention -------------------------------------------------------------------------

// head_dim the GPU kernels' shared memory holds (48 KiB per block).
constexpr int64_t kMaxHeadDim = 2048;

hmrt_status check_attention_on_gpu(const char* fn, const AttnLayout& a, const float* bias,
                                   const int64_t* bias_dims, float dropout) {
  hmrt_status st = check_attention(fn, a, bias, bias_dims, dropout);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_ARG(a.D <= kMaxHeadDim, "%s: head_dim %lld is more than the GPU kernel takes (%lld)",
                 fn, (long long)a.D, (long long)kMaxHeadDim);
  HMRT_CHECK_ARG(a.B * a.H <= 65535 && a.T <= INT_MAX && a.S <= INT_MAX,
                 "%s: batch * heads (%lld) must be at most 65535 and the lengths at most %d on "
                 "the GPU",
                 fn, (long long)(a.B * a.H), INT_MAX);
  if (bias != nullptr) {
    int64_t nb = 1;
    for (int d = 0; d < 4; ++d) nb *= bias_dims[d];
    HMRT_CHECK_GPU(fn, bias, nb);
  }
  return HMRT_OK;
}

hmrt_status cuda_attention_forward(const float* q, const float* k, const float* v,
                                   const float* bias, const int64_t* bias_dims, float* out,
                                   float* lse, int64_t batch, int64_t heads, int64_t kv_heads,
                                   int64_t q_len, int64_t kv_len, int64_t head_dim, float scale,
                                   int32_t flags, float dropout, uint64_t seed,
                                   uint64_t counter) {
  const char* fn = "hmrt_attention_forward (cuda)";
  const AttnLayout a = AttnLayout::make(bias ? bias_dims : nullptr, batch, heads, kv_heads,
                                        q_len, kv_len, head_dim, scale, flags);
  hmrt_status st = check_attention_on_gpu(fn, a, bias, bias_dims, dropout);
  if (st == HMRT_OK) st = check_packed(fn, a, q, k, v);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_GPU(fn, q, a.q_span());
  HMRT_CHECK_GPU(fn, k, a.kv_span());
  HMRT_CHECK_GPU(fn, v, a.kv_span());
  HMRT_CHECK_GPU(fn, out, a.B * a.H * a.T * a.D);
  if (lse != nullptr) HMRT_CHECK_GPU(fn, lse, a.B * a.H * a.T);
  if (a.B * a.H == 0 || a.T == 0) return HMRT_OK;
  const DropoutMask mask(dropout, seed, counter);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::attention_forward(g_context->stream, a,
                                            dropout > 0.0f ? &mask : nullptr, q, k, v, bias,
                                            out, lse));
}

hmrt_status cuda_attention_backward(const float* q, const float* k, const float* v,
                                    const float* bias, const int64_t* bias_dims,
                                    const float* out, const float* lse, const float* dout,
                                    float* dq, float* dk, float* dv, int64_t batch,
                                    int64_t heads, int64_t kv_heads, int64_t q_len,
                                    int64_t kv_len, int64_t head_dim, float scale, int32_t flags,
                                    float dropout, uint64_t seed, uint64_t counter) {
  const char* fn = "hmrt_attention_backward (cuda)";
  const AttnLayout a = AttnLayout::make(bias ? bias_dims : nullptr, batch, heads, kv_heads,
                                        q_len, kv_len, head_dim, scale, flags);
  hmrt_status st = check_attention_on_gpu(fn, a, bias, bias_dims, dropout);
  if (st == HMRT_OK) st = check_packed(fn, a, q, k, v);
  if (st == HMRT_OK) st = check_packed(fn, a, dq, dk, dv);
  if (st != HMRT_OK) return st;
  const int64_t nq = a.q_span(), nk = a.kv_span(), no = a.B * a.H * a.T * a.D;
  HMRT_CHECK_GPU(fn, q, nq);
  HMRT_CHECK_GPU(fn, k, nk);
  HMRT_CHECK_GPU(fn, v, nk);
  HMRT_CHECK_GPU(fn, out, no);
  HMRT_CHECK_GPU(fn, lse, a.B * a.H * a.T);
  HMRT_CHECK_GPU(fn, dout, no);
  HMRT_CHECK_GPU(fn, dq, nq);
  HMRT_CHECK_GPU(fn, dk, nk);
  HMRT_CHECK_GPU(fn, dv, nk);
  if (a.B * a.Hk == 0 || a.S == 0) return HMRT_OK;
  const DropoutMask mask(dropout, seed, counter);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  void* di = nullptr;
  if ((st = scratch(fn, size_t(std::max<int64_t>(1, a.B * a.H * a.T)) * sizeof(float), &di)) !=
      HMRT_OK)
    return st;
  return finish(fn, cuda::attention_backward(g_context->stream, a,
                                             dropout > 0.0f ? &mask : nullptr, q, k, v, bias,
                                             out, lse, dout, dq, dk, dv,
                                             static_cast<float*>(di)));
}

}  // namespace

void add_nn_kernels(hmrt_kernels* k) {
  k->attention_forward = cuda_attention_forward;
  k->attention_backward = cuda_attention_backward;
  k->fused_f32 = cuda_fused_f32;
  k->fused_f32_to_bf16 = cuda_fused_f32_to_bf16;
  k->unary_f32 = cuda_unary_f32;
  k->relu_backward = cuda_relu_backward;
  k->softmax_axis_f32 = cuda_softmax_axis_f32;
  k->softmax_axis_backward_f32 = cuda_softmax_axis_backward_f32;
  k->sce_loss_f32 = cuda_sce_loss_f32;
  k->sce_loss_backward_f32 = cuda_sce_loss_backward_f32;
  k->sce_loss_backward_f32_to_bf16 = cuda_sce_loss_backward_f32_to_bf16;
}

}  // namespace hmrt
