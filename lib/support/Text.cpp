//===- Text.cpp - model-provided text made safe for one-line messages -----===//
#include "lib/support/Text.h"

#include "llvm/Support/ConvertUTF.h"

using llvm::StringRef;

namespace hmcc {

std::string escapeText(llvm::StringRef text) {
  static const char *hex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto escapeByte = [&](unsigned char c) {
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  };
  for (size_t k = 0; k < text.size();) {
    unsigned char c = text[k];
    if (c < 0x80) {
      if (c == '\n')
        out += "\\n";
      else if (c == '\t')
        out += "\\t";
      else if (c == '\r')
        out += "\\r";
      else if (c < 0x20 || c == 0x7f)
        escapeByte(c);
      else
        out += static_cast<char>(c);
      ++k;
      continue;
    }
    // A multi-byte sequence: kept when it is valid UTF-8 and not a C1
    // control character (U+0080..U+009F).
    unsigned length = llvm::getNumBytesForUTF8(c);
    const auto *begin = reinterpret_cast<const llvm::UTF8 *>(text.data() + k);
    if (k + length <= text.size() && llvm::isLegalUTF8Sequence(begin, begin + length) &&
        !(c == 0xc2 && static_cast<unsigned char>(text[k + 1]) < 0xa0)) {
      out.append(text.data() + k, length);
      k += length;
    } else {
      escapeByte(c);
      ++k;
    }
  }
  return out;
}

std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t k = 0; k < shape.size(); ++k)
    s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + "]";
}

std::string firstLine(llvm::StringRef text) {
  text = text.trim();
  auto [first, rest] = text.split('\n');
  std::string line = first.rtrim().str();
  size_t more = 0;
  for (StringRef r = rest; !r.empty();) {
    auto [l, next] = r.split('\n');
    more += !l.trim().empty();
    r = next;
  }
  if (more)
    line += " (" + std::to_string(more) + " more line" + (more == 1 ? "; --verbose prints it)"
                                                                    : "s; --verbose prints them)");
  return line;
}

} // namespace hmcc
