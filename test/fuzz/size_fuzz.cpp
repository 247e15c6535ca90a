//===- size_fuzz.cpp - parseSize and the formatters on any text -----------===//
//
// Beyond not crashing, what lib/support/Size.h promises:
//  - allowZero only decides about zero;
//  - white space around the text does not matter;
//  - a size parsed is below 2^64 and reads back from its decimal digits, with
//    or without B, and from whole K/M/G/T multiples;
//  - formatBytes(size) has three significant digits: its number times its
//    unit is within half a unit of the third digit (0.5 %) of the size, and
//    parseSize takes the text back (to the same bytes when they are whole);
//  - formatCount(size) is the digits with a comma every three.
//
//===----------------------------------------------------------------------===//
#include "lib/support/Size.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace {

[[noreturn]] void die(const std::string &text, const std::string &what) {
  fprintf(stderr, "==hmcc-fuzz== size '%s': %s\n", text.c_str(), what.c_str());
  abort();
}

/// The value, or nullopt (the error consumed).
std::optional<uint64_t> parse(const std::string &text, bool allowZero,
                              std::string *message = nullptr) {
  auto v = hmcc::parseSize(text, allowZero);
  if (v)
    return *v;
  std::string m = llvm::toString(v.takeError());
  if (m.find("'" + text + "'") == std::string::npos)
    die(text, "the message does not quote the text: " + m);
  if (message)
    *message = m;
  return std::nullopt;
}

void checkFormatBytes(uint64_t bytes) {
  std::string text = hmcc::formatBytes(bytes);
  // NUMBER UNIT, the unit B (then the number is the bytes) or KiB .. PiB.
  size_t space = text.find(' ');
  if (space == std::string::npos)
    die(text, "formatBytes wrote no unit");
  std::string number = text.substr(0, space), unit = text.substr(space + 1);
  int shift = unit == "B" ? 0 : unit == "KiB" ? 10 : unit == "MiB" ? 20 : unit == "GiB" ? 30
              : unit == "TiB" ? 40 : unit == "PiB" ? 50 : -1;
  if (shift < 0)
    die(text, "formatBytes wrote an unknown unit");
  if (shift == 0 && number != std::to_string(bytes))
    die(text, "formatBytes(" + std::to_string(bytes) + ") is not the byte count");
  long double shown = std::ldexp(std::strtold(number.c_str(), nullptr), shift);
  long double exact = static_cast<long double>(bytes);
  if (std::fabs(shown - exact) > 0.005L * exact + 0.5L)
    die(text, "formatBytes(" + std::to_string(bytes) + ") is off by more than 0.5 %");
  std::string message;
  std::optional<uint64_t> back = parse(text, /*allowZero=*/true, &message);
  bool whole = shown == std::floor(shown);
  // Rounded up to three digits, a size just below 2^64 can read as 2^64 or
  // more, which parseSize rightly calls too large.
  bool tooLarge = shown >= 18446744073709551615.0L && message.find("too large") != std::string::npos;
  if (!back && !tooLarge && (whole || message.find("not a whole number") == std::string::npos))
    die(text, "parseSize does not take formatBytes(" + std::to_string(bytes) +
                  ") back: " + message);
  if (back && *back != static_cast<uint64_t>(shown))
    die(text, "parseSize(formatBytes(" + std::to_string(bytes) + ")) is " +
                  std::to_string(*back));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::optional<uint64_t> zeroOk = parse(text, true);
  std::optional<uint64_t> strict = parse(text, false);
  if (strict && (!zeroOk || *zeroOk != *strict || *strict == 0))
    die(text, "allowZero=false took what allowZero=true did not, or zero");
  if (zeroOk && *zeroOk != 0 && !strict)
    die(text, "allowZero=false refused a size that is not zero");
  if (parse(" \t" + text + "\n ", true) != zeroOk)
    die(text, "white space around it changes the value");
  if (!zeroOk)
    return 0;

  uint64_t v = *zeroOk;
  if (v == UINT64_MAX)
    die(text, "2^64 - 1 is out of range");
  std::string digits = std::to_string(v);
  if (parse(digits, true) != v || parse(digits + "B", true) != v || parse(digits + " B", true) != v)
    die(text, "its decimal digits " + digits + " read back differently");
  const char *units[] = {"K", "M", "G", "T"};
  for (int k = 0; k < 4; ++k) {
    int shift = 10 * (k + 1);
    if (v != 0 && v % (uint64_t(1) << shift) == 0 &&
        parse(std::to_string(v >> shift) + units[k] + "iB", true) != v)
      die(text, "its whole multiple of " + std::string(units[k]) + " reads back differently");
  }
  checkFormatBytes(v);

  std::string count = hmcc::formatCount(v), plain;
  for (size_t i = 0; i < count.size(); ++i) {
    if (count[i] == ',') {
      if ((count.size() - i) % 4 != 0 || i == 0)
        die(text, "formatCount wrote a comma out of place: " + count);
    } else {
      plain += count[i];
    }
  }
  if (plain != digits)
    die(text, "formatCount(" + digits + ") is " + count);
  (void)hmcc::formatFlops(v);
  return 0;
}
