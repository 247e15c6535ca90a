// The generated fused programs a program registered (cuda/fused_generated.h).
#include "cuda/fused_generated.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "core/internal.h"

namespace hmrt {
namespace cuda {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<const GeneratedFused*> programs;
};

Registry& registry() {
  static Registry r;
  return r;
}

bool matches(const GeneratedFused& g, const int64_t* code, int64_t n_code, int64_t n_in) {
  return g.n_code == n_code && g.n_in == n_in &&
         std::memcmp(g.code, code, size_t(4 * n_code) * sizeof(int64_t)) == 0;
}

bool interpreter_only() {
  static const bool only = interpreter_requested(std::getenv("HMRT_CUDA_FUSED"));
  return only;
}

}  // namespace

bool interpreter_requested(const char* value) {
  if (value == nullptr || *value == '\0' || std::strcmp(value, "generated") == 0) return false;
  if (std::strcmp(value, "interpreter") == 0) return true;
  static std::atomic<bool> noticed{false};
  notice_once(noticed, "HMRT_CUDA_FUSED=" + escape_controls(value) +
                           ": unknown (generated or interpreter); running the generated fused "
                           "kernels");
  return false;
}

int register_generated_fused(const GeneratedFused* table, int count) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (int k = 0; k < count; ++k) r.programs.push_back(table + k);
  return count;
}

const GeneratedFused* find_generated_fused(const int64_t* code, int64_t n_code, int64_t n_in) {
  if (interpreter_only()) return nullptr;
  // A program has a handful of them: a search of their code costs next to
  // nothing beside a launch.
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const GeneratedFused* g : r.programs)
    if (matches(*g, code, n_code, n_in)) return g;
  return nullptr;
}

}  // namespace cuda
}  // namespace hmrt
