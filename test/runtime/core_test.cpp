// Status codes, the thread-local last error, thread control and the arena.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "cpu/cpu_stream.h"
#include "hmrt/trace.h"
#include "test_util.h"

namespace {

TEST(Status, Strings) {
  EXPECT_STREQ(hmrt_status_string(HMRT_OK), "HMRT_OK");
  EXPECT_STREQ(hmrt_status_string(HMRT_INVALID_ARGUMENT),
               "HMRT_INVALID_ARGUMENT");
  EXPECT_STREQ(hmrt_status_string(HMRT_OUT_OF_MEMORY), "HMRT_OUT_OF_MEMORY");
  EXPECT_STREQ(hmrt_status_string(HMRT_IO_ERROR), "HMRT_IO_ERROR");
  EXPECT_STREQ(hmrt_status_string(HMRT_OUT_OF_RANGE), "HMRT_OUT_OF_RANGE");
  EXPECT_STREQ(hmrt_status_string(HMRT_UNIMPLEMENTED), "HMRT_UNIMPLEMENTED");
  EXPECT_STREQ(hmrt_status_string(HMRT_INTERNAL), "HMRT_INTERNAL");
  EXPECT_STREQ(hmrt_status_string(static_cast<hmrt_status>(99)),
               "HMRT_UNKNOWN_STATUS");
}

TEST(Status, LastErrorIsPerThreadAndSticky) {
  hmrt_clear_error();
  EXPECT_STREQ(hmrt_last_error(), "");
  EXPECT_EQ(hmrt_set_num_threads(-1), HMRT_INVALID_ARGUMENT);
  const std::string msg = hmrt_last_error();
  EXPECT_NE(msg.find("hmrt_set_num_threads"), std::string::npos) << msg;
  // Another thread has its own (empty) message.
  std::string other = "unset";
  std::thread([&] { other = hmrt_last_error(); }).join();
  EXPECT_EQ(other, "");
  // Success does not clear it.
  HMRT_ASSERT_OK(hmrt_set_num_threads(0));
  EXPECT_EQ(msg, hmrt_last_error());
  hmrt_clear_error();
  EXPECT_STREQ(hmrt_last_error(), "");
}

TEST(Threads, SetAndRestoreDefault) {
  const int def = hmrt_get_num_threads();
  EXPECT_GE(def, 1);
  HMRT_ASSERT_OK(hmrt_set_num_threads(3));
  EXPECT_EQ(hmrt_get_num_threads(), 3);
  HMRT_ASSERT_OK(hmrt_set_num_threads(0));
  EXPECT_EQ(hmrt_get_num_threads(), def);
}

// A CPU backend stream's worker runs its kernels on one thread (compute
// shares the cores); one made as the CUDA backend makes them, on the
// runtime's count.
TEST(Threads, StreamWorkersKernelThreads) {
  HMRT_ASSERT_OK(hmrt_set_num_threads(3));
  int alone_threads = 0, all_threads = 0;
  {
    hmrt::CpuStream alone(/*is_inline=*/false), all(/*is_inline=*/false, /*kernel_threads=*/0);
    HMRT_ASSERT_OK(alone.submit([&] {
      alone_threads = hmrt_get_num_threads();
      return HMRT_OK;
    }));
    HMRT_ASSERT_OK(all.submit([&] {
      all_threads = hmrt_get_num_threads();
      return HMRT_OK;
    }));
    HMRT_ASSERT_OK(alone.synchronize());
    HMRT_ASSERT_OK(all.synchronize());
  }
  HMRT_ASSERT_OK(hmrt_set_num_threads(0));
  EXPECT_EQ(alone_threads, 1);
  EXPECT_EQ(all_threads, 3);
}

TEST(Arena, CreateAlignedExactSize) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64},
                       size_t{1000}, size_t{1} << 20}) {
    hmrt_arena* arena = nullptr;
    HMRT_ASSERT_OK(hmrt_arena_create(bytes, &arena));
    ASSERT_NE(arena, nullptr);
    EXPECT_EQ(hmrt_arena_size(arena), bytes);
    void* base = nullptr;
    HMRT_ASSERT_OK(hmrt_arena_ptr(arena, 0, bytes, &base));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % 64, 0u);
    if (bytes > 0) std::memset(base, 0xab, bytes);  // all of it is writable
    hmrt_arena_destroy(arena);
  }
  hmrt_arena_destroy(nullptr);  // allowed
  EXPECT_EQ(hmrt_arena_size(nullptr), 0u);
}

TEST(Arena, PointerBoundsChecks) {
  hmrt_arena* arena = nullptr;
  HMRT_ASSERT_OK(hmrt_arena_create(1024, &arena));
  void* base = nullptr;
  HMRT_ASSERT_OK(hmrt_arena_ptr(arena, 0, 0, &base));
  void* p = nullptr;
  HMRT_ASSERT_OK(hmrt_arena_ptr(arena, 1000, 24, &p));
  EXPECT_EQ(static_cast<char*>(p) - static_cast<char*>(base), 1000);
  HMRT_ASSERT_OK(hmrt_arena_ptr(arena, 1024, 0, &p));  // empty range at end

  void* untouched = &p;
  p = untouched;
  EXPECT_EQ(hmrt_arena_ptr(arena, 1000, 25, &p), HMRT_OUT_OF_RANGE);
  EXPECT_EQ(p, untouched);
  EXPECT_NE(std::string(hmrt_last_error()).find("1024"), std::string::npos)
      << hmrt_last_error();
  EXPECT_EQ(hmrt_arena_ptr(arena, 1025, 0, &p), HMRT_OUT_OF_RANGE);
  // offset + bytes would wrap around: still out of range, not a pointer.
  EXPECT_EQ(hmrt_arena_ptr(arena, 8, SIZE_MAX, &p), HMRT_OUT_OF_RANGE);
  EXPECT_EQ(hmrt_arena_ptr(arena, SIZE_MAX, 8, &p), HMRT_OUT_OF_RANGE);
  EXPECT_EQ(hmrt_arena_ptr(nullptr, 0, 0, &p), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_arena_ptr(arena, 0, 0, nullptr), HMRT_INVALID_ARGUMENT);
  hmrt_arena_destroy(arena);
}

TEST(Arena, HugeSizeIsOutOfMemory) {
#if defined(__SANITIZE_ADDRESS__)
  // ASan aborts on impossible allocations unless allocator_may_return_null=1.
  if (!std::getenv("ASAN_OPTIONS") ||
      !std::strstr(std::getenv("ASAN_OPTIONS"), "allocator_may_return_null=1"))
    GTEST_SKIP() << "set ASAN_OPTIONS=allocator_may_return_null=1 to run";
#endif
  hmrt_arena* arena = nullptr;
  EXPECT_EQ(hmrt_arena_create(SIZE_MAX, &arena), HMRT_OUT_OF_MEMORY);
  EXPECT_EQ(arena, nullptr);
  EXPECT_EQ(hmrt_arena_create(SIZE_MAX / 2, &arena), HMRT_OUT_OF_MEMORY);
  EXPECT_EQ(arena, nullptr);
  EXPECT_EQ(hmrt_arena_create(16, nullptr), HMRT_INVALID_ARGUMENT);
}

}  // namespace

// hmrt/trace.h: events are recorded only between start and stop, in call
// order, on a clock that does not go back; clear forgets them.
TEST(Trace, RecordsOnlyWhileStarted) {
  hmrt_trace_stop();
  hmrt_trace_clear();
  hmrt_trace_op(7, 0);
  int64_t n = -1;
  hmrt_trace_events(&n);
  EXPECT_EQ(n, 0);

  hmrt_trace_start();
  hmrt_trace_op(0, 0);
  hmrt_trace_op(0, 1);
  hmrt_trace_op(1, 0);
  hmrt_trace_op(1, 1);
  hmrt_trace_stop();
  hmrt_trace_op(2, 0);  // after stop: ignored
  const hmrt_trace_event* ev = hmrt_trace_events(&n);
  ASSERT_EQ(n, 4);
  const int32_t ops[] = {0, 0, 1, 1}, ends[] = {0, 1, 0, 1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(ev[i].op, ops[i]);
    EXPECT_EQ(ev[i].end, ends[i]);
    EXPECT_GE(ev[i].ns, 0);
    if (i) EXPECT_GE(ev[i].ns, ev[i - 1].ns);
  }
  hmrt_trace_clear();
  hmrt_trace_events(&n);
  EXPECT_EQ(n, 0);
}
