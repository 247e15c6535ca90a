// NumPy .npy files (format versions 1.0, 2.0 and 3.0).
//
// Layout: the magic "\x93NUMPY", a major and a minor version byte, the
// header length (uint16 little-endian in 1.0, uint32 in 2.0 and 3.0), then
// the header: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ending in '\n' so that the data starts at a
// multiple of 64 bytes, then the raw data.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "io/io_internal.h"

namespace {

using hmrt::fail;

struct Descr {
  const char* text;
  int32_t dtype;
};

// What hmrt_npy_write writes for each dtype (first match wins on read too;
// one-byte types may also be spelt with '<' or '=').  NumPy has no bfloat16:
// BF16 is written as '<u2' holding the raw bits, and '<u2' reads as U16.
const Descr kDescrs[] = {
    {"<f4", HMRT_DTYPE_F32}, {"<f8", HMRT_DTYPE_F64}, {"<f2", HMRT_DTYPE_F16},
    {"<i8", HMRT_DTYPE_I64}, {"<i4", HMRT_DTYPE_I32}, {"<i2", HMRT_DTYPE_I16},
    {"|u1", HMRT_DTYPE_U8},  {"|i1", HMRT_DTYPE_I8},  {"|b1", HMRT_DTYPE_BOOL},
    {"<u8", HMRT_DTYPE_U64}, {"<u4", HMRT_DTYPE_U32}, {"<u2", HMRT_DTYPE_U16},
    {"<u2", HMRT_DTYPE_BF16},
};

int32_t dtype_of_descr(const std::string& d) {
  for (const Descr& e : kDescrs)
    if (d == e.text) return e.dtype;
  if (d.size() == 3 && (d[0] == '<' || d[0] == '=')) {
    std::string alt = "|" + d.substr(1);
    for (const Descr& e : kDescrs)
      if (alt == e.text) return e.dtype;
  }
  return 0;
}

const char* descr_of_dtype(int32_t dtype) {
  for (const Descr& e : kDescrs)
    if (e.dtype == dtype) return e.text;
  return nullptr;
}

// Parser of the header's Python dict literal: string keys, values that are
// strings, True/False, or tuples of integers.
class HeaderParser {
 public:
  explicit HeaderParser(const std::string& s) : s_(s) {}

  bool parse(std::string* descr, bool* fortran, std::vector<int64_t>* shape,
             std::string* error) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    ws();
    if (!eat('{')) return err(error, "the header is not a dict");
    for (;;) {
      ws();
      if (eat('}')) break;
      std::string key;
      if (!str(&key)) return err(error, "expected a quoted key in the header");
      ws();
      if (!eat(':')) return err(error, "expected ':' after a header key");
      ws();
      if (key == "descr") {
        if (!str(descr)) {
          // A list here is a structured dtype.
          return err(error, "'descr' is not a simple type string (structured "
                            "arrays are not supported)");
        }
        have_descr = true;
      } else if (key == "fortran_order") {
        if (s_.compare(pos_, 4, "True") == 0) {
          *fortran = true;
          pos_ += 4;
        } else if (s_.compare(pos_, 5, "False") == 0) {
          *fortran = false;
          pos_ += 5;
        } else {
          return err(error, "'fortran_order' is not True or False");
        }
        have_fortran = true;
      } else if (key == "shape") {
        if (!tuple(shape)) return err(error, "'shape' is not a tuple of integers");
        have_shape = true;
      } else {
        return err(error, "unexpected key '" + key + "' in the header");
      }
      ws();
      if (eat(',')) continue;
      ws();
      if (eat('}')) break;
      return err(error, "expected ',' or '}' in the header");
    }
    if (!have_descr || !have_fortran || !have_shape)
      return err(error, "the header lacks 'descr', 'fortran_order' or 'shape'");
    ws();
    if (pos_ != s_.size()) return err(error, "unexpected text after the header dict");
    return true;
  }

 private:
  static bool err(std::string* error, const std::string& msg) {
    *error = msg;
    return false;
  }
  void ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' ||
            s_[pos_] == '\r'))
      ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool str(std::string* out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return false;
    char q = s_[pos_++];
    size_t end = s_.find(q, pos_);
    if (end == std::string::npos) return false;
    *out = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }
  bool tuple(std::vector<int64_t>* out) {
    out->clear();
    if (!eat('(')) return false;
    for (;;) {
      ws();
      if (eat(')')) return true;
      size_t start = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      if (pos_ == start || pos_ - start > 18) return false;
      out->push_back(std::strtoll(s_.substr(start, pos_ - start).c_str(),
                                  nullptr, 10));
      if (eat('L')) {}  // Python 2 long suffix
      ws();
      if (eat(',')) continue;
      ws();
      if (eat(')')) return true;
      return false;
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

extern "C" {

hmrt_status hmrt_npy_read(const char* path, hmrt_npy* out) {
  HMRT_CHECK_ARG(path != nullptr, "hmrt_npy_read: path is NULL");
  HMRT_CHECK_ARG(out != nullptr, "hmrt_npy_read: out is NULL");
  hmrt::io::File f(path, "rb");
  if (!f)
    return fail(HMRT_IO_ERROR, "%s: cannot open: %s", path,
                hmrt::io::errno_text().c_str());
  const int64_t size = hmrt::io::file_size(f.get());
  if (size < 0)
    return fail(HMRT_IO_ERROR, "%s: cannot determine the file size", path);
  unsigned char pre[12];
  if (size < 10 || std::fread(pre, 1, 10, f.get()) != 10 ||
      std::memcmp(pre, "\x93NUMPY", 6) != 0)
    return fail(HMRT_INVALID_ARGUMENT,
                "%s: not a NumPy .npy file (no \\x93NUMPY magic)", path);
  const int major = pre[6], minor = pre[7];
  uint64_t header_len;
  int64_t prefix;
  // Only what this reader implements: 1.0 (16-bit header length), 2.0
  // (32-bit) and 3.0 (as 2.0, the header UTF-8 instead of latin-1: the
  // same bytes for every header this reader accepts, whose strings are
  // ASCII).  NumPy has never written a minor version other than 0.
  if (minor != 0 || (major != 1 && major != 2 && major != 3))
    return fail(HMRT_UNIMPLEMENTED,
                "%s: .npy format version %d.%d is not supported (this reader "
                "implements 1.0, 2.0 and 3.0)",
                path, major, minor);
  if (major == 1) {
    header_len = pre[8] | (uint64_t(pre[9]) << 8);
    prefix = 10;
  } else {
    if (size < 12 || std::fread(pre + 10, 1, 2, f.get()) != 2)
      return fail(HMRT_IO_ERROR, "%s: truncated .npy header", path);
    header_len = pre[8] | (uint64_t(pre[9]) << 8) | (uint64_t(pre[10]) << 16) |
                 (uint64_t(pre[11]) << 24);
    prefix = 12;
  }
  // A header holds a short dict (NumPy itself refuses headers over 10000
  // bytes unless told otherwise); a larger length is a damaged file, and
  // reading it would only allocate memory.
  constexpr uint64_t kMaxHeader = uint64_t{1} << 20;
  if (header_len > kMaxHeader)
    return fail(HMRT_INVALID_ARGUMENT,
                "%s: the .npy header length is %llu bytes, more than the %llu "
                "this reader accepts",
                path, (unsigned long long)header_len,
                (unsigned long long)kMaxHeader);
  if (static_cast<int64_t>(header_len) > size - prefix)
    return fail(HMRT_IO_ERROR, "%s: truncated .npy header", path);
  std::string header(header_len, '\0');
  if (header_len > 0 &&
      std::fread(&header[0], 1, header_len, f.get()) != header_len)
    return fail(HMRT_IO_ERROR, "%s: cannot read the .npy header", path);

  std::string descr, error;
  bool fortran = false;
  std::vector<int64_t> shape;
  if (!HeaderParser(header).parse(&descr, &fortran, &shape, &error))
    return fail(HMRT_INVALID_ARGUMENT, "%s: malformed .npy header: %s", path,
                error.c_str());
  const int32_t dtype = dtype_of_descr(descr);
  if (dtype == 0)
    return fail(HMRT_UNIMPLEMENTED,
                "%s: unsupported .npy dtype '%s' (supported: <f4, <f8, <f2, "
                "<i8, <i4, <i2, |i1, <u8, <u4, <u2, |u1, |b1; little-endian)",
                path, descr.c_str());
  if (fortran)
    return fail(HMRT_UNIMPLEMENTED,
                "%s: the array is in Fortran order; only C order is supported "
                "(save np.ascontiguousarray(a))",
                path);
  if (shape.size() > HMRT_NPY_MAX_RANK)
    return fail(HMRT_UNIMPLEMENTED, "%s: rank %zu exceeds the maximum of %d",
                path, shape.size(), HMRT_NPY_MAX_RANK);
  const size_t elem = hmrt_dtype_size(dtype);
  const int64_t count = hmrt::io::checked_count(
      static_cast<int32_t>(shape.size()), shape.data(), elem);
  if (count < 0)
    return fail(HMRT_INVALID_ARGUMENT, "%s: the shape %s is too large", path,
                hmrt::io::shape_string(static_cast<int32_t>(shape.size()),
                                       shape.data())
                    .c_str());
  const int64_t bytes = count * static_cast<int64_t>(elem);
  const int64_t data_at = prefix + static_cast<int64_t>(header_len);
  if (size - data_at < bytes)
    return fail(HMRT_IO_ERROR,
                "%s: truncated: the header promises %lld bytes of data but "
                "the file has %lld",
                path, (long long)bytes, (long long)(size - data_at));
  if (size - data_at > bytes)
    return fail(HMRT_IO_ERROR,
                "%s: %lld unexpected bytes after the %lld bytes of data", path,
                (long long)(size - data_at - bytes), (long long)bytes);

  void* data = nullptr;
  if (bytes > 0) {
    data = std::malloc(static_cast<size_t>(bytes));
    if (data == nullptr)
      return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate %lld bytes", path,
                  (long long)bytes);
    if (std::fread(data, 1, static_cast<size_t>(bytes), f.get()) !=
        static_cast<size_t>(bytes)) {
      std::free(data);
      return fail(HMRT_IO_ERROR, "%s: cannot read the data", path);
    }
  }
  if (dtype == HMRT_DTYPE_BOOL) {
    const unsigned char* b = static_cast<const unsigned char*>(data);
    for (int64_t i = 0; i < count; ++i) {
      if (b[i] > 1) {
        const unsigned value = b[i];
        std::free(data);
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: bool element %lld is %u, not 0 or 1", path,
                    (long long)i, value);
      }
    }
  }
  hmrt_npy r;
  std::memset(&r, 0, sizeof(r));
  r.dtype = dtype;
  r.rank = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) r.shape[i] = shape[i];
  r.count = count;
  r.bytes = static_cast<uint64_t>(bytes);
  r.data = data;
  *out = r;
  return HMRT_OK;
}

void hmrt_npy_free(hmrt_npy* npy) {
  if (npy == nullptr) return;
  std::free(npy->data);
  std::memset(npy, 0, sizeof(*npy));
}

hmrt_status hmrt_npy_write(const char* path, int32_t dtype, int32_t rank,
                           const int64_t* shape, const void* data) {
  HMRT_CHECK_ARG(path != nullptr, "hmrt_npy_write: path is NULL");
  const char* descr = descr_of_dtype(dtype);
  HMRT_CHECK_ARG(descr != nullptr, "hmrt_npy_write: %s: invalid dtype %d", path,
                 dtype);
  HMRT_CHECK_ARG(rank >= 0 && rank <= HMRT_NPY_MAX_RANK,
                 "hmrt_npy_write: %s: rank %d is outside [0, %d]", path, rank,
                 HMRT_NPY_MAX_RANK);
  const size_t elem = hmrt_dtype_size(dtype);
  const int64_t count = hmrt::io::checked_count(rank, shape, elem);
  HMRT_CHECK_ARG(count >= 0, "hmrt_npy_write: %s: invalid shape", path);
  const int64_t bytes = count * static_cast<int64_t>(elem);
  HMRT_CHECK_ARG(data != nullptr || bytes == 0,
                 "hmrt_npy_write: %s: data is NULL", path);

  std::string dict = "{'descr': '";
  dict += descr;
  dict += "', 'fortran_order': False, 'shape': (";
  for (int32_t i = 0; i < rank; ++i) {
    dict += std::to_string(static_cast<long long>(shape[i]));
    if (rank == 1 || i + 1 < rank) dict += rank == 1 ? "," : ", ";
  }
  dict += "), }";
  // Version 1.0 unless the header does not fit its 16-bit length.
  int major = 1;
  size_t prefix = 10;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  if (total - prefix > 65535) {
    major = 2;
    prefix = 12;
    total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  }
  const size_t header_len = total - prefix;
  std::string head = "\x93NUMPY";
  head.push_back(static_cast<char>(major));
  head.push_back('\0');
  for (size_t i = 0; i < prefix - 8; ++i)
    head.push_back(static_cast<char>((header_len >> (8 * i)) & 0xff));
  head += dict;
  head.append(header_len - dict.size() - 1, ' ');
  head.push_back('\n');

  // Written beside `path` and renamed into place: a failure leaves a
  // previous file whole, and a symbolic link at `path` is replaced, never
  // written through.
  hmrt::io::AtomicFile f;
  std::string err;
  if (!f.open(path, &err)) return fail(HMRT_IO_ERROR, "%s", err.c_str());
  bool ok = std::fwrite(head.data(), 1, head.size(), f.get()) == head.size();
  if (ok && bytes > 0)
    ok = std::fwrite(data, 1, static_cast<size_t>(bytes), f.get()) ==
         static_cast<size_t>(bytes);
  if (!ok) {
    const std::string why = hmrt::io::errno_text();
    return fail(HMRT_IO_ERROR, "%s: write failed: %s", path, why.c_str());
  }
  if (!f.commit(/*replace=*/true, &err))
    return fail(HMRT_IO_ERROR, "%s", err.c_str());
  return HMRT_OK;
}

}  // extern "C"
