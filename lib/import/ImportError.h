//===- ImportError.h - how the importer's steps report failure --*- C++ -*-===//
//
// Every step of the import stops at the first error by throwing ImportError;
// importOnnxModel catches it and prefixes the model's path, so messages read
// "PATH: what went wrong". The messages are part of hmcc's interface (the lit
// tests check them): change them with care.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_IMPORT_IMPORTERROR_H
#define HMCC_IMPORT_IMPORTERROR_H

#include "lib/support/Text.h"

#include <string>

namespace hmcc::import {

/// A failed import; `message` does not name the file (the caller adds it).
struct ImportError {
  std::string message;
};

[[noreturn]] inline void fail(const std::string &message) { throw ImportError{message}; }

/// 'name', for names inside messages; control characters and invalid
/// UTF-8 are escaped (escapeText), so a message stays one line.
inline std::string quote(const std::string &s) { return "'" + escapeText(s) + "'"; }

} // namespace hmcc::import

#endif // HMCC_IMPORT_IMPORTERROR_H
