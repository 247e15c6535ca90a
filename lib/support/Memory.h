//===- Memory.h - how much memory this process may use ----------*- C++ -*-===//
#ifndef HMCC_SUPPORT_MEMORY_H
#define HMCC_SUPPORT_MEMORY_H

#include <cstdint>

namespace hmcc {

/// The bytes this process may allocate at most: the machine's physical
/// memory, or the address-space limit (ulimit -v) when that is lower.
uint64_t usableMemoryBytes();

} // namespace hmcc

#endif // HMCC_SUPPORT_MEMORY_H
