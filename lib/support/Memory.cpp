//===- Memory.cpp - how much memory this process may use ------------------===//
#include "lib/support/Memory.h"

#include <algorithm>

#include <sys/resource.h>
#include <unistd.h>

uint64_t hmcc::usableMemoryBytes() {
  uint64_t bytes = UINT64_MAX;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    bytes = static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    bytes = std::min<uint64_t>(bytes, limit.rlim_cur);
  return bytes;
}
