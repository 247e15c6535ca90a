//===- Memory.cpp - how much memory this process may use ------------------===//
#include "lib/support/Memory.h"

#include <algorithm>
#include <cstdio>

#include <sys/resource.h>
#include <unistd.h>

namespace {

/// The bytes of this process's address space now (/proc/self/statm's first
/// field), 0 where that cannot be read.
uint64_t addressSpaceBytes() {
  unsigned long long pages = 0;
  if (std::FILE *f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%llu", &pages) != 1)
      pages = 0;
    std::fclose(f);
  }
  long pageSize = sysconf(_SC_PAGESIZE);
  return pageSize > 0 ? pages * static_cast<uint64_t>(pageSize) : 0;
}

} // namespace

uint64_t hmcc::usableMemoryBytes() {
  uint64_t bytes = UINT64_MAX;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    bytes = static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    uint64_t used = addressSpaceBytes();
    bytes = std::min<uint64_t>(bytes, limit.rlim_cur > used ? limit.rlim_cur - used : 0);
  }
  return bytes;
}
