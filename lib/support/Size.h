//===- Size.h - byte sizes written like 24G, 512M, 1.5T ---------*- C++ -*-===//
#ifndef HMCC_SUPPORT_SIZE_H
#define HMCC_SUPPORT_SIZE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace hmcc {

/// Parses a byte size: a non-negative decimal number, optionally with a
/// fraction, followed by an optional unit K, M, G, T or P (binary: 1K = 1024
/// bytes; formatBytes writes up to PiB), optionally written KB/KiB, MB/MiB,
/// ... (also binary) or B for
/// bytes. Examples: "24G", "512M", "1.5T", "4096", "64KiB". Fails with a
/// message that quotes the text on anything else, on zero when `allowZero`
/// is false, and on values that overflow 64 bits.
llvm::Expected<uint64_t> parseSize(llvm::StringRef text, bool allowZero = false);

/// Formats bytes with a binary unit and three significant digits, e.g.
/// "160 KiB", "1.50 GiB", "512 B".
std::string formatBytes(uint64_t bytes);

/// Formats a FLOP count with a decimal unit and three significant digits,
/// e.g. "114 kFLOP", "8.89 GFLOP".
std::string formatFlops(uint64_t flops);

/// Formats a duration with three significant digits, e.g. "412 us",
/// "12.3 ms", "1.50 s".
std::string formatSeconds(double seconds);

/// Formats an integer with thousands separators, e.g. "1,234,567".
std::string formatCount(uint64_t n);

} // namespace hmcc

#endif // HMCC_SUPPORT_SIZE_H
