// The CUDA backend's kernels (cuda/cuda_kernels.cu), as launchers that
// device_cuda.cpp calls after checking the arguments.  Plain C++: no CUDA
// header, so the backend's .cpp files build with the host compiler.
//
// Every launcher queues its work on `stream` (a cudaStream_t) and returns
// the cudaError_t of the launch as an int (0: success); the caller
// synchronizes.  Pointers are device addresses.  The per-element arithmetic
// is the CPU kernels' own (core/optim_math.h, core/float16.h), built with
// --fmad=false and IEEE division and square root, and the gradient norm
// sums in the CPU's order, so the results are bitwise the CPU backend's.
#ifndef HMRT_CUDA_CUDA_KERNELS_H
#define HMRT_CUDA_CUDA_KERNELS_H

#include <cstddef>
#include <cstdint>

#include "core/optim_math.h"
#include "core/plan.h"
#include "core/quant8_math.h"
#include "cpu/dropout_mask.h"

namespace hmrt {
namespace cuda {

int adamw(void* stream, const AdamWScalars& s, float* param, const float* grad,
          float* exp_avg, float* exp_avg_sq, int64_t n);
int sgd(void* stream, const SgdScalars& s, float* param, const float* grad,
        float* momentum_buf, int64_t n);
// 8-bit AdamW (hmrt_adamw8bit_step): maps[0] the signed map, maps[1] the
// unsigned one (core/quant8_math.h), in device memory; one block per
// HMRT_QUANT_BLOCK elements.
int adamw8bit(void* stream, const AdamWScalars& s, const QuantMap* maps, float* param,
              const float* grad, uint8_t* exp_avg_codes, float* exp_avg_absmax,
              uint8_t* exp_avg_sq_codes, float* exp_avg_sq_absmax, int64_t n);
// ONNX's Adagrad, Momentum and Adam (outputs may be the inputs).
int onnx_adagrad(void* stream, const OnnxAdagradScalars& s, const float* x, const float* g,
                 const float* h, float* x_new, float* h_new, int64_t n);
int onnx_momentum(void* stream, const OnnxMomentumScalars& s, const float* x, const float* g,
                  const float* v, float* x_new, float* v_new, int64_t n);
int onnx_adam(void* stream, const OnnxAdamScalars& s, const float* x, const float* g,
              const float* v, const float* h, float* x_new, float* v_new, float* h_new,
              int64_t n);
int scale(void* stream, float* x, int64_t n, float s);
// y[i] = the elem_size bytes at `value` (1, 2, 4 or 8; passed by value).
int fill(void* stream, void* y, int64_t n, uint64_t value, size_t elem_size);

// The 16-bit float conversions of hmrt_cast (core/float16.h).
// F32ToBf16 truncates (hmrt_cast); F32ToBf16Rne rounds to nearest even
// (hmrt_round_bf16).
enum class Cast { F16ToF32, F32ToF16, Bf16ToF32, F32ToBf16, F16ToBf16, Bf16ToF16, F32ToBf16Rne };
int cast(void* stream, Cast kind, const void* x, void* y, int64_t n);
// y[(b * rows + r) * cols + c] = x[b * stride + r * ld + c] rounded to bf16
// (nearest even), for b < batch: blocks of GEMM operands packed for the
// tensor cores.
int round_bf16_blocks(void* stream, const float* x, int64_t batch, int64_t stride, int64_t rows,
                      int64_t cols, int64_t ld, uint16_t* y);

// Sums of squares in double as cpu/gradnorm.cpp: for n > 4096, partial[c]
// for each 4096-element chunk c (four interleaved accumulators, combined
// (a0 + a1) + (a2 + a3)); for n <= 4096 one partial, a single accumulator.
// `partial` has max(1, ceil(n / 4096)) doubles.
int sum_squares_partials(void* stream, const float* x, int64_t n, double* partial);
// *out = (acc ? *acc : 0) + (partial[0] + partial[1] + ... in order), one
// thread adding while its block stages the partials in shared memory.
int sum_in_order(void* stream, const double* partial, int64_t count, const double* acc,
                 double* out);
// *out = float(sqrt(*sum)), by one thread.
int norm_of_sum(void* stream, const double* sum, float* out);

// The generic tensor kernels over an iteration plan (core/plan.h) built as
// the CPU kernel builds it, one element per thread:
// y = op(a, b) (hmrt_binary_op; plan operands y, a, b);
int binary_f32(void* stream, const Plan& p, int op, const float* a, const float* b, float* y);
// copies of elem_size (1, 2, 4 or 8) bytes: y[off0] = x[off1] (hmrt_expand;
// cudaMemcpyAsync or cudaMemcpy2DAsync where the plan is one run or rows of
// contiguous elements on both sides);
int plan_copy(void* stream, const Plan& p, const void* x, void* y, size_t elem_size);
// y = cond ? x : z (hmrt_where; operands y, cond, x, z).
int where(void* stream, const Plan& p, const uint8_t* cond, const void* x, const void* z,
          void* y, size_t elem_size);

// hmrt_dropout_f32 and its gradient, with the CPU's mask (cpu/dropout_mask.h).
int dropout(void* stream, const DropoutMask& m, const float* x, float* y, uint8_t* mask,
            int64_t n);
int dropout_backward(void* stream, float scale, const float* dy, const uint8_t* mask,
                     float* dx, int64_t n);

// ONNX Gather with indices already checked and made non-negative (nidx,
// device memory): y[o, j, i] = x[o, nidx[j], i] over outer x n_idx x inner
// elements of elem_size (1, 2, 4 or 8) bytes; dim is x's gathered axis.
int gather(void* stream, const void* x, const int64_t* nidx, int64_t outer, int64_t dim,
           int64_t n_idx, int64_t inner, void* y, size_t elem_size);
// Its gradient: dx[o, v, i] = the sum, in index order, of dy[o, j, i] over
// the positions j whose index is v, listed in order[first[v] .. first[v+1]).
int gather_backward(void* stream, const float* dy, const int64_t* first, const int64_t* order,
                    int64_t outer, int64_t dim, int64_t n_idx, int64_t inner, float* dx);

// LayerNorm over rows of cols, eight threads per row sharing the CPU's sums
// (core/norm_math.h's reduce_sum8: eight interleaved lanes, then the tail),
// so the CPU's bits; scale and bias nullable (1 and 0), mean and rstd
// nullable.
int layer_norm(void* stream, const float* x, const float* scale, const float* bias, float eps,
               float* y, float* mean, float* rstd, int64_t rows, int64_t cols);
// The same with y rounded to bf16 (nearest even; hmrt_layer_norm_f32_to_bf16).
int layer_norm(void* stream, const float* x, const float* scale, const float* bias, float eps,
               uint16_t* y, float* mean, float* rstd, int64_t rows, int64_t cols);
// Its gradients: dx eight threads per row; dscale and dbias (nullable,
// overwritten) summed over rows in double as core/norm_math.h says, the
// chunks of rows on threads of their own when `partials` (device memory for
// layer_norm_partials(rows, cols) doubles) is given, else one thread per
// column.
int64_t layer_norm_partials(int64_t rows, int64_t cols);
int layer_norm_backward(void* stream, const float* dy, const float* x, const float* scale,
                        const float* mean, const float* rstd, float* dx, float* dscale,
                        float* dbias, int64_t rows, int64_t cols, double* partials);

// Sum of x down to y's shape over a ReducePlan (core/plan.h) in the CPU's
// order (cpu/tensor_ops.cpp, core/reduce_math.h): the reduced indices in
// chunks of rows (y's inner dim kept) or blocks of runs (summed), each
// chunk or block of each y element on a thread of its own when `partials`
// (device memory for reduce_to_partials(plan, ny) doubles) is given, else
// one thread per y element.  ny elements of y.
int64_t reduce_to_partials(const ReducePlan& plan, int64_t ny);
int reduce_to(void* stream, const ReducePlan& plan, const float* x, float* y, int64_t ny,
              double* partials);

}  // namespace cuda
}  // namespace hmrt

#endif  // HMRT_CUDA_CUDA_KERNELS_H
