// Element types and file helpers shared by the I/O code.
#include <cstdio>
#include <cstring>
#include <string>

#include "io/io_internal.h"

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

namespace hmrt {
namespace io {

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
