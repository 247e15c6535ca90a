// The GEMM engine table (cpu/gemm_select.h): in memory, behind a per-thread
// cache, and in a per-machine file extended under flock.
#include "cpu/gemm_select.h"

#include "core/internal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

namespace hmrt {
namespace {

constexpr const char* kNames[kGemmEngines] = {"own", "openblas", "onednn"};

// ceil(log2(x)) for x >= 1, 0 below.
int log2_up(int64_t x) {
  int b = 0;
  while (b < 62 && (int64_t(1) << b) < x) ++b;
  return b;
}

// A shape class as 64 bits: serial, trans_a, trans_b, the log2 buckets of
// m, n, k and batch (6 bits each) and the thread count (16 bits).
uint64_t pack_key(bool serial, bool ta, bool tb, const int buckets[4], int threads) {
  uint64_t key = (uint64_t(serial) << 2) | (uint64_t(ta) << 1) | uint64_t(tb);
  for (int i = 0; i < 4; ++i) key = (key << 6) | uint64_t(buckets[i] & 63);
  return (key << 16) | uint64_t(threads & 0xffff);
}

uint64_t class_key(const GemmCall& c) {
  const int buckets[4] = {log2_up(c.m), log2_up(c.n), log2_up(c.k), log2_up(c.batch)};
  return pack_key(c.serial, c.trans_a, c.trans_b, buckets, c.threads);
}

// The table's text of a key: the fields pack_key takes, in its order.
std::string key_text(uint64_t key) {
  const int threads = int(key & 0xffff);
  int b[4];
  for (int i = 3; i >= 0; --i) b[i] = int((key >> (16 + 6 * (3 - i))) & 63);
  const uint64_t flags = key >> 40;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s %d %d %d %d %d %d %d",
                (flags & 4) ? "serial" : "threaded", int((flags >> 1) & 1),
                int(flags & 1), b[0], b[1], b[2], b[3], threads);
  return buf;
}

// A table line (key_text, then the engine's name); false for one that does
// not parse or names an engine this build lacks (measured again).
bool parse_line(const std::string& line, uint64_t* key, GemmEngine* e) {
  std::istringstream in(line);
  std::string mode, engine;
  int ta, tb, b[4], threads;
  if (!(in >> mode >> ta >> tb >> b[0] >> b[1] >> b[2] >> b[3] >> threads >> engine))
    return false;
  if ((mode != "serial" && mode != "threaded") || ta < 0 || ta > 1 || tb < 0 || tb > 1 ||
      threads < 1 || threads > 0xffff)
    return false;
  for (int v : b)
    if (v < 0 || v > 62) return false;
  *key = pack_key(mode == "serial", ta, tb, b, threads);
  for (int i = 0; i < kGemmEngines; ++i)
    if (engine == kNames[i] && gemm_engine_built(GemmEngine(i))) {
      *e = GemmEngine(i);
      return true;
    }
  return false;
}

std::atomic<bool> g_env_notice{false}, g_table_notice{false};

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 1);
  return "unknown cpu";
}

bool make_dir(const std::string& dir) {
  return ::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST;
}

std::string default_table_path() {
  if (const char* p = std::getenv("HMRT_GEMM_TABLE")) return p;
  std::string dir;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = x;
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = std::string(h) + "/.cache";
    if (!make_dir(dir)) return "";
  } else {
    return "";
  }
  dir += "/hmrt";
  if (!make_dir(dir)) return "";
  // FNV-1a of what makes a table valid: the CPU, the engines, the format.
  std::string id = cpu_model() + "|v1";
  for (int i = 0; i < kGemmEngines; ++i)
    if (gemm_engine_built(GemmEngine(i))) id += std::string("|") + kNames[i];
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : id) h = (h ^ ch) * 1099511628211ull;
  char name[40];
  std::snprintf(name, sizeof name, "/gemm-%016llx.tsv", (unsigned long long)h);
  return dir + name;
}

int forced_from_env() {
  const char* v = std::getenv("HMRT_GEMM");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "auto") == 0) return -1;
  for (int i = 0; i < kGemmEngines; ++i)
    if (std::strcmp(v, kNames[i]) == 0) {
      if (gemm_engine_built(GemmEngine(i))) return i;
      notice_once(g_env_notice, std::string("HMRT_GEMM=") + v +
                                    ": this runtime was built without it; choosing engines "
                                    "by measurement");
      return -1;
    }
  notice_once(g_env_notice, std::string("HMRT_GEMM=") + v +
                                ": unknown engine (own, openblas, onednn or auto); choosing "
                                "engines by measurement");
  return -1;
}

struct State {
  std::mutex mu;
  std::unordered_map<uint64_t, GemmEngine> table;
  std::string path;
  bool path_known = false;
  int forced = -2;  // -2: not read yet, -1: auto
  std::atomic<uint64_t> generation{1};
};

State& state() {
  static State s;
  return s;
}

// The table file's first line starts so; a file that does not is no table.
constexpr const char* kMagic = "# hmrt: the GEMM engine per shape class";
constexpr const char* kHeader =
    "# hmrt: the GEMM engine per shape class on this machine, by measurement.\n"
    "# mode trans_a trans_b log2(m) log2(n) log2(k) log2(batch) threads engine\n"
    "# Delete this file to measure again.\n";

// Reads every well-formed line of the table file at fd into `table`; false
// when the file holds something else than a table (it is left alone).
bool read_table(int fd, std::unordered_map<uint64_t, GemmEngine>& table) {
  std::string text;
  char buf[4096];
  ::lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
  if (!text.empty() && text.rfind(kMagic, 0) != 0) return false;
  std::istringstream in(text);
  std::string line;
  uint64_t key;
  GemmEngine e;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#' && parse_line(line, &key, &e)) table.emplace(key, e);
  return true;
}

// Times the built engines on `call`'s shape and returns the fastest, with a
// table line recording the times.
GemmEngine measure(const GemmCall& call, GemmTimer timer, std::string* line) {
  GemmEngine best = GemmEngine::own;
  double best_t = INFINITY;
  std::string times;
  double seconds[kGemmEngines];
  for (double& t : seconds) t = INFINITY;
  timer(call, seconds);
  for (int i = 0; i < kGemmEngines; ++i) {
    if (!gemm_engine_built(GemmEngine(i))) continue;
    const double t = seconds[i];
    char buf[64];
    std::snprintf(buf, sizeof buf, " %s=%.1fus", kNames[i], t * 1e6);
    times += buf;
    if (std::isfinite(t) && t >= 0 && t < best_t) {
      best_t = t;
      best = GemmEngine(i);
    }
  }
  char shape[128];
  std::snprintf(shape, sizeof shape, "\t# %lldx%lldx%lld x%lld:", (long long)call.m,
                (long long)call.n, (long long)call.k, (long long)call.batch);
  *line = key_text(class_key(call)) + " " + kNames[int(best)] + shape + times + "\n";
  return best;
}

}  // namespace

const char* gemm_engine_name(GemmEngine e) { return kNames[int(e)]; }

bool gemm_engine_built(GemmEngine e) {
  switch (e) {
    case GemmEngine::own: return true;
    case GemmEngine::openblas:
#ifdef HMRT_HAVE_CBLAS
      return true;
#else
      return false;
#endif
    case GemmEngine::onednn:
#ifdef HMRT_HAVE_DNNL
      return true;
#else
      return false;
#endif
  }
  return false;
}

GemmEngine gemm_select(const GemmCall& call, GemmTimer timer) {
  State& s = state();
  thread_local std::unordered_map<uint64_t, GemmEngine> cache;
  thread_local uint64_t cache_generation = 0;
  const uint64_t gen = s.generation.load(std::memory_order_acquire);
  if (cache_generation != gen) {
    cache.clear();
    cache_generation = gen;
  }
  const uint64_t key = class_key(call);
  if (auto it = cache.find(key); it != cache.end()) return it->second;

  std::lock_guard<std::mutex> lock(s.mu);
  if (s.forced == -2) s.forced = forced_from_env();
  if (s.forced >= 0) return cache[key] = GemmEngine(s.forced);
  if (auto it = s.table.find(key); it != s.table.end()) return cache[key] = it->second;
  if (!s.path_known) {
    s.path = default_table_path();
    s.path_known = true;
  }
  // Never through a symbolic link, never into a file that is no table.
  int fd = s.path.empty()
               ? -1
               : ::open(s.path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd >= 0 && ::flock(fd, LOCK_EX) != 0) {
    ::close(fd);
    fd = -1;
  }
  if (fd < 0 && !s.path.empty()) {
    notice_once(g_table_notice, "cannot use the GEMM engine table " + s.path + " (" +
                                    std::strerror(errno) +
                                    "); engine choices last this process only");
    s.path.clear();
  }
  if (fd >= 0 && !read_table(fd, s.table)) {
    notice_once(g_table_notice, s.path + " is not a GEMM engine table; it is left as it is, "
                                         "and engine choices last this process only");
    ::close(fd);
    fd = -1;
    s.path.clear();
  }
  GemmEngine e;
  if (auto it = s.table.find(key); it != s.table.end()) {
    e = it->second;
  } else {
    std::string line;
    e = measure(call, timer, &line);
    s.table.emplace(key, e);
    if (fd >= 0) {
      if (::lseek(fd, 0, SEEK_END) == 0) line = kHeader + line;
      if (::write(fd, line.data(), line.size()) != ssize_t(line.size()))
        notice_once(g_table_notice, "cannot extend the GEMM engine table " + s.path);
    }
  }
  if (fd >= 0) ::close(fd);  // releases the lock
  return cache[key] = e;
}

const char* gemm_select_mode() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.forced == -2) s.forced = forced_from_env();
  return s.forced >= 0 ? kNames[s.forced] : "auto";
}

void gemm_select_reset_for_test(const std::string& table, const char* forced) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.table.clear();
  s.path = table;
  s.path_known = true;
  s.forced = -1;
  for (int i = 0; i < kGemmEngines; ++i)
    if (std::strcmp(forced, kNames[i]) == 0) s.forced = i;
  s.generation.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace hmrt
