// Internal helpers shared by the runtime's .cpp files: error reporting,
// argument checks and the parallel loops.  Not installed, not part of the API.
#ifndef HMRT_CORE_INTERNAL_H
#define HMRT_CORE_INTERNAL_H

#include <atomic>
#include <cstdint>
#include <functional>

#include "hmrt/hmrt.h"

#ifdef HMRT_HAVE_OPENMP
#include <omp.h>
#endif

#include <string>

namespace hmrt {

// `text` on one line: control characters written as \n, \r, \t or \xNN.
// Messages quote names from files and arguments through this.
std::string escape_controls(const char* text);

// Records a printf-style message as this thread's last error and returns
// `status`, so call sites read `return fail(HMRT_..., "...", ...);`.
hmrt_status fail(hmrt_status status, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

// `line` on stderr as "hmrt: line", once per process and `flag`.
void notice_once(std::atomic<bool>& flag, const std::string& line);

// Threads the kernels may use (>= 1).
int num_threads();

// Caps the threads the kernels called on this thread use at n (0: no cap).
// A stream's worker thread runs its kernels on one thread: a second
// OpenMP team beside the compute stream's would spin against it for the
// same cores.
void cap_kernel_threads_of_this_thread(int n);

// True when called from inside one of our parallel regions; nested calls run
// serially instead of oversubscribing the cores.
inline bool in_parallel() {
#ifdef HMRT_HAVE_OPENMP
  return omp_in_parallel() != 0;
#else
  return false;
#endif
}

// Calls fn(lo, hi) on contiguous pieces covering [0, n), one piece per thread,
// each at least `grain` long (except when n < grain).  The split depends on
// the thread count, so use it only where each element's result does not
// depend on how [0, n) is split.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& fn) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int64_t pieces = n / grain;
  int64_t t = num_threads();
  if (pieces < t) t = pieces;
  if (t <= 1 || in_parallel()) {
    fn(int64_t{0}, n);
    return;
  }
#ifdef HMRT_HAVE_OPENMP
#pragma omp parallel num_threads(static_cast<int>(t))
  {
    int64_t i = omp_get_thread_num();
    int64_t nt = omp_get_num_threads();
    int64_t lo = n * i / nt;
    int64_t hi = n * (i + 1) / nt;
    if (lo < hi) fn(lo, hi);
  }
#else
  fn(int64_t{0}, n);
#endif
}

// parallel_for for code built without the runtime's OpenMP flags (the
// driver): the same split, run on the kernels' threads.
void parallel_ranges(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// Calls fn(task) for every task in [0, ntasks), handing tasks to threads
// dynamically (for uneven work such as causal attention rows).
template <class F>
void parallel_tasks(int64_t ntasks, F&& fn) {
  if (ntasks <= 0) return;
  int64_t t = num_threads();
  if (ntasks < t) t = ntasks;
  if (t <= 1 || in_parallel()) {
    for (int64_t i = 0; i < ntasks; ++i) fn(i);
    return;
  }
#ifdef HMRT_HAVE_OPENMP
#pragma omp parallel for num_threads(static_cast<int>(t)) schedule(dynamic, 1)
  for (int64_t i = 0; i < ntasks; ++i) fn(i);
#else
  for (int64_t i = 0; i < ntasks; ++i) fn(i);
#endif
}

// Like parallel_tasks but with at most `max_threads` threads and passing the
// index of the running thread, in [0, max_threads), so callers can hand each
// thread its own slice of a workspace allocated beforehand.
template <class F>
void parallel_tasks_indexed(int64_t ntasks, int max_threads, F&& fn) {
  if (ntasks <= 0) return;
  int64_t t = max_threads;
  if (ntasks < t) t = ntasks;
  if (t <= 1 || in_parallel()) {
    for (int64_t i = 0; i < ntasks; ++i) fn(i, 0);
    return;
  }
#ifdef HMRT_HAVE_OPENMP
#pragma omp parallel for num_threads(static_cast<int>(t)) schedule(dynamic, 1)
  for (int64_t i = 0; i < ntasks; ++i) fn(i, omp_get_thread_num());
#else
  for (int64_t i = 0; i < ntasks; ++i) fn(i, 0);
#endif
}

// A growable 64-byte aligned float buffer owned by the calling thread, for
// per-call scratch (packing buffers, score tiles).  Returns nullptr if
// the allocation fails; the previous contents are not kept when it grows.
float* thread_scratch(int64_t floats);

// Number of blocks of size `block` covering n items.
inline int64_t ceil_div(int64_t n, int64_t block) {
  return (n + block - 1) / block;
}

}  // namespace hmrt

// Argument checks: `return`s the failure from the enclosing function.
#define HMRT_CHECK(cond, status, ...)            \
  do {                                           \
    if (!(cond)) return ::hmrt::fail(status, __VA_ARGS__); \
  } while (0)

#define HMRT_CHECK_ARG(cond, ...) \
  HMRT_CHECK(cond, HMRT_INVALID_ARGUMENT, __VA_ARGS__)

// Shape and pointer checks used at the top of every kernel.  `fn` is the
// public function name used in the message.
#define HMRT_CHECK_SIZE(fn, x) \
  HMRT_CHECK_ARG((x) >= 0, "%s: %s must be >= 0, got %lld", fn, #x, (long long)(x))
#define HMRT_CHECK_PTR(fn, p, count)                                     \
  HMRT_CHECK_ARG((p) != nullptr || (count) == 0,                         \
                 "%s: %s is NULL but %lld elements are needed", fn, #p, \
                 (long long)(count))

#endif  // HMRT_CORE_INTERNAL_H
