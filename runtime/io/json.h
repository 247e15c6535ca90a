// A small JSON reader and writer helpers for the runtime's manifests and
// metrics (the runtime depends on nothing but the C++ standard library).
// Internal: not installed, not part of the C API.
#ifndef HMRT_IO_JSON_H
#define HMRT_IO_JSON_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hmrt {
namespace json {

struct Value {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = kNull;
  bool boolean = false;
  double number = 0.0;
  // For numbers written as integers (no '.', 'e' or 'E'): the exact value,
  // when it fits.  is_int: fits int64; is_uint: fits uint64.
  bool is_int = false, is_uint = false;
  int64_t i = 0;
  uint64_t u = 0;
  std::string str;
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object;

  // The member called `key` of an object; nullptr when absent or not an
  // object.
  const Value* get(const std::string& key) const;
};

// Parses `text` (one JSON value, surrounded by optional whitespace).  On
// failure returns false and sets *error to a message with a line and column.
bool parse(const std::string& text, Value* out, std::string* error);

// `s` as a JSON string literal, quotes included.
std::string quote(const std::string& s);

// A number for JSON: %.9g for finite floats (round-trips float32), %.17g
// for doubles; "null" for NaN and infinities, which JSON cannot express.
std::string number_f32(float x);
std::string number_f64(double x);

const char* kind_name(Value::Kind kind);

}  // namespace json
}  // namespace hmrt

#endif  // HMRT_IO_JSON_H
