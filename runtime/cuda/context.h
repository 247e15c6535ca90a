// What the CUDA backend's kernel-table functions share (cuda/device_cuda.cpp,
// cuda/nn_ops_cuda.cpp): the kernel context, error reporting, the check that
// a pointer is GPU memory, and the context's device scratch.
//
// The table's entries are plain function pointers with no device argument;
// each checks its arguments as the CPU kernel does (with its messages),
// then locks the context and queues its kernels on the context's stream
// (finish). The kernels run asynchronously, in the order queued: what reads
// their results on the host first waits for them (sync_kernels; the
// backend's copies do it for the thread that queued kernels, and an event
// recorded on the compute stream carries the GPU's progress to the streams
// that wait for it). With HMRT_CUDA_SYNC=1 in the environment every call
// waits for its kernels instead (for comparisons and debugging).
#ifndef HMRT_CUDA_CONTEXT_H
#define HMRT_CUDA_CONTEXT_H

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "hmrt/hmrt.h"
#include "hmrt/kernel_table.h"

namespace hmrt {

// Created by the first device opened; lives as long as the process.
struct CudaContext {
  std::mutex mutex;  // one kernel at a time on `stream`
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  void* scratch = nullptr;  // index tables, partial sums, kernel descriptors
  size_t scratch_bytes = 0;
  void* blas_workspace = nullptr;  // cuBLAS's, so that it allocates none of its own
  bool sync_each = false;          // HMRT_CUDA_SYNC: wait for every call's kernels
};
extern CudaContext* g_context;

// Records "<fn>: <what> failed on the GPU: <CUDA's message>" and returns status.
hmrt_status cuda_fail(hmrt_status status, const char* fn, const char* what, cudaError_t e);

#define HMRT_CUDA_CALL(fn, what, call)                                                  \
  do {                                                                                  \
    cudaError_t hmrt_e_ = (call);                                                       \
    if (hmrt_e_ != cudaSuccess) return ::hmrt::cuda_fail(HMRT_IO_ERROR, fn, what, hmrt_e_); \
  } while (0)

// Ends a table call whose launch returned `launch` (a cudaError_t, 0 for
// success): reports a failed launch; waits for the kernels only with
// sync_each. Marks the calling thread as one that queues kernels.
hmrt_status finish(const char* fn, int launch);

// Waits until every kernel queued on the context's stream has run, and
// reports a failure of any.
hmrt_status sync_kernels(const char* fn);

// Whether this thread has queued kernels (called finish).
bool issues_kernels();

// Copies `bytes` between device and host memory (`what` names them in
// errors) after the kernels queued so far, in order with them; returns when
// they are there.
hmrt_status copy_with_kernels(const char* fn, const char* what, void* dst, const void* src,
                              size_t bytes);

// `p` must be memory the GPU addresses (device memory, or pinned and
// mapped host memory), unless count is 0.
hmrt_status check_gpu_ptr(const char* fn, const char* name, const void* p, int64_t count);

#define HMRT_CHECK_GPU(fn, p, count)                                     \
  do {                                                                   \
    hmrt_status hmrt_st_ = ::hmrt::check_gpu_ptr(fn, #p, p, count);      \
    if (hmrt_st_ != HMRT_OK) return hmrt_st_;                            \
  } while (0)

// `bytes` of the context's device scratch (under its mutex; valid until the
// next call): HMRT_CUDA_SCRATCH_BYTES, allocated with the context, so that
// the backend's device memory beside the arenas is fixed; more is an error.
hmrt_status scratch(const char* fn, size_t bytes, void** out);

// Elements of 1, 2, 4 or 8 bytes: what the GPU's copying kernels move.
hmrt_status check_elem(const char* fn, size_t elem_size);

// Sets the table's entries of cuda/nn_ops_cuda.cpp (attention, fused
// programs, softmax, cross-entropy, the one-op elementwise kernels).
void add_nn_kernels(hmrt_kernels* k);
// ... and of cuda/tensor_ops_cuda.cpp (the broadcasting binary ops,
// Transpose, Trilu, Equal, the int64 ops, the reductions).
void add_tensor_kernels(hmrt_kernels* k);

}  // namespace hmrt

#endif  // HMRT_CUDA_CONTEXT_H
