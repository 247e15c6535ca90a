// Recording of per-op events for hmrt/trace.h.
#include "hmrt/trace.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

namespace {

std::atomic<bool> g_recording{false};
std::mutex g_mutex;  // streams record from their own threads
std::vector<hmrt_trace_event> g_events;
std::chrono::steady_clock::time_point g_origin;

}  // namespace

extern "C" {

void hmrt_trace_start(void) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_events.clear();
  g_origin = std::chrono::steady_clock::now();
  g_recording.store(true, std::memory_order_release);
}

void hmrt_trace_stop(void) { g_recording.store(false, std::memory_order_release); }

int64_t hmrt_trace_now(void) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now() - g_origin)
      .count();
}

void hmrt_trace_op(int32_t op, int32_t end) {
  if (!g_recording.load(std::memory_order_relaxed)) return;
  const int64_t now = hmrt_trace_now();
  std::lock_guard<std::mutex> lock(g_mutex);
  g_events.push_back({op, end, now});
}

const hmrt_trace_event* hmrt_trace_events(int64_t* count) {
  if (count) *count = static_cast<int64_t>(g_events.size());
  return g_events.data();
}

void hmrt_trace_clear(void) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_events.clear();
}

}  // extern "C"
