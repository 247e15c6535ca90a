// Element types and file helpers shared by the I/O code.
#include <cstdio>
#include <cstring>
#include <string>

#include "io/io_internal.h"

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace hmrt {
namespace io {

int path_kind(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? 0 : -1;
  if (S_ISLNK(st.st_mode)) return 2;
  if (S_ISREG(st.st_mode)) return 1;
  if (S_ISDIR(st.st_mode)) return 3;
  return 4;
}

bool AtomicFile::open(const std::string& path, std::string* err) {
  discard();
  path_ = path;
  const std::string base = path + ".tmp." + std::to_string((long)::getpid());
  for (int n = 0; n < 100; ++n) {
    const std::string t = n == 0 ? base : base + "." + std::to_string(n);
    const int fd = ::open(t.c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          0666);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      *err = path + ": cannot create: " + errno_text();
      return false;
    }
    f_ = ::fdopen(fd, "wb");
    if (f_ == nullptr) {
      *err = path + ": cannot create: " + errno_text();
      ::close(fd);
      ::unlink(t.c_str());
      return false;
    }
    temp_ = t;
    return true;
  }
  *err = path + ": cannot create a temporary file beside it (" + base +
         "... all exist)";
  return false;
}

void AtomicFile::discard() {
  if (f_ != nullptr) {
    std::fclose(f_);
    f_ = nullptr;
  }
  if (!temp_.empty()) {
    ::unlink(temp_.c_str());
    temp_.clear();
  }
}

bool AtomicFile::commit(bool replace, std::string* err) {
  if (f_ == nullptr) {
    *err = path_ + ": internal error: no file is open";
    return false;
  }
  const bool io_error = std::ferror(f_) != 0;
  if (io_error || !sync_file(f_)) {
    *err = path_ + ": write failed: " +
           (io_error ? std::string("error writing the file") : errno_text());
    discard();
    return false;
  }
  const int rc = std::fclose(f_);
  f_ = nullptr;
  if (rc != 0) {
    *err = path_ + ": write failed: " + errno_text();
    discard();
    return false;
  }
  const std::string appeared = path_ + ": the file appeared while train was running; it was "
                                       "left alone (pass --force to replace it)";
  int r = -1;
  if (!replace) {
#if defined(__linux__) && defined(RENAME_NOREPLACE)
    r = ::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, path_.c_str(),
                    RENAME_NOREPLACE);
    if (r != 0 && errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) {
      *err = errno == EEXIST ? appeared
                             : path_ + ": cannot rename " + temp_ + " to it: " + errno_text();
      discard();
      return false;
    }
#endif
    if (r != 0 && path_kind(path_) != 0) {
      *err = appeared;
      discard();
      return false;
    }
  }
  if (r != 0 && std::rename(temp_.c_str(), path_.c_str()) != 0) {
    *err = path_ + ": cannot rename " + temp_ + " to it: " + errno_text();
    discard();
    return false;
  }
  temp_.clear();
  // Make the rename durable.
  const std::string::size_type slash = path_.rfind('/');
  sync_dir(slash == std::string::npos ? "." : (slash == 0 ? "/" : path_.substr(0, slash)));
  return true;
}

int64_t file_size(std::FILE* f) {
  if (std::fseek(f, 0, SEEK_END) != 0) return -1;
  long n = std::ftell(f);  // long is 64-bit on LP64 targets
  if (n < 0 || std::fseek(f, 0, SEEK_SET) != 0) return -1;
  return static_cast<int64_t>(n);
}

bool seek(std::FILE* f, int64_t offset) {
  static_assert(sizeof(long) >= 8, "seek() needs a 64-bit long");
  return std::fseek(f, static_cast<long>(offset), SEEK_SET) == 0;
}

void sync_dir(const std::string& dir) {
#if defined(__unix__) || defined(__APPLE__)
  const int fd = ::open(dir.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
#else
  (void)dir;
#endif
}

bool sync_file(std::FILE* f) {
  if (std::fflush(f) != 0) return false;
#if defined(__unix__) || defined(__APPLE__)
  if (::fsync(::fileno(f)) != 0) return false;
#endif
  return true;
}

int64_t checked_count(int32_t rank, const int64_t* shape, size_t elem_size) {
  if (rank < 0 || (rank > 0 && shape == nullptr) || elem_size == 0) return -1;
  int64_t limit = INT64_MAX / static_cast<int64_t>(elem_size);
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) {
    if (shape[i] < 0) return -1;
    if (shape[i] != 0 && n > limit / shape[i]) return -1;
    n *= shape[i];
  }
  return n;
}

std::string shape_string(int32_t rank, const int64_t* shape) {
  std::string s = "[";
  for (int32_t i = 0; i < rank; ++i) {
    if (i) s += ", ";
    s += std::to_string(static_cast<long long>(shape[i]));
  }
  return s + "]";
}

}  // namespace io
}  // namespace hmrt

extern "C" {

size_t hmrt_dtype_size(int32_t dtype) {
  switch (dtype) {
    case HMRT_DTYPE_F32: return 4;
    case HMRT_DTYPE_U8: return 1;
    case HMRT_DTYPE_I8: return 1;
    case HMRT_DTYPE_I32: return 4;
    case HMRT_DTYPE_I64: return 8;
    case HMRT_DTYPE_BOOL: return 1;
    case HMRT_DTYPE_F64: return 8;
    case HMRT_DTYPE_U16: return 2;
    case HMRT_DTYPE_I16: return 2;
    case HMRT_DTYPE_F16: return 2;
    case HMRT_DTYPE_U32: return 4;
    case HMRT_DTYPE_U64: return 8;
    case HMRT_DTYPE_BF16: return 2;
  }
  return 0;
}

const char* hmrt_dtype_name(int32_t dtype) {
  switch (dtype) {
    case HMRT_DTYPE_F32: return "float32";
    case HMRT_DTYPE_U8: return "uint8";
    case HMRT_DTYPE_I8: return "int8";
    case HMRT_DTYPE_I32: return "int32";
    case HMRT_DTYPE_I64: return "int64";
    case HMRT_DTYPE_BOOL: return "bool";
    case HMRT_DTYPE_F64: return "float64";
    case HMRT_DTYPE_U16: return "uint16";
    case HMRT_DTYPE_I16: return "int16";
    case HMRT_DTYPE_F16: return "float16";
    case HMRT_DTYPE_U32: return "uint32";
    case HMRT_DTYPE_U64: return "uint64";
    case HMRT_DTYPE_BF16: return "bfloat16";
  }
  return "unknown";
}

int32_t hmrt_dtype_from_name(const char* name) {
  if (name == nullptr) return 0;
  static const int32_t all[] = {
      HMRT_DTYPE_F32, HMRT_DTYPE_U8,  HMRT_DTYPE_I8,  HMRT_DTYPE_I32,
      HMRT_DTYPE_I64, HMRT_DTYPE_BOOL, HMRT_DTYPE_F64, HMRT_DTYPE_U16,
      HMRT_DTYPE_I16, HMRT_DTYPE_F16, HMRT_DTYPE_U32, HMRT_DTYPE_U64,
      HMRT_DTYPE_BF16};
  for (int32_t d : all)
    if (std::strcmp(name, hmrt_dtype_name(d)) == 0) return d;
  return 0;
}

}  // extern "C"
