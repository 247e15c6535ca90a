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

// GEMMs on operands A of type TA and B of type TB (float, or uint16_t
// bfloat16 bit patterns; one of each: bf16 products), with fp32 products
// summed in fp32 into an fp32 C.
template <class TA, class TB = TA>
struct GemmEngine {
  const char* suffix;  // after the function's name in messages: "", " (cuda)"
  hmrt_status (*sgemm)(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                       const TA* a, int64_t lda, const TB* b, int64_t ldb, float beta, float* c,
                       int64_t ldc);
  hmrt_status (*sgemm_strided_batched)(int trans_a, int trans_b, int64_t m, int64_t n,
                                       int64_t k, float alpha, const TA* a, int64_t lda,
                                       int64_t stride_a, const TB* b, int64_t ldb,
                                       int64_t stride_b, float beta, float* c, int64_t ldc,
                                       int64_t stride_c, int64_t batch);
  // y (m x n, dense) = C broadcast from cm x cn (cm in {1, m}, cn in {1, n}).
  hmrt_status (*broadcast_c)(const float* c, int64_t cm, int64_t cn, float* y, int64_t m,
                             int64_t n);
  // Whether small batched calls may run on several host threads at once.
  bool threaded_batches;
};

// The CPU's engines (cpu/nn_ops.cpp): fp32; fp32 operands rounded to
// bf16 (hmrt_matmul_f32_bf16); bf16 operands (hmrt_matmul_bf16); one of
// each, the fp32 one rounded (hmrt_matmul_mixed_bf16).  The bf16 engines
// run the fp32 GEMM on the operands' bf16 values, whose products are exact
// in fp32: bf16 products, fp32 sums, as a GPU's bf16 tensor cores compute.
extern const GemmEngine<float> kCpuGemm;
extern const GemmEngine<float> kCpuGemmBf16Products;
extern const GemmEngine<uint16_t> kCpuGemmBf16;
extern const GemmEngine<uint16_t, float> kCpuGemmBf16F32;
extern const GemmEngine<float, uint16_t> kCpuGemmF32Bf16;

// hmrt_matmul_f32 / _bf16 / _mixed_bf16 and hmrt_gemm_f32 / _bf16 /
// _mixed_bf16 on an engine (messages name the function by TA and TB).
template <class TA, class TB>
hmrt_status matmul_on(const GemmEngine<TA, TB>& e, const TA* a, int32_t ra, const int64_t* sa,
                      int32_t trans_a, const TB* b, int32_t rb, const int64_t* sb,
                      int32_t trans_b, float* y, int32_t ry, const int64_t* sy);
template <class TA, class TB>
hmrt_status gemm_on(const GemmEngine<TA, TB>& e, const TA* a, const TB* b, const float* c,
                    int32_t rc, const int64_t* sc, int64_t m, int64_t n, int64_t k,
                    int32_t trans_a, int32_t trans_b, float alpha, float beta, float* y);
#define HMRT_GEMM_ON(TA, TB, EXTERN)                                                         \
  EXTERN template hmrt_status matmul_on(const GemmEngine<TA, TB>&, const TA*, int32_t,       \
                                        const int64_t*, int32_t, const TB*, int32_t,         \
                                        const int64_t*, int32_t, float*, int32_t,            \
                                        const int64_t*);                                     \
  EXTERN template hmrt_status gemm_on(const GemmEngine<TA, TB>&, const TA*, const TB*,       \
                                      const float*, int32_t, const int64_t*, int64_t,        \
                                      int64_t, int64_t, int32_t, int32_t, float, float, float*);
HMRT_GEMM_ON(float, float, extern)
HMRT_GEMM_ON(uint16_t, uint16_t, extern)
HMRT_GEMM_ON(uint16_t, float, extern)
HMRT_GEMM_ON(float, uint16_t, extern)

// hmrt_matmul_mixed_bf16 and hmrt_gemm_mixed_bf16 over the two engines of
// one backend: a bf16 (and b fp32) with a_bf16, else the reverse.
hmrt_status matmul_mixed_on(const GemmEngine<uint16_t, float>& bf, const GemmEngine<float, uint16_t>& fb,
                            const void* a, int32_t a_bf16, int32_t ra, const int64_t* sa,
                            int32_t trans_a, const void* b, int32_t rb, const int64_t* sb,
                            int32_t trans_b, float* y, int32_t ry, const int64_t* sy);
hmrt_status gemm_mixed_on(const GemmEngine<uint16_t, float>& bf, const GemmEngine<float, uint16_t>& fb,
                          const void* a, int32_t a_bf16, const void* b, const float* c,
                          int32_t rc, const int64_t* sc, int64_t m, int64_t n, int64_t k,
                          int32_t trans_a, int32_t trans_b, float alpha, float beta, float* y);

// LayerNormalization's arguments (hmrt_layer_norm_f32): x's shape and the
// axis; outer groups of cols elements.
hmrt_status check_layer_norm(const char* fn, int32_t rank, const int64_t* shape, int32_t axis,
                             int64_t* outer, int64_t* cols);
// The forward's (hmrt_layer_norm_f32 and its bf16 twin on every backend):
// those, and eps >= 0.
hmrt_status check_layer_norm_forward(const char* fn, int32_t rank, const int64_t* shape,
                                     int32_t axis, float eps, int64_t* outer, int64_t* cols);

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
