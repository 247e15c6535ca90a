// The device interface's C API (hmrt/device.h): argument and range checks,
// error messages, and dispatch to the device's backend (core/backend.h).
#include <new>
#include <string>

#include "core/backend.h"
#include "hmrt/kernel_table.h"
#include "core/internal.h"

namespace {

using hmrt::fail;

bool valid_tier(int32_t tier) { return tier >= 0 && tier < HMRT_TIER_COUNT; }

// "[offset, offset + bytes) inside a buffer of `size`", without overflow.
bool in_range(uint64_t size, uint64_t offset, uint64_t bytes) {
  return offset <= size && bytes <= size - offset;
}

// `fn`: the public function; `which`: "source " / "destination " / "".
hmrt_status check_range(const char* fn, const char* which,
                        const hmrt_buffer* b, uint64_t offset,
                        uint64_t bytes) {
  if (in_range(b->size, offset, bytes)) return HMRT_OK;
  return fail(HMRT_OUT_OF_RANGE,
              "%s: %sbytes [%llu, %llu + %llu) are outside the %s buffer of "
              "%llu bytes",
              fn, which, (unsigned long long)offset, (unsigned long long)offset,
              (unsigned long long)bytes, hmrt_tier_name(b->tier),
              (unsigned long long)b->size);
}

hmrt_status check_stream(const char* fn, const hmrt_device* device,
                         const hmrt_stream* stream) {
  HMRT_CHECK_ARG(stream != nullptr, "%s: stream is NULL", fn);
  HMRT_CHECK_ARG(stream->device == device,
                 "%s: the stream belongs to another device", fn);
  return HMRT_OK;
}

hmrt_status copy_buffers(const char* fn, hmrt_buffer* dst,
                         uint64_t dst_offset, const hmrt_buffer* src,
                         uint64_t src_offset, uint64_t bytes,
                         hmrt_stream* stream, bool async) {
  HMRT_CHECK_ARG(dst != nullptr, "%s: dst is NULL", fn);
  HMRT_CHECK_ARG(src != nullptr, "%s: src is NULL", fn);
  HMRT_CHECK_ARG(dst->device == src->device,
                 "%s: the source and destination buffers belong to different "
                 "devices",
                 fn);
  if (async) {
    hmrt_status st = check_stream(fn, dst->device, stream);
    if (st != HMRT_OK) return st;
  }
  hmrt_status st = check_range(fn, "source ", src, src_offset, bytes);
  if (st != HMRT_OK) return st;
  st = check_range(fn, "destination ", dst, dst_offset, bytes);
  if (st != HMRT_OK) return st;
  if (dst == src && bytes > 0 && src_offset < dst_offset + bytes &&
      dst_offset < src_offset + bytes)
    return fail(HMRT_INVALID_ARGUMENT,
                "%s: source bytes [%llu, %llu + %llu) and destination bytes "
                "[%llu, %llu + %llu) of the same buffer overlap",
                fn, (unsigned long long)src_offset,
                (unsigned long long)src_offset, (unsigned long long)bytes,
                (unsigned long long)dst_offset, (unsigned long long)dst_offset,
                (unsigned long long)bytes);
  if (bytes == 0) return HMRT_OK;
  return dst->device->backend->copy(
      fn, {dst, dst_offset, nullptr},
      {const_cast<hmrt_buffer*>(src), src_offset, nullptr}, bytes, stream);
}

hmrt_status copy_from_host(const char* fn, hmrt_buffer* dst,
                           uint64_t dst_offset, const void* src,
                           uint64_t bytes, hmrt_stream* stream, bool async) {
  HMRT_CHECK_ARG(dst != nullptr, "%s: dst is NULL", fn);
  HMRT_CHECK_ARG(src != nullptr || bytes == 0,
                 "%s: src is NULL but %llu bytes are to be copied", fn,
                 (unsigned long long)bytes);
  if (async) {
    hmrt_status st = check_stream(fn, dst->device, stream);
    if (st != HMRT_OK) return st;
  }
  hmrt_status st = check_range(fn, "destination ", dst, dst_offset, bytes);
  if (st != HMRT_OK || bytes == 0) return st;
  return dst->device->backend->copy(fn, {dst, dst_offset, nullptr},
                                    {nullptr, 0, const_cast<void*>(src)},
                                    bytes, stream);
}

hmrt_status copy_to_host(const char* fn, void* dst, const hmrt_buffer* src,
                         uint64_t src_offset, uint64_t bytes,
                         hmrt_stream* stream, bool async) {
  HMRT_CHECK_ARG(src != nullptr, "%s: src is NULL", fn);
  HMRT_CHECK_ARG(dst != nullptr || bytes == 0,
                 "%s: dst is NULL but %llu bytes are to be copied", fn,
                 (unsigned long long)bytes);
  if (async) {
    hmrt_status st = check_stream(fn, src->device, stream);
    if (st != HMRT_OK) return st;
  }
  hmrt_status st = check_range(fn, "source ", src, src_offset, bytes);
  if (st != HMRT_OK || bytes == 0) return st;
  return src->device->backend->copy(
      fn, {nullptr, 0, dst},
      {const_cast<hmrt_buffer*>(src), src_offset, nullptr}, bytes, stream);
}

hmrt_status memset_buffer(const char* fn, hmrt_buffer* dst, uint64_t offset,
                          int value, uint64_t bytes, hmrt_stream* stream,
                          bool async) {
  HMRT_CHECK_ARG(dst != nullptr, "%s: dst is NULL", fn);
  if (async) {
    hmrt_status st = check_stream(fn, dst->device, stream);
    if (st != HMRT_OK) return st;
  }
  hmrt_status st = check_range(fn, "", dst, offset, bytes);
  if (st != HMRT_OK || bytes == 0) return st;
  return dst->device->backend->memset(fn, {dst, offset, nullptr}, value,
                                      bytes, stream);
}

std::string backend_list() {
  int32_t n = 0;
  const hmrt::BackendEntry* e = hmrt::backend_registry(&n);
  std::string s;
  for (int32_t i = 0; i < n; ++i) s += std::string(i ? ", " : "") + e[i].name;
  return s;
}

}  // namespace

extern "C" {

const char* hmrt_tier_name(int32_t tier) {
  switch (tier) {
    case HMRT_TIER_DEVICE: return "device";
    case HMRT_TIER_HOST: return "host";
    case HMRT_TIER_STORAGE: return "storage";
  }
  return "unknown";
}

int32_t hmrt_backend_count(void) {
  int32_t n = 0;
  hmrt::backend_registry(&n);
  return n;
}

const char* hmrt_backend_name(int32_t index) {
  int32_t n = 0;
  const hmrt::BackendEntry* e = hmrt::backend_registry(&n);
  return index >= 0 && index < n ? e[index].name : nullptr;
}

hmrt_status hmrt_device_open(const char* name, hmrt_device** out) {
  HMRT_CHECK_ARG(name != nullptr, "hmrt_device_open: name is NULL");
  HMRT_CHECK_ARG(out != nullptr, "hmrt_device_open: out is NULL");
  int32_t n = 0;
  const hmrt::BackendEntry* e = hmrt::backend_registry(&n);
  for (int32_t i = 0; i < n; ++i) {
    if (std::string(e[i].name) != name) continue;
    auto* dev = new (std::nothrow) hmrt_device{&e[i], nullptr};
    if (dev == nullptr)
      return fail(HMRT_OUT_OF_MEMORY,
                  "hmrt_device_open: cannot allocate the handle");
    hmrt_status st = e[i].create(&dev->backend);
    if (st != HMRT_OK) {
      delete dev;
      return st;
    }
    *out = dev;
    return HMRT_OK;
  }
  try {
    return fail(HMRT_INVALID_ARGUMENT,
                "hmrt_device_open: unknown device backend '%s' (this runtime "
                "has: %s)",
                name, backend_list().c_str());
  } catch (const std::bad_alloc&) {
    return fail(HMRT_INVALID_ARGUMENT,
                "hmrt_device_open: unknown device backend '%s'", name);
  }
}

void hmrt_device_close(hmrt_device* device) { delete device; }

const char* hmrt_device_backend(const hmrt_device* device) {
  return device == nullptr ? "" : device->entry->name;
}

const hmrt_kernels* hmrt_device_kernels(const hmrt_device* device) {
  return device == nullptr ? nullptr : device->backend->kernels();
}

hmrt_status hmrt_kernel_missing(const hmrt_kernels* kernels, const char* name) {
  return hmrt::fail(HMRT_UNIMPLEMENTED,
                    "the %s backend has no %s kernel yet, which this program "
                    "calls: run it on another backend (train --device cpu)",
                    kernels != nullptr && kernels->backend != nullptr ? kernels->backend : "?",
                    name != nullptr ? name : "?");
}

hmrt_status hmrt_buffer_alloc(hmrt_device* device, int32_t tier,
                              uint64_t bytes, hmrt_buffer** out) {
  HMRT_CHECK_ARG(device != nullptr, "hmrt_buffer_alloc: device is NULL");
  HMRT_CHECK_ARG(out != nullptr, "hmrt_buffer_alloc: out is NULL");
  HMRT_CHECK_ARG(valid_tier(tier),
                 "hmrt_buffer_alloc: unknown tier %d (expected "
                 "HMRT_TIER_DEVICE, HMRT_TIER_HOST or HMRT_TIER_STORAGE)",
                 tier);
  auto* b = new (std::nothrow) hmrt_buffer{device, tier, bytes, nullptr, nullptr};
  if (b == nullptr)
    return fail(HMRT_OUT_OF_MEMORY,
                "hmrt_buffer_alloc: cannot allocate the handle");
  hmrt_status st = device->backend->alloc(tier, bytes, &b->host, &b->impl);
  if (st != HMRT_OK) {
    delete b;
    return st;
  }
  *out = b;
  return HMRT_OK;
}

void hmrt_buffer_free(hmrt_buffer* buffer) {
  if (buffer == nullptr) return;
  buffer->device->backend->free(buffer->tier, buffer->size, buffer->host,
                                buffer->impl);
  delete buffer;
}

uint64_t hmrt_buffer_size(const hmrt_buffer* buffer) {
  return buffer == nullptr ? 0 : buffer->size;
}

int32_t hmrt_buffer_tier(const hmrt_buffer* buffer) {
  return buffer == nullptr ? -1 : buffer->tier;
}

hmrt_device* hmrt_buffer_device(const hmrt_buffer* buffer) {
  return buffer == nullptr ? nullptr : buffer->device;
}

hmrt_status hmrt_buffer_host_ptr(hmrt_buffer* buffer, uint64_t offset,
                                 uint64_t bytes, void** out) {
  HMRT_CHECK_ARG(buffer != nullptr, "hmrt_buffer_host_ptr: buffer is NULL");
  HMRT_CHECK_ARG(out != nullptr, "hmrt_buffer_host_ptr: out is NULL");
  HMRT_CHECK_ARG(buffer->host != nullptr,
                 "hmrt_buffer_host_ptr: a %s buffer of the %s backend has no "
                 "host-visible pointer: copy it to a %s buffer",
                 hmrt_tier_name(buffer->tier), buffer->device->entry->name,
                 buffer->tier == HMRT_TIER_HOST ? "device" : "device or host");
  hmrt_status st =
      check_range("hmrt_buffer_host_ptr", "", buffer, offset, bytes);
  if (st != HMRT_OK) return st;
  *out = buffer->host + offset;
  return HMRT_OK;
}

hmrt_status hmrt_buffer_device_ptr(hmrt_buffer* buffer, uint64_t offset,
                                   uint64_t bytes, void** out) {
  HMRT_CHECK_ARG(buffer != nullptr, "hmrt_buffer_device_ptr: buffer is NULL");
  HMRT_CHECK_ARG(out != nullptr, "hmrt_buffer_device_ptr: out is NULL");
  uint8_t* base = buffer->device->backend->kernel_address(buffer);
  HMRT_CHECK_ARG(base != nullptr,
                 "hmrt_buffer_device_ptr: the kernels of the %s backend cannot "
                 "address a %s buffer: copy it to a device buffer",
                 buffer->device->entry->name, hmrt_tier_name(buffer->tier));
  hmrt_status st =
      check_range("hmrt_buffer_device_ptr", "", buffer, offset, bytes);
  if (st != HMRT_OK) return st;
  *out = base + offset;
  return HMRT_OK;
}

hmrt_status hmrt_copy(hmrt_buffer* dst, uint64_t dst_offset,
                      const hmrt_buffer* src, uint64_t src_offset,
                      uint64_t bytes) {
  return copy_buffers("hmrt_copy", dst, dst_offset, src, src_offset, bytes,
                      nullptr, false);
}

hmrt_status hmrt_copy_from_host(hmrt_buffer* dst, uint64_t dst_offset,
                                const void* src, uint64_t bytes) {
  return copy_from_host("hmrt_copy_from_host", dst, dst_offset, src, bytes,
                        nullptr, false);
}

hmrt_status hmrt_copy_to_host(void* dst, const hmrt_buffer* src,
                              uint64_t src_offset, uint64_t bytes) {
  return copy_to_host("hmrt_copy_to_host", dst, src, src_offset, bytes,
                      nullptr, false);
}

hmrt_status hmrt_memset(hmrt_buffer* dst, uint64_t offset, int value,
                        uint64_t bytes) {
  return memset_buffer("hmrt_memset", dst, offset, value, bytes, nullptr,
                       false);
}

hmrt_status hmrt_copy_async(hmrt_buffer* dst, uint64_t dst_offset,
                            const hmrt_buffer* src, uint64_t src_offset,
                            uint64_t bytes, hmrt_stream* stream) {
  return copy_buffers("hmrt_copy_async", dst, dst_offset, src, src_offset,
                      bytes, stream, true);
}

hmrt_status hmrt_copy_from_host_async(hmrt_buffer* dst, uint64_t dst_offset,
                                      const void* src, uint64_t bytes,
                                      hmrt_stream* stream) {
  return copy_from_host("hmrt_copy_from_host_async", dst, dst_offset, src,
                        bytes, stream, true);
}

hmrt_status hmrt_copy_to_host_async(void* dst, const hmrt_buffer* src,
                                    uint64_t src_offset, uint64_t bytes,
                                    hmrt_stream* stream) {
  return copy_to_host("hmrt_copy_to_host_async", dst, src, src_offset, bytes,
                      stream, true);
}

hmrt_status hmrt_memset_async(hmrt_buffer* dst, uint64_t offset, int value,
                              uint64_t bytes, hmrt_stream* stream) {
  return memset_buffer("hmrt_memset_async", dst, offset, value, bytes, stream,
                       true);
}

namespace {

hmrt_status create_stream(const char* fn, hmrt_device* device, bool is_inline,
                          hmrt_stream** out) {
  HMRT_CHECK_ARG(device != nullptr, "%s: device is NULL", fn);
  HMRT_CHECK_ARG(out != nullptr, "%s: out is NULL", fn);
  auto* s = new (std::nothrow) hmrt_stream{device, nullptr};
  if (s == nullptr)
    return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate the handle", fn);
  hmrt_status st = device->backend->stream_create(is_inline, &s->impl);
  if (st != HMRT_OK) {
    delete s;
    return st;
  }
  *out = s;
  return HMRT_OK;
}

}  // namespace

hmrt_status hmrt_stream_create(hmrt_device* device, hmrt_stream** out) {
  return create_stream("hmrt_stream_create", device, false, out);
}

hmrt_status hmrt_stream_create_inline(hmrt_device* device, hmrt_stream** out) {
  return create_stream("hmrt_stream_create_inline", device, true, out);
}

hmrt_status hmrt_launch_host_func(hmrt_stream* stream,
                                  hmrt_status (*fn)(void* arg), void* arg) {
  HMRT_CHECK_ARG(stream != nullptr, "hmrt_launch_host_func: stream is NULL");
  HMRT_CHECK_ARG(fn != nullptr, "hmrt_launch_host_func: fn is NULL");
  return stream->device->backend->launch_host_func(stream->impl, fn, arg);
}

void hmrt_stream_destroy(hmrt_stream* stream) {
  if (stream == nullptr) return;
  stream->device->backend->stream_destroy(stream->impl);
  delete stream;
}

hmrt_status hmrt_stream_synchronize(hmrt_stream* stream) {
  HMRT_CHECK_ARG(stream != nullptr, "hmrt_stream_synchronize: stream is NULL");
  return stream->device->backend->stream_synchronize(stream->impl);
}

hmrt_status hmrt_stream_query(hmrt_stream* stream, int* done) {
  HMRT_CHECK_ARG(stream != nullptr, "hmrt_stream_query: stream is NULL");
  HMRT_CHECK_ARG(done != nullptr, "hmrt_stream_query: done is NULL");
  bool d = false;
  hmrt_status st = stream->device->backend->stream_query(stream->impl, &d);
  if (st == HMRT_OK) *done = d ? 1 : 0;
  return st;
}

hmrt_status hmrt_event_create(hmrt_device* device, hmrt_event** out) {
  HMRT_CHECK_ARG(device != nullptr, "hmrt_event_create: device is NULL");
  HMRT_CHECK_ARG(out != nullptr, "hmrt_event_create: out is NULL");
  auto* e = new (std::nothrow) hmrt_event{device, nullptr};
  if (e == nullptr)
    return fail(HMRT_OUT_OF_MEMORY,
                "hmrt_event_create: cannot allocate the handle");
  hmrt_status st = device->backend->event_create(&e->impl);
  if (st != HMRT_OK) {
    delete e;
    return st;
  }
  *out = e;
  return HMRT_OK;
}

void hmrt_event_destroy(hmrt_event* event) {
  if (event == nullptr) return;
  event->device->backend->event_destroy(event->impl);
  delete event;
}

hmrt_status hmrt_event_record(hmrt_event* event, hmrt_stream* stream) {
  HMRT_CHECK_ARG(event != nullptr, "hmrt_event_record: event is NULL");
  hmrt_status st = check_stream("hmrt_event_record", event->device, stream);
  if (st != HMRT_OK) return st;
  return event->device->backend->event_record(event->impl, stream->impl);
}

hmrt_status hmrt_stream_wait_event(hmrt_stream* stream, hmrt_event* event) {
  HMRT_CHECK_ARG(event != nullptr, "hmrt_stream_wait_event: event is NULL");
  hmrt_status st =
      check_stream("hmrt_stream_wait_event", event->device, stream);
  if (st != HMRT_OK) return st;
  return event->device->backend->stream_wait_event(stream->impl, event->impl);
}

hmrt_status hmrt_event_synchronize(hmrt_event* event) {
  HMRT_CHECK_ARG(event != nullptr, "hmrt_event_synchronize: event is NULL");
  return event->device->backend->event_synchronize(event->impl);
}

hmrt_status hmrt_event_query(hmrt_event* event, int* done) {
  HMRT_CHECK_ARG(event != nullptr, "hmrt_event_query: event is NULL");
  HMRT_CHECK_ARG(done != nullptr, "hmrt_event_query: done is NULL");
  bool d = false;
  hmrt_status st = event->device->backend->event_query(event->impl, &d);
  if (st == HMRT_OK) *done = d ? 1 : 0;
  return st;
}

}  // extern "C"
