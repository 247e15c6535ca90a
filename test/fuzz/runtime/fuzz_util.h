// Shared by the runtime's libFuzzer targets (npy_fuzz.cpp, tokens_fuzz.cpp,
// checkpoint_fuzz.cpp): a private temporary directory for the inputs, and
// the checks every failing call must pass.
//
// The inputs are written as files because the readers take paths (hmrt has
// no in-memory entry points).  Everything goes under one directory created
// with mkdtemp in $TMPDIR (else /tmp) when the process starts and removed
// when it exits; nothing is written anywhere else.
#ifndef HMRT_FUZZ_UTIL_H
#define HMRT_FUZZ_UTIL_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "hmrt/hmrt.h"

namespace hmrt_fuzz {

// Stops the fuzzer with a message: an invariant of the reader is broken.
[[noreturn]] inline void broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "INVARIANT BROKEN: %s: %s\n", what, detail.c_str());
  std::abort();
}

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") +
                        "/hmrt_fuzz.XXXXXX";
    if (::mkdtemp(&templ[0]) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const {
    return path_ + "/" + name;
  }

 private:
  std::string path_;
};

// The process's directory (a function-local static: removed at exit).
inline const TempDir& dir() {
  static TempDir d;
  return d;
}

inline void write_file(const std::string& path, const uint8_t* data,
                       size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) broken("cannot create an input file", path);
  if (size > 0 && std::fwrite(data, 1, size, f) != size)
    broken("cannot write an input file", path);
  if (std::fclose(f) != 0) broken("cannot write an input file", path);
}

// A failing call of the C API must leave one line naming `name` (a file or
// directory) in hmrt_last_error().
inline void check_failure(hmrt_status st, const std::string& name) {
  const std::string msg = hmrt_last_error();
  if (st == HMRT_OK) return;
  if (msg.empty()) broken("an error without a message", name);
  if (msg.find('\n') != std::string::npos)
    broken("a message of more than one line", msg);
  if (msg.find(name) == std::string::npos)
    broken("a message that does not name the file", msg);
}

}  // namespace hmrt_fuzz

#endif  // HMRT_FUZZ_UTIL_H
