// The execution context of generated programs (hmrt/program.h): the device,
// one arena buffer per tier and the streams.
#include <new>

#include "core/backend.h"
#include "core/internal.h"
#include "hmrt/program.h"

struct hmrt_exec {
  hmrt_device* device = nullptr;
  hmrt_buffer* arenas[HMRT_TIER_COUNT] = {};
  uint8_t* bases[HMRT_TIER_COUNT] = {};  // host-visible bases, or nullptr
  hmrt_stream* streams[HMRT_EXEC_STREAM_COUNT] = {};
};

extern "C" {

void hmrt_exec_destroy(hmrt_exec* exec) {
  if (exec == nullptr) return;
  for (hmrt_stream* s : exec->streams) hmrt_stream_destroy(s);
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
    x->bases[t] = x->arenas[t]->host;
  }
  for (int32_t i = 0; i < HMRT_EXEC_STREAM_COUNT; ++i) {
    hmrt_status st = hmrt_stream_create(device, &x->streams[i]);
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
               "hmrt_exec_base: the %s arena of the %s backend has no "
               "host-visible memory",
               hmrt_tier_name(tier), hmrt_device_backend(exec->device));
  return nullptr;
}

}  // extern "C"
