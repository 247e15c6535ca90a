// The execution context of generated programs (hmrt/program.h): the device,
// one arena buffer per tier and the streams.
#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/internal.h"
#include "hmrt/program.h"

struct hmrt_exec {
  hmrt_device* device = nullptr;
  hmrt_buffer* arenas[HMRT_TIER_COUNT] = {};
  uint8_t* bases[HMRT_TIER_COUNT] = {};  // host-visible bases, or nullptr
  hmrt_stream* streams[HMRT_EXEC_STREAM_COUNT] = {};
  std::vector<hmrt_event*> events;  // by the program's numbers, made at first use
};

namespace {

// The arena (device or host) holding [p, p + bytes) at kernel addresses,
// and the offset of p in it; false when neither does.
bool locate(const hmrt_exec* x, const void* p, uint64_t bytes,
            hmrt_buffer** buffer, uint64_t* offset) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  for (int32_t t : {HMRT_TIER_DEVICE, HMRT_TIER_HOST}) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(x->bases[t]);
    const uint64_t size = hmrt_buffer_size(x->arenas[t]);
    if (x->bases[t] != nullptr && a >= base && a - base <= size &&
        bytes <= size - (a - base)) {
      *buffer = x->arenas[t];
      *offset = a - base;
      return true;
    }
  }
  return false;
}

hmrt_status check_stream(const char* fn, const hmrt_exec* x, int32_t stream) {
  HMRT_CHECK_ARG(x != nullptr, "%s: exec is NULL", fn);
  HMRT_CHECK_ARG(stream >= 0 && stream < HMRT_EXEC_STREAM_COUNT,
                 "%s: unknown stream %d", fn, stream);
  return HMRT_OK;
}

// The context's event `index`, created at first use.
hmrt_status event_at(const char* fn, hmrt_exec* x, int32_t index,
                     hmrt_event** out) {
  HMRT_CHECK_ARG(index >= 0, "%s: event %d is negative", fn, index);
  const size_t i = static_cast<size_t>(index);
  try {
    if (i >= x->events.size()) x->events.resize(i + 1, nullptr);
  } catch (const std::bad_alloc&) {
    return hmrt::fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate event %d", fn,
                      index);
  }
  if (x->events[i] == nullptr) {
    hmrt_status st = hmrt_event_create(x->device, &x->events[i]);
    if (st != HMRT_OK) return st;
  }
  *out = x->events[i];
  return HMRT_OK;
}

// The pieces of `d`: its own, or the one (tier, offset) when it is whole.
std::vector<hmrt_tensor_piece> pieces_of(const hmrt_tensor_desc& d) {
  if (d.num_pieces <= 0) return {{0, d.bytes, d.tier, d.offset}};
  return std::vector<hmrt_tensor_piece>(d.pieces, d.pieces + d.num_pieces);
}

// Runs visit(tier, arena offset, offset in [at, at + n), bytes) over the
// pieces of `d` that bytes [at, at + n) of the tensor touch.
template <class F>
hmrt_status each_piece(const char* fn, const hmrt_tensor_desc* d, uint64_t at,
                       uint64_t n, F&& visit) {
  if (d == nullptr)
    return hmrt::fail(HMRT_INVALID_ARGUMENT, "%s: desc is NULL", fn);
  if (at > d->bytes || n > d->bytes - at)
    return hmrt::fail(HMRT_OUT_OF_RANGE,
                      "%s: bytes [%llu, %llu) of '%s' are past its %llu bytes",
                      fn, (unsigned long long)at, (unsigned long long)(at + n),
                      d->name ? d->name : "?", (unsigned long long)d->bytes);
  for (const hmrt_tensor_piece& p : pieces_of(*d)) {
    const uint64_t lo = std::max(at, p.at), hi = std::min(at + n, p.at + p.bytes);
    if (lo >= hi) continue;
    const hmrt_status st = visit(p.tier, p.offset + (lo - p.at), lo - at, hi - lo);
    if (st != HMRT_OK) return st;
  }
  return HMRT_OK;
}

}  // namespace

extern "C" {

void hmrt_exec_destroy(hmrt_exec* exec) {
  if (exec == nullptr) return;
  for (hmrt_stream* s : exec->streams) hmrt_stream_destroy(s);  // drains
  for (hmrt_event* e : exec->events) hmrt_event_destroy(e);
  for (hmrt_buffer* b : exec->arenas) hmrt_buffer_free(b);
  delete exec;
}

hmrt_status hmrt_exec_create(hmrt_device* device,
                             const uint64_t tier_bytes[HMRT_TIER_COUNT],
                             hmrt_exec** out) {
  HMRT_CHECK_ARG(device != nullptr, "hmrt_exec_create: device is NULL");
  HMRT_CHECK_ARG(tier_bytes != nullptr, "hmrt_exec_create: tier_bytes is NULL");
  HMRT_CHECK_ARG(out != nullptr, "hmrt_exec_create: out is NULL");
  auto* x = new (std::nothrow) hmrt_exec;
  if (x == nullptr)
    return hmrt::fail(HMRT_OUT_OF_MEMORY,
                      "hmrt_exec_create: cannot allocate the handle");
  x->device = device;
  for (int32_t t = 0; t < HMRT_TIER_COUNT; ++t) {
    hmrt_status st = hmrt_buffer_alloc(device, t, tier_bytes[t], &x->arenas[t]);
    if (st != HMRT_OK) {
      hmrt_exec_destroy(x);
      return st;
    }
    x->bases[t] = device->backend->kernel_address(x->arenas[t]);
  }
  for (int32_t i = 0; i < HMRT_EXEC_STREAM_COUNT; ++i) {
    // Compute runs on the caller where the backend can (generated CPU code
    // calls its kernels directly).
    hmrt_status st =
        i == HMRT_EXEC_STREAM_COMPUTE
            ? hmrt_stream_create_inline(device, &x->streams[i])
            : HMRT_UNIMPLEMENTED;
    if (st == HMRT_UNIMPLEMENTED)
      st = hmrt_stream_create(device, &x->streams[i]);
    if (st != HMRT_OK) {
      hmrt_exec_destroy(x);
      return st;
    }
  }
  *out = x;
  return HMRT_OK;
}

hmrt_status hmrt_exec_create_for_program(hmrt_device* device,
                                         const hmrt_program* program,
                                         hmrt_exec** out) {
  HMRT_CHECK_ARG(program != nullptr,
                 "hmrt_exec_create_for_program: program is NULL");
  const uint64_t bytes[HMRT_TIER_COUNT] = {program->arena_bytes,
                                           program->host_arena_bytes,
                                           program->storage_arena_bytes};
  return hmrt_exec_create(device, bytes, out);
}

hmrt_device* hmrt_exec_device(const hmrt_exec* exec) {
  return exec == nullptr ? nullptr : exec->device;
}

hmrt_buffer* hmrt_exec_arena(const hmrt_exec* exec, int32_t tier) {
  if (exec == nullptr || tier < 0 || tier >= HMRT_TIER_COUNT) return nullptr;
  return exec->arenas[tier];
}

hmrt_stream* hmrt_exec_stream(const hmrt_exec* exec, int32_t which) {
  if (exec == nullptr || which < 0 || which >= HMRT_EXEC_STREAM_COUNT)
    return nullptr;
  return exec->streams[which];
}

uint8_t* hmrt_exec_base(hmrt_exec* exec, int32_t tier) {
  if (exec != nullptr && tier >= 0 && tier < HMRT_TIER_COUNT &&
      exec->bases[tier] != nullptr)
    return exec->bases[tier];
  if (exec == nullptr)
    hmrt::fail(HMRT_INVALID_ARGUMENT, "hmrt_exec_base: exec is NULL");
  else if (tier < 0 || tier >= HMRT_TIER_COUNT)
    hmrt::fail(HMRT_INVALID_ARGUMENT, "hmrt_exec_base: unknown tier %d", tier);
  else
    hmrt::fail(HMRT_INVALID_ARGUMENT,
               "hmrt_exec_base: the kernels of the %s backend cannot "
               "address its %s arena",
               hmrt_device_backend(exec->device), hmrt_tier_name(tier));
  return nullptr;
}

hmrt_status hmrt_tensor_check_placed(const hmrt_tensor_desc* d,
                                     const uint64_t tier_bytes[HMRT_TIER_COUNT]) {
  const char* fn = "hmrt_tensor_check_placed";
  if (d == nullptr || tier_bytes == nullptr)
    return hmrt::fail(HMRT_INVALID_ARGUMENT, "%s: NULL argument", fn);
  const char* name = d->name ? d->name : "?";
  if (d->num_pieces < 0 || (d->num_pieces > 0 && d->pieces == nullptr))
    return hmrt::fail(HMRT_INVALID_ARGUMENT, "'%s' has an invalid list of %d pieces",
                      name, d->num_pieces);
  uint64_t next = 0;
  const std::vector<hmrt_tensor_piece> pieces = pieces_of(*d);
  for (size_t i = 0; i < pieces.size(); ++i) {
    const hmrt_tensor_piece& p = pieces[i];
    std::string which = std::string("'") + name + "'";
    if (pieces.size() > 1) which += " piece " + std::to_string(i);
    if (p.tier < 0 || p.tier >= HMRT_TIER_COUNT)
      return hmrt::fail(HMRT_INVALID_ARGUMENT, "%s has unknown tier %d",
                        which.c_str(), p.tier);
    if (p.at != next || p.bytes > d->bytes - next)
      return hmrt::fail(HMRT_INVALID_ARGUMENT,
                        "%s (its bytes [%llu, %llu) of the tensor) does not follow "
                        "the piece before it within the tensor's %llu bytes",
                        which.c_str(), (unsigned long long)p.at,
                        (unsigned long long)(p.at + p.bytes),
                        (unsigned long long)d->bytes);
    next += p.bytes;
    const uint64_t size = tier_bytes[p.tier];
    if (p.offset > size || p.bytes > size - p.offset)
      return hmrt::fail(HMRT_OUT_OF_RANGE,
                        "%s (bytes [%llu, %llu)) lies outside the %s arena of "
                        "%llu bytes",
                        which.c_str(), (unsigned long long)p.offset,
                        (unsigned long long)(p.offset + p.bytes),
                        hmrt_tier_name(p.tier), (unsigned long long)size);
  }
  if (next != d->bytes)
    return hmrt::fail(HMRT_INVALID_ARGUMENT,
                      "'%s': its pieces hold %llu of its %llu bytes", name,
                      (unsigned long long)next, (unsigned long long)d->bytes);
  return HMRT_OK;
}

hmrt_status hmrt_exec_copy_tensor(const hmrt_exec* exec, const hmrt_tensor_desc* desc,
                                  uint64_t at, hmrt_buffer* buffer,
                                  uint64_t buffer_offset, uint64_t n,
                                  int32_t into_tensor) {
  const char* fn = "hmrt_exec_copy_tensor";
  if (exec == nullptr || buffer == nullptr)
    return hmrt::fail(HMRT_INVALID_ARGUMENT, "%s: NULL argument", fn);
  return each_piece(fn, desc, at, n,
                    [&](int32_t tier, uint64_t offset, uint64_t from, uint64_t len) {
                      hmrt_buffer* arena = hmrt_exec_arena(exec, tier);
                      return into_tensor
                                 ? hmrt_copy(arena, offset, buffer, buffer_offset + from, len)
                                 : hmrt_copy(buffer, buffer_offset + from, arena, offset, len);
                    });
}

hmrt_status hmrt_exec_write_tensor(const hmrt_exec* exec, const hmrt_tensor_desc* desc,
                                   uint64_t at, const void* src, uint64_t n) {
  const char* fn = "hmrt_exec_write_tensor";
  if (exec == nullptr || (src == nullptr && n > 0))
    return hmrt::fail(HMRT_INVALID_ARGUMENT, "%s: NULL argument", fn);
  return each_piece(fn, desc, at, n,
                    [&](int32_t tier, uint64_t offset, uint64_t from, uint64_t len) {
                      return hmrt_copy_from_host(hmrt_exec_arena(exec, tier), offset,
                                                 static_cast<const uint8_t*>(src) + from, len);
                    });
}

hmrt_status hmrt_exec_copy(hmrt_exec* exec, void* dst, const void* src,
                           uint64_t bytes) {
  const char* fn = "hmrt_exec_copy";
  HMRT_CHECK_ARG(exec != nullptr, "%s: exec is NULL", fn);
  HMRT_CHECK_ARG((dst != nullptr && src != nullptr) || bytes == 0,
                 "%s: dst or src is NULL", fn);
  if (bytes == 0) return HMRT_OK;
  hmrt_buffer *d = nullptr, *s = nullptr;
  uint64_t doff = 0, soff = 0;
  HMRT_CHECK_ARG(locate(exec, dst, bytes, &d, &doff),
                 "%s: the destination, %llu bytes, is not inside the device or "
                 "the host arena",
                 fn, (unsigned long long)bytes);
  // A source outside the arenas is the program's static data.
  if (!locate(exec, src, bytes, &s, &soff))
    return hmrt_copy_from_host(d, doff, src, bytes);
  return hmrt_copy(d, doff, s, soff, bytes);
}

hmrt_status hmrt_exec_read(hmrt_exec* exec, void* dst, const void* src,
                           uint64_t bytes) {
  const char* fn = "hmrt_exec_read";
  HMRT_CHECK_ARG(exec != nullptr, "%s: exec is NULL", fn);
  HMRT_CHECK_ARG((dst != nullptr && src != nullptr) || bytes == 0,
                 "%s: dst or src is NULL", fn);
  if (bytes == 0) return HMRT_OK;
  hmrt_buffer* s = nullptr;
  uint64_t soff = 0;
  // A source outside the arenas is the program's static data.
  if (!locate(exec, src, bytes, &s, &soff)) {
    std::memcpy(dst, src, bytes);
    return HMRT_OK;
  }
  return hmrt_copy_to_host(dst, s, soff, bytes);
}

hmrt_status hmrt_exec_launch(hmrt_exec* exec, int32_t stream,
                             hmrt_status (*fn)(void* arg), void* arg) {
  hmrt_status st = check_stream("hmrt_exec_launch", exec, stream);
  if (st != HMRT_OK) return st;
  return hmrt_launch_host_func(exec->streams[stream], fn, arg);
}

hmrt_status hmrt_exec_record(hmrt_exec* exec, int32_t event, int32_t stream) {
  hmrt_status st = check_stream("hmrt_exec_record", exec, stream);
  hmrt_event* e = nullptr;
  if (st == HMRT_OK) st = event_at("hmrt_exec_record", exec, event, &e);
  if (st != HMRT_OK) return st;
  return hmrt_event_record(e, exec->streams[stream]);
}

hmrt_status hmrt_exec_wait(hmrt_exec* exec, int32_t stream, int32_t event) {
  hmrt_status st = check_stream("hmrt_exec_wait", exec, stream);
  hmrt_event* e = nullptr;
  if (st == HMRT_OK) st = event_at("hmrt_exec_wait", exec, event, &e);
  if (st != HMRT_OK) return st;
  return hmrt_stream_wait_event(exec->streams[stream], e);
}

hmrt_status hmrt_exec_join(hmrt_exec* exec) {
  HMRT_CHECK_ARG(exec != nullptr, "hmrt_exec_join: exec is NULL");
  hmrt_status first = HMRT_OK;
  std::string message;
  for (hmrt_stream* s : exec->streams) {
    hmrt_status st = hmrt_stream_synchronize(s);
    if (st != HMRT_OK && first == HMRT_OK) {
      first = st;
      message = hmrt_last_error();
    }
  }
  if (first != HMRT_OK) return hmrt::fail(first, "%s", message.c_str());
  return HMRT_OK;
}

}  // extern "C"
