// Status strings, the thread-local last-error message and thread control.
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/internal.h"

namespace {

thread_local char t_last_error[512] = "";

// 0 means "default": the OpenMP default team size (which honours
// OMP_NUM_THREADS) or the hardware concurrency without OpenMP.
std::atomic<int> g_num_threads{0};

int default_num_threads() {
#ifdef HMRT_HAVE_OPENMP
  static const int n = omp_get_max_threads();
#else
  static const int n = static_cast<int>(std::thread::hardware_concurrency());
#endif
  return n > 0 ? n : 1;
}

}  // namespace

namespace hmrt {

std::string escape_controls(const char* text) {
  std::string out;
  for (const char* c = text; *c != '\0'; ++c) {
    const unsigned char u = static_cast<unsigned char>(*c);
    char esc[8];
    if (u >= 0x20 && u != 0x7f)
      out.push_back(*c);
    else if (u == '\n' || u == '\r' || u == '\t')
      out += u == '\n' ? "\\n" : u == '\r' ? "\\r" : "\\t";
    else
      out.append(esc, std::snprintf(esc, sizeof esc, "\\x%02x", u));
  }
  return out;
}

hmrt_status fail(hmrt_status status, const char* fmt, ...) {
  char raw[sizeof(t_last_error)];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(raw, sizeof(raw), fmt, args);
  va_end(args);
  // One line, always: control characters that a message quotes from a file
  // or an argument (a header key, a tensor name, a path) are escaped.
  std::snprintf(t_last_error, sizeof(t_last_error), "%s", escape_controls(raw).c_str());
  return status;
}

namespace {
struct Scratch {
  float* data = nullptr;
  int64_t floats = 0;
  ~Scratch() { std::free(data); }
};
thread_local Scratch t_scratch;
}  // namespace

float* thread_scratch(int64_t floats) {
  if (floats <= t_scratch.floats) return t_scratch.data;
  std::free(t_scratch.data);
  t_scratch.floats = 0;
  // Round up to whole 64-byte lines, as aligned_alloc requires.
  size_t bytes = (static_cast<size_t>(floats) * sizeof(float) + 63) / 64 * 64;
  t_scratch.data = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (t_scratch.data != nullptr) t_scratch.floats = floats;
  return t_scratch.data;
}

namespace {
thread_local int t_thread_cap = 0;  // 0: no cap on this thread
}  // namespace

void notice_once(std::atomic<bool>& flag, const std::string& line) {
  if (flag.exchange(true)) return;
  std::fprintf(stderr, "hmrt: %s\n", line.c_str());
}

int num_threads() {
  int n = g_num_threads.load(std::memory_order_relaxed);
  n = n > 0 ? n : default_num_threads();
  return t_thread_cap > 0 && t_thread_cap < n ? t_thread_cap : n;
}

void parallel_ranges(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  parallel_for(n, grain, fn);
}

void cap_kernel_threads_of_this_thread(int n) {
  t_thread_cap = n;
#ifdef HMRT_HAVE_OPENMP
  if (n > 0) omp_set_num_threads(n);  // also what OpenBLAS uses on this thread
#endif
}

}  // namespace hmrt

extern "C" {

const char* hmrt_status_string(hmrt_status status) {
  switch (status) {
    case HMRT_OK: return "HMRT_OK";
    case HMRT_INVALID_ARGUMENT: return "HMRT_INVALID_ARGUMENT";
    case HMRT_OUT_OF_MEMORY: return "HMRT_OUT_OF_MEMORY";
    case HMRT_IO_ERROR: return "HMRT_IO_ERROR";
    case HMRT_OUT_OF_RANGE: return "HMRT_OUT_OF_RANGE";
    case HMRT_UNIMPLEMENTED: return "HMRT_UNIMPLEMENTED";
    case HMRT_INTERNAL: return "HMRT_INTERNAL";
  }
  return "HMRT_UNKNOWN_STATUS";
}

const char* hmrt_last_error(void) { return t_last_error; }

void hmrt_clear_error(void) { t_last_error[0] = '\0'; }

hmrt_status hmrt_set_num_threads(int n) {
  HMRT_CHECK_ARG(n >= 0, "hmrt_set_num_threads: n must be >= 0, got %d", n);
  g_num_threads.store(n, std::memory_order_relaxed);
  return HMRT_OK;
}

int hmrt_get_num_threads(void) { return hmrt::num_threads(); }

}  // extern "C"
