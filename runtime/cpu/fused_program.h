// The checked form of an hmrt_fused_f32 call (hmrt/tensor_ops.h), shared by
// the CPU kernel (cpu/fused.cpp) and the CUDA backend's.
#ifndef HMRT_CPU_FUSED_PROGRAM_H
#define HMRT_CPU_FUSED_PROGRAM_H

#include <cstdint>
#include <vector>

#include "hmrt/hmrt.h"
#include "hmrt/tensor_ops.h"

namespace hmrt {

constexpr int64_t kMaxFusedInputs = 64;
constexpr int64_t kMaxFusedCode = 256;

// How an input is read: in place (the output's shape, float), one value,
// or gathered through per-dim element strides (0 where broadcast).
struct FusedInput {
  enum Kind { Dense, Splat, Gather } kind;
  const float* f32;
  const uint8_t* u8;  // a bool input
  int64_t count;      // its elements
  int64_t st[HMRT_MAX_RANK];
};

// Checks the program (each op known, each operand an input or an earlier
// instruction, -1 where unused), the inputs' shapes against the output's
// and their pointers; sets *n to the output's element count and describes
// each input.  y is not checked.
hmrt_status check_fused(const char* fn, int64_t n_code, const int64_t* code, int64_t n_in,
                        const void* const* in, const int64_t* in_bool, const int64_t* in_dims,
                        int32_t rank, const int64_t* dims, int64_t* n,
                        std::vector<FusedInput>* inputs);

}  // namespace hmrt

#endif  // HMRT_CPU_FUSED_PROGRAM_H
