// Fused elementwise programs (hmrt_fused_f32): a chain of elementwise ops
// evaluated in one pass over the output, a block of kBlock elements at a
// time, every intermediate in a register block that stays in the L1 cache
// instead of a tensor in memory.
//
// Each instruction runs over the block through cpu/vmath, as the one-op
// kernels do, so the program's result has the same bits as its ops run one
// by one.  Inputs of the output's shape are read in
// place; broadcast inputs are gathered into a register block (a scalar
// once per thread), bool inputs widened to 0/1.  The last instruction
// writes the output block directly (hmrt_fused_f32), or its register block,
// rounded from there to bf16 (hmrt_fused_f32_to_bf16).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/internal.h"
#include "core/ew_math.h"
#include "core/float16.h"
#include "cpu/fused_program.h"
#include "cpu/shape_check.h"
#include "cpu/vmath.h"
#include "hmrt/tensor_ops.h"

namespace hmrt {
namespace {

constexpr int64_t kBlock = 512;  // elements per register block
constexpr int64_t kGrain = 1 << 13;

using Input = FusedInput;

// The bool or float element at flat offset `off` of input `in`, as float.
inline float load(const Input& in, int64_t off) {
  return in.u8 ? (in.u8[off] ? 1.0f : 0.0f) : in.f32[off];
}

// dst[i] = input element of output index lo + i, for i in [0, len).
void gather(const Input& in, int32_t rank, const int64_t* dims, int64_t lo,
            int64_t len, float* dst) {
  int64_t idx[HMRT_MAX_RANK], off = 0, rem = lo;
  for (int d = rank - 1; d >= 0; --d) {
    idx[d] = rem % dims[d];
    rem /= dims[d];
    off += idx[d] * in.st[d];
  }
  const int64_t inner = in.st[rank - 1];
  for (int64_t i = 0; i < len;) {
    const int64_t run = std::min(dims[rank - 1] - idx[rank - 1], len - i);
    for (int64_t j = 0; j < run; ++j) dst[i + j] = load(in, off + j * inner);
    i += run;
    // Carry into the outer dims.
    off += run * inner;
    idx[rank - 1] += run;
    for (int d = rank - 1; d > 0 && idx[d] == dims[d]; --d) {
      off -= dims[d] * in.st[d];
      idx[d] = 0;
      ++idx[d - 1];
      off += in.st[d - 1];
    }
  }
}

}  // namespace
}  // namespace hmrt

using namespace hmrt;

hmrt_status hmrt::check_fused(const char* fn, int64_t n_code, const int64_t* code,
                              int64_t n_in, const void* const* in, const int64_t* in_bool,
                              const int64_t* in_dims, int32_t rank, const int64_t* dims,
                              int64_t* n, std::vector<FusedInput>* inputs) {
  HMRT_CHECK_ARG(n_code >= 1 && n_code <= kMaxFusedCode,
                 "%s: n_code must be in [1, %lld], got %lld", fn,
                 (long long)kMaxFusedCode, (long long)n_code);
  HMRT_CHECK_ARG(n_in >= 0 && n_in <= kMaxFusedInputs,
                 "%s: n_in must be in [0, %lld], got %lld", fn,
                 (long long)kMaxFusedInputs, (long long)n_in);
  HMRT_CHECK_ARG(code != nullptr, "%s: code is NULL", fn);
  HMRT_CHECK_ARG(n_in == 0 || (in && in_bool && (rank == 0 || in_dims)),
                 "%s: inputs, in_bool or in_dims is NULL", fn);
  hmrt_status st = check_shape(fn, "y", rank, dims, n);
  if (st != HMRT_OK) return st;
  for (int64_t i = 0; i < n_code; ++i) {
    const int64_t* ins = code + 4 * i;
    const int k = ew::fused_arity(ins[0]);
    HMRT_CHECK_ARG(k > 0, "%s: instruction %lld has unknown op %lld", fn,
                   (long long)i, (long long)ins[0]);
    for (int j = 0; j < 3; ++j) {
      const bool used = j < k;
      HMRT_CHECK_ARG(used ? ins[1 + j] >= 0 && ins[1 + j] < n_in + i
                          : ins[1 + j] == -1,
                     "%s: instruction %lld operand %d is %lld: it must name "
                     "an input or an earlier instruction (-1 when unused)",
                     fn, (long long)i, j, (long long)ins[1 + j]);
    }
  }
  inputs->assign(static_cast<size_t>(n_in), FusedInput{});
  for (int64_t j = 0; j < n_in; ++j) {
    FusedInput& x = (*inputs)[size_t(j)];
    const int64_t* xd = in_dims + j * rank;
    int64_t nx = 1;
    bool full = !in_bool[j];
    for (int d = 0; d < rank; ++d) {
      HMRT_CHECK_ARG(xd[d] == 1 || xd[d] == dims[d],
                     "%s: input %lld has dim %d of %lld, which does not "
                     "broadcast to the output's %lld",
                     fn, (long long)j, d, (long long)xd[d], (long long)dims[d]);
      full = full && xd[d] == dims[d];
      nx *= xd[d];
    }
    for (int64_t s = 1, d = rank - 1; d >= 0; --d) {
      x.st[d] = xd[d] == 1 ? 0 : s;
      s *= xd[d];
    }
    HMRT_CHECK_ARG(in[j] != nullptr || *n == 0,
                   "%s: input %lld is NULL but has %lld elements", fn,
                   (long long)j, (long long)nx);
    x.f32 = in_bool[j] ? nullptr : static_cast<const float*>(in[j]);
    x.u8 = in_bool[j] ? static_cast<const uint8_t*>(in[j]) : nullptr;
    x.count = nx;
    x.kind = full ? FusedInput::Dense : nx == 1 ? FusedInput::Splat : FusedInput::Gather;
  }
  return HMRT_OK;
}

namespace hmrt {
namespace {

// hmrt_fused_f32 and hmrt_fused_f32_to_bf16: the last instruction writes
// the output block directly in fp32, or into its register block, rounded
// from there to bf16 (nearest even) into the output.
template <class Out>
hmrt_status run_fused(const char* fn, int64_t n_code, const int64_t* code, int64_t n_in,
                      const void* const* in, const int64_t* in_bool, const int64_t* in_dims,
                      Out* y, int32_t rank, const int64_t* dims) {
  constexpr bool kF32 = std::is_same_v<Out, float>;
  int64_t n = 0;
  std::vector<Input> inputs;
  hmrt_status st = check_fused(fn, n_code, code, n_in, in, in_bool, in_dims, rank, dims, &n,
                               &inputs);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_PTR(fn, y, n);
  if (n == 0) return HMRT_OK;

  const int64_t slots = n_in + n_code;
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    // One register block per input and instruction.
    std::vector<float> regs(static_cast<size_t>(slots * kBlock));
    std::vector<const float*> src(static_cast<size_t>(slots));
    for (int64_t j = 0; j < n_in; ++j)
      if (inputs[size_t(j)].kind == Input::Splat)
        std::fill_n(&regs[size_t(j * kBlock)], kBlock, load(inputs[size_t(j)], 0));
    for (int64_t b = lo; b < hi; b += kBlock) {
      const int64_t len = std::min(kBlock, hi - b);
      for (int64_t j = 0; j < n_in; ++j) {
        const Input& x = inputs[size_t(j)];
        float* r = &regs[size_t(j * kBlock)];
        if (x.kind == Input::Dense) {
          src[size_t(j)] = x.f32 + b;
          continue;
        }
        if (x.kind == Input::Gather) gather(x, rank, dims, b, len, r);
        src[size_t(j)] = r;
      }
      float* out = nullptr;
      for (int64_t i = 0; i < n_code; ++i) {
        const int64_t* ins = code + 4 * i;
        out = &regs[size_t((n_in + i) * kBlock)];
        if constexpr (kF32)
          if (i + 1 == n_code) out = y + b;
        auto operand = [&](int j) {
          return ins[1 + j] >= 0 ? src[size_t(ins[1 + j])] : nullptr;
        };
        vmath::map(ins[0], operand(0), operand(1), operand(2), out, len);
        src[size_t(n_in + i)] = out;
      }
      if constexpr (!kF32)
        for (int64_t i = 0; i < len; ++i) y[b + i] = float_to_bf16_rne(out[i]);
    }
  });
  return HMRT_OK;
}

}  // namespace
}  // namespace hmrt

extern "C" {

hmrt_status hmrt_fused_f32(int64_t n_code, const int64_t* code, int64_t n_in,
                           const void* const* in, const int64_t* in_bool,
                           const int64_t* in_dims, float* y, int32_t rank,
                           const int64_t* dims) {
  return run_fused("hmrt_fused_f32", n_code, code, n_in, in, in_bool, in_dims, y, rank, dims);
}

hmrt_status hmrt_fused_f32_to_bf16(int64_t n_code, const int64_t* code, int64_t n_in,
                                   const void* const* in, const int64_t* in_bool,
                                   const int64_t* in_dims, uint16_t* y, int32_t rank,
                                   const int64_t* dims) {
  return run_fused("hmrt_fused_f32_to_bf16", n_code, code, n_in, in, in_bool, in_dims, y, rank,
                   dims);
}

}  // extern "C"
