// Recording of per-op events for hmrt/trace.h.
#include "hmrt/trace.h"

#include <atomic>
#include <chrono>
#include <vector>

namespace {

std::atomic<bool> g_recording{false};
std::vector<hmrt_trace_event> g_events;
std::chrono::steady_clock::time_point g_origin;

}  // namespace

extern "C" {

void hmrt_trace_start(void) {
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
  g_events.push_back({op, end, hmrt_trace_now()});
}

const hmrt_trace_event* hmrt_trace_events(int64_t* count) {
  if (count) *count = static_cast<int64_t>(g_events.size());
  return g_events.data();
}

void hmrt_trace_clear(void) { g_events.clear(); }

}  // extern "C"
