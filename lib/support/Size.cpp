//===- Size.cpp - byte sizes written like 24G, 512M, 1.5T -----------------===//
#include "lib/support/Size.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>

namespace hmcc {

static llvm::Error sizeError(llvm::StringRef text, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "invalid size '" + text + "': " + why +
                                     " (write e.g. 24G, 512M, 1.5T or a byte count)");
}

llvm::Expected<uint64_t> parseSize(llvm::StringRef text, bool allowZero) {
  llvm::StringRef s = text.trim();
  size_t numberEnd = 0;
  bool seenDot = false, seenDigit = false;
  while (numberEnd < s.size()) {
    char c = s[numberEnd];
    if (c >= '0' && c <= '9') {
      seenDigit = true;
    } else if (c == '.' && !seenDot) {
      seenDot = true;
    } else {
      break;
    }
    ++numberEnd;
  }
  if (!seenDigit)
    return sizeError(text, s.starts_with("-") ? "sizes cannot be negative"
                                              : "it does not start with a number");
  llvm::StringRef number = s.take_front(numberEnd);
  llvm::StringRef unit = s.drop_front(numberEnd).trim();
  int shift = llvm::StringSwitch<int>(unit.upper())
                  .Cases({"", "B"}, 0)
                  .Cases({"K", "KB", "KIB"}, 10)
                  .Cases({"M", "MB", "MIB"}, 20)
                  .Cases({"G", "GB", "GIB"}, 30)
                  .Cases({"T", "TB", "TIB"}, 40)
                  .Cases({"P", "PB", "PIB"}, 50)
                  .Default(-1);
  if (shift < 0)
    return sizeError(text, "unknown unit '" + unit + "'");
  long double value = std::strtold(number.str().c_str(), nullptr);
  long double bytes = std::ldexp(value, shift);
  if (bytes >= 18446744073709551615.0L)
    return sizeError(text, "too large");
  if (bytes != std::floor(bytes))
    return sizeError(text, "not a whole number of bytes");
  if (bytes == 0 && !allowZero)
    return sizeError(text, "must be greater than zero");
  return static_cast<uint64_t>(bytes);
}

namespace {

/// `n` in the largest of `units` (each `base` times the one before) that
/// keeps it at least 1, with three significant digits; whole in the first.
std::string scaled(uint64_t n, double base, llvm::ArrayRef<const char *> units) {
  double value = static_cast<double>(n);
  size_t unit = 0;
  while (value >= base && unit + 1 < units.size()) {
    value /= base;
    ++unit;
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  if (unit == 0)
    os << n << " " << units[0];
  else if (value >= 100)
    os << llvm::format("%.0f %s", value, units[unit]);
  else if (value >= 10)
    os << llvm::format("%.1f %s", value, units[unit]);
  else
    os << llvm::format("%.2f %s", value, units[unit]);
  return out;
}

} // namespace

std::string formatBytes(uint64_t bytes) {
  return scaled(bytes, 1024.0, {"B", "KiB", "MiB", "GiB", "TiB", "PiB"});
}

std::string formatFlops(uint64_t flops) {
  return scaled(flops, 1000.0, {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"});
}

std::string formatSeconds(double seconds) {
  char text[32];
  auto put = [&](double v, const char *unit) {
    std::snprintf(text, sizeof text, v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v,
                  unit);
    return std::string(text);
  };
  if (seconds >= 1 || seconds == 0)
    return put(seconds, "s");
  if (seconds >= 1e-3)
    return put(seconds * 1e3, "ms");
  return put(seconds * 1e6, "us");
}

std::string formatCount(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

} // namespace hmcc
