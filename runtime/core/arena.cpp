// The arena: one 64-byte aligned block of exactly the planned size.
#include <cstdint>
#include <cstdlib>
#include <new>

#include "core/internal.h"

struct hmrt_arena {
  void* base;
  size_t size;
};

namespace {
constexpr size_t kAlign = 64;
}

extern "C" {

hmrt_status hmrt_arena_create(size_t bytes, hmrt_arena** out) {
  HMRT_CHECK_ARG(out != nullptr, "hmrt_arena_create: out is NULL");
  // aligned_alloc wants a size that is a multiple of the alignment (and
  // non-zero to return a unique pointer).
  if (bytes > SIZE_MAX - kAlign)
    return hmrt::fail(HMRT_OUT_OF_MEMORY,
                      "hmrt_arena_create: %zu bytes is too large", bytes);
  size_t padded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (padded == 0) padded = kAlign;
  void* base = std::aligned_alloc(kAlign, padded);
  if (base == nullptr)
    return hmrt::fail(HMRT_OUT_OF_MEMORY,
                      "hmrt_arena_create: cannot allocate %zu bytes", bytes);
  auto* arena = new (std::nothrow) hmrt_arena{base, bytes};
  if (arena == nullptr) {
    std::free(base);
    return hmrt::fail(HMRT_OUT_OF_MEMORY,
                      "hmrt_arena_create: cannot allocate the handle");
  }
  *out = arena;
  return HMRT_OK;
}

void hmrt_arena_destroy(hmrt_arena* arena) {
  if (arena == nullptr) return;
  std::free(arena->base);
  delete arena;
}

size_t hmrt_arena_size(const hmrt_arena* arena) {
  return arena == nullptr ? 0 : arena->size;
}

hmrt_status hmrt_arena_ptr(const hmrt_arena* arena, size_t offset,
                           size_t bytes, void** out) {
  HMRT_CHECK_ARG(arena != nullptr, "hmrt_arena_ptr: arena is NULL");
  HMRT_CHECK_ARG(out != nullptr, "hmrt_arena_ptr: out is NULL");
  // Written as two comparisons so offset + bytes cannot overflow.
  if (offset > arena->size || bytes > arena->size - offset)
    return hmrt::fail(HMRT_OUT_OF_RANGE,
                      "hmrt_arena_ptr: bytes [%zu, %zu + %zu) are outside the "
                      "arena of %zu bytes",
                      offset, offset, bytes, arena->size);
  *out = static_cast<char*>(arena->base) + offset;
  return HMRT_OK;
}

}  // extern "C"
