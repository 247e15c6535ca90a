// Helpers shared by the runtime's I/O files (npy, tokens, checkpoints).
// Internal: not installed, not part of the C API.
#ifndef HMRT_IO_INTERNAL_H
#define HMRT_IO_INTERNAL_H

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/internal.h"
#include "hmrt/io.h"

namespace hmrt {
namespace io {

// strerror(errno) captured right after a failing call.
inline std::string errno_text() { return std::strerror(errno); }

// Closes the FILE on scope exit unless released.
class File {
 public:
  File() = default;
  File(const char* path, const char* mode) : f_(std::fopen(path, mode)) {}
  ~File() {
    if (f_) std::fclose(f_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  // Opens `path`, closing what was open; false on failure (see errno).
  bool open(const char* path, const char* mode) {
    if (f_) std::fclose(f_);
    f_ = std::fopen(path, mode);
    return f_ != nullptr;
  }
  std::FILE* get() const { return f_; }
  explicit operator bool() const { return f_ != nullptr; }
  // Closes and reports whether every write reached the OS (fclose flushes).
  bool close() {
    if (!f_) return true;
    int rc = std::fclose(f_);
    f_ = nullptr;
    return rc == 0;
  }

 private:
  std::FILE* f_ = nullptr;
};

// A file written beside its target and renamed into place once complete, so
// that a failure leaves the previous file (if any) whole:
//   AtomicFile f;
//   if (!f.open(path, &err)) ...;      // creates "<path>.tmp.<pid>[.<n>]"
//   fwrite(..., f.get()); ...
//   if (!f.commit(replace, &err)) ...; // flush, fsync, close, rename
// The temporary is created exclusively (O_EXCL | O_NOFOLLOW: never through a
// symbolic link) with mode 0666 & ~umask, and removed when the object is
// destroyed without a successful commit.  commit(false) refuses to replace
// an existing target (renameat2 RENAME_NOREPLACE where the file system has
// it, else a check before the rename); commit(true) replaces it.  rename()
// replaces a symbolic link at the target itself, never what it points to.
// Messages in *err are one line naming the file.
class AtomicFile {
 public:
  AtomicFile() = default;
  ~AtomicFile() { discard(); }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  bool open(const std::string& path, std::string* err);
  std::FILE* get() const { return f_; }
  bool commit(bool replace, std::string* err);
  // Closes and removes the temporary (no-op when none is open).
  void discard();

 private:
  std::string path_, temp_;
  std::FILE* f_ = nullptr;
};

// What is at `path` without following a final symbolic link: 0 nothing,
// 1 a regular file, 2 a symbolic link, 3 a directory, 4 something else; -1
// when it cannot be inspected (errno set).
int path_kind(const std::string& path);

// Size of an open file in bytes, or -1.
int64_t file_size(std::FILE* f);

// Seeks to an absolute byte offset (64-bit safe); false on failure.
bool seek(std::FILE* f, int64_t offset);

// Flushes f and asks the OS to write it to disk (fsync on POSIX); false on
// failure.
bool sync_file(std::FILE* f);
// fsyncs the directory `dir`, so a rename in it is durable (best effort).
void sync_dir(const std::string& dir);

// Element count of a shape, or -1 when a dimension is negative or the count
// or its byte size would overflow int64 for elements of `elem_size` bytes.
int64_t checked_count(int32_t rank, const int64_t* shape, size_t elem_size);

// "[2, 3]"
std::string shape_string(int32_t rank, const int64_t* shape);

// Size of the pieces hmrt_checkpoint_save/load move through their staging
// buffer (default 64 MiB; 0 restores it).  For tests of the piecewise path.
void set_checkpoint_stage_bytes(uint64_t bytes);

}  // namespace io
}  // namespace hmrt

#endif  // HMRT_IO_INTERNAL_H
