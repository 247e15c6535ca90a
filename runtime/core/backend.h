// The device backend interface behind hmrt/device.h.  Internal: not
// installed, not part of the C API.
//
// core/device.cpp implements the public functions: it checks every argument
// (NULLs, tiers, byte ranges, handles of one device) and formats the error
// messages, then calls the device's Backend with arguments that are valid.
// A backend implements memory, copies, streams and events for its hardware
// and names its kernels.  Backends are listed in one registry
// (core/registry.cpp); adding one is a new file (e.g. cuda/device_cuda.cpp)
// and one line there.
#ifndef HMRT_CORE_BACKEND_H
#define HMRT_CORE_BACKEND_H

#include <cstdint>
#include <memory>

#include "hmrt/device.h"

namespace hmrt {

// One side of a copy or a memset: `bytes` at `offset` in `buffer`, or, when
// buffer is nullptr, ordinary host memory at `host`.
struct Place {
  hmrt_buffer* buffer;
  uint64_t offset;
  void* host;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Allocates `bytes` (may be 0) in `tier` (a valid hmrt_tier).  Sets *host
  // to the host-visible base (never nullptr, also for 0 bytes) or to nullptr
  // when the tier has none, and *impl to the backend's own data.
  virtual hmrt_status alloc(int32_t tier, uint64_t bytes, uint8_t** host,
                            void** impl) = 0;
  virtual void free(int32_t tier, uint64_t bytes, uint8_t* host,
                    void* impl) = 0;

  // Ranges are inside their buffers and do not overlap; bytes > 0.
  // stream == nullptr: blocking.  `fn` is the public function, for messages.
  virtual hmrt_status copy(const char* fn, const Place& dst, const Place& src,
                           uint64_t bytes, hmrt_stream* stream) = 0;
  virtual hmrt_status memset(const char* fn, const Place& dst, int value,
                             uint64_t bytes, hmrt_stream* stream) = 0;

  // An asynchronous stream, or with is_inline one whose work runs on the
  // submitting thread (HMRT_UNIMPLEMENTED where the backend has none).
  virtual hmrt_status stream_create(bool is_inline, void** impl) = 0;
  virtual void stream_destroy(void* impl) = 0;
  virtual hmrt_status stream_synchronize(void* impl) = 0;
  virtual hmrt_status stream_query(void* impl, bool* done) = 0;
  virtual hmrt_status event_create(void** impl) = 0;
  virtual void event_destroy(void* impl) = 0;
  virtual hmrt_status event_record(void* event, void* stream) = 0;
  virtual hmrt_status stream_wait_event(void* stream, void* event) = 0;
  virtual hmrt_status event_synchronize(void* event) = 0;
  virtual hmrt_status event_query(void* event, bool* done) = 0;
  // Queues fn(arg) on the stream (run by a host thread in stream order).
  virtual hmrt_status launch_host_func(void* stream, hmrt_status (*fn)(void*),
                                       void* arg) = 0;

  virtual const hmrt_kernels* kernels() const = 0;

  // The base of a buffer as the backend's kernels address it, or nullptr
  // when they cannot (hmrt_buffer_device_ptr).  By default the host-visible
  // base: the kernels run on the host.
  virtual uint8_t* kernel_address(const hmrt_buffer* buffer) const;
};

// A registry entry: the backend's name and its factory, which records an
// error (hmrt::fail) and returns it when the hardware is not usable.
struct BackendEntry {
  const char* name;
  hmrt_status (*create)(std::unique_ptr<Backend>* out);
};

// The registry (core/registry.cpp), in order; entry 0 is the default.
const BackendEntry* backend_registry(int32_t* count);

// The factories of the backends (one per backend file).  The CUDA backend
// is in its own library (hmrt_cuda): the registry lists it when the program
// links it (a weak reference, core/registry.cpp).
hmrt_status create_cpu_backend(std::unique_ptr<Backend>* out);
hmrt_status create_cuda_backend(std::unique_ptr<Backend>* out);

}  // namespace hmrt

struct hmrt_device {
  const hmrt::BackendEntry* entry;
  std::unique_ptr<hmrt::Backend> backend;
};

struct hmrt_buffer {
  hmrt_device* device;
  int32_t tier;
  uint64_t size;
  uint8_t* host;  // host-visible base, or nullptr
  void* impl;
};

inline uint8_t* hmrt::Backend::kernel_address(const hmrt_buffer* buffer) const {
  return buffer->host;
}

struct hmrt_stream {
  hmrt_device* device;
  void* impl;
};

struct hmrt_event {
  hmrt_device* device;
  void* impl;
};

#endif  // HMRT_CORE_BACKEND_H
