// The registry of device backends: the one place a backend is added.  A new
// backend is one file implementing hmrt::Backend (core/backend.h) and one
// line below.  The first entry is the default.  The CUDA backend lives in
// the hmrt_cuda library, so that programs without it need no CUDA library:
// its factory is a weak reference, listed only when the program links it.
#include <vector>

#include "core/backend.h"

namespace hmrt {

hmrt_status create_cuda_backend(std::unique_ptr<Backend>* out) __attribute__((weak));

const BackendEntry* backend_registry(int32_t* count) {
  static const std::vector<BackendEntry> backends = [] {
    std::vector<BackendEntry> v = {{"cpu", create_cpu_backend}};
    if (&create_cuda_backend != nullptr) v.push_back({"cuda", create_cuda_backend});
    return v;
  }();
  *count = static_cast<int32_t>(backends.size());
  return backends.data();
}

}  // namespace hmrt
