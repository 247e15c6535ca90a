//===- Text.h - model-provided text made safe for one-line messages -*- C++ -*-===//
#ifndef HMCC_SUPPORT_TEXT_H
#define HMCC_SUPPORT_TEXT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace hmcc {

/// `text` with control characters written as \n, \t, \r or \xNN, and bytes
/// that are not valid UTF-8 as \xNN; valid UTF-8 is kept as it is. Names
/// read from a model go through this before they appear in a message, so a
/// message stays one line and shows exactly what the file holds.
std::string escapeText(llvm::StringRef text);

/// A shape as messages write it: "[2, 3]".
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// The first line of `text` (without trailing spaces); when more lines
/// follow, says how many and that --verbose prints them.
std::string firstLine(llvm::StringRef text);

} // namespace hmcc

#endif // HMCC_SUPPORT_TEXT_H
