// The CUDA backend's shared kernel context and helpers (cuda/context.h).
#include "cuda/context.h"

#include "core/internal.h"

namespace hmrt {

CudaContext* g_context = nullptr;

hmrt_status cuda_fail(hmrt_status status, const char* fn, const char* what, cudaError_t e) {
  cudaGetLastError();  // clears a non-sticky error
  return fail(status, "%s: %s failed on the GPU: %s (%s)", fn, what, cudaGetErrorString(e),
              cudaGetErrorName(e));
}

namespace {
thread_local bool t_issues_kernels = false;
}  // namespace

hmrt_status finish(const char* fn, int launch) {
  t_issues_kernels = true;
  if (launch != 0)
    return cuda_fail(HMRT_INTERNAL, fn, "the kernel launch", static_cast<cudaError_t>(launch));
  if (g_context->sync_each) return sync_kernels(fn);
  return HMRT_OK;
}

hmrt_status sync_kernels(const char* fn) {
  HMRT_CUDA_CALL(fn, "the kernel", cudaStreamSynchronize(g_context->stream));
  return HMRT_OK;
}

bool issues_kernels() { return t_issues_kernels; }

hmrt_status copy_with_kernels(const char* fn, const char* what, void* dst, const void* src,
                              size_t bytes) {
  HMRT_CUDA_CALL(fn, what,
                 cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, g_context->stream));
  HMRT_CUDA_CALL(fn, what, cudaStreamSynchronize(g_context->stream));
  return HMRT_OK;
}

hmrt_status check_gpu_ptr(const char* fn, const char* name, const void* p, int64_t count) {
  HMRT_CHECK_ARG(p != nullptr || count == 0, "%s: %s is NULL but %lld elements are needed", fn,
                 name, (long long)count);
  if (count == 0) return HMRT_OK;
  cudaPointerAttributes attr;
  const cudaError_t e = cudaPointerGetAttributes(&attr, p);
  if (e != cudaSuccess) cudaGetLastError();
  HMRT_CHECK_ARG(e == cudaSuccess && attr.type != cudaMemoryTypeUnregistered &&
                     attr.devicePointer != nullptr,
                 "%s: %s is not memory the GPU can address (use the device tier's addresses, "
                 "hmrt_buffer_device_ptr)",
                 fn, name);
  return HMRT_OK;
}

hmrt_status scratch(const char* fn, size_t bytes, void** out) {
  HMRT_CHECK_ARG(bytes <= g_context->scratch_bytes,
                 "%s: needs %zu bytes of device scratch, more than the %zu the cuda backend "
                 "holds (HMRT_CUDA_SCRATCH_BYTES)",
                 fn, bytes, g_context->scratch_bytes);
  *out = g_context->scratch;
  return HMRT_OK;
}

hmrt_status check_elem(const char* fn, size_t elem_size) {
  if (elem_size == 1 || elem_size == 2 || elem_size == 4 || elem_size == 8) return HMRT_OK;
  return fail(HMRT_UNIMPLEMENTED, "%s: elements of %zu bytes are not on the GPU yet (1, 2, 4, 8)",
              fn, elem_size);
}

}  // namespace hmrt
