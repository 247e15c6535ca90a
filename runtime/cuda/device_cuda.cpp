// The CUDA backend of the device interface (hmrt/device.h, core/backend.h),
// on device 0 of the CUDA runtime.
//
//  - device tier: cudaMalloc, addressed by the kernels, not by the host;
//  - host tier: pinned, mapped host memory (cudaHostAlloc), which the
//    device reads and writes at full link speed and the host addresses;
//  - storage tier: the CPU backend's files (cpu/storage_file.h), moved to
//    and from the device through pinned bounce buffers;
//  - streams: a worker thread each (cpu/cpu_stream.h) with a CUDA stream of
//    its own; the worker issues each copy on its CUDA stream and waits for
//    it, so that work on one stream runs in order, the streams' copies
//    overlap on the GPU's copy engines, and events are the CPU backend's;
//  - kernels: cuBLAS for the GEMMs and the kernels of cuda_kernels.cu, each
//    run to completion on the backend's kernel stream (the kernel table's
//    functions are synchronous, as the CPU's).
//
// Built only when the CUDA toolkit is found (runtime/CMakeLists.txt), as the
// static library hmrt_cuda: programs that link it whole get the "cuda" entry
// of the registry (core/registry.cpp, a weak reference), the others do not
// depend on CUDA.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <system_error>
#include <type_traits>
#include <vector>

#include "core/backend.h"
#include "core/internal.h"
#include "core/optim_math.h"
#include "cpu/arg_checks.h"
#include "cpu/cpu_stream.h"
#include "cpu/nn_ops_shared.h"
#include "cpu/shape_check.h"
#include "cpu/storage_file.h"
#include "cuda/context.h"
#include "cuda/cuda_kernels.h"
#include "hmrt/io.h"  // hmrt_dtype_size
#include "hmrt/kernel_table.h"

namespace hmrt {
namespace {

// Bounce buffers between storage and the device (pinned, page-aligned).
constexpr uint64_t kBounce = uint64_t{4} << 20;

const char* blas_error(cublasStatus_t s) { return cublasGetStatusString(s); }

hmrt_status check_int(const char* fn, const char* name, int64_t v) {
  HMRT_CHECK_ARG(v >= 0 && v <= INT_MAX,
                 "%s: %s = %lld is outside what cuBLAS takes (0 to %d)", fn,
                 name, (long long)v, INT_MAX);
  return HMRT_OK;
}

// Checks of the GEMM arguments (as the CPU's) and cuBLAS's int range.
hmrt_status check_gemm(const char* fn, int ta, int tb, int64_t m, int64_t n,
                       int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  HMRT_CHECK_SIZE(fn, m);
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_SIZE(fn, k);
  const int64_t min_lda = ta ? m : k, min_ldb = tb ? k : n;
  HMRT_CHECK_ARG(lda >= (min_lda > 1 ? min_lda : 1),
                 "%s: lda = %lld is less than %lld", fn, (long long)lda,
                 (long long)min_lda);
  HMRT_CHECK_ARG(ldb >= (min_ldb > 1 ? min_ldb : 1),
                 "%s: ldb = %lld is less than %lld", fn, (long long)ldb,
                 (long long)min_ldb);
  HMRT_CHECK_ARG(ldc >= (n > 1 ? n : 1), "%s: ldc = %lld is less than %lld",
                 fn, (long long)ldc, (long long)n);
  hmrt_status st;
  if ((st = check_int(fn, "m", m)) != HMRT_OK ||
      (st = check_int(fn, "n", n)) != HMRT_OK ||
      (st = check_int(fn, "k", k)) != HMRT_OK ||
      (st = check_int(fn, "lda", lda)) != HMRT_OK ||
      (st = check_int(fn, "ldb", ldb)) != HMRT_OK)
    return st;
  return check_int(fn, "ldc", ldc);
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS
// gets B first, and m and n swapped.
cublasOperation_t op(int t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; }

// Elements of op(X) stored: rows * ld, the extent a pointer check covers.
int64_t extent(int64_t rows, int64_t ld) { return rows == 0 ? 0 : (rows - 1) * ld + 1; }

hmrt_status cuda_sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k,
                       float alpha, const float* a, int64_t lda, const float* b,
                       int64_t ldb, float beta, float* c, int64_t ldc) {
  const char* fn = "hmrt_sgemm (cuda)";
  hmrt_status st = check_gemm(fn, ta, tb, m, n, k, lda, ldb, ldc);
  if (st != HMRT_OK) return st;
  if (m == 0 || n == 0) return HMRT_OK;
  HMRT_CHECK_GPU(fn, a, k == 0 ? 0 : extent(ta ? k : m, lda));
  HMRT_CHECK_GPU(fn, b, k == 0 ? 0 : extent(tb ? n : k, ldb));
  HMRT_CHECK_GPU(fn, c, extent(m, ldc));
  std::lock_guard<std::mutex> lock(g_context->mutex);
  const cublasStatus_t s =
      cublasSgemm(g_context->blas, op(tb), op(ta), int(n), int(m), int(k), &alpha, b,
                  int(ldb), a, int(lda), &beta, c, int(ldc));
  if (s != CUBLAS_STATUS_SUCCESS)
    return fail(HMRT_INTERNAL, "%s: cublasSgemm failed: %s", fn, blas_error(s));
  return finish(fn, 0);
}

// The checks of a strided batched GEMM; *any is false when there is nothing
// to compute.
hmrt_status check_batched(const char* fn, int ta, int tb, int64_t m, int64_t n, int64_t k,
                          const void* a, int64_t lda, int64_t stride_a, const void* b,
                          int64_t ldb, int64_t stride_b, const float* c, int64_t ldc,
                          int64_t stride_c, int64_t batch, bool* any) {
  hmrt_status st = check_gemm(fn, ta, tb, m, n, k, lda, ldb, ldc);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_SIZE(fn, batch);
  HMRT_CHECK_ARG(stride_a >= 0 && stride_b >= 0 && stride_c >= 0,
                 "%s: strides must be >= 0", fn);
  if ((st = check_int(fn, "batch_count", batch)) != HMRT_OK) return st;
  *any = m != 0 && n != 0 && batch != 0;
  if (!*any) return HMRT_OK;
  const int64_t last = batch - 1;
  HMRT_CHECK_GPU(fn, a, k == 0 ? 0 : last * stride_a + extent(ta ? k : m, lda));
  HMRT_CHECK_GPU(fn, b, k == 0 ? 0 : last * stride_b + extent(tb ? n : k, ldb));
  HMRT_CHECK_GPU(fn, c, last * stride_c + extent(m, ldc));
  return HMRT_OK;
}

hmrt_status cuda_sgemm_strided_batched(int ta, int tb, int64_t m, int64_t n,
                                       int64_t k, float alpha, const float* a,
                                       int64_t lda, int64_t stride_a,
                                       const float* b, int64_t ldb,
                                       int64_t stride_b, float beta, float* c,
                                       int64_t ldc, int64_t stride_c,
                                       int64_t batch) {
  const char* fn = "hmrt_sgemm_strided_batched (cuda)";
  bool any = false;
  hmrt_status st = check_batched(fn, ta, tb, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc,
                                 stride_c, batch, &any);
  if (st != HMRT_OK || !any) return st;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  const cublasStatus_t s = cublasSgemmStridedBatched(
      g_context->blas, op(tb), op(ta), int(n), int(m), int(k), &alpha, b, int(ldb),
      stride_b, a, int(lda), stride_a, &beta, c, int(ldc), stride_c, int(batch));
  if (s != CUBLAS_STATUS_SUCCESS)
    return fail(HMRT_INTERNAL, "%s: cublasSgemmStridedBatched failed: %s", fn,
                blas_error(s));
  return finish(fn, 0);
}

// A strided batched GEMM of A and B of `type` into fp32 C by
// cublasGemmStridedBatchedEx under `compute`, the handle out of pedantic
// math for the call; the caller holds the context's mutex and checked the
// arguments.
hmrt_status gemm_ex_locked(const char* fn, cudaDataType type, cublasComputeType_t compute, int ta,
                           int tb, int64_t m, int64_t n, int64_t k, float alpha, const void* a,
                           int64_t lda, int64_t stride_a, const void* b, int64_t ldb,
                           int64_t stride_b, float beta, float* c, int64_t ldc, int64_t stride_c,
                           int64_t batch) {
  cublasStatus_t s = cublasSetMathMode(g_context->blas, CUBLAS_DEFAULT_MATH);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasGemmStridedBatchedEx(g_context->blas, op(tb), op(ta), int(n), int(m), int(k),
                                   &alpha, b, type, int(ldb), stride_b, a, type, int(lda),
                                   stride_a, &beta, c, CUDA_R_32F, int(ldc), stride_c,
                                   int(batch), compute, CUBLAS_GEMM_DEFAULT);
  const cublasStatus_t restored = cublasSetMathMode(g_context->blas, CUBLAS_PEDANTIC_MATH);
  if (s == CUBLAS_STATUS_SUCCESS) s = restored;
  if (s != CUBLAS_STATUS_SUCCESS)
    return fail(HMRT_INTERNAL, "%s: cublasGemmStridedBatchedEx failed: %s", fn, blas_error(s));
  return HMRT_OK;
}

// The same, checking the arguments and taking the mutex.
hmrt_status gemm_ex_batched(const char* fn, cudaDataType type, cublasComputeType_t compute, int ta,
                            int tb, int64_t m, int64_t n, int64_t k, float alpha, const void* a,
                            int64_t lda, int64_t stride_a, const void* b, int64_t ldb,
                            int64_t stride_b, float beta, float* c, int64_t ldc,
                            int64_t stride_c, int64_t batch) {
  bool any = false;
  hmrt_status st = check_batched(fn, ta, tb, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc,
                                 stride_c, batch, &any);
  if (st != HMRT_OK || !any) return st;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  if ((st = gemm_ex_locked(fn, type, compute, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb,
                           stride_b, beta, c, ldc, stride_c, batch)) != HMRT_OK)
    return st;
  return finish(fn, 0);
}

// fp32 operands rounded to bf16 (nearest even, as the CPU's
// hmrt_matmul_f32_bf16 rounds them) and multiplied on the tensor cores
// with fp32 sums: hmrt_matmul_f32_bf16's GEMMs.  The rounded operands go
// to the context's scratch: whole when they fit, else a block of op(A)'s
// rows and one of op(B)'s columns at a time, each block's GEMM writing its
// part of C.  (cuBLAS's CUBLAS_COMPUTE_32F_FAST_16BF rounds fp32 operands
// its own, undocumented way, measured on an H200 to differ from the CPU's
// rounding by more than the fp32 sums do.)
//
// One operand already bf16 (TA or TB uint16_t, hmrt_matmul_mixed_bf16):
// only the fp32 one is rounded; the GEMMs read the bf16 one in place.

// A GEMM operand's block as the GEMM reads it: its bf16 data, leading
// dimension, and the rounding's error (0 when none).
struct OperandBlock {
  const uint16_t* data;
  int64_t ld;
  int error;
};

// The block of op(X) (X transposed with t, leading dimension ld) of rows
// [r0, r0 + rows) and columns [c0, c0 + cols), of the batch entry at x and
// the `entries` - 1 after it, `stride` apart: an fp32 X rounded into `out`,
// packed rows x cols (cols x rows with t); a bf16 X where it is.
template <class T>
OperandBlock operand_block(void* stream, const T* x, int t, int64_t ld, int64_t stride,
                           int64_t entries, int64_t r0, int64_t rows, int64_t c0, int64_t cols,
                           uint16_t* out) {
  const T* first = x + (t ? c0 * ld + r0 : r0 * ld + c0);
  if constexpr (std::is_same<T, float>::value) {
    const int e = t ? cuda::round_bf16_blocks(stream, first, entries, stride, cols, rows, ld, out)
                    : cuda::round_bf16_blocks(stream, first, entries, stride, rows, cols, ld, out);
    return {out, std::max<int64_t>(1, t ? rows : cols), e};
  } else {
    return {first, ld, 0};
  }
}

template <class TA, class TB>
hmrt_status cuda_sgemm_rounded_batched(int ta, int tb, int64_t m, int64_t n, int64_t k,
                                       float alpha, const TA* a, int64_t lda, int64_t stride_a,
                                       const TB* b, int64_t ldb, int64_t stride_b, float beta,
                                       float* c, int64_t ldc, int64_t stride_c, int64_t batch) {
  constexpr bool kRoundA = std::is_same<TA, float>::value;
  constexpr bool kRoundB = std::is_same<TB, float>::value;
  const char* fn = kRoundA && kRoundB ? "hmrt_sgemm (cuda, bf16 products)"
                                      : "hmrt_sgemm (cuda, bf16 and fp32 operands)";
  bool any = false;
  hmrt_status st = check_batched(fn, ta, tb, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc,
                                 stride_c, batch, &any);
  if (st != HMRT_OK || !any) return st;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  void* space = g_context->scratch;
  const int64_t room = int64_t(g_context->scratch_bytes / sizeof(uint16_t));
  auto* sa = static_cast<uint16_t*>(space);
  void* stream = g_context->stream;
  auto block_a = [&](int64_t entries, int64_t bi, int64_t i0, int64_t rows, int64_t k0,
                     int64_t kb) {
    return operand_block(stream, a + bi * stride_a, ta, lda, stride_a, entries, i0, rows, k0,
                         kb, sa);
  };
  auto block_b = [&](uint16_t* sb, int64_t entries, int64_t bi, int64_t j0, int64_t cols,
                     int64_t k0, int64_t kb) {
    return operand_block(stream, b + bi * stride_b, tb, ldb, stride_b, entries, k0, kb, j0,
                         cols, sb);
  };
  auto gemm = [&](const OperandBlock& pa, int64_t spa, const OperandBlock& pb, int64_t spb,
                  float* pc, int64_t rows, int64_t cols, int64_t kb, float beta_,
                  int64_t entries) {
    return gemm_ex_locked(fn, CUDA_R_16BF, CUBLAS_COMPUTE_32F, ta, tb, rows, cols, kb, alpha,
                          pa.data, pa.ld, spa, pb.data, pb.ld, spb, beta_, pc, ldc, stride_c,
                          entries);
  };
  const int64_t a_entries = stride_a ? batch : 1, b_entries = stride_b ? batch : 1;
  // Elements rounded up to 64 (128 bytes) so that B starts aligned.
  const int64_t a_whole = kRoundA ? (a_entries * m * k + 63) / 64 * 64 : 0;
  const int64_t b_whole = kRoundB ? b_entries * k * n : 0;
  if (a_whole + b_whole <= room) {
    uint16_t* sb = sa + a_whole;
    // Packed entries are m * k (k * n) apart; one in place, as the caller's.
    const int64_t spa = kRoundA ? (stride_a ? m * k : 0) : stride_a;
    const int64_t spb = kRoundB ? (stride_b ? k * n : 0) : stride_b;
    OperandBlock pa{nullptr, 1, 0}, pb{nullptr, 1, 0};
    if (k != 0) {
      pa = block_a(a_entries, 0, 0, m, 0, k);
      if (pa.error == 0) pb = block_b(sb, b_entries, 0, 0, n, 0, k);
      if (const int e = pa.error ? pa.error : pb.error) return finish(fn, e);
    } else {  // nothing is read: the leading dims of packed operands
      pa = {reinterpret_cast<const uint16_t*>(a), ta ? std::max<int64_t>(1, m) : 1, 0};
      pb = {reinterpret_cast<const uint16_t*>(b), tb ? 1 : std::max<int64_t>(1, n), 0};
    }
    if ((st = gemm(pa, spa, pb, spb, c, m, n, k, beta, batch)) != HMRT_OK) return st;
    return finish(fn, 0);
  }
  // Blocks of at most half the scratch each, at most kMaxInner deep: a long
  // inner dimension (the LM head's gradient sums over the vocabulary) is
  // taken in pieces whose products C accumulates (beta 1 after the first),
  // so that each block's GEMM stays large in m and n.
  constexpr int64_t kMaxInner = 8192;
  const int64_t half = room / 2 / 64 * 64;
  const int64_t kb_max = std::max<int64_t>(1, std::min(k, kMaxInner));
  const int64_t mb = std::max<int64_t>(1, std::min(m, half / kb_max));
  const int64_t nb = std::max<int64_t>(1, std::min(n, half / kb_max));
  uint16_t* sb = sa + half;
  OperandBlock pa{reinterpret_cast<const uint16_t*>(a), 1, 0};
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t i0 = 0; i0 < m; i0 += mb) {
      const int64_t rows = std::min(mb, m - i0);
      for (int64_t j0 = 0; j0 < n; j0 += nb) {
        const int64_t cols = std::min(nb, n - j0);
        float* pc = c + bi * stride_c + i0 * ldc + j0;
        for (int64_t k0 = 0; k0 < k || k0 == 0; k0 += kb_max) {
          const int64_t kb = std::min(kb_max, k - k0);
          OperandBlock pb{reinterpret_cast<const uint16_t*>(b), 1, 0};
          // A's block is the same for every j0 when k is one block.
          if (kb > 0 && (j0 == 0 || kb != k || !kRoundA))
            if ((pa = block_a(1, bi, i0, rows, k0, kb)).error) return finish(fn, pa.error);
          if (kb > 0)
            if ((pb = block_b(sb, 1, bi, j0, cols, k0, kb)).error) return finish(fn, pb.error);
          if ((st = gemm(pa, 0, pb, 0, pc, rows, cols, kb, k0 == 0 ? beta : 1.0f, 1)) !=
              HMRT_OK)
            return st;
        }
      }
    }
  return finish(fn, 0);
}

hmrt_status cuda_sgemm_f32_bf16_batched(int ta, int tb, int64_t m, int64_t n, int64_t k,
                                        float alpha, const float* a, int64_t lda,
                                        int64_t stride_a, const float* b, int64_t ldb,
                                        int64_t stride_b, float beta, float* c, int64_t ldc,
                                        int64_t stride_c, int64_t batch) {
  return cuda_sgemm_rounded_batched(ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b,
                                    beta, c, ldc, stride_c, batch);
}

template <class TA, class TB>
hmrt_status cuda_sgemm_rounded(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                               const TA* a, int64_t lda, const TB* b, int64_t ldb, float beta,
                               float* c, int64_t ldc) {
  return cuda_sgemm_rounded_batched(ta, tb, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc,
                                    0, 1);
}

hmrt_status cuda_sgemm_f32_bf16(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                                const float* a, int64_t lda, const float* b, int64_t ldb,
                                float beta, float* c, int64_t ldc) {
  return cuda_sgemm_f32_bf16_batched(ta, tb, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc,
                                     0, 1);
}

// bf16 operands, fp32 sums on the tensor cores: hmrt_matmul_bf16's GEMMs.
hmrt_status cuda_sgemm_bf16_batched(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                                    const uint16_t* a, int64_t lda, int64_t stride_a,
                                    const uint16_t* b, int64_t ldb, int64_t stride_b, float beta,
                                    float* c, int64_t ldc, int64_t stride_c, int64_t batch) {
  return gemm_ex_batched("hmrt_sgemm (cuda, bf16 operands)", CUDA_R_16BF, CUBLAS_COMPUTE_32F, ta,
                         tb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc,
                         stride_c, batch);
}

hmrt_status cuda_sgemm_bf16(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                            const uint16_t* a, int64_t lda, const uint16_t* b, int64_t ldb,
                            float beta, float* c, int64_t ldc) {
  return cuda_sgemm_bf16_batched(ta, tb, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0,
                                 1);
}

// The casts among float, binary16 and bfloat16 the GPU has; 0 for others.
bool cast_kind(int32_t from, int32_t to, cuda::Cast* kind) {
  using cuda::Cast;
  struct Entry { int32_t from, to; Cast kind; };
  static const Entry kCasts[] = {
      {HMRT_DTYPE_F16, HMRT_DTYPE_F32, Cast::F16ToF32},
      {HMRT_DTYPE_F32, HMRT_DTYPE_F16, Cast::F32ToF16},
      {HMRT_DTYPE_BF16, HMRT_DTYPE_F32, Cast::Bf16ToF32},
      {HMRT_DTYPE_F32, HMRT_DTYPE_BF16, Cast::F32ToBf16},
      {HMRT_DTYPE_F16, HMRT_DTYPE_BF16, Cast::F16ToBf16},
      {HMRT_DTYPE_BF16, HMRT_DTYPE_F16, Cast::Bf16ToF16},
  };
  for (const Entry& e : kCasts)
    if (e.from == from && e.to == to) {
      *kind = e.kind;
      return true;
    }
  return false;
}

hmrt_status cuda_cast(int32_t from, const void* x, int32_t to, void* y, int64_t n) {
  const char* fn = "hmrt_cast (cuda)";
  HMRT_CHECK_ARG(hmrt_dtype_size(from) != 0, "%s: unsupported from_dtype %d", fn, (int)from);
  HMRT_CHECK_ARG(hmrt_dtype_size(to) != 0, "%s: unsupported to_dtype %d", fn, (int)to);
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_GPU(fn, x, n);
  HMRT_CHECK_GPU(fn, y, n);
  if (n == 0) return HMRT_OK;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  if (from == to && from != HMRT_DTYPE_BOOL) {
    if (x == y) return HMRT_OK;
    HMRT_CUDA_CALL(fn, "the copy",
                   cudaMemcpyAsync(y, x, size_t(n) * hmrt_dtype_size(from),
                                   cudaMemcpyDefault, g_context->stream));
    return finish(fn, 0);
  }
  cuda::Cast kind;
  if (!cast_kind(from, to, &kind))
    return fail(HMRT_UNIMPLEMENTED,
                "%s: the GPU casts among float, float16 and bfloat16 only, not "
                "dtype %d to %d",
                fn, (int)from, (int)to);
  return finish(fn, cuda::cast(g_context->stream, kind, x, y, n));
}

hmrt_status cuda_round_bf16(const float* x, uint16_t* y, int64_t n) {
  const char* fn = "hmrt_round_bf16 (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_GPU(fn, x, n);
  HMRT_CHECK_GPU(fn, y, n);
  if (n == 0) return HMRT_OK;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::cast(g_context->stream, cuda::Cast::F32ToBf16Rne, x, y, n));
}

hmrt_status cuda_fill(void* y, int64_t n, const void* value, size_t elem_size) {
  const char* fn = "hmrt_fill (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_ARG(elem_size == 1 || elem_size == 2 || elem_size == 4 || elem_size == 8,
                 "%s: elem_size %zu is not 1, 2, 4 or 8 on the GPU", fn, elem_size);
  HMRT_CHECK_ARG(value != nullptr, "%s: value is NULL", fn);
  HMRT_CHECK_GPU(fn, y, n);
  uint64_t bits = 0;
  std::memcpy(&bits, value, elem_size);  // little-endian: the low bytes
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::fill(g_context->stream, y, n, bits, elem_size));
}

// Partial sums per 4096-element chunk in scratch, then added in order on
// the device: cpu/gradnorm.cpp's sums, without a round trip to the host.
hmrt_status cuda_add_sum_of_squares(const float* x, int64_t n, const double* acc,
                                    double* out) {
  const char* fn = "hmrt_add_sum_of_squares (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_GPU(fn, x, n);
  if (acc != nullptr) HMRT_CHECK_GPU(fn, acc, 1);
  HMRT_CHECK_GPU(fn, out, 1);
  const int64_t chunks = n > 4096 ? ceil_div(n, 4096) : 1;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  void* space = nullptr;
  hmrt_status st = scratch(fn, size_t(chunks) * sizeof(double), &space);
  if (st != HMRT_OK) return st;
  double* partials = static_cast<double*>(space);
  int launch = cuda::sum_squares_partials(g_context->stream, x, n, partials);
  if (launch == 0) launch = cuda::sum_in_order(g_context->stream, partials, chunks, acc, out);
  return finish(fn, launch);
}

hmrt_status cuda_norm_of_sum(const double* sum, float* out) {
  const char* fn = "hmrt_norm_of_sum (cuda)";
  HMRT_CHECK_GPU(fn, sum, 1);
  HMRT_CHECK_GPU(fn, out, 1);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::norm_of_sum(g_context->stream, sum, out));
}

hmrt_status cuda_global_norm(const float* const* buffers, const int64_t* sizes,
                             int64_t count, float* out) {
  const char* fn = "hmrt_global_norm (cuda)";
  HMRT_CHECK_SIZE(fn, count);
  HMRT_CHECK_PTR(fn, buffers, count);
  HMRT_CHECK_PTR(fn, sizes, count);
  HMRT_CHECK_ARG(out != nullptr, "%s: out is NULL", fn);
  // One run of partial sums per buffer, all in one scratch array.
  std::vector<size_t> first(size_t(count) + 1, 0);
  for (int64_t b = 0; b < count; ++b) {
    HMRT_CHECK_ARG(sizes[b] >= 0, "%s: sizes[%lld] = %lld is negative", fn,
                   (long long)b, (long long)sizes[b]);
    HMRT_CHECK_GPU(fn, buffers[b], sizes[b]);
    first[b + 1] = first[b] + size_t(sizes[b] > 4096 ? ceil_div(sizes[b], 4096) : 1);
  }
  std::lock_guard<std::mutex> lock(g_context->mutex);
  void* space = nullptr;
  hmrt_status st = scratch(fn, first[count] * sizeof(double), &space);
  if (st != HMRT_OK) return st;
  double* partials = static_cast<double*>(space);
  for (int64_t b = 0; b < count; ++b) {
    if (sizes[b] == 0) continue;
    const int launch = cuda::sum_squares_partials(g_context->stream, buffers[b], sizes[b],
                                                  partials + first[b]);
    if (launch != 0) return finish(fn, launch);
  }
  std::vector<double> partial(first[count], 0.0);
  if ((st = copy_with_kernels(fn, "reading the partial sums", partial.data(), partials,
                        partial.size() * sizeof(double))) != HMRT_OK)
    return st;
  // cpu/gradnorm.cpp's order: chunks in order per buffer, buffers in order.
  double total = 0.0;
  for (int64_t b = 0; b < count; ++b) {
    if (sizes[b] == 0) continue;
    double s = 0.0;
    for (size_t c = first[b]; c < first[b + 1]; ++c) s += partial[c];
    total += s;
  }
  const float norm = static_cast<float>(std::sqrt(total));
  HMRT_CUDA_CALL(fn, "writing the norm",
                 cudaMemcpyAsync(out, &norm, sizeof norm, cudaMemcpyDefault,
                                 g_context->stream));
  return finish(fn, 0);
}

hmrt_status cuda_scale(float* x, int64_t n, float s) {
  const char* fn = "hmrt_scale (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_GPU(fn, x, n);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::scale(g_context->stream, x, n, s));
}

hmrt_status cuda_adamw_step(float* param, const float* grad, float* exp_avg,
                            float* exp_avg_sq, int64_t n, double lr,
                            double beta1, double beta2, double eps,
                            double weight_decay, int64_t step) {
  const char* fn = "hmrt_adamw_step (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_GPU(fn, param, n);
  HMRT_CHECK_GPU(fn, grad, n);
  HMRT_CHECK_GPU(fn, exp_avg, n);
  HMRT_CHECK_GPU(fn, exp_avg_sq, n);
  hmrt_status st = check_adamw_args(fn, step, beta1, beta2);
  if (st != HMRT_OK) return st;
  const AdamWScalars s(lr, beta1, beta2, eps, weight_decay, step);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::adamw(g_context->stream, s, param, grad, exp_avg, exp_avg_sq, n));
}

hmrt_status cuda_sgd_step(float* param, const float* grad, float* momentum_buf,
                          int64_t n, double lr, double momentum,
                          double dampening, double weight_decay, int nesterov,
                          int first_step) {
  const char* fn = "hmrt_sgd_step (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_GPU(fn, param, n);
  HMRT_CHECK_GPU(fn, grad, n);
  if (momentum != 0.0) HMRT_CHECK_GPU(fn, momentum_buf, n);
  hmrt_status st = check_sgd_args(fn, momentum, dampening, nesterov);
  if (st != HMRT_OK) return st;
  const SgdScalars s(lr, momentum, dampening, weight_decay, nesterov, first_step);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::sgd(g_context->stream, s, param, grad, momentum_buf, n));
}

hmrt_status cuda_adamw8bit_step(float* param, const float* grad, uint8_t* exp_avg_codes,
                                float* exp_avg_absmax, uint8_t* exp_avg_sq_codes,
                                float* exp_avg_sq_absmax, int64_t n, double lr, double beta1,
                                double beta2, double eps, double weight_decay, int64_t step) {
  const char* fn = "hmrt_adamw8bit_step (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  const int64_t blocks = ceil_div(n, HMRT_QUANT_BLOCK);
  HMRT_CHECK_GPU(fn, param, n);
  HMRT_CHECK_GPU(fn, grad, n);
  HMRT_CHECK_GPU(fn, exp_avg_codes, n);
  HMRT_CHECK_GPU(fn, exp_avg_sq_codes, n);
  HMRT_CHECK_GPU(fn, exp_avg_absmax, blocks);
  HMRT_CHECK_GPU(fn, exp_avg_sq_absmax, blocks);
  hmrt_status st = check_adamw_args(fn, step, beta1, beta2);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_ARG(blocks <= INT_MAX, "%s: %lld elements are more than the GPU kernel's grid takes",
                 fn, (long long)n);
  if (n == 0) return HMRT_OK;
  const AdamWScalars s(lr, beta1, beta2, eps, weight_decay, step);
  const QuantMap maps[2] = {quant_map(true), quant_map(false)};
  std::lock_guard<std::mutex> lock(g_context->mutex);
  void* dev = nullptr;
  if ((st = scratch(fn, sizeof(maps), &dev)) != HMRT_OK) return st;
  HMRT_CUDA_CALL(fn, "writing the quantisation maps",
                 cudaMemcpyAsync(dev, maps, sizeof(maps), cudaMemcpyHostToDevice,
                                 g_context->stream));
  return finish(fn, cuda::adamw8bit(g_context->stream, s, static_cast<const QuantMap*>(dev),
                                    param, grad, exp_avg_codes, exp_avg_absmax,
                                    exp_avg_sq_codes, exp_avg_sq_absmax, n));
}

hmrt_status cuda_clip_coefficient(float total_norm, float max_norm, float* coef) {
  const char* fn = "hmrt_clip_coefficient (cuda)";
  HMRT_CHECK_ARG(coef != nullptr, "%s: coef is NULL", fn);
  HMRT_CHECK_GPU(fn, coef, 1);
  const float c = clip_coefficient(total_norm, max_norm);
  return copy_with_kernels(fn, "writing the coefficient", coef, &c, sizeof(c));
}

hmrt_status cuda_onnx_adagrad(const float* x, const float* g, const float* h, float* x_new,
                              float* h_new, int64_t n, double r, int64_t t,
                              double norm_coefficient, double decay_factor, double epsilon) {
  const char* fn = "hmrt_onnx_adagrad (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_GPU(fn, x, n);
  HMRT_CHECK_GPU(fn, g, n);
  HMRT_CHECK_GPU(fn, h, n);
  HMRT_CHECK_GPU(fn, x_new, n);
  HMRT_CHECK_GPU(fn, h_new, n);
  hmrt_status st = check_update_count(fn, t);
  if (st != HMRT_OK) return st;
  const OnnxAdagradScalars s(r, t, norm_coefficient, decay_factor, epsilon);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::onnx_adagrad(g_context->stream, s, x, g, h, x_new, h_new, n));
}

hmrt_status cuda_onnx_momentum(const float* x, const float* g, const float* v, float* x_new,
                               float* v_new, int64_t n, double r, int64_t t,
                               double norm_coefficient, double alpha, double beta,
                               int nesterov) {
  const char* fn = "hmrt_onnx_momentum (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_GPU(fn, x, n);
  HMRT_CHECK_GPU(fn, g, n);
  HMRT_CHECK_GPU(fn, v, n);
  HMRT_CHECK_GPU(fn, x_new, n);
  HMRT_CHECK_GPU(fn, v_new, n);
  hmrt_status st = check_update_count(fn, t);
  if (st != HMRT_OK) return st;
  const OnnxMomentumScalars s(r, t, norm_coefficient, alpha, beta, nesterov);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::onnx_momentum(g_context->stream, s, x, g, v, x_new, v_new, n));
}

hmrt_status cuda_onnx_adam(const float* x, const float* g, const float* v, const float* h,
                           float* x_new, float* v_new, float* h_new, int64_t n, double r,
                           int64_t t, double norm_coefficient, double norm_coefficient_post,
                           double alpha, double beta, double epsilon) {
  const char* fn = "hmrt_onnx_adam (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_GPU(fn, x, n);
  HMRT_CHECK_GPU(fn, g, n);
  HMRT_CHECK_GPU(fn, v, n);
  HMRT_CHECK_GPU(fn, h, n);
  HMRT_CHECK_GPU(fn, x_new, n);
  HMRT_CHECK_GPU(fn, v_new, n);
  HMRT_CHECK_GPU(fn, h_new, n);
  hmrt_status st = check_update_count(fn, t);
  if (st != HMRT_OK) return st;
  const OnnxAdamScalars s(r, t, norm_coefficient, norm_coefficient_post, alpha, beta, epsilon);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::onnx_adam(g_context->stream, s, x, g, v, h, x_new, v_new, h_new, n));
}

// ---- tensor kernels: the CPU kernel's checks and plan, the GPU's loop ----

hmrt_status cuda_expand(const void* x, int32_t rx, const int64_t* sx, void* y, int32_t ry,
                        const int64_t* sy, size_t elem_size) {
  const char* fn = "hmrt_expand (cuda)";
  int64_t nx, ny;
  hmrt_status st;
  if ((st = check_shape(fn, "x", rx, sx, &nx)) != HMRT_OK ||
      (st = check_shape(fn, "y", ry, sy, &ny)) != HMRT_OK ||
      (st = check_broadcast_to(fn, "x", rx, sx, "y", ry, sy)) != HMRT_OK ||
      (st = check_elem(fn, elem_size)) != HMRT_OK)
    return st;
  HMRT_CHECK_GPU(fn, x, ny ? nx : 0);
  HMRT_CHECK_GPU(fn, y, ny);
  if (ny == 0) return HMRT_OK;
  Plan p;
  p.nops = 2;
  p.set_dims(ry, sy);
  p.set_dense(0);
  p.set_broadcast(1, rx, sx);
  p.merge();
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::plan_copy(g_context->stream, p, x, y, elem_size));
}

hmrt_status cuda_where(const uint8_t* cond, int32_t rc, const int64_t* sc, const void* x,
                       int32_t rx, const int64_t* sx, const void* z, int32_t rz,
                       const int64_t* sz, void* y, int32_t ry, const int64_t* sy,
                       size_t elem_size) {
  const char* fn = "hmrt_where (cuda)";
  int64_t nc, nx, nz, ny;
  hmrt_status st;
  if ((st = check_shape(fn, "cond", rc, sc, &nc)) != HMRT_OK ||
      (st = check_shape(fn, "x", rx, sx, &nx)) != HMRT_OK ||
      (st = check_shape(fn, "z", rz, sz, &nz)) != HMRT_OK ||
      (st = check_shape(fn, "y", ry, sy, &ny)) != HMRT_OK)
    return st;
  const char* names[3] = {"cond", "x", "z"};
  const int32_t ranks[3] = {rc, rx, rz};
  const int64_t* shapes[3] = {sc, sx, sz};
  if ((st = check_broadcast(fn, 3, names, ranks, shapes, ry, sy)) != HMRT_OK ||
      (st = check_elem(fn, elem_size)) != HMRT_OK)
    return st;
  HMRT_CHECK_GPU(fn, cond, ny ? nc : 0);
  HMRT_CHECK_GPU(fn, x, ny ? nx : 0);
  HMRT_CHECK_GPU(fn, z, ny ? nz : 0);
  HMRT_CHECK_GPU(fn, y, ny);
  Plan p;
  if (!broadcast_plan(p, 3, ranks, shapes, ry, sy)) return HMRT_OK;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::where(g_context->stream, p, cond, x, z, y, elem_size));
}

// Slices: a copy over the plan of the sliced positions (dense on one
// side, the slice's strides from its start on the other).
Plan slice_plan(int32_t rank, const int64_t* shape, const int64_t* starts, const int64_t* steps,
                const int64_t* out_shape, bool into_x, int64_t* base) {
  Plan p;
  p.nops = 2;
  p.set_dims(rank, out_shape);
  int64_t sliced[kMaxRank], dense[kMaxRank];
  slice_strides(rank, shape, starts, steps, sliced, base);
  dense_strides(rank, out_shape, dense);
  for (int d = 0; d < rank; ++d) {
    p.st[0][d] = into_x ? sliced[d] : dense[d];  // destination
    p.st[1][d] = into_x ? dense[d] : sliced[d];  // source
  }
  p.merge();
  return p;
}

hmrt_status cuda_slice(const void* x, int32_t rank, const int64_t* shape, const int64_t* starts,
                       const int64_t* steps, const int64_t* out_shape, void* y,
                       size_t elem_size) {
  const char* fn = "hmrt_slice (cuda)";
  int64_t nx, ny, base;
  hmrt_status st = check_slice(fn, x, rank, shape, starts, steps, out_shape, y, &nx, &ny);
  if (st != HMRT_OK || (st = check_elem(fn, elem_size)) != HMRT_OK) return st;
  HMRT_CHECK_GPU(fn, x, ny ? nx : 0);
  HMRT_CHECK_GPU(fn, y, ny);
  if (ny == 0) return HMRT_OK;
  const Plan p = slice_plan(rank, shape, starts, steps, out_shape, false, &base);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::plan_copy(g_context->stream, p,
                                    static_cast<const char*>(x) + base * int64_t(elem_size), y,
                                    elem_size));
}

hmrt_status cuda_slice_backward_f32(const float* dy, int32_t rank, const int64_t* shape,
                                    const int64_t* starts, const int64_t* steps,
                                    const int64_t* out_shape, float* dx) {
  const char* fn = "hmrt_slice_backward_f32 (cuda)";
  int64_t nx, ny, base;
  hmrt_status st = check_slice(fn, dx, rank, shape, starts, steps, out_shape, dy, &nx, &ny);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_GPU(fn, dx, nx);
  HMRT_CHECK_GPU(fn, dy, ny);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  if (nx > 0)
    HMRT_CUDA_CALL(fn, "zeroing dx",
                   cudaMemsetAsync(dx, 0, size_t(nx) * sizeof(float), g_context->stream));
  if (ny == 0) return finish(fn, 0);
  const Plan p = slice_plan(rank, shape, starts, steps, out_shape, true, &base);
  return finish(fn, cuda::plan_copy(g_context->stream, p, dy, dx + base, sizeof(float)));
}


// The indices of a Gather read to the host and checked there as the CPU
// checks them (check_gather), then made non-negative.
hmrt_status gather_indices(const char* fn, const void* x, int32_t rank, const int64_t* shape,
                           int32_t* axis, int32_t idx_dtype, const void* idx, int64_t n_idx,
                           const void* y, int64_t* outer, int64_t* inner,
                           std::vector<int64_t>* nidx) {
  HMRT_CHECK_SIZE(fn, n_idx);
  const size_t width = idx_dtype == HMRT_DTYPE_I32 ? 4 : 8;
  std::vector<char> host(size_t(n_idx) * width);
  const bool typed = idx_dtype == HMRT_DTYPE_I32 || idx_dtype == HMRT_DTYPE_I64;
  if (typed && n_idx > 0 && idx != nullptr) {  // else check_gather says what is wrong
    HMRT_CHECK_GPU(fn, idx, n_idx);
    hmrt_status st = copy_with_kernels(fn, "reading the indices", host.data(), idx, host.size());
    if (st != HMRT_OK) return st;
  }
  hmrt_status st = check_gather(fn, x, rank, shape, *axis, idx_dtype,
                                idx == nullptr ? nullptr : host.data(), n_idx, y, axis, outer,
                                inner);
  if (st != HMRT_OK) return st;
  const int64_t dim = shape[*axis];
  nidx->resize(size_t(n_idx));
  for (int64_t j = 0; j < n_idx; ++j) {
    const int64_t v = load_index(host.data(), idx_dtype, j);
    (*nidx)[size_t(j)] = v < 0 ? v + dim : v;
  }
  return HMRT_OK;
}

hmrt_status cuda_gather(const void* x, int32_t rank, const int64_t* shape, int32_t axis,
                        int32_t idx_dtype, const void* idx, int64_t n_idx, void* y,
                        size_t elem_size) {
  const char* fn = "hmrt_gather (cuda)";
  int64_t outer = 0, inner = 0;
  std::vector<int64_t> nidx;
  hmrt_status st = gather_indices(fn, x, rank, shape, &axis, idx_dtype, idx, n_idx, y, &outer,
                                  &inner, &nidx);
  if (st != HMRT_OK || (st = check_elem(fn, elem_size)) != HMRT_OK) return st;
  const int64_t dim = shape[axis];
  const int64_t ny = outer * n_idx * inner;
  if (ny == 0) return HMRT_OK;
  HMRT_CHECK_GPU(fn, x, outer * dim * inner);
  HMRT_CHECK_GPU(fn, y, ny);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  void* table = nullptr;
  if ((st = scratch(fn, nidx.size() * sizeof(int64_t), &table)) != HMRT_OK) return st;
  HMRT_CUDA_CALL(fn, "writing the indices",
                 cudaMemcpyAsync(table, nidx.data(), nidx.size() * sizeof(int64_t),
                                 cudaMemcpyHostToDevice, g_context->stream));
  return finish(fn, cuda::gather(g_context->stream, x, static_cast<const int64_t*>(table), outer,
                                 dim, n_idx, inner, y, elem_size));
}

hmrt_status cuda_gather_backward_f32(const float* dy, int32_t rank, const int64_t* shape,
                                     int32_t axis, int32_t idx_dtype, const void* idx,
                                     int64_t n_idx, float* dx) {
  const char* fn = "hmrt_gather_backward_f32 (cuda)";
  int64_t outer = 0, inner = 0;
  std::vector<int64_t> nidx;
  hmrt_status st = gather_indices(fn, dx, rank, shape, &axis, idx_dtype, idx, n_idx, dy,
                                  &outer, &inner, &nidx);
  if (st != HMRT_OK) return st;
  const int64_t dim = shape[axis];
  const int64_t nx = outer * dim * inner;
  HMRT_CHECK_GPU(fn, dx, nx);
  HMRT_CHECK_GPU(fn, dy, outer * n_idx * inner);
  if (nx == 0) return HMRT_OK;
  // The positions of each index value, in index order (a counting sort):
  // first[v] .. first[v + 1] in order.
  std::vector<int64_t> table(size_t(dim) + 1 + size_t(n_idx), 0);
  int64_t* first = table.data();
  int64_t* order = first + dim + 1;
  for (int64_t v : nidx) ++first[v + 1];
  for (int64_t v = 0; v < dim; ++v) first[v + 1] += first[v];
  std::vector<int64_t> next(first, first + dim);
  for (int64_t j = 0; j < n_idx; ++j) order[next[size_t(nidx[size_t(j)])]++] = j;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  void* dev = nullptr;
  if ((st = scratch(fn, table.size() * sizeof(int64_t), &dev)) != HMRT_OK) return st;
  HMRT_CUDA_CALL(fn, "writing the index table",
                 cudaMemcpyAsync(dev, table.data(), table.size() * sizeof(int64_t),
                                 cudaMemcpyHostToDevice, g_context->stream));
  const int64_t* dfirst = static_cast<const int64_t*>(dev);
  return finish(fn, cuda::gather_backward(g_context->stream, dy, dfirst, dfirst + dim + 1, outer,
                                          dim, n_idx, inner, dx));
}

// The context's scratch as `count` partial sums in double, for kernels that
// sum chunks on threads of their own; null when there are none or they do
// not fit (the kernels then sum each element's chunks on one thread: the
// same bits, more slowly).  Under the context's mutex.
double* partials_in_scratch(int64_t count) {
  const size_t bytes = size_t(count) * sizeof(double);
  if (count <= 0 || bytes > g_context->scratch_bytes) return nullptr;
  return static_cast<double*>(g_context->scratch);
}

template <class Out>
hmrt_status layer_norm_to(const char* fn, const float* x, int32_t rank, const int64_t* shape,
                          int32_t axis, const float* scale, const float* bias, float eps, Out* y,
                          float* mean, float* rstd) {
  int64_t outer, cols;
  hmrt_status st = check_layer_norm_forward(fn, rank, shape, axis, eps, &outer, &cols);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_GPU(fn, x, outer * cols);
  HMRT_CHECK_GPU(fn, y, outer * cols);
  if (scale != nullptr) HMRT_CHECK_GPU(fn, scale, cols);
  if (bias != nullptr) HMRT_CHECK_GPU(fn, bias, cols);
  if (mean != nullptr) HMRT_CHECK_GPU(fn, mean, outer);
  if (rstd != nullptr) HMRT_CHECK_GPU(fn, rstd, outer);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::layer_norm(g_context->stream, x, scale, bias, eps, y, mean, rstd,
                                     outer, cols));
}

hmrt_status cuda_layer_norm_f32(const float* x, int32_t rank, const int64_t* shape,
                                int32_t axis, const float* scale, const float* bias, float eps,
                                float* y, float* mean, float* rstd) {
  return layer_norm_to("hmrt_layer_norm_f32 (cuda)", x, rank, shape, axis, scale, bias, eps, y,
                       mean, rstd);
}

hmrt_status cuda_layer_norm_f32_to_bf16(const float* x, int32_t rank, const int64_t* shape,
                                        int32_t axis, const float* scale, const float* bias,
                                        float eps, uint16_t* y, float* mean, float* rstd) {
  return layer_norm_to("hmrt_layer_norm_f32_to_bf16 (cuda)", x, rank, shape, axis, scale, bias,
                       eps, y, mean, rstd);
}

hmrt_status cuda_layer_norm_backward_f32(const float* dy, const float* x, int32_t rank,
                                         const int64_t* shape, int32_t axis, const float* scale,
                                         const float* mean, const float* rstd, float* dx,
                                         float* dscale, float* dbias) {
  const char* fn = "hmrt_layer_norm_backward_f32 (cuda)";
  int64_t outer, cols;
  hmrt_status st = check_layer_norm(fn, rank, shape, axis, &outer, &cols);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_GPU(fn, dy, outer * cols);
  HMRT_CHECK_GPU(fn, x, outer * cols);
  HMRT_CHECK_GPU(fn, mean, outer);
  HMRT_CHECK_GPU(fn, rstd, outer);
  HMRT_CHECK_GPU(fn, dx, outer * cols);
  if (scale != nullptr) HMRT_CHECK_GPU(fn, scale, cols);
  if (dscale != nullptr) HMRT_CHECK_GPU(fn, dscale, cols);
  if (dbias != nullptr) HMRT_CHECK_GPU(fn, dbias, cols);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::layer_norm_backward(
                        g_context->stream, dy, x, scale, mean, rstd, dx, dscale, dbias, outer,
                        cols, partials_in_scratch(cuda::layer_norm_partials(outer, cols))));
}

// Concat: each input copied into its columns of every output row.
hmrt_status cuda_concat(int32_t n, const void* const* inputs, const int64_t* sizes, int32_t rank,
                        const int64_t* out_shape, int32_t axis, void* y, size_t elem_size) {
  const char* fn = "hmrt_concat (cuda)";
  int64_t ny, outer, inner;
  hmrt_status st =
      check_concat(fn, n, inputs, sizes, rank, out_shape, &axis, &ny, &outer, &inner);
  if (st != HMRT_OK || (st = check_elem(fn, elem_size)) != HMRT_OK) return st;
  HMRT_CHECK_GPU(fn, y, ny);
  for (int32_t i = 0; i < n; ++i) HMRT_CHECK_GPU(fn, inputs[i], outer * sizes[i] * inner);
  if (ny == 0) return HMRT_OK;
  const int64_t row = out_shape[axis] * inner;  // elements per output row
  std::lock_guard<std::mutex> lock(g_context->mutex);
  int64_t at = 0;  // the input's first column
  for (int32_t i = 0; i < n; ++i) {
    const int64_t width = sizes[i] * inner;
    if (width > 0) {
      Plan p;
      p.nops = 2;
      const int64_t dims[2] = {outer, width};
      p.set_dims(2, dims);
      p.st[0][0] = row;
      p.st[0][1] = 1;
      p.st[1][0] = width;
      p.st[1][1] = 1;
      p.merge();
      const int launch = cuda::plan_copy(g_context->stream, p, inputs[i],
                                         static_cast<char*>(y) + at * int64_t(elem_size),
                                         elem_size);
      if (launch != 0) return finish(fn, launch);
    }
    at += width;
  }
  return finish(fn, 0);
}

hmrt_status cuda_reduce_to_f32(const float* x, int32_t rx, const int64_t* sx, float* y,
                               int32_t ry, const int64_t* sy) {
  const char* fn = "hmrt_reduce_to_f32 (cuda)";
  int64_t nx, ny;
  hmrt_status st;
  if ((st = check_shape(fn, "x", rx, sx, &nx)) != HMRT_OK ||
      (st = check_shape(fn, "y", ry, sy, &ny)) != HMRT_OK ||
      (st = check_broadcast_to(fn, "y", ry, sy, "x", rx, sx)) != HMRT_OK)
    return st;
  HMRT_CHECK_GPU(fn, x, nx);
  HMRT_CHECK_GPU(fn, y, ny);
  if (ny == 0) return HMRT_OK;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  if (nx == 0) {  // sums over empty dims
    HMRT_CUDA_CALL(fn, "zeroing y",
                   cudaMemsetAsync(y, 0, size_t(ny) * sizeof(float), g_context->stream));
    return finish(fn, 0);
  }
  const ReducePlan plan(rx, sx, ry, sy);
  if (plan.p.rank == 0) {
    HMRT_CUDA_CALL(fn, "the copy",
                   cudaMemcpyAsync(y, x, sizeof(float), cudaMemcpyDefault, g_context->stream));
    return finish(fn, 0);
  }
  return finish(fn, cuda::reduce_to(g_context->stream, plan, x, y, ny,
                                    partials_in_scratch(cuda::reduce_to_partials(plan, ny))));
}

hmrt_status cuda_dropout_f32(const float* x, float* y, uint8_t* mask, int64_t n, float ratio,
                             uint64_t seed, uint64_t counter) {
  const char* fn = "hmrt_dropout_f32 (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_GPU(fn, x, n);
  HMRT_CHECK_GPU(fn, y, n);
  if (mask != nullptr) HMRT_CHECK_GPU(fn, mask, n);
  hmrt_status st = check_dropout_ratio(fn, ratio);
  if (st != HMRT_OK) return st;
  // ratio 0 keeps everything: the mask's draws are all kept and scale is 1.
  const DropoutMask drop(ratio, seed, counter);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::dropout(g_context->stream, drop, x, y, mask, n));
}

hmrt_status cuda_dropout_backward_f32(const float* dy, const uint8_t* mask, float* dx,
                                      int64_t n, float ratio) {
  const char* fn = "hmrt_dropout_backward_f32 (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_GPU(fn, dy, n);
  HMRT_CHECK_GPU(fn, mask, n);
  HMRT_CHECK_GPU(fn, dx, n);
  hmrt_status st = check_dropout_ratio(fn, ratio);
  if (st != HMRT_OK) return st;
  const float scale = dropout_scale(ratio);
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::dropout_backward(g_context->stream, scale, dy, mask, dx, n));
}

// MatMul and Gemm: the CPU's code (cpu/nn_ops_shared.h) over cuBLAS.
hmrt_status cuda_broadcast_c(const float* c, int64_t cm, int64_t cn, float* y, int64_t m,
                             int64_t n) {
  const int64_t sc[2] = {cm, cn}, sy[2] = {m, n};
  return cuda_expand(c, 2, sc, y, 2, sy, sizeof(float));
}

const GemmEngine<float> kCudaGemm = {" (cuda)", cuda_sgemm, cuda_sgemm_strided_batched,
                                     cuda_broadcast_c, false};
const GemmEngine<float> kCudaGemmBf16Products = {" (cuda, bf16 products)", cuda_sgemm_f32_bf16,
                                                 cuda_sgemm_f32_bf16_batched, cuda_broadcast_c,
                                                 false};
const GemmEngine<uint16_t> kCudaGemmBf16 = {" (cuda)", cuda_sgemm_bf16, cuda_sgemm_bf16_batched,
                                            cuda_broadcast_c, false};
const GemmEngine<uint16_t, float> kCudaGemmBf16F32 = {
    " (cuda)", cuda_sgemm_rounded<uint16_t, float>, cuda_sgemm_rounded_batched<uint16_t, float>,
    cuda_broadcast_c, false};
const GemmEngine<float, uint16_t> kCudaGemmF32Bf16 = {
    " (cuda)", cuda_sgemm_rounded<float, uint16_t>, cuda_sgemm_rounded_batched<float, uint16_t>,
    cuda_broadcast_c, false};

hmrt_status cuda_matmul_mixed_bf16(const void* a, int32_t a_bf16, int32_t ra, const int64_t* sa,
                                   int32_t trans_a, const void* b, int32_t rb,
                                   const int64_t* sb, int32_t trans_b, float* y, int32_t ry,
                                   const int64_t* sy) {
  return matmul_mixed_on(kCudaGemmBf16F32, kCudaGemmF32Bf16, a, a_bf16, ra, sa, trans_a, b, rb,
                         sb, trans_b, y, ry, sy);
}

hmrt_status cuda_gemm_mixed_bf16(const void* a, int32_t a_bf16, const void* b, const float* c,
                                 int32_t rc, const int64_t* sc, int64_t m, int64_t n, int64_t k,
                                 int32_t trans_a, int32_t trans_b, float alpha, float beta,
                                 float* y) {
  return gemm_mixed_on(kCudaGemmBf16F32, kCudaGemmF32Bf16, a, a_bf16, b, c, rc, sc, m, n, k,
                       trans_a, trans_b, alpha, beta, y);
}

// MatMul and Gemm on engine E: the table's entries.
template <class T, const GemmEngine<T>& E>
hmrt_status matmul_with(const T* a, int32_t ra, const int64_t* sa, int32_t trans_a, const T* b,
                        int32_t rb, const int64_t* sb, int32_t trans_b, float* y, int32_t ry,
                        const int64_t* sy) {
  return matmul_on(E, a, ra, sa, trans_a, b, rb, sb, trans_b, y, ry, sy);
}

template <class T, const GemmEngine<T>& E>
hmrt_status gemm_with(const T* a, const T* b, const float* c, int32_t rc, const int64_t* sc,
                      int64_t m, int64_t n, int64_t k, int32_t trans_a, int32_t trans_b,
                      float alpha, float beta, float* y) {
  return gemm_on(E, a, b, c, rc, sc, m, n, k, trans_a, trans_b, alpha, beta, y);
}

// The kernels the GPU has so far; NULL entries are those it does not
// (generated programs name them before they start: hmrt_kernel_missing).
const hmrt_kernels kCudaKernels = [] {
  hmrt_kernels k{};
  k.size = sizeof(hmrt_kernels);
  k.backend = "cuda";
  k.sgemm = cuda_sgemm;
  k.sgemm_strided_batched = cuda_sgemm_strided_batched;
  k.cast = cuda_cast;
  k.fill = cuda_fill;
  k.global_norm = cuda_global_norm;
  k.add_sum_of_squares = cuda_add_sum_of_squares;
  k.norm_of_sum = cuda_norm_of_sum;
  k.scale = cuda_scale;
  k.adamw_step = cuda_adamw_step;
  k.sgd_step = cuda_sgd_step;
  k.expand = cuda_expand;
  k.where = cuda_where;
  k.dropout_f32 = cuda_dropout_f32;
  k.dropout_backward_f32 = cuda_dropout_backward_f32;
  k.matmul_f32 = matmul_with<float, kCudaGemm>;
  k.slice = cuda_slice;
  k.reduce_to_f32 = cuda_reduce_to_f32;
  k.concat = cuda_concat;
  k.layer_norm_f32 = cuda_layer_norm_f32;
  k.layer_norm_f32_to_bf16 = cuda_layer_norm_f32_to_bf16;
  k.layer_norm_backward_f32 = cuda_layer_norm_backward_f32;
  k.gather = cuda_gather;
  k.gather_backward_f32 = cuda_gather_backward_f32;
  k.slice_backward_f32 = cuda_slice_backward_f32;
  k.gemm_f32 = gemm_with<float, kCudaGemm>;
  k.adamw8bit_step = cuda_adamw8bit_step;
  k.matmul_f32_bf16 = matmul_with<float, kCudaGemmBf16Products>;
  k.gemm_f32_bf16 = gemm_with<float, kCudaGemmBf16Products>;
  k.matmul_bf16 = matmul_with<uint16_t, kCudaGemmBf16>;
  k.gemm_bf16 = gemm_with<uint16_t, kCudaGemmBf16>;
  k.matmul_mixed_bf16 = cuda_matmul_mixed_bf16;
  k.gemm_mixed_bf16 = cuda_gemm_mixed_bf16;
  k.round_bf16 = cuda_round_bf16;
  k.clip_coefficient = cuda_clip_coefficient;
  k.onnx_adagrad = cuda_onnx_adagrad;
  k.onnx_momentum = cuda_onnx_momentum;
  k.onnx_adam = cuda_onnx_adam;
  add_nn_kernels(&k);
  add_tensor_kernels(&k);
  return k;
}();

// A stream: the worker (first, so that the CpuStream* the handle holds is
// this object) and its CUDA stream.  The worker runs CPU kernels (the host
// optimizer's updates) on the runtime's threads, not one: the GPU computes,
// so the host's cores are the host optimizer's (the h200 profile's 4.2 G
// parameters/s are 16 cores').
struct CudaStream : CpuStream {
  explicit CudaStream(bool is_inline) : CpuStream(is_inline, /*kernel_threads=*/0) {}
  cudaStream_t cuda = nullptr;
};

// An event: the host-side marks of a CpuEvent (first, as for the stream)
// and, when it is recorded by the thread that queues kernels on an inline
// stream (a program's compute), a CUDA event after those kernels, which a
// stream that waits for it waits for too: the kernels run asynchronously.
struct CudaEvent : CpuEvent {
  cudaEvent_t gpu = nullptr;
  bool gpu_pending = false;  // the latest record follows queued kernels
};

CudaEvent* cuda_event(void* impl) {
  return static_cast<CudaEvent*>(static_cast<CpuEvent*>(impl));
}

// This thread's own CUDA stream, for the blocking copies of a thread that
// queues no kernels (a stream's worker): the copies of different workers
// (host to device, device to host) then run at once. Never destroyed:
// workers are few, and the CUDA runtime may be gone when a thread's
// destructors run at exit.
cudaStream_t thread_stream() {
  thread_local cudaStream_t cs = nullptr;
  if (cs == nullptr && cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking) != cudaSuccess) {
    cudaGetLastError();
    cs = nullptr;  // the legacy stream, then
  }
  return cs;
}

bool is_device(const Place& p) {
  return p.buffer != nullptr && p.buffer->tier == HMRT_TIER_DEVICE;
}

// Whether `p` is ordinary (pageable) host memory, which cudaMemcpyAsync
// copies into its own staging before it returns, so that the caller may
// change it at once; pinned memory it reads later.
bool is_pageable(const void* p) {
  cudaPointerAttributes attr;
  const cudaError_t e = cudaPointerGetAttributes(&attr, p);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeUnregistered;
}

StorageFile* file_of(const hmrt_buffer* b) { return static_cast<StorageFile*>(b->impl); }

// Where a place's bytes are for cudaMemcpy (device or host), or nullptr
// for a storage buffer.
uint8_t* address_of(const Place& p) {
  if (p.buffer == nullptr) return static_cast<uint8_t*>(p.host);
  if (p.buffer->tier == HMRT_TIER_DEVICE)
    return static_cast<uint8_t*>(p.buffer->impl) + p.offset;
  return p.buffer->host == nullptr ? nullptr : p.buffer->host + p.offset;
}

// The host address of a place, or nullptr when it is not host memory.
uint8_t* host_of(const Place& p) {
  if (p.buffer == nullptr) return static_cast<uint8_t*>(p.host);
  return p.buffer->tier == HMRT_TIER_HOST ? p.buffer->host + p.offset : nullptr;
}

class CudaBackend final : public WorkerStreamBackend {
 public:
  ~CudaBackend() override {
    for (void* b : bounces_) cudaFreeHost(b);
  }

  hmrt_status alloc(int32_t tier, uint64_t bytes, uint8_t** host, void** impl) override {
    const char* fn = "hmrt_buffer_alloc";
    *host = nullptr;
    *impl = nullptr;
    if (tier == HMRT_TIER_STORAGE) {
      if (bytes == 0) return HMRT_OK;
      StorageFile* f = nullptr;
      hmrt_status st = StorageFile::create(bytes, fn, &f);
      if (st == HMRT_OK) *impl = f;
      return st;
    }
    cudaError_t e;
    if (tier == HMRT_TIER_DEVICE) {
      e = cudaMalloc(impl, bytes == 0 ? 1 : bytes);  // never a null base
    } else {
      void* p = nullptr;
      e = cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable | cudaHostAllocMapped);
      *host = static_cast<uint8_t*>(p);
    }
    if (e != cudaSuccess) {
      cudaGetLastError();
      *host = nullptr;
      *impl = nullptr;
      return fail(HMRT_OUT_OF_MEMORY,
                  "%s: cannot allocate %llu bytes in the %s tier of the GPU: %s", fn,
                  (unsigned long long)bytes, hmrt_tier_name(tier), cudaGetErrorString(e));
    }
    return HMRT_OK;
  }

  void free(int32_t tier, uint64_t, uint8_t* host, void* impl) override {
    if (tier == HMRT_TIER_DEVICE)
      cudaFree(impl);
    else if (tier == HMRT_TIER_HOST)
      cudaFreeHost(host);
    else
      delete static_cast<StorageFile*>(impl);
  }

  uint8_t* kernel_address(const hmrt_buffer* b) const override {
    if (b->tier == HMRT_TIER_DEVICE) return static_cast<uint8_t*>(b->impl);
    return b->host;  // mapped pinned memory: the same address on the GPU
  }

  hmrt_status copy(const char* fn, const Place& dst, const Place& src,
                   uint64_t bytes, hmrt_stream* stream) override {
    if (stream == nullptr) return copy_now(fn, dst, src, bytes, nullptr);
    auto* s = static_cast<CudaStream*>(stream->impl);
    cudaStream_t cs = s->cuda;
    return s->submit([=] { return copy_now(fn, dst, src, bytes, cs); });
  }

  hmrt_status memset(const char* fn, const Place& dst, int value,
                     uint64_t bytes, hmrt_stream* stream) override {
    if (stream == nullptr) return memset_now(fn, dst, value, bytes, nullptr);
    auto* s = static_cast<CudaStream*>(stream->impl);
    cudaStream_t cs = s->cuda;
    return s->submit([=] { return memset_now(fn, dst, value, bytes, cs); });
  }

  hmrt_status stream_create(bool is_inline, void** impl) override {
    CudaStream* s = nullptr;
    try {
      s = new CudaStream(is_inline);
    } catch (const std::bad_alloc&) {
      return fail(HMRT_OUT_OF_MEMORY, "hmrt_stream_create: cannot allocate the stream");
    } catch (const std::system_error& e) {
      return fail(HMRT_INTERNAL, "hmrt_stream_create: cannot start the stream's thread: %s",
                  e.what());
    }
    const cudaError_t e = cudaStreamCreateWithFlags(&s->cuda, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
      delete s;
      return cuda_fail(HMRT_INTERNAL, "hmrt_stream_create", "creating a CUDA stream", e);
    }
    *impl = static_cast<CpuStream*>(s);
    return HMRT_OK;
  }
  void stream_destroy(void* impl) override {
    auto* s = static_cast<CudaStream*>(static_cast<CpuStream*>(impl));
    cudaStream_t cs = s->cuda;
    delete s;  // drains the worker first
    cudaStreamDestroy(cs);
  }

  const hmrt_kernels* kernels() const override { return &kCudaKernels; }

  hmrt_status event_create(void** impl) override {
    auto* e = new (std::nothrow) CudaEvent;
    if (e == nullptr)
      return fail(HMRT_OUT_OF_MEMORY, "hmrt_event_create: cannot allocate the event");
    const cudaError_t err = cudaEventCreateWithFlags(&e->gpu, cudaEventDisableTiming);
    if (err != cudaSuccess) {
      delete e;
      return cuda_fail(HMRT_INTERNAL, "hmrt_event_create", "creating a CUDA event", err);
    }
    *impl = static_cast<CpuEvent*>(e);
    return HMRT_OK;
  }
  void event_destroy(void* impl) override {
    CudaEvent* e = cuda_event(impl);
    cudaEventDestroy(e->gpu);
    delete e;
  }
  hmrt_status event_record(void* event, void* impl) override {
    CudaEvent* e = cuda_event(event);
    e->gpu_pending = stream(impl)->is_inline() && g_context != nullptr && issues_kernels();
    if (e->gpu_pending)
      HMRT_CUDA_CALL("hmrt_event_record", "recording the kernels' event",
                     cudaEventRecord(e->gpu, g_context->stream));
    return WorkerStreamBackend::event_record(event, impl);
  }
  hmrt_status stream_wait_event(void* impl, void* event) override {
    hmrt_status st = WorkerStreamBackend::stream_wait_event(impl, event);
    CudaEvent* e = cuda_event(event);
    // An inline stream is the thread that queued those kernels: what it
    // queues next follows them on their stream.
    if (st != HMRT_OK || !e->gpu_pending || stream(impl)->is_inline()) return st;
    return stream(impl)->submit_sync([e] {
      const cudaError_t err = cudaEventSynchronize(e->gpu);
      return err == cudaSuccess ? HMRT_OK
                                : cuda_fail(HMRT_IO_ERROR, "hmrt_stream_wait_event",
                                            "the kernels the event follows", err);
    });
  }
  hmrt_status event_synchronize(void* event) override {
    hmrt_status st = WorkerStreamBackend::event_synchronize(event);
    CudaEvent* e = cuda_event(event);
    if (st == HMRT_OK && e->gpu_pending)
      HMRT_CUDA_CALL("hmrt_event_synchronize", "the kernels the event follows",
                     cudaEventSynchronize(e->gpu));
    return st;
  }
  hmrt_status event_query(void* event, bool* done) override {
    hmrt_status st = WorkerStreamBackend::event_query(event, done);
    CudaEvent* e = cuda_event(event);
    if (st == HMRT_OK && *done && e->gpu_pending) {
      const cudaError_t err = cudaEventQuery(e->gpu);
      if (err == cudaErrorNotReady) {
        cudaGetLastError();
        *done = false;
      } else if (err != cudaSuccess) {
        return cuda_fail(HMRT_IO_ERROR, "hmrt_event_query", "the kernels the event follows", err);
      }
    }
    return st;
  }
  // An inline stream's work includes the kernels its thread queued.
  hmrt_status stream_synchronize(void* impl) override {
    hmrt_status st = WorkerStreamBackend::stream_synchronize(impl);
    if (st == HMRT_OK && stream(impl)->is_inline() && g_context != nullptr && issues_kernels())
      st = sync_kernels("hmrt_stream_synchronize");
    return st;
  }

 private:
  // Copies between device or host addresses on `cs` (nullptr: the legacy
  // stream) and waits for them.
  static hmrt_status memcpy_wait(const char* fn, void* d, const void* s, uint64_t bytes,
                                 cudaStream_t cs) {
    HMRT_CUDA_CALL(fn, "the copy", cudaMemcpyAsync(d, s, bytes, cudaMemcpyDefault, cs));
    HMRT_CUDA_CALL(fn, "the copy", cudaStreamSynchronize(cs));
    return HMRT_OK;
  }

  // The stream of a blocking copy or memset: the kernels' on the thread
  // that queues them (in order with them), else the thread's own.
  static cudaStream_t caller_stream() {
    return g_context != nullptr && issues_kernels() ? g_context->stream : thread_stream();
  }

  hmrt_status copy_now(const char* fn, const Place& dst, const Place& src, uint64_t bytes,
                       cudaStream_t cs) {
    uint8_t* d = address_of(dst);
    const uint8_t* s = address_of(src);
    if (cs == nullptr) {
      cs = caller_stream();
      // Into device memory from device memory or from pageable host
      // memory such as the program's static data (staged by CUDA as the
      // call returns): in order with the kernels, nothing to wait for.
      if (g_context != nullptr && cs == g_context->stream && d != nullptr && s != nullptr &&
          is_device(dst) && (is_device(src) || (src.buffer == nullptr && is_pageable(s)))) {
        HMRT_CUDA_CALL(fn, "the copy", cudaMemcpyAsync(d, s, bytes, cudaMemcpyDefault, cs));
        return g_context->sync_each ? sync_kernels(fn) : HMRT_OK;
      }
      // Storage or host memory the kernels may still be reading or writing.
      if (g_context != nullptr && cs == g_context->stream && (d == nullptr || s == nullptr)) {
        hmrt_status st = sync_kernels(fn);
        if (st != HMRT_OK) return st;
      }
    }
    if (d != nullptr && s != nullptr) return memcpy_wait(fn, d, s, bytes, cs);
    // Storage on one side or both: host memory reads and writes the file
    // directly, device memory through a pinned bounce buffer.
    if (uint8_t* h = host_of(dst); h != nullptr)
      return file_of(src.buffer)->read(h, bytes, src.offset, fn);
    if (const uint8_t* h = host_of(src); h != nullptr)
      return file_of(dst.buffer)->write(h, bytes, dst.offset, fn);
    uint8_t* bounce = take_bounce(fn);
    if (bounce == nullptr) return HMRT_OUT_OF_MEMORY;
    hmrt_status st = HMRT_OK;
    for (uint64_t done = 0; done < bytes && st == HMRT_OK;) {
      const uint64_t n = bytes - done < kBounce ? bytes - done : kBounce;
      if (s != nullptr) {  // device -> storage
        st = memcpy_wait(fn, bounce, s + done, n, cs);
        if (st == HMRT_OK) st = file_of(dst.buffer)->write(bounce, n, dst.offset + done, fn);
      } else {
        st = file_of(src.buffer)->read(bounce, n, src.offset + done, fn);
        if (st == HMRT_OK)
          st = d != nullptr ? memcpy_wait(fn, d + done, bounce, n, cs)
                            : file_of(dst.buffer)->write(bounce, n, dst.offset + done, fn);
      }
      done += n;
    }
    give_bounce(bounce);
    return st;
  }

  hmrt_status memset_now(const char* fn, const Place& dst, int value, uint64_t bytes,
                         cudaStream_t cs) {
    if (cs == nullptr) {
      cs = caller_stream();
      // Host memory or storage the kernels may still be reading.
      if (g_context != nullptr && cs == g_context->stream && !is_device(dst)) {
        hmrt_status st = sync_kernels(fn);
        if (st != HMRT_OK) return st;
      }
    }
    if (uint8_t* h = host_of(dst); h != nullptr) {
      std::memset(h, value, bytes);
      return HMRT_OK;
    }
    if (uint8_t* d = address_of(dst); d != nullptr) {
      HMRT_CUDA_CALL(fn, "the memset", cudaMemsetAsync(d, value, bytes, cs));
      HMRT_CUDA_CALL(fn, "the memset", cudaStreamSynchronize(cs));
      return HMRT_OK;
    }
    uint8_t* bounce = take_bounce(fn);
    if (bounce == nullptr) return HMRT_OUT_OF_MEMORY;
    std::memset(bounce, value, kBounce);
    hmrt_status st = HMRT_OK;
    for (uint64_t done = 0; done < bytes && st == HMRT_OK; done += kBounce) {
      const uint64_t n = bytes - done < kBounce ? bytes - done : kBounce;
      st = file_of(dst.buffer)->write(bounce, n, dst.offset + done, fn);
    }
    give_bounce(bounce);
    return st;
  }

  // A pinned bounce buffer of kBounce bytes, reused across calls; nullptr
  // (with the error recorded) when none can be allocated.
  uint8_t* take_bounce(const char* fn) {
    {
      std::lock_guard<std::mutex> lock(bounce_mutex_);
      if (!free_bounces_.empty()) {
        uint8_t* b = free_bounces_.back();
        free_bounces_.pop_back();
        return b;
      }
    }
    void* p = nullptr;
    const cudaError_t e = cudaHostAlloc(&p, kBounce, cudaHostAllocPortable);
    if (e != cudaSuccess) {
      cuda_fail(HMRT_OUT_OF_MEMORY, fn, "allocating a pinned bounce buffer", e);
      return nullptr;
    }
    std::lock_guard<std::mutex> lock(bounce_mutex_);
    bounces_.push_back(p);
    return static_cast<uint8_t*>(p);
  }
  void give_bounce(uint8_t* b) {
    std::lock_guard<std::mutex> lock(bounce_mutex_);
    free_bounces_.push_back(b);
  }

  std::mutex bounce_mutex_;
  std::vector<void*> bounces_;
  std::vector<uint8_t*> free_bounces_;
};

// The kernel context, once per process; the first failure is kept.
hmrt_status create_context() {
  static std::once_flag once;
  static cudaError_t cuda_error = cudaSuccess;
  static cublasStatus_t blas_status = CUBLAS_STATUS_SUCCESS;
  std::call_once(once, [] {
    auto* c = new CudaContext;
    const char* sync = std::getenv("HMRT_CUDA_SYNC");
    c->sync_each = sync != nullptr && sync[0] != '\0' && std::strcmp(sync, "0") != 0;
    cuda_error = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    // The device memory the backend holds beside the arenas, fixed
    // (hmrt/device.h): the kernels' scratch and cuBLAS's workspace.
    if (cuda_error == cudaSuccess) cuda_error = cudaMalloc(&c->scratch, HMRT_CUDA_SCRATCH_BYTES);
    if (cuda_error == cudaSuccess)
      cuda_error = cudaMalloc(&c->blas_workspace, HMRT_CUDA_BLAS_WORKSPACE_BYTES);
    if (cuda_error != cudaSuccess) return;
    c->scratch_bytes = HMRT_CUDA_SCRATCH_BYTES;
    blas_status = cublasCreate(&c->blas);
    if (blas_status == CUBLAS_STATUS_SUCCESS) blas_status = cublasSetStream(c->blas, c->stream);
    if (blas_status == CUBLAS_STATUS_SUCCESS)
      blas_status = cublasSetWorkspace(c->blas, c->blas_workspace, HMRT_CUDA_BLAS_WORKSPACE_BYTES);
    // fp32 GEMMs in fp32 (no TF32), as the CPU's.
    if (blas_status == CUBLAS_STATUS_SUCCESS)
      blas_status = cublasSetMathMode(c->blas, CUBLAS_PEDANTIC_MATH);
    if (blas_status == CUBLAS_STATUS_SUCCESS) g_context = c;
  });
  if (cuda_error != cudaSuccess)
    return cuda_fail(HMRT_IO_ERROR, "hmrt_device_open",
                     "creating the kernel stream and the backend's scratch", cuda_error);
  if (blas_status != CUBLAS_STATUS_SUCCESS)
    return fail(HMRT_IO_ERROR, "hmrt_device_open: cuBLAS cannot start: %s",
                blas_error(blas_status));
  return HMRT_OK;
}

}  // namespace

hmrt_status create_cuda_backend(std::unique_ptr<Backend>* out) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    const char* why = e == cudaErrorInsufficientDriver
                          ? "no NVIDIA driver is loaded, or it is older than this CUDA runtime"
                          : e == cudaErrorNoDevice || count == 0
                                ? "no CUDA device is visible (see CUDA_VISIBLE_DEVICES)"
                                : cudaGetErrorString(e);
    return fail(HMRT_IO_ERROR, "hmrt_device_open: the cuda backend finds no GPU it can use: %s",
                why);
  }
  HMRT_CUDA_CALL("hmrt_device_open", "selecting device 0", cudaSetDevice(0));
  hmrt_status st = create_context();
  if (st != HMRT_OK) return st;
  out->reset(new (std::nothrow) CudaBackend());
  if (!*out)
    return fail(HMRT_OUT_OF_MEMORY, "hmrt_device_open: cannot allocate the cuda backend");
  return HMRT_OK;
}

}  // namespace hmrt
