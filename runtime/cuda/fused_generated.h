// Fused programs compiled for themselves.  The backend's fused kernel
// (cuda/nn_kernels.cu) interprets a program: each thread decodes every
// instruction and keeps its values in shared memory.  hmcc --target cuda
// instead writes each distinct fused program of a model as a struct
// (compiler/target/cuda/FusedKernels.cpp):
//
//   struct P {
//     static constexpr int kInputs = 2, kInstructions = 3;
//     static constexpr int64_t kCode[12] = {...};  // as hmrt_fused_f32's
//     static float eval(const float* r);           // r: the inputs' values
//   };
//
// whose eval applies the same ew::fused_apply to the same operands, one
// instruction a line, and registers them with register_programs<P...>().
// nvcc compiles that file beside the program; hmrt_fused_f32 then runs the
// program's own kernel (values in registers, no decoding) wherever the
// code, the number of instructions and of inputs match.  The results are
// the interpreter's, bit for bit.  HMRT_CUDA_FUSED=interpreter turns the
// generated kernels off (to compare the two).
//
// Compiled by the host compiler, the same file registers each program's
// element function on the host instead: a test compares it with the
// interpreter there (test/compiler/target/cuda/fused-kernels.test).
#ifndef HMRT_CUDA_FUSED_GENERATED_H
#define HMRT_CUDA_FUSED_GENERATED_H

#include <cstdint>
#include <vector>

#include "core/float16.h"
#include "cuda/nn_kernels.h"

#if defined(__CUDACC__)
#include "cuda/launch.cuh"
#define HMRT_FUSED_INLINE __forceinline__ __host__ __device__
#else
#define HMRT_FUSED_INLINE inline
#endif

namespace hmrt {
namespace cuda {

// Runs a generated program over n output elements; y is float*, or
// uint16_t* with bf16 (rounded, nearest even).  operands in host memory.
using GeneratedFusedLaunch = int (*)(void* stream, const FusedHeader& h,
                                     const FusedOperand* operands, void* y, int bf16, int64_t n);
struct GeneratedFused {
  const int64_t* code;  // 4 * n_code, as hmrt_fused_f32's
  int32_t n_code, n_in;
  GeneratedFusedLaunch launch;
};

// Adds `count` programs (a generated file's static initializer calls it);
// returns count.  Defined by the backend (cuda/fused_generated.cpp).
int register_generated_fused(const GeneratedFused* table, int count);
// The generated program of this code, or null: none matches, or
// HMRT_CUDA_FUSED=interpreter.
const GeneratedFused* find_generated_fused(const int64_t* code, int64_t n_code, int64_t n_in);
// Whether HMRT_CUDA_FUSED's value asks for the interpreter: "interpreter";
// unset, empty and "generated" do not, and any other value gets a one-line
// notice (once) and does not.
bool interpreter_requested(const char* value);

// Output element i of generated program P, the splat inputs' values
// already in r (fused_splats): what a thread of its kernel computes, and
// the host check.
template <class P>
HMRT_FUSED_INLINE float generated_element(const FusedHeader& h, const FusedOperand* operands,
                                          int64_t i, float* r) {
  fused_inputs(h, operands, i, r, FusedCount<P::kInputs>{});
  return P::eval(r);
}

#if defined(__CUDACC__)

// The operands as a kernel parameter (constant memory, read alike by every
// thread), so that the unrolled loads index them by constants.
template <int N>
struct FusedOperandPack {
  FusedOperand o[N];
};

template <class P, class Out>
__global__ void __launch_bounds__(kThreads)
    generated_fused_kernel(FusedHeader h, FusedOperandPack<P::kInputs> pack, Out* y, int64_t n) {
  float r[P::kInputs];
#pragma unroll
  for (int j = 0; j < P::kInputs; ++j)
    if (pack.o[j].splat) r[j] = fused_load(pack.o[j], 0);
  HMRT_GRID_LOOP(i, n) { store_result(y + i, generated_element<P>(h, pack.o, i, r)); }
}

template <class P>
int launch_generated_fused(void* stream, const FusedHeader& h, const FusedOperand* operands,
                           void* y, int bf16, int64_t n) {
  FusedOperandPack<P::kInputs> pack;
  for (int j = 0; j < P::kInputs; ++j) pack.o[j] = operands[j];
  if (bf16)
    generated_fused_kernel<P, uint16_t><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        h, pack, static_cast<uint16_t*>(y), n);
  else
    generated_fused_kernel<P, float><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        h, pack, static_cast<float*>(y), n);
  return launched();
}

template <class... P>
int register_programs() {
  static const GeneratedFused table[] = {
      {P::kCode, P::kInstructions, P::kInputs, &launch_generated_fused<P>}...};
  return register_generated_fused(table, int(sizeof...(P)));
}

#else  // the host check

struct HostFusedProgram {
  const int64_t* code;
  int32_t n_code, n_in;
  float (*element)(const FusedHeader& h, const FusedOperand* operands, int64_t i, float* r);
};
inline std::vector<HostFusedProgram>& host_fused_programs() {
  static std::vector<HostFusedProgram> programs;
  return programs;
}
template <class... P>
int register_programs() {
  (host_fused_programs().push_back({P::kCode, P::kInstructions, P::kInputs, &generated_element<P>}),
   ...);
  return int(sizeof...(P));
}

#endif

}  // namespace cuda
}  // namespace hmrt

#endif  // HMRT_CUDA_FUSED_GENERATED_H
