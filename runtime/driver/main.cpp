// main() of the `train` executable: libhmrt_driver.a links it with the
// generated program's hmcc_program() (see hmrt/driver.h).
#include "hmrt/driver.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(__linux__) && defined(HMRT_LINKS_OPENBLAS)
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

// OpenBLAS (its OpenMP build, which hmrt links) allocates a 128 MiB buffer
// for every OpenMP thread in its library constructor, before main(), and
// retries a failed allocation forever: under an address-space limit
// (`ulimit -v`) too small for them, train would spin instead of failing.
// This function runs from .preinit_array, before any shared library's
// constructor (libgomp's and OpenBLAS's included), and
//  - when the limit leaves room for fewer threads' buffers than the run
//    would use, sets OMP_NUM_THREADS (and OPENBLAS_NUM_THREADS and
//    GOTO_NUM_THREADS) to the number that fits (libgomp and OpenBLAS read
//    them next; the kernels' default follows) and says so on
//    stderr (not with --quiet);
//  - when not even one fits, prints one `train: error:` line with the
//    figures and exits with status 1.
// The run's threads are --threads T if given, else the largest of those
// variables, else the CPUs this process may use (as libgomp counts them).
namespace {

constexpr unsigned long long kMiB = 1ull << 20;
// Measured on Debian's libopenblas0-openmp: 134221824 bytes per thread
// (BUFFER_SIZE, 128 MiB, plus a page), and a margin for what the libraries'
// constructors and the start of main() map besides.
constexpr unsigned long long kBlasPerThread = 128 * kMiB + 4096;
constexpr unsigned long long kMargin = 32 * kMiB;

// What the process maps now, as each limit counts it: all of it for
// RLIMIT_AS (statm's size), its data and stack for RLIMIT_DATA (statm's
// data field).
struct Mapped {
  unsigned long long total = 0, data = 0;
};
Mapped mapped_bytes() {
  Mapped m;
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return m;
  unsigned long long size = 0, resident = 0, shared = 0, text = 0, lib = 0, data = 0;
  if (std::fscanf(f, "%llu %llu %llu %llu %llu %llu", &size, &resident, &shared, &text,
                  &lib, &data) == 6) {
    const unsigned long long page = static_cast<unsigned long long>(::sysconf(_SC_PAGESIZE));
    m.total = size * page;
    m.data = data * page;
  }
  std::fclose(f);
  return m;
}

long leading_number(const char* s) {
  if (s == nullptr) return 0;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  return end != s && v > 0 ? v : 0;
}

// The value of `name` in `envp` (the environment as the kernel passed it:
// at .preinit_array time getenv() does not see it yet).
const char* env_value(char** envp, const char* name) {
  const size_t n = std::strlen(name);
  for (char** e = envp; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  return nullptr;
}

// The variables that set OpenBLAS's and OpenMP's thread counts.
const char* const kThreadVariables[] = {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                        "GOTO_NUM_THREADS"};

void blas_memory_guard(int argc, char** argv, char** envp) {
  // Each limit against what it counts; the tighter one decides.
  const Mapped now = mapped_bytes();
  unsigned long long limit = ~0ull, used = 0, room = ~0ull;
  for (int res : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit r;
    if (::getrlimit(res, &r) != 0 || r.rlim_cur == RLIM_INFINITY) continue;
    const unsigned long long u = (res == RLIMIT_AS ? now.total : now.data) + kMargin;
    const unsigned long long left = r.rlim_cur > u ? r.rlim_cur - u : 0;
    if (left < room) {
      room = left;
      limit = r.rlim_cur;
      used = u;
    }
  }
  if (limit == ~0ull) return;
  bool quiet = false;
  long threads = 0;
  for (int i = 1; i < argc && argv[i]; ++i) {
    if (std::strcmp(argv[i], "--quiet") == 0) quiet = true;
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      threads = leading_number(argv[i + 1]);
    if (std::strncmp(argv[i], "--threads=", 10) == 0)
      threads = leading_number(argv[i] + 10);
  }
  // The most any of the thread variables asks for (OpenBLAS reads its own
  // before OMP_NUM_THREADS).
  if (threads <= 0)
    for (const char* name : kThreadVariables)
      threads = std::max(threads, leading_number(env_value(envp, name)));
  if (threads <= 0) {
    cpu_set_t set;
    threads = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                            : 1;
  }
  const unsigned long long fit = room / kBlasPerThread;
  if (fit >= static_cast<unsigned long long>(threads)) return;
  if (fit == 0) {
    std::fprintf(stderr,
                 "train: error: the address-space limit (ulimit -v / -d) of "
                 "%llu MiB is too small: OpenBLAS allocates %llu MiB per "
                 "thread at start-up, on top of the %llu MiB the process "
                 "maps; raise the limit to at least %llu MiB\n",
                 limit / kMiB, kBlasPerThread / kMiB, used / kMiB,
                 (used + kBlasPerThread + kMiB - 1) / kMiB);
    std::_Exit(1);
  }
  // The environment cannot be changed for libgomp from here (getenv and
  // setenv do not work on it yet), so the program starts again with
  // OMP_NUM_THREADS set in its environment: the guard then finds room and
  // returns.
  char value[32];
  std::snprintf(value, sizeof value, "%llu", fit);
  if (!quiet)
    std::fprintf(stderr,
                 "train: note: the address-space limit of %llu MiB leaves "
                 "room for OpenBLAS's buffers of %llu thread(s), not %ld; "
                 "running with OMP_NUM_THREADS=%llu\n",
                 limit / kMiB, fit, threads, fit);
  {
    std::vector<char*> env;
    for (char** e = envp; e != nullptr && *e != nullptr; ++e) {
      bool thread_variable = false;
      for (const char* name : kThreadVariables) {
        const size_t n = std::strlen(name);
        thread_variable |= std::strncmp(*e, name, n) == 0 && (*e)[n] == '=';
      }
      if (!thread_variable) env.push_back(*e);
    }
    std::vector<std::string> counts;
    for (const char* name : kThreadVariables)
      counts.push_back(std::string(name) + "=" + value);
    for (std::string& c : counts) env.push_back(&c[0]);
    env.push_back(nullptr);
    // --threads T would ask for more again: pass the number that fits.
    std::string arg = "--threads=" + std::string(value);
    for (int i = 1; i < argc && argv[i]; ++i) {
      if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
        argv[i + 1] = value;
      else if (std::strncmp(argv[i], "--threads=", 10) == 0)
        argv[i] = &arg[0];
    }
    ::execve("/proc/self/exe", argv, env.data());
  }
  std::fprintf(stderr,
               "train: error: the address-space limit (ulimit -v / -d) of "
               "%llu MiB leaves room for OpenBLAS's buffers of %llu thread(s) "
               "only, and train could not restart with OMP_NUM_THREADS=%llu: "
               "%s; set it yourself\n",
               limit / kMiB, fit, fit, std::strerror(errno));
  std::_Exit(1);
}

}  // namespace

__attribute__((section(".preinit_array"), used)) static void (
    *const hmrt_preinit_blas_memory_guard)(int, char**, char**) =
    blas_memory_guard;
#endif

int main(int argc, char** argv) {
  const int rc = hmrt_train_main(argc, argv, hmcc_program());
  // hmrt_train_main flushed stdout and checked it; closing it is the last
  // chance to see an error (e.g. a file system that reports it at close).
  errno = 0;
  if (std::fclose(stdout) != 0 && rc == 0) {
    std::fprintf(stderr, "train: error: cannot write to standard output: %s\n",
                 errno != 0 ? std::strerror(errno) : "write error");
    return 1;
  }
  return rc;
}
