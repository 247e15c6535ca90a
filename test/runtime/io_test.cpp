// File I/O (hmrt/io.h): .npy, token data and the batch rule, checkpoints;
// and the JSON helpers around nlohmann/json they use (io/json_util.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "hmrt/io.h"
#include "io/io_internal.h"
#include "io/json_util.h"
#include "io_test_util.h"
#include "test_util.h"

namespace {

// `text` (a manifest) with its "manifest_crc32" made right for what precedes
// it, so an edit is refused for what it changed, not for the checksum.
std::string resealed(const std::string& text) {
  const size_t at = text.rfind("\"manifest_crc32\": ");
  return text.substr(0, at) + "\"manifest_crc32\": " +
         std::to_string(hmrt_crc32(0, text.data(), at)) + "\n}\n";
}

namespace fs = std::filesystem;
using hmrt_test::contains;
using hmrt_test::le;
using hmrt_test::read_bytes;
using hmrt_test::TempDir;
using hmrt_test::write_bytes;

std::string last_error() { return hmrt_last_error(); }

// ---- JSON ---------------------------------------------------------------------

using hmrt::json::Json;
using hmrt::json::member;

TEST(IoJson, ParsesValues) {
  Json v;
  std::string err;
  ASSERT_TRUE(hmrt::json::parse(
      " {\"a\": [1, -2, 3.5, 1e3, 18446744073709551615, -0], \"s\": "
      "\"x\\\"\\\\\\n\\u00e9\\ud83d\\ude00\", \"t\": true, \"f\": false, "
      "\"n\": null, \"o\": {}} ",
      &v, &err))
      << err;
  ASSERT_TRUE(v.is_object());
  const Json* a = member(v, "a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->size(), 6u);
  int64_t i = 0;
  uint64_t u = 0;
  EXPECT_TRUE(hmrt::json::get_int64((*a)[0], &i));
  EXPECT_EQ(i, 1);
  EXPECT_TRUE(hmrt::json::get_int64((*a)[1], &i));
  EXPECT_EQ(i, -2);
  EXPECT_FALSE(hmrt::json::get_uint64((*a)[1], &u));
  EXPECT_FALSE(hmrt::json::get_int64((*a)[2], &i));
  EXPECT_EQ((*a)[2].get<double>(), 3.5);
  EXPECT_FALSE(hmrt::json::get_int64((*a)[3], &i));  // 1e3 is written as a float
  EXPECT_EQ((*a)[3].get<double>(), 1000.0);
  EXPECT_FALSE(hmrt::json::get_int64((*a)[4], &i));  // above INT64_MAX
  EXPECT_TRUE(hmrt::json::get_uint64((*a)[4], &u));
  EXPECT_EQ(u, UINT64_MAX);
  EXPECT_TRUE(hmrt::json::get_uint64((*a)[5], &u));  // "-0"
  EXPECT_EQ(u, 0u);
  EXPECT_EQ(member(v, "s")->get<std::string>(), "x\"\\\n\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_TRUE(member(v, "t")->get<bool>());
  EXPECT_FALSE(member(v, "f")->get<bool>());
  EXPECT_TRUE(member(v, "n")->is_null());
  EXPECT_EQ(member(v, "missing"), nullptr);
  EXPECT_EQ(member(*a, "a"), nullptr);  // not an object
}

TEST(IoJson, ErrorsHaveLineAndColumn) {
  const char* bad[] = {"", "{", "{\"a\" 1}", "[1,]", "[1 2]", "01", "\"abc",
                       "tru", "{\"a\": 1} x", "\"\\x\"", "\"\\ud800\"", "-",
                       "\"\xff\""};
  for (const char* text : bad) {
    Json v;
    std::string err;
    EXPECT_FALSE(hmrt::json::parse(text, &v, &err)) << text;
    EXPECT_TRUE(err.rfind("line 1, column", 0) == 0) << text << ": " << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
  Json v;
  std::string err;
  EXPECT_FALSE(hmrt::json::parse("{\n  \"a\": 1,\n  \"b\": ?\n}", &v, &err));
  EXPECT_TRUE(contains(err, "line 3, column 8")) << err;
  // Deep nesting is neither a crash nor an error (nlohmann parses and frees
  // without recursion).
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(hmrt::json::parse(deep, &v, &err)) << err;
}

TEST(IoJson, QuoteRoundTrips) {
  const std::string s = std::string("a\"b\\c\n\t\x01 z\xc3\xa9", 13);
  Json v;
  std::string err;
  ASSERT_TRUE(hmrt::json::parse(hmrt::json::quote(s), &v, &err)) << err;
  EXPECT_EQ(v.get<std::string>(), s);
  EXPECT_TRUE(hmrt::json::is_utf8(s));
  // Bytes that are not UTF-8 cannot be JSON text: quote replaces them.
  EXPECT_FALSE(hmrt::json::is_utf8("a\xff"));
  EXPECT_EQ(hmrt::json::quote("a\xff"), "\"a\xef\xbf\xbd\"");
  EXPECT_EQ(hmrt::json::number_f32(NAN), "null");
  EXPECT_EQ(hmrt::json::number_f32(0.1f), "0.100000001");
}

// ---- dtypes and CRC ---------------------------------------------------------------

TEST(IoDtype, SizesAndNames) {
  EXPECT_EQ(hmrt_dtype_size(HMRT_DTYPE_F32), 4u);
  EXPECT_EQ(hmrt_dtype_size(HMRT_DTYPE_F64), 8u);
  EXPECT_EQ(hmrt_dtype_size(HMRT_DTYPE_I64), 8u);
  EXPECT_EQ(hmrt_dtype_size(HMRT_DTYPE_I32), 4u);
  EXPECT_EQ(hmrt_dtype_size(HMRT_DTYPE_U8), 1u);
  EXPECT_EQ(hmrt_dtype_size(HMRT_DTYPE_I8), 1u);
  EXPECT_EQ(hmrt_dtype_size(HMRT_DTYPE_BOOL), 1u);
  EXPECT_EQ(hmrt_dtype_size(HMRT_DTYPE_U16), 2u);
  EXPECT_EQ(hmrt_dtype_size(HMRT_DTYPE_I16), 2u);
  EXPECT_EQ(hmrt_dtype_size(HMRT_DTYPE_F16), 2u);
  EXPECT_EQ(hmrt_dtype_size(HMRT_DTYPE_U32), 4u);
  EXPECT_EQ(hmrt_dtype_size(HMRT_DTYPE_U64), 8u);
  EXPECT_EQ(hmrt_dtype_size(HMRT_DTYPE_BF16), 2u);
  EXPECT_EQ(hmrt_dtype_size(0), 0u);
  EXPECT_EQ(hmrt_dtype_size(8), 0u);   // string: not supported
  EXPECT_EQ(hmrt_dtype_size(14), 0u);  // complex64: not supported
  // ONNX's numbering.
  EXPECT_EQ(HMRT_DTYPE_U16, 4);
  EXPECT_EQ(HMRT_DTYPE_I16, 5);
  EXPECT_EQ(HMRT_DTYPE_F16, 10);
  EXPECT_EQ(HMRT_DTYPE_U32, 12);
  EXPECT_EQ(HMRT_DTYPE_U64, 13);
  EXPECT_EQ(HMRT_DTYPE_BF16, 16);
  for (int32_t d : {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 16})
    EXPECT_EQ(hmrt_dtype_from_name(hmrt_dtype_name(d)), d);
  EXPECT_STREQ(hmrt_dtype_name(HMRT_DTYPE_F16), "float16");
  EXPECT_STREQ(hmrt_dtype_name(HMRT_DTYPE_BF16), "bfloat16");
  EXPECT_STREQ(hmrt_dtype_name(HMRT_DTYPE_U64), "uint64");
  EXPECT_STREQ(hmrt_dtype_name(HMRT_DTYPE_I16), "int16");
  EXPECT_STREQ(hmrt_dtype_name(42), "unknown");
  EXPECT_EQ(hmrt_dtype_from_name("complex64"), 0);
  EXPECT_EQ(hmrt_dtype_from_name(nullptr), 0);
}

TEST(IoCrc32, MatchesZlib) {
  EXPECT_EQ(hmrt_crc32(0, "123456789", 9), 0xCBF43926u);
  EXPECT_EQ(hmrt_crc32(0, nullptr, 0), 0u);
  std::string data;
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 256; ++i) data.push_back(static_cast<char>(i));
  // Python: zlib.crc32(bytes(range(256)) * 3)
  EXPECT_EQ(hmrt_crc32(0, data.data(), data.size()), 2965430058u);
  // Piecewise at every split equals the whole.
  for (size_t split : {size_t{1}, size_t{7}, size_t{8}, size_t{100}, size_t{767}})
    EXPECT_EQ(hmrt_crc32(hmrt_crc32(0, data.data(), split), data.data() + split,
                         data.size() - split),
              2965430058u);
}

// ---- .npy ------------------------------------------------------------------------

// The header numpy.save writes for the dict literal `dict` (format 1.0,
// padded with spaces so the data starts at a multiple of 64 bytes).
std::string numpy_header(const std::string& dict) {
  std::string h = "\x93NUMPY";
  h.push_back('\x01');
  h.push_back('\x00');
  size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;
  size_t len = total - 10;
  h += le(len, 2);
  h += dict;
  h.append(len - dict.size() - 1, ' ');
  h += "\n";
  return h;
}

TEST(IoNpy, RoundTripEveryDtypeAndShape) {
  TempDir dir;
  const int32_t dtypes[] = {HMRT_DTYPE_F32, HMRT_DTYPE_F64, HMRT_DTYPE_I64,
                            HMRT_DTYPE_I32, HMRT_DTYPE_U8,  HMRT_DTYPE_I8,
                            HMRT_DTYPE_BOOL, HMRT_DTYPE_F16, HMRT_DTYPE_U16,
                            HMRT_DTYPE_I16, HMRT_DTYPE_U32, HMRT_DTYPE_U64,
                            HMRT_DTYPE_BF16};
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {5}, {2, 3, 4}, {1, 1, 1, 1, 2}, {3, 0, 2}};
  for (int32_t dtype : dtypes) {
    for (const auto& shape : shapes) {
      SCOPED_TRACE(std::string(hmrt_dtype_name(dtype)) + " rank " +
                   std::to_string(shape.size()));
      int64_t count = 1;
      for (int64_t d : shape) count *= d;
      std::vector<unsigned char> data(count * hmrt_dtype_size(dtype));
      for (size_t i = 0; i < data.size(); ++i)
        data[i] = dtype == HMRT_DTYPE_BOOL ? (i % 3 == 0) : (i * 37 + 11) & 0xff;
      const std::string path = dir / "a.npy";
      HMRT_ASSERT_OK(hmrt_npy_write(path.c_str(), dtype,
                                    static_cast<int32_t>(shape.size()),
                                    shape.data(), data.data()));
      const std::string bytes = read_bytes(path);
      ASSERT_GE(bytes.size(), 64u);
      EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
      EXPECT_EQ((bytes.size() - data.size()) % 64, 0u);  // data 64-aligned
      hmrt_npy npy;
      HMRT_ASSERT_OK(hmrt_npy_read(path.c_str(), &npy));
      // NumPy has no bfloat16: its raw bits come back as uint16.
      EXPECT_EQ(npy.dtype, dtype == HMRT_DTYPE_BF16 ? HMRT_DTYPE_U16 : dtype);
      ASSERT_EQ(npy.rank, static_cast<int32_t>(shape.size()));
      for (size_t i = 0; i < shape.size(); ++i) EXPECT_EQ(npy.shape[i], shape[i]);
      EXPECT_EQ(npy.count, count);
      ASSERT_EQ(npy.bytes, data.size());
      if (!data.empty()) {
        ASSERT_NE(npy.data, nullptr);
        EXPECT_EQ(std::memcmp(npy.data, data.data(), data.size()), 0);
      }
      hmrt_npy_free(&npy);
      EXPECT_EQ(npy.data, nullptr);
    }
  }
  hmrt_npy_free(nullptr);
}

TEST(IoNpy, WritesTheHeaderNumpyWrites) {
  TempDir dir;
  const int64_t shape[] = {2, 3};
  const float data[6] = {0};
  HMRT_ASSERT_OK(
      hmrt_npy_write((dir / "a.npy").c_str(), HMRT_DTYPE_F32, 2, shape, data));
  const std::string want =
      numpy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(read_bytes(dir / "a.npy").substr(0, want.size()), want);
  const int64_t one[] = {5};
  EXPECT_EQ(
      hmrt_npy_write((dir / "b.npy").c_str(), HMRT_DTYPE_I64, 1, one, nullptr),
      HMRT_INVALID_ARGUMENT);
  const int64_t v[5] = {1, 2, 3, 4, 5};
  HMRT_ASSERT_OK(
      hmrt_npy_write((dir / "b.npy").c_str(), HMRT_DTYPE_I64, 1, one, v));
  EXPECT_TRUE(contains(read_bytes(dir / "b.npy"), "'shape': (5,), }"));
  HMRT_ASSERT_OK(
      hmrt_npy_write((dir / "c.npy").c_str(), HMRT_DTYPE_BOOL, 0, nullptr,
                     "\x01"));
  EXPECT_TRUE(contains(read_bytes(dir / "c.npy"), "'descr': '|b1'"));
  EXPECT_TRUE(contains(read_bytes(dir / "c.npy"), "'shape': (), }"));
  // The 16-bit and unsigned types; bfloat16 as its raw bits in '<u2'.
  const struct {
    int32_t dtype;
    const char* descr;
  } kinds[] = {{HMRT_DTYPE_F16, "<f2"}, {HMRT_DTYPE_BF16, "<u2"},
               {HMRT_DTYPE_U16, "<u2"}, {HMRT_DTYPE_I16, "<i2"},
               {HMRT_DTYPE_U32, "<u4"}, {HMRT_DTYPE_U64, "<u8"}};
  const uint64_t zeros[5] = {0, 0, 0, 0, 0};
  for (const auto& k : kinds) {
    const std::string path = dir / "d.npy";
    HMRT_ASSERT_OK(hmrt_npy_write(path.c_str(), k.dtype, 1, one, zeros));
    EXPECT_EQ(read_bytes(path),
              numpy_header(std::string("{'descr': '") + k.descr +
                           "', 'fortran_order': False, 'shape': (5,), }") +
                  std::string(5 * hmrt_dtype_size(k.dtype), '\0'))
        << k.descr;
  }
}

// Files as numpy.save writes them for float16, bfloat16 bits and uint64.
TEST(IoNpy, ReadsSixteenBitAndUnsignedTypes) {
  TempDir dir;
  struct Case {
    const char* descr;
    std::string payload;
    int32_t dtype;
  } cases[] = {
      {"<f2", le(0x3C00, 2) + le(0xC000, 2), HMRT_DTYPE_F16},  // [1, -2]
      {"<u2", le(0x3F80, 2) + le(0xC000, 2), HMRT_DTYPE_U16},  // bf16 bits
      {"<i2", le(0xFFFF, 2) + le(7, 2), HMRT_DTYPE_I16},
      {"<u4", le(0xFFFFFFFF, 4) + le(7, 4), HMRT_DTYPE_U32},
      {"<u8", le(7, 8) + std::string(8, '\xff'), HMRT_DTYPE_U64},
  };
  for (const Case& c : cases) {
    write_bytes(dir / "a.npy",
                numpy_header(std::string("{'descr': '") + c.descr +
                             "', 'fortran_order': False, 'shape': (2,), }") +
                    c.payload);
    hmrt_npy npy;
    HMRT_ASSERT_OK(hmrt_npy_read((dir / "a.npy").c_str(), &npy));
    EXPECT_EQ(npy.dtype, c.dtype) << c.descr;
    EXPECT_EQ(npy.count, 2);
    ASSERT_EQ(npy.bytes, c.payload.size());
    EXPECT_EQ(std::memcmp(npy.data, c.payload.data(), c.payload.size()), 0);
    hmrt_npy_free(&npy);
  }
}

TEST(IoNpy, ReadsOtherHeaderSpellings) {
  TempDir dir;
  const std::string payload = le(7, 4) + le(8, 4);
  struct Case {
    std::string header;
  } cases[] = {
      // Keys in another order, double quotes, Python 2 long suffix, no
      // trailing comma.
      {numpy_header("{\"shape\": (2L,), \"fortran_order\": False, \"descr\": "
                    "\"<i4\"}")},
      {numpy_header("{'descr':'<i4','fortran_order':False,'shape':(2,)}")},
  };
  for (const Case& c : cases) {
    write_bytes(dir / "a.npy", c.header + payload);
    hmrt_npy npy;
    HMRT_ASSERT_OK(hmrt_npy_read((dir / "a.npy").c_str(), &npy));
    EXPECT_EQ(npy.dtype, HMRT_DTYPE_I32);
    EXPECT_EQ(npy.rank, 1);
    EXPECT_EQ(npy.shape[0], 2);
    EXPECT_EQ(static_cast<int32_t*>(npy.data)[1], 8);
    hmrt_npy_free(&npy);
  }
  // Format 2.0: a 4-byte header length.
  std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
  size_t total = (12 + dict.size() + 1 + 63) / 64 * 64;
  std::string h = std::string("\x93NUMPY\x02\x00", 8) + le(total - 12, 4) + dict;
  h.append(total - 12 - dict.size() - 1, ' ');
  h += "\n";
  write_bytes(dir / "v2.npy", h + payload);
  hmrt_npy npy;
  HMRT_ASSERT_OK(hmrt_npy_read((dir / "v2.npy").c_str(), &npy));
  EXPECT_EQ(static_cast<int32_t*>(npy.data)[0], 7);
  hmrt_npy_free(&npy);
  // Format 3.0: as 2.0, the header in UTF-8 (the same bytes here).
  h[6] = '\x03';
  write_bytes(dir / "v3.npy", h + payload);
  HMRT_ASSERT_OK(hmrt_npy_read((dir / "v3.npy").c_str(), &npy));
  EXPECT_EQ(static_cast<int32_t*>(npy.data)[1], 8);
  hmrt_npy_free(&npy);
}

// Reading `bytes` as an .npy fails with `status` and a message naming the
// file and containing `needle`.
void expect_npy_error(const std::string& bytes, hmrt_status status,
                      const std::string& needle) {
  TempDir dir;
  const std::string path = dir / "bad.npy";
  write_bytes(path, bytes);
  hmrt_npy npy;
  std::memset(&npy, 0x5a, sizeof(npy));
  EXPECT_EQ(hmrt_npy_read(path.c_str(), &npy), status) << needle;
  EXPECT_TRUE(contains(last_error(), path)) << last_error();
  EXPECT_TRUE(contains(last_error(), needle)) << last_error();
  EXPECT_EQ(npy.rank, 0x5a5a5a5a);  // untouched on failure
  EXPECT_EQ(last_error().find('\n'), std::string::npos) << last_error();
}

TEST(IoNpy, ErrorsNameTheFile) {
  const std::string f4 =
      numpy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }");
  expect_npy_error(numpy_header("{'descr': '<f4', 'fortran_order': True, "
                                "'shape': (2, 2), }") +
                       std::string(16, '\0'),
                   HMRT_UNIMPLEMENTED, "Fortran order");
  for (const char* descr : {">f4", ">f2", ">u2", "<c8", "<f16", "|O", "<U3", "|V8"}) {
    expect_npy_error(numpy_header(std::string("{'descr': '") + descr +
                                  "', 'fortran_order': False, 'shape': (1,), "
                                  "}") +
                         std::string(16, '\0'),
                     HMRT_UNIMPLEMENTED,
                     std::string("unsupported .npy dtype '") + descr + "'");
  }
  expect_npy_error(numpy_header("{'descr': [('a', '<f4')], 'fortran_order': "
                                "False, 'shape': (1,), }"),
                   HMRT_INVALID_ARGUMENT, "structured");
  expect_npy_error(f4 + std::string(7, '\0'), HMRT_IO_ERROR, "truncated");
  expect_npy_error(f4 + std::string(9, '\0'), HMRT_IO_ERROR,
                   "1 unexpected bytes after");
  expect_npy_error("PK\x03\x04 not numpy", HMRT_INVALID_ARGUMENT, "not a NumPy");
  expect_npy_error(std::string("\x93NUMPY\x04\x00", 8) + le(0, 2),
                   HMRT_UNIMPLEMENTED, "version 4.0");
  // Only the versions the reader implements: not 1.1, 2.1, 3.5 or 0.0, also
  // when the rest of the file is a valid 1.0 file.
  for (const auto& v : {std::make_pair(1, 1), std::make_pair(2, 1),
                        std::make_pair(3, 5), std::make_pair(0, 0)}) {
    std::string bad = f4 + std::string(8, '\0');
    bad[6] = static_cast<char>(v.first);
    bad[7] = static_cast<char>(v.second);
    expect_npy_error(bad, HMRT_UNIMPLEMENTED,
                     ".npy format version " + std::to_string(v.first) + "." +
                         std::to_string(v.second) +
                         " is not supported (this reader implements 1.0, 2.0 "
                         "and 3.0)");
  }
  // Sizes: a header length past the file or past 1 MiB; a shape whose byte
  // size overflows 64 bits; one that the file does not hold.
  expect_npy_error(std::string("\x93NUMPY\x02\x00", 8) + le(0xffffffffu, 4) + "{",
                   HMRT_INVALID_ARGUMENT, "header length is 4294967295 bytes");
  expect_npy_error(std::string("\x93NUMPY\x02\x00", 8) + le(1000, 4) + "{",
                   HMRT_IO_ERROR, "truncated .npy header");
  expect_npy_error(std::string("\x93NUMPY\x02\x00\x01\x00", 10),
                   HMRT_IO_ERROR, "truncated .npy header");
  expect_npy_error(numpy_header("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (1000000000000000, 10000), }"),
                   HMRT_INVALID_ARGUMENT, "the shape [1000000000000000, 10000] "
                                          "is too large");
  expect_npy_error(numpy_header("{'descr': '<f8', 'fortran_order': False, "
                                "'shape': (3037000500, 3037000500), }"),
                   HMRT_INVALID_ARGUMENT, "is too large");
  expect_npy_error(numpy_header("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (100000000000000000,), }") +
                       std::string(8, '\0'),
                   HMRT_IO_ERROR, "truncated: the header promises "
                                  "400000000000000000 bytes of data but the "
                                  "file has 8");
  expect_npy_error(numpy_header("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (1000000000000000000000,), }"),
                   HMRT_INVALID_ARGUMENT, "'shape' is not a tuple of integers");
  expect_npy_error(numpy_header("{'descr': '<f4', 'shape': (2,), }"),
                   HMRT_INVALID_ARGUMENT, "lacks");
  // Text quoted from the file stays on one line (found by npy_fuzz: a key
  // holding a newline).
  expect_npy_error(numpy_header("{'descr': '<f4','f\n\x01': 1, }"),
                   HMRT_INVALID_ARGUMENT, "unexpected key 'f\\n\\x01' in the header");
  expect_npy_error(numpy_header("{'descr': '<f\r4', 'fortran_order': False, "
                                "'shape': (1,), }"),
                   HMRT_UNIMPLEMENTED, "unsupported .npy dtype '<f\\r4'");
  expect_npy_error(numpy_header("{'descr': '|b1', 'fortran_order': False, "
                                "'shape': (3,), }") +
                       std::string("\x01\x02\x00", 3),
                   HMRT_INVALID_ARGUMENT, "bool element 1 is 2");
  expect_npy_error(std::string("\x93NUMPY\x01\x00", 8) + le(500, 2) + "{",
                   HMRT_IO_ERROR, "truncated .npy header");

  hmrt_npy npy;
  EXPECT_EQ(hmrt_npy_read("/nonexistent/dir/x.npy", &npy), HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "/nonexistent/dir/x.npy: cannot open"))
      << last_error();
}

TEST(IoNpy, WriteErrors) {
  TempDir dir;
  const int64_t shape[] = {2};
  const float data[2] = {1, 2};
  EXPECT_EQ(hmrt_npy_write((dir / "a.npy").c_str(), 8, 1, shape, data),
            HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "invalid dtype 8")) << last_error();
  std::vector<int64_t> big(HMRT_NPY_MAX_RANK + 1, 1);
  EXPECT_EQ(hmrt_npy_write((dir / "a.npy").c_str(), HMRT_DTYPE_F32,
                           HMRT_NPY_MAX_RANK + 1, big.data(), data),
            HMRT_INVALID_ARGUMENT);
  const int64_t neg[] = {-1};
  EXPECT_EQ(hmrt_npy_write((dir / "a.npy").c_str(), HMRT_DTYPE_F32, 1, neg, data),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_npy_write((dir / "no/such/dir/a.npy").c_str(), HMRT_DTYPE_F32,
                           1, shape, data),
            HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "no/such/dir/a.npy: cannot create"))
      << last_error();
}

// ---- token data ---------------------------------------------------------------------

std::string raw_tokens(const std::vector<int64_t>& ids, int width) {
  std::string s;
  for (int64_t id : ids) s += le(static_cast<uint64_t>(id), width);
  return s;
}

std::string llmc_tokens(const std::vector<int64_t>& ids, int32_t magic,
                        int32_t version, int width,
                        int64_t count = INT64_MIN) {
  std::string header =
      le(static_cast<uint32_t>(magic), 4) +
      le(static_cast<uint32_t>(version), 4) +
      le(static_cast<uint32_t>(count == INT64_MIN ? int64_t(ids.size()) : count),
         4);
  header.append(1024 - header.size(), '\0');
  return header + raw_tokens(ids, width);
}

std::vector<int64_t> read_all(hmrt_tokens* t) {
  std::vector<int64_t> out(hmrt_tokens_count(t));
  EXPECT_EQ(hmrt_tokens_read(t, 0, out.size(), out.data()), HMRT_OK)
      << last_error();
  return out;
}

// hmrt_npy_write writes beside the file and renames: a failed write leaves
// the previous file whole, and a symbolic link is replaced, never written
// through.
TEST(IoNpy, WriteReplacesWholeOrNotAtAll) {
  TempDir dir;
  const std::string path = dir / "a.npy";
  const int64_t small_shape[] = {2};
  const float small[2] = {1, 2};
  HMRT_ASSERT_OK(hmrt_npy_write(path.c_str(), HMRT_DTYPE_F32, 1, small_shape, small));
  const std::string before = read_bytes(path);
  const int64_t big_shape[] = {4096};
  std::vector<float> big(4096, 3.0f);
  {
    hmrt_test::FileSizeLimit limit(8192);
    EXPECT_EQ(hmrt_npy_write(path.c_str(), HMRT_DTYPE_F32, 1, big_shape, big.data()),
              HMRT_IO_ERROR);
  }
  EXPECT_TRUE(contains(last_error(), path + ": write failed: File too large"))
      << last_error();
  EXPECT_EQ(read_bytes(path), before);
  for (const auto& e : fs::directory_iterator(dir.str()))
    EXPECT_EQ(e.path().filename().string(), "a.npy");

  const std::string target = dir / "target", link = dir / "link.npy";
  write_bytes(target, "precious");
  fs::create_symlink(target, link);
  HMRT_ASSERT_OK(hmrt_npy_write(link.c_str(), HMRT_DTYPE_F32, 1, small_shape, small));
  EXPECT_EQ(read_bytes(target), "precious");
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_EQ(read_bytes(link), before);
}

TEST(IoTokens, RawUint16AndUint32) {
  TempDir dir;
  const std::vector<int64_t> ids = {0, 1, 65535, 300, 7, 50256};
  write_bytes(dir / "a.bin", raw_tokens(ids, 2));
  hmrt_tokens* t = nullptr;
  HMRT_ASSERT_OK(hmrt_tokens_open((dir / "a.bin").c_str(), 0, &t));
  EXPECT_EQ(hmrt_tokens_count(t), 6);
  EXPECT_EQ(hmrt_tokens_width(t), 2);
  EXPECT_EQ(read_all(t), ids);
  std::vector<int64_t> w(2);
  HMRT_ASSERT_OK(hmrt_tokens_read(t, 2, 2, w.data()));
  EXPECT_EQ(w, (std::vector<int64_t>{65535, 300}));
  EXPECT_EQ(hmrt_tokens_read(t, 5, 2, w.data()), HMRT_OUT_OF_RANGE);
  EXPECT_TRUE(contains(last_error(), "tokens [5, 5 + 2) are outside the file's 6"))
      << last_error();
  EXPECT_EQ(hmrt_tokens_read(t, -1, 1, w.data()), HMRT_OUT_OF_RANGE);
  hmrt_tokens_close(t);

  const std::vector<int64_t> big = {0, 100000, 4294967295LL, 128000};
  write_bytes(dir / "b.bin", raw_tokens(big, 4));
  HMRT_ASSERT_OK(hmrt_tokens_open((dir / "b.bin").c_str(), 4, &t));
  EXPECT_EQ(hmrt_tokens_width(t), 4);
  EXPECT_EQ(read_all(t), big);
  hmrt_tokens_close(t);
  hmrt_tokens_close(nullptr);
  EXPECT_EQ(hmrt_tokens_count(nullptr), 0);

  write_bytes(dir / "odd.bin", std::string(7, '\0'));
  EXPECT_EQ(hmrt_tokens_open((dir / "odd.bin").c_str(), 4, &t),
            HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "odd.bin: 7 bytes is not a whole number "
                                     "of uint32 tokens"))
      << last_error();
  EXPECT_EQ(hmrt_tokens_open((dir / "a.bin").c_str(), 3, &t),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_tokens_open((dir / "missing.bin").c_str(), 0, &t),
            HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "missing.bin: cannot open the token data"))
      << last_error();
  // Odd sizes: one byte, and an odd number of bytes of uint16 tokens; an
  // empty file has no tokens (a batch then needs more).
  write_bytes(dir / "one.bin", std::string(1, '\x01'));
  EXPECT_EQ(hmrt_tokens_open((dir / "one.bin").c_str(), 0, &t),
            HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "one.bin: 1 bytes is not a whole number "
                                     "of uint16 tokens"))
      << last_error();
  write_bytes(dir / "empty.bin", "");
  HMRT_ASSERT_OK(hmrt_tokens_open((dir / "empty.bin").c_str(), 0, &t));
  EXPECT_EQ(hmrt_tokens_count(t), 0);
  std::vector<int64_t> tok(2), tgt(2);
  EXPECT_EQ(hmrt_tokens_batch(t, 1, 1, 1, 2, 0, tok.data(), tgt.data()),
            HMRT_INVALID_ARGUMENT);
  hmrt_tokens_close(t);
}

TEST(IoTokens, LlmcHeaders) {
  TempDir dir;
  std::vector<int64_t> ids(300);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = (i * 7919) % 50257;
  write_bytes(dir / "gpt2.bin", llmc_tokens(ids, 20240520, 1, 2));
  hmrt_tokens* t = nullptr;
  HMRT_ASSERT_OK(hmrt_tokens_open((dir / "gpt2.bin").c_str(), 0, &t));
  EXPECT_EQ(hmrt_tokens_count(t), 300);
  EXPECT_EQ(hmrt_tokens_width(t), 2);
  EXPECT_EQ(read_all(t), ids);
  hmrt_tokens_close(t);
  HMRT_ASSERT_OK(hmrt_tokens_open((dir / "gpt2.bin").c_str(), 2, &t));
  hmrt_tokens_close(t);
  EXPECT_EQ(hmrt_tokens_open((dir / "gpt2.bin").c_str(), 4, &t),
            HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "the llm.c header says uint16 tokens, but "
                                     "uint32 was requested"))
      << last_error();

  std::vector<int64_t> big(260);
  for (size_t i = 0; i < big.size(); ++i) big[i] = 100000 + i * 97;
  write_bytes(dir / "llama3.bin", llmc_tokens(big, 20240801, 7, 4));
  HMRT_ASSERT_OK(hmrt_tokens_open((dir / "llama3.bin").c_str(), 0, &t));
  EXPECT_EQ(hmrt_tokens_width(t), 4);
  EXPECT_EQ(read_all(t), big);
  hmrt_tokens_close(t);

  write_bytes(dir / "v2.bin", llmc_tokens(ids, 20240520, 2, 4));
  EXPECT_EQ(hmrt_tokens_open((dir / "v2.bin").c_str(), 0, &t),
            HMRT_UNIMPLEMENTED);
  EXPECT_TRUE(contains(last_error(), "unsupported version 2")) << last_error();

  write_bytes(dir / "short.bin", llmc_tokens(ids, 20240520, 1, 2, 301));
  EXPECT_EQ(hmrt_tokens_open((dir / "short.bin").c_str(), 0, &t),
            HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "promises 301 tokens")) << last_error();
  // Counts that are negative or far past the file (2^31 - 1 uint32 tokens:
  // more than 2^32 bytes, computed in 64 bits).
  write_bytes(dir / "neg.bin", llmc_tokens(ids, 20240520, 1, 2, -5));
  EXPECT_EQ(hmrt_tokens_open((dir / "neg.bin").c_str(), 0, &t), HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "promises -5 tokens")) << last_error();
  write_bytes(dir / "huge.bin", llmc_tokens(big, 20240801, 7, 4, 2147483647));
  EXPECT_EQ(hmrt_tokens_open((dir / "huge.bin").c_str(), 0, &t), HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "promises 2147483647 tokens (8589934588 "
                                     "bytes of data) but the file has 1040 "
                                     "bytes"))
      << last_error();
}

// An independent implementation of the documented rule.
uint64_t sm64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

TEST(IoBatch, SplitmixAndTheRule) {
  EXPECT_EQ(hmrt_splitmix64(0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(hmrt_splitmix64(1), 0x910A2DEC89025CC1ull);
  // Values computed from the README's formula in Python.
  EXPECT_EQ(hmrt_batch_start(1, 1, 4, 0, 1000, 16), 527);
  EXPECT_EQ(hmrt_batch_start(1, 1, 4, 3, 1000, 16), 399);
  EXPECT_EQ(hmrt_batch_start(1, 2, 4, 1, 1000, 16), 221);
  for (uint64_t seed : {0ull, 1ull, 12345ull, ~0ull})
    for (int64_t step = 1; step < 50; ++step)
      for (int64_t b = 0; b < 3; ++b)
        EXPECT_EQ(hmrt_batch_start(seed, step, 3, b, 777, 10),
                  int64_t(sm64(seed ^ sm64(uint64_t(step * 3 + b))) % 767));
  // Invalid arguments.
  EXPECT_EQ(hmrt_batch_start(1, 0, 4, 0, 1000, 16), -1);
  EXPECT_EQ(hmrt_batch_start(1, 1, 4, 4, 1000, 16), -1);
  EXPECT_EQ(hmrt_batch_start(1, 1, 4, 0, 16, 16), -1);
  EXPECT_EQ(hmrt_batch_start(1, 1, 4, 0, 17, 16), 0);  // exactly one window
}

class IoBatchFile : public ::testing::Test {
 protected:
  void SetUp() override {
    // data[i] = i % 60000, so a token's value tells its position.
    std::vector<int64_t> ids(5000);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = i % 60000;
    write_bytes(dir_ / "data.bin", raw_tokens(ids, 2));
    HMRT_ASSERT_OK(hmrt_tokens_open((dir_ / "data.bin").c_str(), 0, &t_));
  }
  void TearDown() override { hmrt_tokens_close(t_); }
  TempDir dir_;
  hmrt_tokens* t_ = nullptr;
};

TEST_F(IoBatchFile, TokensAndTargetsFollowTheRule) {
  const int64_t B = 3, T = 32;
  std::vector<int64_t> tok(B * T), tgt(B * T);
  for (int64_t step = 1; step <= 20; ++step) {
    HMRT_ASSERT_OK(hmrt_tokens_batch(t_, 42, step, B, T, 0, tok.data(), tgt.data()));
    for (int64_t b = 0; b < B; ++b) {
      const int64_t start = hmrt_batch_start(42, step, B, b, 5000, T);
      ASSERT_GE(start, 0);
      ASSERT_LT(start, 5000 - T);
      for (int64_t i = 0; i < T; ++i) {
        EXPECT_EQ(tok[b * T + i], start + i);
        EXPECT_EQ(tgt[b * T + i], start + i + 1);
      }
    }
  }
  // Either output may be NULL.
  HMRT_ASSERT_OK(hmrt_tokens_batch(t_, 42, 1, B, T, 0, nullptr, tgt.data()));
}

TEST_F(IoBatchFile, DeterministicAndSeeded) {
  const int64_t B = 4, T = 8;
  auto draw = [&](uint64_t seed, int64_t step) {
    std::vector<int64_t> tok(B * T);
    EXPECT_EQ(hmrt_tokens_batch(t_, seed, step, B, T, 0, tok.data(), nullptr),
              HMRT_OK);
    return tok;
  };
  EXPECT_EQ(draw(1, 5), draw(1, 5));
  EXPECT_NE(draw(1, 5), draw(2, 5));
  EXPECT_NE(draw(1, 5), draw(1, 6));
  // Starts cover the file roughly uniformly and never leave it.
  std::set<int64_t> starts;
  for (int64_t step = 1; step <= 500; ++step)
    for (int64_t b = 0; b < B; ++b) {
      const int64_t s = hmrt_batch_start(7, step, B, b, 5000, T);
      ASSERT_GE(s, 0);
      ASSERT_LE(s + T + 1, 5000);
      starts.insert(s / 500);
    }
  EXPECT_EQ(starts.size(), 10u);  // every tenth of the file was drawn
}

TEST_F(IoBatchFile, TooShortAndVocabErrors) {
  std::vector<int64_t> tok(5000), tgt(5000);
  EXPECT_EQ(hmrt_tokens_batch(t_, 1, 1, 1, 5000, 0, tok.data(), tgt.data()),
            HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "data.bin: the file has 5000 tokens, fewer "
                                     "than one batch row needs"))
      << last_error();
  HMRT_ASSERT_OK(hmrt_tokens_batch(t_, 1, 1, 1, 4999, 0, tok.data(), tgt.data()));
  EXPECT_EQ(tok[0], 0);  // the only window starts at 0

  // With a vocabulary of 4000 ids, the window [0, 5000) holds 4000 first.
  EXPECT_EQ(hmrt_tokens_batch(t_, 1, 1, 1, 4999, 4000, tok.data(), tgt.data()),
            HMRT_OUT_OF_RANGE);
  EXPECT_TRUE(contains(last_error(), "data.bin: token at position 4000 is 4000, "
                                     "not below the vocabulary size 4000"))
      << last_error();
  EXPECT_EQ(hmrt_tokens_batch(t_, 1, 0, 1, 8, 0, tok.data(), tgt.data()),
            HMRT_INVALID_ARGUMENT);
  // Sizes whose arithmetic would overflow are errors, not wrapped values:
  // seq_len + 1 and batch x seq_len.
  EXPECT_EQ(hmrt_tokens_batch(t_, 1, 1, 1, INT64_MAX, 0, tok.data(), tgt.data()),
            HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "fewer than one batch row needs"))
      << last_error();
  EXPECT_EQ(hmrt_tokens_batch(t_, 1, 1, INT64_MAX / 2, 3, 0, tok.data(),
                              tgt.data()),
            HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "overflows")) << last_error();
}

// ---- checkpoints ---------------------------------------------------------------------

// A program with two parameters and one state (descriptors only; the
// checkpoint code never calls step or forward).
struct FakeProgram {
  int64_t w_shape[2] = {3, 5};
  int64_t s_shape[1] = {7};
  hmrt_tensor_desc params[2];
  hmrt_tensor_desc states[1];
  hmrt_program program;
  FakeProgram() {
    params[0] = {"layer.w", HMRT_DTYPE_F32, 2, w_shape, 0, 60, 0,
                 HMRT_TIER_DEVICE, 0, nullptr};
    params[1] = {"step_count", HMRT_DTYPE_I64, 0, nullptr, 64, 8, 0,
                 HMRT_TIER_DEVICE, 0, nullptr};
    states[0] = {"layer.w.m", HMRT_DTYPE_F64, 1, s_shape, 128, 56, 0,
                 HMRT_TIER_DEVICE, 0, nullptr};
    std::memset(&program, 0, sizeof(program));
    program.abi_version = HMRT_PROGRAM_ABI_VERSION;
    program.model_name = "fake";
    program.backend = "cpu";
    program.arena_bytes = 192;
    program.num_params = 2;
    program.params = params;
    program.num_states = 1;
    program.states = states;
    program.hyper = {HMRT_OPT_ADAMW, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.0f,
                     1.0f, HMRT_LR_COSINE, 10, 100, 1e-4f};
  }
};

class IoCheckpoint : public ::testing::Test {
 protected:
  // The checkpoint functions see the program's arenas only through the
  // execution context; the test fills the device arena through its
  // host-visible base (the CPU backend has one).
  void SetUp() override {
    HMRT_ASSERT_OK(hmrt_device_open("cpu", &device_));
    const uint64_t bytes[HMRT_TIER_COUNT] = {192, 192, 192};
    HMRT_ASSERT_OK(hmrt_exec_create(device_, bytes, &arena_));
    base_ = hmrt_exec_base(arena_, HMRT_TIER_DEVICE);
    ASSERT_NE(base_, nullptr) << hmrt_last_error();
    fill(1);
  }
  void TearDown() override {
    hmrt_exec_destroy(arena_);
    hmrt_device_close(device_);
    hmrt::io::set_checkpoint_stage_bytes(0);
  }
  void fill(int salt) {
    std::memset(base_, 0, 192);
    float* w = reinterpret_cast<float*>(base_);
    for (int i = 0; i < 15; ++i) w[i] = 0.25f * i + salt;
    *reinterpret_cast<int64_t*>(base_ + 64) = 1000 + salt;
    double* m = reinterpret_cast<double*>(base_ + 128);
    for (int i = 0; i < 7; ++i) m[i] = -1.5 * i * salt;
  }
  hmrt_checkpoint_meta meta(int64_t step) {
    hmrt_checkpoint_meta m;
    std::memset(&m, 0, sizeof(m));
    m.step = step;
    m.data_position = step * 2;
    m.seed = 0x8000000000000005ull;  // above 2^63: exact in the manifest
    return m;
  }
  std::string ckpt() const { return dir_ / "ckpt"; }
  // The fake program's tensors as hmrt_checkpoint_write takes them, with
  // the values of `w` (15), `count` and `mom` (7).
  std::vector<hmrt_checkpoint_tensor> listed(const float* w, const int64_t* count,
                                             const double* mom) const {
    return {{"layer.w", HMRT_KIND_PARAM, HMRT_DTYPE_F32, 2, fake_.w_shape, w},
            {"step_count", HMRT_KIND_PARAM, HMRT_DTYPE_I64, 0, nullptr, count},
            {"layer.w.m", HMRT_KIND_STATE, HMRT_DTYPE_F64, 1, fake_.s_shape, mom}};
  }

  TempDir dir_;
  FakeProgram fake_;
  hmrt_device* device_ = nullptr;
  hmrt_exec* arena_ = nullptr;  // the program's execution context
  uint8_t* base_ = nullptr;     // its device arena
};

TEST_F(IoCheckpoint, SaveLoadRoundTrip) {
  const hmrt_checkpoint_meta m = meta(12);
  HMRT_ASSERT_OK(hmrt_checkpoint_save(ckpt().c_str(), &fake_.program, arena_, &m));
  std::vector<uint8_t> saved(base_, base_ + 192);
  std::memset(base_, 0xee, 192);
  hmrt_checkpoint_meta got;
  HMRT_ASSERT_OK(hmrt_checkpoint_load(ckpt().c_str(), &fake_.program, arena_, &got));
  EXPECT_EQ(std::memcmp(base_, saved.data(), 60), 0);
  EXPECT_EQ(std::memcmp(base_ + 64, saved.data() + 64, 8), 0);
  EXPECT_EQ(std::memcmp(base_ + 128, saved.data() + 128, 56), 0);
  EXPECT_STREQ(got.model, "fake");
  EXPECT_EQ(got.step, 12);
  EXPECT_EQ(got.data_position, 24);
  EXPECT_EQ(got.seed, 0x8000000000000005ull);
  // The program that wrote it.
  EXPECT_EQ(got.abi_version, HMRT_PROGRAM_ABI_VERSION);
  EXPECT_EQ(got.hyper.optimizer, HMRT_OPT_ADAMW);
  EXPECT_EQ(got.hyper.lr, 1e-3f);
  EXPECT_EQ(got.hyper.beta2, 0.95f);
  EXPECT_EQ(got.hyper.eps, 1e-8f);
  EXPECT_EQ(got.hyper.weight_decay, 0.1f);
  EXPECT_EQ(got.hyper.clip_norm, 1.0f);
  EXPECT_EQ(got.hyper.lr_schedule, HMRT_LR_COSINE);
  EXPECT_EQ(got.hyper.warmup_steps, 10);
  EXPECT_EQ(got.hyper.decay_steps, 100);
  EXPECT_EQ(got.hyper.min_lr, 1e-4f);
  EXPECT_EQ(std::strlen(got.identity), 16u);

  // The manifest is valid JSON with the documented fields.
  Json v;
  std::string err;
  const std::string text = read_bytes(ckpt() + "/manifest.json");
  ASSERT_TRUE(hmrt::json::parse(text, &v, &err)) << err;
  EXPECT_EQ(v.at("format").get<std::string>(), "hmrt-checkpoint");
  EXPECT_EQ(v.at("format_version").get<int64_t>(), 2);
  EXPECT_EQ(v.at("seed").get<uint64_t>(), 0x8000000000000005ull);
  EXPECT_EQ(v.at("program_identity").get<std::string>(), got.identity);
  EXPECT_EQ(v.at("program_abi_version").get<int64_t>(), HMRT_PROGRAM_ABI_VERSION);
  EXPECT_EQ(v.at("optimizer").get<std::string>(), "adamw");
  EXPECT_EQ(v.at("hyperparams").at("lr_schedule").get<std::string>(), "cosine");
  EXPECT_EQ(static_cast<float>(v.at("hyperparams").at("beta1").get<double>()), 0.9f);
  // The last member is the CRC-32 of all the text before its key.
  const size_t at = text.rfind("\"manifest_crc32\": ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(v.at("manifest_crc32").get<uint64_t>(), hmrt_crc32(0, text.data(), at));
  EXPECT_EQ(text.substr(text.size() - 3), "\n}\n");
  const Json& list = v.at("tensors");
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].at("name").get<std::string>(), "layer.w");
  EXPECT_EQ(list[0].at("kind").get<std::string>(), "param");
  EXPECT_EQ(list[0].at("dtype").get<std::string>(), "float32");
  EXPECT_EQ(list[0].at("shape").size(), 2u);
  EXPECT_TRUE(list[1].at("shape").is_array());
  EXPECT_EQ(list[1].at("shape").size(), 0u);  // a scalar
  EXPECT_EQ(list[2].at("kind").get<std::string>(), "state");
  EXPECT_EQ(list[2].at("dtype").get<std::string>(), "float64");
  for (const Json& t : list) EXPECT_EQ(t.at("offset").get<int64_t>() % 64, 0);
  EXPECT_EQ(list[0].at("crc32").get<uint64_t>(), hmrt_crc32(0, saved.data(), 60));
  // No temporaries are left behind.
  EXPECT_FALSE(fs::exists(ckpt() + ".tmp"));
  EXPECT_FALSE(fs::exists(ckpt() + ".old"));

  hmrt_npy t;
  HMRT_ASSERT_OK(hmrt_checkpoint_read_tensor(ckpt().c_str(), "layer.w.m", &t));
  EXPECT_EQ(t.dtype, HMRT_DTYPE_F64);
  EXPECT_EQ(t.rank, 1);
  EXPECT_EQ(t.shape[0], 7);
  EXPECT_EQ(static_cast<double*>(t.data)[2], -3.0);
  hmrt_npy_free(&t);
  EXPECT_EQ(hmrt_checkpoint_read_tensor(ckpt().c_str(), "nope", &t),
            HMRT_INVALID_ARGUMENT);
  HMRT_ASSERT_OK(hmrt_checkpoint_read_meta((ckpt() + "/").c_str(), &got));
  EXPECT_EQ(got.step, 12);
}

TEST_F(IoCheckpoint, ChecksumCorruptionDetected) {
  const hmrt_checkpoint_meta m = meta(1);
  HMRT_ASSERT_OK(hmrt_checkpoint_save(ckpt().c_str(), &fake_.program, arena_, &m));
  std::string data = read_bytes(ckpt() + "/tensors.bin");
  data[128 + 9] ^= 0x10;  // a bit of layer.w.m
  write_bytes(ckpt() + "/tensors.bin", data);
  EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &fake_.program, arena_, nullptr),
            HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "tensors.bin: checksum mismatch for "
                                     "optimizer state 'layer.w.m'"))
      << last_error();
  EXPECT_TRUE(contains(last_error(), "corrupt")) << last_error();

  write_bytes(ckpt() + "/tensors.bin", data.substr(0, 150));
  EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &fake_.program, arena_, nullptr),
            HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "truncated: optimizer state 'layer.w.m' "
                                     "needs bytes [128, 184)"))
      << last_error();
}

TEST_F(IoCheckpoint, MismatchesAreNamed) {
  const hmrt_checkpoint_meta m = meta(1);
  HMRT_ASSERT_OK(hmrt_checkpoint_save(ckpt().c_str(), &fake_.program, arena_, &m));
  {
    FakeProgram other;
    other.w_shape[1] = 6;
    other.params[0].bytes = 72;
    EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &other.program, arena_, nullptr),
              HMRT_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_error(), "parameter 'layer.w' is float32[3, 5] in "
                                       "the checkpoint but float32[3, 6] in the "
                                       "program"))
        << last_error();
  }
  {
    FakeProgram other;
    other.states[0].dtype = HMRT_DTYPE_I64;
    EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &other.program, arena_, nullptr),
              HMRT_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_error(), "optimizer state 'layer.w.m' is "
                                       "float64[7] in the checkpoint but int64[7]"))
        << last_error();
  }
  {
    FakeProgram other;
    other.params[1].name = "renamed";
    EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &other.program, arena_, nullptr),
              HMRT_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_error(), "the checkpoint has no parameter "
                                       "'renamed', which the program needs"))
        << last_error();
  }
  {
    FakeProgram other;
    other.program.num_states = 0;
    EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &other.program, arena_, nullptr),
              HMRT_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_error(), "the checkpoint has optimizer state "
                                       "'layer.w.m', which the program does not "
                                       "have"))
        << last_error();
  }
  for (const char* name : {"gpt2", ""}) {
    FakeProgram other;
    other.program.model_name = name;
    EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &other.program, arena_, nullptr),
              HMRT_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_error(), "the checkpoint is for model 'fake', this "
                                       "program is '" + std::string(name) + "'"))
        << last_error();
  }
  // Another program ABI or optimizer: refused before any tensor is read.
  {
    FakeProgram other;
    other.program.abi_version = 2;
    std::memset(base_, 0x11, 192);
    EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &other.program, arena_, nullptr),
              HMRT_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_error(), "ckpt: the checkpoint was saved by a "
                                       "program of ABI version 4, this program "
                                       "has ABI version 2"))
        << last_error();
    EXPECT_EQ(base_[0], 0x11);
    // ABI 3 programs saved the same tensors as ABI 4 ones: either loads
    // the other's checkpoint.
    other.program.abi_version = 3;
    HMRT_ASSERT_OK(hmrt_checkpoint_load(ckpt().c_str(), &other.program, arena_, nullptr));
    const hmrt_checkpoint_meta m3 = meta(4);
    HMRT_ASSERT_OK(hmrt_checkpoint_save((dir_ / "abi3").c_str(), &other.program, arena_, &m3));
    HMRT_ASSERT_OK(
        hmrt_checkpoint_load((dir_ / "abi3").c_str(), &fake_.program, arena_, nullptr));
    std::memset(base_, 0x11, 192);  // for the refusals below
  }
  {
    FakeProgram other;
    other.program.hyper.optimizer = HMRT_OPT_SGD;
    EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &other.program, arena_, nullptr),
              HMRT_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_error(), "ckpt: the checkpoint was saved by "
                                       "optimizer adamw, this program uses sgd"))
        << last_error();
    EXPECT_EQ(base_[0], 0x11);
  }
  {
    // The other hyper-parameters may differ (a new learning rate for a
    // resumed run); the load returns the recorded ones.
    FakeProgram other;
    other.program.hyper.lr = 5e-4f;
    hmrt_checkpoint_meta got;
    HMRT_ASSERT_OK(hmrt_checkpoint_load(ckpt().c_str(), &other.program, arena_, &got));
    EXPECT_EQ(got.hyper.lr, 1e-3f);
  }
  EXPECT_EQ(hmrt_checkpoint_load((dir_ / "none").c_str(), &fake_.program, arena_,
                                 nullptr),
            HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "none: no such checkpoint directory"))
      << last_error();
}

TEST_F(IoCheckpoint, ManifestErrors) {
  const hmrt_checkpoint_meta m = meta(1);
  HMRT_ASSERT_OK(hmrt_checkpoint_save(ckpt().c_str(), &fake_.program, arena_, &m));
  const std::string manifest = read_bytes(ckpt() + "/manifest.json");
  auto expect = [&](const std::string& text, hmrt_status status,
                    const std::string& needle) {
    write_bytes(ckpt() + "/manifest.json", text);
    EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &fake_.program, arena_, nullptr),
              status)
        << needle;
    EXPECT_TRUE(contains(last_error(), "manifest.json")) << last_error();
    EXPECT_TRUE(contains(last_error(), needle)) << last_error();
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = manifest;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  expect("{\"format\": ", HMRT_INVALID_ARGUMENT, "invalid JSON: line 1");
  expect("[]", HMRT_INVALID_ARGUMENT, "not a JSON object");
  expect(replaced("hmrt-checkpoint", "other"), HMRT_INVALID_ARGUMENT,
         "not an hmrt checkpoint");
  expect(replaced("\"format_version\": 2", "\"format_version\": 1"),
         HMRT_UNIMPLEMENTED, "checkpoint format version 1 was written by an "
                             "earlier runtime; this one reads only version 2");
  expect(replaced("\"format_version\": 2", "\"format_version\": 3"),
         HMRT_UNIMPLEMENTED, "checkpoint format version 3 is newer than this "
                             "runtime's version 2");
  // Any edit of a well-formed manifest is caught by its checksum: the step,
  // the data position, the seed, a tensor's CRC, a hyper-parameter.
  expect(replaced("\"step\": 1,", "\"step\": 7,"), HMRT_IO_ERROR,
         "manifest.json: checksum mismatch: \"manifest_crc32\" is ");
  expect(replaced("\"data_position\": 2,", "\"data_position\": 0,"),
         HMRT_IO_ERROR, "the manifest was edited or is corrupt");
  expect(replaced("\"seed\": 9223372036854775813", "\"seed\": 1"),
         HMRT_IO_ERROR, "checksum mismatch");
  expect(replaced("\"lr\": 0.00100000005", "\"lr\": 0.002"), HMRT_IO_ERROR,
         "checksum mismatch");
  expect(replaced("\"crc32\": 1074405846", "\"crc32\": 1074405847"),
         HMRT_IO_ERROR, "checksum mismatch");
  expect(replaced("\"step\": 1,", "\"step\":  1,"), HMRT_IO_ERROR,
         "checksum mismatch");
  expect(replaced("\"manifest_crc32\": ", "\"x\": 1, \"manifest_crc32\": "),
         HMRT_IO_ERROR, "checksum mismatch");
  expect(manifest + "\n", HMRT_IO_ERROR,
         "the manifest does not end with its checksum");
  expect(replaced("  \"manifest_crc32\": ", "  \"manifest_crc32\":  "),
         HMRT_IO_ERROR, "the manifest does not end with its checksum");
  {
    std::string s = manifest;
    const size_t at = s.find(",\n  \"manifest_crc32\"");
    ASSERT_NE(at, std::string::npos);
    expect(s.substr(0, at) + "\n}\n", HMRT_INVALID_ARGUMENT,
           "\"manifest_crc32\" must be an integer");
  }
  // Sizes checked in 64 bits, in a manifest whose checksum is right: a shape
  // whose byte size overflows, an offset far past the data file.
  expect(resealed(replaced("\"shape\": [3, 5]",
                           "\"shape\": [4294967296, 4294967296]")),
         HMRT_INVALID_ARGUMENT,
         "tensor 'layer.w': shape [4294967296, 4294967296] of float32 is more "
         "than 2^63 bytes");
  write_bytes(ckpt() + "/manifest.json",
              resealed(replaced("\"offset\": 0,", "\"offset\": 9223372036854775800,")));
  EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &fake_.program, arena_, nullptr),
            HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "tensors.bin: truncated: parameter 'layer.w' "
                                     "needs bytes [9223372036854775800, "
                                     "9223372036854775860) but the file has 184"))
      << last_error();
  // A renamed tensor no longer has the recorded identity.
  expect(replaced("\"name\": \"layer.w\"", "\"name\": \"layer.v\""),
         HMRT_INVALID_ARGUMENT, "\"program_identity\" is ");
  expect(replaced("\"step\": 1", "\"step\": -1"), HMRT_INVALID_ARGUMENT,
         "\"step\" must be a non-negative integer");
  expect(replaced("\"shape\": [3, 5]", "\"shape\": [3, 4]"),
         HMRT_INVALID_ARGUMENT, "\"bytes\" is 60 but shape [3, 4] of float32 "
                                "needs 48");
  expect(replaced("\"dtype\": \"float32\"", "\"dtype\": \"complex64\""),
         HMRT_INVALID_ARGUMENT, "tensor 'layer.w': \"dtype\" must be one of");
}

TEST_F(IoCheckpoint, AtomicReplace) {
  hmrt_checkpoint_meta m = meta(1);
  HMRT_ASSERT_OK(hmrt_checkpoint_save(ckpt().c_str(), &fake_.program, arena_, &m));

  // A save that crashed earlier left a partial "<dir>.tmp": the checkpoint
  // itself is intact and loads, and the next save cleans the leftover up.
  fs::create_directories(ckpt() + ".tmp");
  write_bytes(ckpt() + ".tmp/tensors.bin", "partial");
  hmrt_checkpoint_meta got;
  HMRT_ASSERT_OK(hmrt_checkpoint_load(ckpt().c_str(), &fake_.program, arena_, &got));
  EXPECT_EQ(got.step, 1);

  fill(2);
  m = meta(2);
  HMRT_ASSERT_OK(hmrt_checkpoint_save(ckpt().c_str(), &fake_.program, arena_, &m));
  EXPECT_FALSE(fs::exists(ckpt() + ".tmp"));
  EXPECT_FALSE(fs::exists(ckpt() + ".old"));
  fill(3);
  HMRT_ASSERT_OK(hmrt_checkpoint_load(ckpt().c_str(), &fake_.program, arena_, &got));
  EXPECT_EQ(got.step, 2);
  EXPECT_EQ(*reinterpret_cast<int64_t*>(base_ + 64), 1002);

  // Interrupted between the two renames: "<dir>" is gone, "<dir>.old" and
  // "<dir>.tmp" are complete.  Loading says what happened; the next save
  // succeeds and leaves a single checkpoint.
  fs::rename(ckpt(), ckpt() + ".old");
  fs::copy(ckpt() + ".old", ckpt() + ".tmp");
  EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &fake_.program, arena_, &got),
            HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "a save into it was interrupted"))
      << last_error();
  m = meta(3);
  HMRT_ASSERT_OK(hmrt_checkpoint_save(ckpt().c_str(), &fake_.program, arena_, &m));
  HMRT_ASSERT_OK(hmrt_checkpoint_read_meta(ckpt().c_str(), &got));
  EXPECT_EQ(got.step, 3);
  EXPECT_FALSE(fs::exists(ckpt() + ".tmp"));

  // A directory that is not a checkpoint is never replaced or deleted.
  const std::string other = dir_ / "precious";
  fs::create_directories(other);
  write_bytes(other + "/notes.txt", "keep me");
  EXPECT_EQ(hmrt_checkpoint_save(other.c_str(), &fake_.program, arena_, &m),
            HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "refusing to replace it")) << last_error();
  EXPECT_EQ(read_bytes(other + "/notes.txt"), "keep me");
  fs::create_directories(ckpt() + ".tmp");
  write_bytes(ckpt() + ".tmp/notes.txt", "keep me");
  EXPECT_EQ(hmrt_checkpoint_save(ckpt().c_str(), &fake_.program, arena_, &m),
            HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "refusing to delete it")) << last_error();
  EXPECT_EQ(read_bytes(ckpt() + ".tmp/notes.txt"), "keep me");
  // An empty directory is fine (mkdir ckpt && train --save ckpt).
  const std::string empty = dir_ / "empty";
  fs::create_directories(empty);
  HMRT_ASSERT_OK(hmrt_checkpoint_save(empty.c_str(), &fake_.program, arena_, &m));
}

// A save deletes or replaces only what is hmrt's own: a directory that
// merely holds a file called manifest.json, a checkpoint with other files
// beside it, or a symbolic link is refused, and every file in it survives.
TEST_F(IoCheckpoint, NeverReplacesForeignDirectories) {
  const hmrt_checkpoint_meta m = meta(1);
  auto refused = [&](const std::string& dir, const std::string& why) {
    hmrt_clear_error();
    EXPECT_EQ(hmrt_checkpoint_check_target(dir.c_str()), HMRT_INVALID_ARGUMENT)
        << dir;
    EXPECT_TRUE(contains(last_error(), why)) << last_error();
    hmrt_clear_error();
    EXPECT_EQ(hmrt_checkpoint_save(dir.c_str(), &fake_.program, arena_, &m),
              HMRT_INVALID_ARGUMENT)
        << dir;
    EXPECT_TRUE(contains(last_error(), why)) << last_error();
    EXPECT_EQ(last_error().find('\n'), std::string::npos) << last_error();
  };
  // An unrelated manifest.json (another tool's) with other files.
  const std::string web = dir_ / "web";
  fs::create_directories(web + "/icons");
  write_bytes(web + "/manifest.json", "{\"name\": \"my app\"}");
  write_bytes(web + "/index.html", "<html>");
  write_bytes(web + "/tensors.bin", "mine");
  refused(web, "its manifest.json is not an hmrt checkpoint manifest");
  EXPECT_EQ(read_bytes(web + "/manifest.json"), "{\"name\": \"my app\"}");
  EXPECT_EQ(read_bytes(web + "/index.html"), "<html>");
  EXPECT_EQ(read_bytes(web + "/tensors.bin"), "mine");
  EXPECT_TRUE(fs::is_directory(web + "/icons"));
  // A manifest.json that is not JSON at all.
  const std::string text = dir_ / "text";
  fs::create_directories(text);
  write_bytes(text + "/manifest.json", "CACHE MANIFEST\n");
  refused(text, "its manifest.json is not JSON");
  EXPECT_EQ(read_bytes(text + "/manifest.json"), "CACHE MANIFEST\n");

  // A real checkpoint with something else put beside it.
  HMRT_ASSERT_OK(hmrt_checkpoint_save(ckpt().c_str(), &fake_.program, arena_, &m));
  write_bytes(ckpt() + "/notes.txt", "keep me");
  refused(ckpt(), "it holds 'notes.txt', which a checkpoint does not");
  EXPECT_EQ(read_bytes(ckpt() + "/notes.txt"), "keep me");
  fs::remove(ckpt() + "/notes.txt");
  fs::create_directories(ckpt() + "/sub");
  refused(ckpt(), "it holds 'sub', which is not a regular file");
  fs::remove(ckpt() + "/sub");
  HMRT_ASSERT_OK(hmrt_checkpoint_check_target(ckpt().c_str()));

  // Symbolic links are never written through: not the directory itself...
  const std::string target = dir_ / "target";
  fs::create_directories(target);
  const std::string link = dir_ / "link";
  fs::create_directory_symlink(target, link);
  refused(link, "symbolic link");
  EXPECT_TRUE(fs::is_empty(target));
  EXPECT_TRUE(fs::is_symlink(link));
  // ... nor a link to a checkpoint, nor a ".tmp" / ".old" sibling that is one.
  const std::string link2 = dir_ / "link2";
  fs::create_directory_symlink(ckpt(), link2);
  refused(link2, "symbolic link");
  fs::create_directory_symlink(target, ckpt() + ".tmp");
  refused(ckpt(), "symbolic link");
  EXPECT_TRUE(fs::is_symlink(ckpt() + ".tmp"));
  fs::remove(ckpt() + ".tmp");
  // A file in the checkpoint that is a link (to a file outside).
  write_bytes(target + "/precious", "keep me");
  fs::create_symlink(target + "/precious", ckpt() + "/tensors.bin.link");
  refused(ckpt(), "it holds 'tensors.bin.link', which is not a regular file");
  fs::remove(ckpt() + "/tensors.bin.link");
  EXPECT_EQ(read_bytes(target + "/precious"), "keep me");

  // The siblings follow the same rule, and may also hold a partial save.
  fs::create_directories(ckpt() + ".old");
  write_bytes(ckpt() + ".old/manifest.json", "{\"format\": \"other\"}");
  write_bytes(ckpt() + ".old/tensors.bin", "x");
  refused(ckpt(), "not an hmrt checkpoint manifest");
  EXPECT_EQ(read_bytes(ckpt() + ".old/manifest.json"), "{\"format\": \"other\"}");
  fs::remove_all(ckpt() + ".old");
  fs::create_directories(ckpt() + ".tmp");
  write_bytes(ckpt() + ".tmp/tensors.bin", "partial");
  HMRT_ASSERT_OK(hmrt_checkpoint_check_target(ckpt().c_str()));
  // A plain file where the checkpoint should go.
  const std::string file = dir_ / "file";
  write_bytes(file, "data");
  refused(file, "it exists and is not a directory");
  EXPECT_EQ(read_bytes(file), "data");
  // And all this time the real checkpoint stayed loadable.
  HMRT_ASSERT_OK(hmrt_checkpoint_load(ckpt().c_str(), &fake_.program, arena_, nullptr));
}

TEST_F(IoCheckpoint, GenericWriterAndInitialState) {
  // The compiler's initial state directory: step 0, written with
  // hmrt_checkpoint_write; loads into the program like any checkpoint.
  const float w[15] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const int64_t count = 99;
  const double mom[7] = {0};
  const std::vector<hmrt_checkpoint_tensor> tensors = listed(w, &count, mom);
  const hmrt_checkpoint_tensor* list = tensors.data();
  hmrt_checkpoint_meta m;
  std::memset(&m, 0, sizeof(m));
  std::strcpy(m.model, "fake");
  const std::string state = dir_ / "state";
  HMRT_ASSERT_OK(hmrt_checkpoint_write(state.c_str(), &m, 3, list));
  hmrt_checkpoint_meta got;
  HMRT_ASSERT_OK(hmrt_checkpoint_load(state.c_str(), &fake_.program, arena_, &got));
  EXPECT_EQ(got.step, 0);
  EXPECT_EQ(reinterpret_cast<float*>(base_)[14], 15.0f);
  EXPECT_EQ(*reinterpret_cast<int64_t*>(base_ + 64), 99);
  // Without abi_version the program is not recorded (null); the identity is
  // computed from the tensors and is the program's.
  EXPECT_EQ(got.abi_version, 0u);
  EXPECT_TRUE(contains(read_bytes(state + "/manifest.json"),
                       "  \"program_abi_version\": null,\n  \"optimizer\": "
                       "null,\n  \"hyperparams\": null,\n"));
  const std::string ckpt_identity = [&] {
    hmrt_checkpoint_meta saved = meta(0);
    EXPECT_EQ(hmrt_checkpoint_save(ckpt().c_str(), &fake_.program, arena_, &saved),
              HMRT_OK);
    EXPECT_EQ(hmrt_checkpoint_read_meta(ckpt().c_str(), &saved), HMRT_OK);
    return std::string(saved.identity);
  }();
  EXPECT_EQ(std::string(got.identity), ckpt_identity);
  // With it, the writer records what the caller says (as hmcc does for the
  // initial state), and a load checks it.
  hmrt_checkpoint_meta with = m;
  with.abi_version = HMRT_PROGRAM_ABI_VERSION;
  with.hyper = fake_.program.hyper;
  with.hyper.optimizer = HMRT_OPT_SGD;
  const std::string sgd_state = dir_ / "sgd_state";
  HMRT_ASSERT_OK(hmrt_checkpoint_write(sgd_state.c_str(), &with, 3, list));
  EXPECT_EQ(hmrt_checkpoint_load(sgd_state.c_str(), &fake_.program, arena_, &got),
            HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "sgd_state: the checkpoint was saved by "
                                     "optimizer sgd, this program uses adamw"))
      << last_error();
  with.hyper.optimizer = 9;
  EXPECT_EQ(hmrt_checkpoint_write(sgd_state.c_str(), &with, 3, list),
            HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "unknown optimizer 9")) << last_error();

  // Argument errors.
  const hmrt_checkpoint_tensor dup[] = {list[0], list[0]};
  EXPECT_EQ(hmrt_checkpoint_write(state.c_str(), &m, 2, dup),
            HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "parameter 'layer.w' is listed twice"))
      << last_error();
  hmrt_checkpoint_tensor bad = list[0];
  bad.dtype = 8;  // STRING
  EXPECT_EQ(hmrt_checkpoint_write(state.c_str(), &m, 1, &bad),
            HMRT_INVALID_ARGUMENT);
  // The failed writes did not touch the existing state.
  HMRT_ASSERT_OK(hmrt_checkpoint_load(state.c_str(), &fake_.program, arena_, &got));
}

TEST_F(IoCheckpoint, FilledWriterMatchesTheGenericOne) {
  // hmrt_checkpoint_write_filled asks for each tensor's bytes in pieces, in
  // order, and writes the same files as hmrt_checkpoint_write; a failing
  // callback stops the write and leaves the target alone.
  const float w[15] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const int64_t count = 99;
  const double mom[7] = {0.5, 0, 0, 0, 0, 0, -2};
  const std::vector<hmrt_checkpoint_tensor> tensors = listed(w, &count, mom);
  const hmrt_checkpoint_tensor* list = tensors.data();
  hmrt_checkpoint_meta m;
  std::memset(&m, 0, sizeof(m));
  std::strcpy(m.model, "fake");
  const std::string plain = dir_ / "plain", filled = dir_ / "filled";
  HMRT_ASSERT_OK(hmrt_checkpoint_write(plain.c_str(), &m, 3, list));
  struct Calls {
    const hmrt_checkpoint_tensor* list;
    std::vector<std::tuple<int32_t, uint64_t, uint64_t>> seen;
    int32_t fail_at = -1;
  } calls{list, {}, -1};
  auto fill = [](void* user, int32_t i, uint64_t offset, uint64_t bytes,
                 void* dst) -> hmrt_status {
    auto* c = static_cast<Calls*>(user);
    c->seen.emplace_back(i, offset, bytes);
    if (i == c->fail_at) return HMRT_IO_ERROR;
    std::memcpy(dst, static_cast<const char*>(c->list[i].data) + offset, bytes);
    return HMRT_OK;
  };
  hmrt_checkpoint_tensor shapes_only[3];
  for (int i = 0; i < 3; ++i) {
    shapes_only[i] = list[i];
    shapes_only[i].data = nullptr;
  }
  hmrt::io::set_checkpoint_stage_bytes(16);  // layer.w in 4 pieces
  HMRT_ASSERT_OK(hmrt_checkpoint_write_filled(filled.c_str(), &m, 3, shapes_only, fill,
                                              &calls));
  hmrt::io::set_checkpoint_stage_bytes(0);
  const std::vector<std::tuple<int32_t, uint64_t, uint64_t>> expected = {
      {0, 0, 16}, {0, 16, 16}, {0, 32, 16}, {0, 48, 12}, {1, 0, 8},
      {2, 0, 16}, {2, 16, 16}, {2, 32, 16}, {2, 48, 8}};
  EXPECT_EQ(calls.seen, expected);
  for (const char* file : {"/manifest.json", "/tensors.bin"})
    EXPECT_EQ(read_bytes(filled + file), read_bytes(plain + file)) << file;

  calls.seen.clear();
  calls.fail_at = 2;
  EXPECT_EQ(hmrt_checkpoint_write_filled(filled.c_str(), &m, 3, shapes_only, fill, &calls),
            HMRT_IO_ERROR);
  EXPECT_EQ(read_bytes(filled + "/tensors.bin"), read_bytes(plain + "/tensors.bin"));
  EXPECT_EQ(hmrt_checkpoint_write_filled(filled.c_str(), &m, 3, shapes_only, nullptr, &calls),
            HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "fill is NULL")) << last_error();
}

// A checkpoint of format version 1 (the runtime before manifests carried a
// checksum and the program's identity) is refused with a message saying so,
// and a save writes exactly the documented format 2: these bytes pin the
// layout, the identity hash and both kinds of CRC (a format change must
// bump HMRT_CHECKPOINT_FORMAT_VERSION).
TEST_F(IoCheckpoint, RefusesFormatOneAndPinsFormatTwo) {
  const std::string v1 =
      "{\n"
      "  \"format\": \"hmrt-checkpoint\",\n"
      "  \"format_version\": 1,\n"
      "  \"model\": \"fake\",\n"
      "  \"step\": 12,\n"
      "  \"data_position\": 24,\n"
      "  \"seed\": 9223372036854775813,\n"
      "  \"data_file\": \"tensors.bin\",\n"
      "  \"data_bytes\": 184,\n"
      "  \"tensors\": [\n"
      "    {\"name\": \"layer.w\", \"kind\": \"param\", \"dtype\": \"float32\", \"shape\": [3, 5], \"offset\": 0, \"bytes\": 60, \"crc32\": 1074405846},\n"
      "    {\"name\": \"step_count\", \"kind\": \"param\", \"dtype\": \"int64\", \"shape\": [], \"offset\": 64, \"bytes\": 8, \"crc32\": 3361078206},\n"
      "    {\"name\": \"layer.w.m\", \"kind\": \"state\", \"dtype\": \"float64\", \"shape\": [7], \"offset\": 128, \"bytes\": 56, \"crc32\": 892242641}\n"
      "  ]\n"
      "}\n";
  const std::string hex =
      "0000803f0000a03f0000c03f0000e03f00000040000010400000204000003040"
      "0000404000005040000060400000704000008040000088400000904000000000"
      "e903000000000000000000000000000000000000000000000000000000000000"
      "0000000000000000000000000000000000000000000000000000000000000000"
      "0000000000000080000000000000f8bf00000000000008c000000000000012c0"
      "00000000000018c00000000000001ec000000000000022c0";
  std::string data;
  for (size_t i = 0; i < hex.size(); i += 2)
    data.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  const std::string old = dir_ / "old";
  fs::create_directories(old);
  write_bytes(old + "/manifest.json", v1);
  write_bytes(old + "/tensors.bin", data);
  std::memset(base_, 0xee, 192);
  hmrt_checkpoint_meta got;
  EXPECT_EQ(hmrt_checkpoint_load(old.c_str(), &fake_.program, arena_, &got),
            HMRT_UNIMPLEMENTED);
  EXPECT_EQ(last_error(),
            old + "/manifest.json: checkpoint format version 1 was written by "
                  "an earlier runtime; this one reads only version 2, whose "
                  "manifest carries a checksum and the program's identity "
                  "(continue that run with the train that wrote it, or start "
                  "again from --state)");
  EXPECT_EQ(base_[0], 0xee);
  // It is still hmrt's own checkpoint: a save may replace it.
  HMRT_ASSERT_OK(hmrt_checkpoint_check_target(old.c_str()));

  // Cross-checked with Python (zlib.crc32 and an FNV-1a of the documented
  // identity string).
  const std::string v2 =
      "{\n"
      "  \"format\": \"hmrt-checkpoint\",\n"
      "  \"format_version\": 2,\n"
      "  \"model\": \"fake\",\n"
      "  \"program_identity\": \"f8cb1893ba95dd9a\",\n"
      "  \"program_abi_version\": 4,\n"
      "  \"optimizer\": \"adamw\",\n"
      "  \"hyperparams\": {\"lr\": 0.00100000005, \"beta1\": 0.899999976, \"beta2\": 0.949999988, \"eps\": 9.99999994e-09, \"weight_decay\": 0.100000001, \"momentum\": 0, \"clip_norm\": 1, \"min_lr\": 9.99999975e-05, \"lr_schedule\": \"cosine\", \"warmup_steps\": 10, \"decay_steps\": 100},\n"
      "  \"step\": 12,\n"
      "  \"data_position\": 24,\n"
      "  \"seed\": 9223372036854775813,\n"
      "  \"data_file\": \"tensors.bin\",\n"
      "  \"data_bytes\": 184,\n"
      "  \"tensors\": [\n"
      "    {\"name\": \"layer.w\", \"kind\": \"param\", \"dtype\": \"float32\", \"shape\": [3, 5], \"offset\": 0, \"bytes\": 60, \"crc32\": 1074405846},\n"
      "    {\"name\": \"step_count\", \"kind\": \"param\", \"dtype\": \"int64\", \"shape\": [], \"offset\": 64, \"bytes\": 8, \"crc32\": 3361078206},\n"
      "    {\"name\": \"layer.w.m\", \"kind\": \"state\", \"dtype\": \"float64\", \"shape\": [7], \"offset\": 128, \"bytes\": 56, \"crc32\": 892242641}\n"
      "  ],\n"
      "  \"manifest_crc32\": 1008299589\n"
      "}\n";
  fill(1);  // the contents of the format 1 checkpoint
  const hmrt_checkpoint_meta m = meta(12);
  HMRT_ASSERT_OK(hmrt_checkpoint_save(ckpt().c_str(), &fake_.program, arena_, &m));
  EXPECT_EQ(read_bytes(ckpt() + "/manifest.json"), v2);
  EXPECT_EQ(read_bytes(ckpt() + "/tensors.bin"), data);
  HMRT_ASSERT_OK(hmrt_checkpoint_load(ckpt().c_str(), &fake_.program, arena_, &got));
}

// Every malformed manifest is one error, never an exception escaping the C
// API: wrong JSON types where numbers, strings, arrays or objects belong.
TEST_F(IoCheckpoint, ManifestTypeErrorsAreMessages) {
  // Each edit is resealed (its checksum made right) unless it edits the
  // checksum itself, so each is refused by the type check it aims at.
  const hmrt_checkpoint_meta m = meta(1);
  HMRT_ASSERT_OK(hmrt_checkpoint_save(ckpt().c_str(), &fake_.program, arena_, &m));
  const std::string manifest = read_bytes(ckpt() + "/manifest.json");
  const std::pair<std::string, std::string> edits[] = {
      {"\"format\": \"hmrt-checkpoint\"", "\"format\": 7"},
      {"\"format_version\": 2", "\"format_version\": 2.0"},
      {"\"format_version\": 2", "\"format_version\": 99999999999999999999"},
      {"\"program_identity\": \"", "\"program_identity\": 5, \"x\": \""},
      {"\"program_abi_version\": 4", "\"program_abi_version\": \"3\""},
      {"\"program_abi_version\": 4", "\"program_abi_version\": 0"},
      {"\"program_abi_version\": 4", "\"program_abi_version\": null"},
      {"\"optimizer\": \"adamw\"", "\"optimizer\": 2"},
      {"\"optimizer\": \"adamw\"", "\"optimizer\": \"lion\""},
      {"\"hyperparams\": {", "\"hyperparams\": [], \"x\": {"},
      {"\"lr\": 0.00100000005", "\"lr\": \"fast\""},
      {"\"lr_schedule\": \"cosine\"", "\"lr_schedule\": 1"},
      {"\"warmup_steps\": 10", "\"warmup_steps\": 1.5"},
      {"\"manifest_crc32\": ", "\"manifest_crc32\": -"},
      {"\"model\": \"fake\"", "\"model\": [\"fake\"]"},
      {"\"step\": 1", "\"step\": \"1\""},
      {"\"step\": 1", "\"step\": 18446744073709551615"},
      {"\"seed\": 9223372036854775813", "\"seed\": -1"},
      {"\"seed\": 9223372036854775813", "\"seed\": 1e3"},
      {"\"data_file\": \"tensors.bin\"", "\"data_file\": {}"},
      {"\"tensors\": [", "\"tensors\": \"x\", \"more\": ["},
      {"{\"name\": \"layer.w\"", "7, {\"name\": \"layer.w\""},
      {"\"name\": \"layer.w\"", "\"name\": null"},
      {"\"kind\": \"param\"", "\"kind\": true"},
      {"\"shape\": [3, 5]", "\"shape\": [3, \"5\"]"},
      {"\"shape\": [3, 5]", "\"shape\": 15"},
      {"\"offset\": 0", "\"offset\": -64"},
      {"\"bytes\": 60", "\"bytes\": 60.5"},
      {"\"crc32\": ", "\"crc32\": 4294967296, \"x\": "},
  };
  for (const auto& e : edits) {
    std::string text = manifest;
    const size_t at = text.find(e.first);
    ASSERT_NE(at, std::string::npos) << e.first;
    text.replace(at, e.first.size(), e.second);
    const bool seal = e.first.find("manifest_crc32") == std::string::npos;
    write_bytes(ckpt() + "/manifest.json", seal ? resealed(text) : text);
    hmrt_clear_error();
    hmrt_status st = HMRT_OK;
    EXPECT_NO_THROW(st = hmrt_checkpoint_load(ckpt().c_str(), &fake_.program,
                                              arena_, nullptr));
    EXPECT_NE(st, HMRT_OK) << e.second;
    EXPECT_TRUE(contains(last_error(), "manifest.json: ")) << last_error();
    EXPECT_FALSE(contains(last_error(), "invalid JSON")) << last_error();
    if (seal) {
      EXPECT_FALSE(contains(last_error(), "checksum")) << last_error();
    }
    EXPECT_EQ(last_error().find('\n'), std::string::npos) << last_error();
  }
}

// Tensors in every tier: the checkpoint code copies each from and to its
// descriptor's tier through the device interface (the storage tier is a
// file), in pieces smaller than the tensors.
TEST_F(IoCheckpoint, TensorsInEveryTier) {
  FakeProgram tiers;
  tiers.params[0].tier = HMRT_TIER_STORAGE;  // layer.w
  tiers.params[0].offset = 64;
  tiers.params[1].tier = HMRT_TIER_HOST;     // step_count
  tiers.params[1].offset = 128;
  tiers.program.host_arena_bytes = 192;
  tiers.program.storage_arena_bytes = 192;
  hmrt::io::set_checkpoint_stage_bytes(16);  // layer.w in 4 pieces
  // Fill the storage and host tiers through the interface.
  std::vector<uint8_t> w(60), count(8);
  for (int i = 0; i < 60; ++i) w[i] = static_cast<uint8_t>(3 * i + 1);
  for (int i = 0; i < 8; ++i) count[i] = static_cast<uint8_t>(200 + i);
  hmrt_buffer* storage = hmrt_exec_arena(arena_, HMRT_TIER_STORAGE);
  hmrt_buffer* host = hmrt_exec_arena(arena_, HMRT_TIER_HOST);
  ASSERT_EQ(hmrt_buffer_tier(storage), HMRT_TIER_STORAGE);
  HMRT_ASSERT_OK(hmrt_copy_from_host(storage, 64, w.data(), 60));
  HMRT_ASSERT_OK(hmrt_copy_from_host(host, 128, count.data(), 8));
  const hmrt_checkpoint_meta m = meta(5);
  HMRT_ASSERT_OK(hmrt_checkpoint_save(ckpt().c_str(), &tiers.program, arena_, &m));
  // The file holds the bytes (read back without any device).
  hmrt_npy t;
  HMRT_ASSERT_OK(hmrt_checkpoint_read_tensor(ckpt().c_str(), "layer.w", &t));
  EXPECT_EQ(std::memcmp(t.data, w.data(), 60), 0);
  hmrt_npy_free(&t);
  // The device-tier state came from base_ + 128 as before.
  HMRT_ASSERT_OK(hmrt_checkpoint_read_tensor(ckpt().c_str(), "layer.w.m", &t));
  EXPECT_EQ(std::memcmp(t.data, base_ + 128, 56), 0);
  hmrt_npy_free(&t);

  HMRT_ASSERT_OK(hmrt_memset(storage, 0, 0xee, 192));
  HMRT_ASSERT_OK(hmrt_memset(host, 0, 0xee, 192));
  std::vector<uint8_t> state(base_ + 128, base_ + 184);
  std::memset(base_, 0xee, 192);
  hmrt_checkpoint_meta got;
  HMRT_ASSERT_OK(hmrt_checkpoint_load(ckpt().c_str(), &tiers.program, arena_, &got));
  EXPECT_EQ(got.step, 5);
  std::vector<uint8_t> back(192);
  HMRT_ASSERT_OK(hmrt_copy_to_host(back.data(), storage, 0, 192));
  EXPECT_EQ(std::vector<uint8_t>(back.begin() + 64, back.begin() + 124), w);
  EXPECT_EQ(back[63], 0xee);  // only the tensor's bytes were written
  EXPECT_EQ(back[124], 0xee);
  HMRT_ASSERT_OK(hmrt_copy_to_host(back.data(), host, 0, 192));
  EXPECT_EQ(std::vector<uint8_t>(back.begin() + 128, back.begin() + 136), count);
  EXPECT_EQ(std::vector<uint8_t>(base_ + 128, base_ + 184), state);
  EXPECT_EQ(base_[0], 0xee);  // layer.w is not in the device tier any more

  // A saved file is the same whatever the pieces: save the device-tier
  // program with pieces of 16 bytes and of 64 MiB.
  fill(2);
  HMRT_ASSERT_OK(hmrt_checkpoint_save((dir_ / "a").c_str(), &fake_.program, arena_, &m));
  hmrt::io::set_checkpoint_stage_bytes(0);
  HMRT_ASSERT_OK(hmrt_checkpoint_save((dir_ / "b").c_str(), &fake_.program, arena_, &m));
  EXPECT_EQ(read_bytes(dir_ / "a/tensors.bin"), read_bytes(dir_ / "b/tensors.bin"));
  EXPECT_EQ(read_bytes(dir_ / "a/manifest.json"), read_bytes(dir_ / "b/manifest.json"));

  // A corrupt piece in the middle of a tensor is still caught by its CRC.
  hmrt::io::set_checkpoint_stage_bytes(16);
  std::string data = read_bytes(dir_ / "a/tensors.bin");
  data[40] ^= 1;  // inside layer.w, its third piece
  write_bytes(dir_ / "a/tensors.bin", data);
  EXPECT_EQ(hmrt_checkpoint_load((dir_ / "a").c_str(), &fake_.program, arena_,
                                 nullptr),
            HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "checksum mismatch for parameter 'layer.w'"))
      << last_error();
}

// A parameter in pieces (hmcc splits one by rows where its chunks have
// different homes) is saved as the whole tensor and loads into a program
// that keeps it whole, and back: checkpoints do not depend on the plan.
TEST_F(IoCheckpoint, TensorInPieces) {
  FakeProgram split;
  // layer.w's first 2 rows (40 bytes) at device offset 0, its last row in
  // the host arena at 64.
  const hmrt_tensor_piece pieces[2] = {{0, 40, HMRT_TIER_DEVICE, 0},
                                       {40, 20, HMRT_TIER_HOST, 64}};
  split.params[0].num_pieces = 2;
  split.params[0].pieces = pieces;
  split.program.host_arena_bytes = 192;
  hmrt::io::set_checkpoint_stage_bytes(16);  // copies that span both pieces
  std::vector<uint8_t> w(60);
  for (int i = 0; i < 60; ++i) w[i] = static_cast<uint8_t>(5 * i + 3);
  hmrt_buffer* host = hmrt_exec_arena(arena_, HMRT_TIER_HOST);
  std::memcpy(base_, w.data(), 40);
  HMRT_ASSERT_OK(hmrt_copy_from_host(host, 64, w.data() + 40, 20));
  const hmrt_checkpoint_meta m = meta(3);
  HMRT_ASSERT_OK(hmrt_checkpoint_save(ckpt().c_str(), &split.program, arena_, &m));
  hmrt_npy t;
  HMRT_ASSERT_OK(hmrt_checkpoint_read_tensor(ckpt().c_str(), "layer.w", &t));
  ASSERT_EQ(t.rank, 2);
  EXPECT_EQ(std::memcmp(t.data, w.data(), 60), 0);
  hmrt_npy_free(&t);
  // Into the program that keeps it whole on the device.
  std::memset(base_, 0xee, 64);
  HMRT_ASSERT_OK(hmrt_checkpoint_load(ckpt().c_str(), &fake_.program, arena_, nullptr));
  EXPECT_EQ(std::vector<uint8_t>(base_, base_ + 60), w);
  // And a checkpoint of the whole into the pieces.
  HMRT_ASSERT_OK(hmrt_checkpoint_save((dir_ / "whole").c_str(), &fake_.program, arena_, &m));
  std::memset(base_, 0xee, 64);
  HMRT_ASSERT_OK(hmrt_memset(host, 0, 0xee, 192));
  HMRT_ASSERT_OK(
      hmrt_checkpoint_load((dir_ / "whole").c_str(), &split.program, arena_, nullptr));
  EXPECT_EQ(std::vector<uint8_t>(base_, base_ + 40), std::vector<uint8_t>(w.begin(), w.begin() + 40));
  EXPECT_EQ(base_[40], 0xee);
  std::vector<uint8_t> back(20);
  HMRT_ASSERT_OK(hmrt_copy_to_host(back.data(), host, 64, 20));
  EXPECT_EQ(back, std::vector<uint8_t>(w.begin() + 40, w.end()));
  // hmrt_exec_write_tensor follows the pieces too.
  HMRT_ASSERT_OK(hmrt_exec_write_tensor(arena_, &split.params[0], 36, "abcdefgh", 8));
  EXPECT_EQ(std::memcmp(base_ + 36, "abcd", 4), 0);
  HMRT_ASSERT_OK(hmrt_copy_to_host(back.data(), host, 64, 4));
  EXPECT_EQ(std::memcmp(back.data(), "efgh", 4), 0);
  EXPECT_EQ(hmrt_exec_write_tensor(arena_, &split.params[0], 56, "abcdefgh", 8),
            HMRT_OUT_OF_RANGE);

  // Pieces that leave a gap, or lie outside their arena, are refused.
  const hmrt_tensor_piece gap[2] = {{0, 40, HMRT_TIER_DEVICE, 0},
                                    {44, 16, HMRT_TIER_HOST, 64}};
  split.params[0].pieces = gap;
  EXPECT_EQ(hmrt_checkpoint_save((dir_ / "x").c_str(), &split.program, arena_, &m),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(last_error(), "hmrt_checkpoint_save: parameter 'layer.w' piece 1 (its bytes "
                          "[44, 60) of the tensor) does not follow the piece before it "
                          "within the tensor's 60 bytes");
  const hmrt_tensor_piece outside[2] = {{0, 40, HMRT_TIER_DEVICE, 0},
                                        {40, 20, HMRT_TIER_HOST, 184}};
  split.params[0].pieces = outside;
  EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &split.program, arena_, nullptr),
            HMRT_OUT_OF_RANGE);
  EXPECT_EQ(last_error(), "hmrt_checkpoint_load: parameter 'layer.w' piece 1 (bytes "
                          "[184, 204)) lies outside the host arena of 192 bytes");
  EXPECT_FALSE(fs::exists(dir_ / "x"));
}

// Descriptors that do not fit the context are errors before anything is
// read or written.
TEST_F(IoCheckpoint, PlacementErrors) {
  const hmrt_checkpoint_meta m = meta(1);
  HMRT_ASSERT_OK(hmrt_checkpoint_save(ckpt().c_str(), &fake_.program, arena_, &m));
  FakeProgram bad;
  bad.states[0].tier = 7;
  EXPECT_EQ(hmrt_checkpoint_save((dir_ / "x").c_str(), &bad.program, arena_, &m),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(last_error(), "hmrt_checkpoint_save: optimizer state 'layer.w.m' has "
                          "unknown tier 7");
  EXPECT_FALSE(fs::exists(dir_ / "x"));
  EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &bad.program, arena_, nullptr),
            HMRT_INVALID_ARGUMENT);
  bad.states[0].tier = HMRT_TIER_DEVICE;
  bad.states[0].offset = 192;  // past the end of the 192-byte device arena
  std::memset(base_, 0x11, 192);
  EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &bad.program, arena_, nullptr),
            HMRT_OUT_OF_RANGE);
  EXPECT_EQ(last_error(), "hmrt_checkpoint_load: optimizer state 'layer.w.m' "
                          "(bytes [192, 248)) lies outside the device arena of "
                          "192 bytes");
  EXPECT_EQ(base_[0], 0x11);  // nothing was loaded
  EXPECT_EQ(hmrt_checkpoint_save((dir_ / "x").c_str(), &bad.program, arena_, &m),
            HMRT_OUT_OF_RANGE);
  EXPECT_EQ(hmrt_checkpoint_save(ckpt().c_str(), &fake_.program, nullptr, &m),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_checkpoint_load(ckpt().c_str(), &fake_.program, nullptr, nullptr),
            HMRT_INVALID_ARGUMENT);
}

}  // namespace
