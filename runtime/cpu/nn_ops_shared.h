// What the CPU's NN ops (cpu/nn_ops.cpp) share with the CUDA backend:
// MatMul and Gemm written once over a GEMM engine (the CPU passes the
// runtime's GEMMs, the CUDA backend cuBLAS's), so both backends check the
// arguments and split batches the same way; and argument checks.
#ifndef HMRT_CPU_NN_OPS_SHARED_H
#define HMRT_CPU_NN_OPS_SHARED_H

#include <cstdint>

#include "hmrt/kernels.h"
#include "hmrt/nn_ops.h"

namespace hmrt {

struct GemmEngine {
  const char* suffix;  // after the function's name in messages: "", " (cuda)"
  decltype(&hmrt_sgemm) sgemm;
  decltype(&hmrt_sgemm_strided_batched) sgemm_strided_batched;
  // y (m x n, dense) = C broadcast from cm x cn (cm in {1, m}, cn in {1, n}).
  hmrt_status (*broadcast_c)(const float* c, int64_t cm, int64_t cn, float* y, int64_t m,
                             int64_t n);
  // Whether small batched calls may run on several host threads at once.
  bool threaded_batches;
};

// The CPU's engine (cpu/nn_ops.cpp), and the same with the operands
// rounded to bfloat16 first (hmrt_matmul_f32_bf16: bf16 products, fp32
// accumulation).
extern const GemmEngine kCpuGemm;
extern const GemmEngine kCpuGemmBf16;

hmrt_status matmul_f32_on(const GemmEngine& e, const float* a, int32_t ra, const int64_t* sa,
                          int32_t trans_a, const float* b, int32_t rb, const int64_t* sb,
                          int32_t trans_b, float* y, int32_t ry, const int64_t* sy);
hmrt_status gemm_f32_on(const GemmEngine& e, const float* a, const float* b, const float* c,
                        int32_t rc, const int64_t* sc, int64_t m, int64_t n, int64_t k,
                        int32_t trans_a, int32_t trans_b, float alpha, float beta, float* y);

// LayerNormalization's arguments (hmrt_layer_norm_f32): x's shape and the
// axis; outer groups of cols elements.
hmrt_status check_layer_norm(const char* fn, int32_t rank, const int64_t* shape, int32_t axis,
                             int64_t* outer, int64_t* cols);

// A reduction's arguments (hmrt_reduce_f32, hmrt_reduce_max_backward_f32):
// x's shape and the reduced axes; count elements of x in groups of
// `reduced`, `kept` groups.
hmrt_status check_reduce(const char* fn, int32_t rank, const int64_t* shape,
                         const uint8_t* reduce_axis, int64_t* count, int64_t* kept,
                         int64_t* reduced);

// Softmax's arguments (hmrt_softmax_axis_f32 and its gradient): the shape
// of `what` and the axis, as (outer, n, inner) around the axis.
hmrt_status check_softmax_axis(const char* fn, const char* what, int32_t rank,
                               const int64_t* shape, int32_t axis, int64_t* outer, int64_t* n,
                               int64_t* inner);

// SoftmaxCrossEntropyLoss (hmrt_sce_loss_f32): scores (N, C, D...) with
// labels (N, D...), E label positions.
struct Sce {
  int64_t N, C, D, E;  // D: the product of the dims after C
  double denom;        // sum of the weights of counted labels (or their count)
  bool ignore;
  int64_t ignore_index;
  bool skip(int64_t t) const { return ignore && t == ignore_index; }
};
// The shape and reduction checks; sets N, C, D, E.
hmrt_status check_sce_shape(const char* fn, int32_t rank, const int64_t* shape,
                            hmrt_loss_reduction reduction, Sce* s);
// The labels (host memory) in range or ignored; sets ignore, ignore_index and
// denom (weights, host memory, nullable).
hmrt_status check_sce_labels(const char* fn, const int64_t* labels, const float* weights,
                             int32_t has_ignore, int64_t ignore_index, Sce* s);

}  // namespace hmrt

#endif  // HMRT_CPU_NN_OPS_SHARED_H
