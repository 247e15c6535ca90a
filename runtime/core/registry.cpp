// The registry of device backends: the one place a backend is added.  A new
// backend is one file implementing hmrt::Backend (core/backend.h), e.g.
// cuda/device_cuda.cpp built when its toolkit is found, and one line below
// (guarded by the macro its CMake block defines).  The first entry is the
// default backend.
#include "core/backend.h"

namespace hmrt {

namespace {
const BackendEntry kBackends[] = {
    {"cpu", create_cpu_backend},
};
}  // namespace

const BackendEntry* backend_registry(int32_t* count) {
  *count = static_cast<int32_t>(sizeof(kBackends) / sizeof(kBackends[0]));
  return kBackends;
}

}  // namespace hmrt
