// The runtime's JSON helpers around nlohmann/json (header-only; Debian
// nlohmann-json3-dev): manifests, metrics and traces.  Only .cpp files include
// this; the C API stays C.  Nothing here throws: nlohmann's exceptions are
// caught and turned into messages, so none can escape a C function.
// Internal: not installed, not part of the C API.
#ifndef HMRT_IO_JSON_UTIL_H
#define HMRT_IO_JSON_UTIL_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include <nlohmann/json.hpp>

namespace hmrt {
namespace json {

using Json = nlohmann::json;

// Parses `text` (one JSON value, surrounded by optional whitespace).  On
// failure returns false and sets *error to one line starting with the
// position, e.g. "line 3, column 8: syntax error while parsing value -
// invalid literal; last read: '"b": ?'".  Invalid UTF-8 inside strings is an
// error, as RFC 8259 requires.
inline bool parse(const std::string& text, Json* out, std::string* error) {
  try {
    *out = Json::parse(text);
    return true;
  } catch (const Json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 8: ..."
    std::string what = e.what();
    const std::string at = "parse error at ";
    const size_t p = what.find(at);
    if (p != std::string::npos) what = what.substr(p + at.size());
    if (error) *error = what;
  } catch (const std::bad_alloc&) {
    if (error) *error = "out of memory";
  } catch (const std::exception& e) {
    if (error) *error = e.what();
  }
  *out = Json();
  return false;
}

// `s` as a JSON string literal, quotes included.  Bytes that are not valid
// UTF-8 become U+FFFD (JSON text cannot hold them).
inline std::string quote(const std::string& s) {
  try {
    return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
  } catch (const std::exception&) {
    return "\"\"";  // only std::bad_alloc can get here
  }
}

// True when `s` is valid UTF-8 (so quote() keeps it byte for byte).
inline bool is_utf8(const std::string& s) {
  try {
    (void)Json(s).dump();  // the strict handler throws type_error 316
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Exact integers: true and *out when `v` is an integer number (not written
// with '.', 'e' or 'E') that fits the type.
inline bool get_int64(const Json& v, int64_t* out) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > uint64_t(INT64_MAX)) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  if (v.is_number_integer()) {
    *out = v.get<int64_t>();
    return true;
  }
  return false;
}

inline bool get_uint64(const Json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer() && v.get<int64_t>() == 0) {  // "-0"
    *out = 0;
    return true;
  }
  return false;
}

// The member `key` of an object, or nullptr (absent, or `v` not an object).
inline const Json* member(const Json& v, const char* key) {
  if (!v.is_object()) return nullptr;
  const auto it = v.find(key);
  return it == v.end() ? nullptr : &*it;
}

// A number for JSON: %.9g for finite floats (round-trips float32), %.17g
// for doubles; "null" for NaN and infinities, which JSON cannot express.
inline std::string number_f32(float x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(x));
  return buf;
}
inline std::string number_f64(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  return buf;
}

}  // namespace json
}  // namespace hmrt

#endif  // HMRT_IO_JSON_UTIL_H
