// The CUDA backend's attention on tensor cores: bf16 products with fp32
// sums (HMRT_ATTENTION_BF16), flash-style (cuda/attention_tc.cu). The
// scalar kernels of cuda/nn_kernels.cu take the rest: fp32, and bf16 with
// a head_dim over kMaxTcHeadDim.
#ifndef HMRT_CUDA_ATTENTION_TC_H
#define HMRT_CUDA_ATTENTION_TC_H

#include <cstdint>

#include "core/attention_layout.h"
#include "cpu/dropout_mask.h"

namespace hmrt {
namespace cuda {

// The largest head_dim the tensor-core kernels hold in shared memory.
constexpr int64_t kMaxTcHeadDim = 128;

// Whether the tensor-core kernels take `a`: bf16 products, head_dim at
// most kMaxTcHeadDim.
bool tc_attention_supported(const AttnLayout& a);

// As attention_forward / attention_backward (cuda/nn_kernels.h); di is
// B * H * T floats of scratch.
int tc_attention_forward(void* stream, const AttnLayout& a, const DropoutMask* drop,
                         const float* q, const float* k, const float* v, const float* bias,
                         float* out, float* lse);
int tc_attention_backward(void* stream, const AttnLayout& a, const DropoutMask* drop,
                          const float* q, const float* k, const float* v, const float* bias,
                          const float* out, const float* lse, const float* dout, float* dq,
                          float* dk, float* dv, float* di);

}  // namespace cuda
}  // namespace hmrt

#endif  // HMRT_CUDA_ATTENTION_TC_H
