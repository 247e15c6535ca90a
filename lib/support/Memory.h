//===- Memory.h - how much memory this process may use ----------*- C++ -*-===//
#ifndef HMCC_SUPPORT_MEMORY_H
#define HMCC_SUPPORT_MEMORY_H

#include <cstdint>

namespace hmcc {

/// The bytes this process may still allocate at most: the machine's
/// physical memory, or what the address-space limit (ulimit -v) leaves of
/// it beside the address space in use now, when that is lower.
uint64_t usableMemoryBytes();

} // namespace hmcc

#endif // HMCC_SUPPORT_MEMORY_H
