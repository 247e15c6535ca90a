// The runtime's JSON reader: recursive descent over RFC 8259 JSON.
#include "io/json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hmrt {
namespace json {

const Value* Value::get(const std::string& key) const {
  if (kind != kObject) return nullptr;
  for (const auto& kv : object)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

const char* kind_name(Value::Kind kind) {
  switch (kind) {
    case Value::kNull: return "null";
    case Value::kBool: return "a boolean";
    case Value::kNumber: return "a number";
    case Value::kString: return "a string";
    case Value::kArray: return "an array";
    case Value::kObject: return "an object";
  }
  return "?";
}

namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  bool run(Value* out, std::string* error) {
    skip_ws();
    bool ok = value(out, 0);
    if (ok) {
      skip_ws();
      if (pos_ != s_.size()) {
        fail("unexpected text after the value");
        ok = false;
      }
    }
    if (ok) return true;
    // Position of the failure as line:column (1-based).
    size_t line = 1, col = 1;
    for (size_t i = 0; i < err_pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    if (error)
      *error = "line " + std::to_string(line) + ", column " +
               std::to_string(col) + ": " + err_;
    return false;
  }

 private:
  // Records the first error and where it happened.
  void fail(const char* msg) {
    if (err_.empty()) {
      err_ = msg;
      err_pos_ = pos_;
    }
  }

  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' ||
                                s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  bool literal(const char* word) {
    size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0) {
      fail("invalid literal");
      return false;
    }
    pos_ += n;
    return true;
  }

  bool value(Value* v, int depth) {
    if (depth > kMaxDepth) {
      fail("nesting too deep");
      return false;
    }
    if (pos_ >= s_.size()) {
      fail("unexpected end of text");
      return false;
    }
    char c = s_[pos_];
    switch (c) {
      case '{': return object(v, depth);
      case '[': return array(v, depth);
      case '"': v->kind = Value::kString; return string(&v->str);
      case 't': v->kind = Value::kBool; v->boolean = true; return literal("true");
      case 'f': v->kind = Value::kBool; v->boolean = false; return literal("false");
      case 'n': v->kind = Value::kNull; return literal("null");
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return number(v);
        fail("unexpected character");
        return false;
    }
  }

  bool object(Value* v, int depth) {
    v->kind = Value::kObject;
    ++pos_;  // '{'
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') {
        fail("expected a string key");
        return false;
      }
      std::string key;
      if (!string(&key)) return false;
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != ':') {
        fail("expected ':'");
        return false;
      }
      ++pos_;
      skip_ws();
      v->object.emplace_back(std::move(key), Value());
      if (!value(&v->object.back().second, depth + 1)) return false;
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      fail("expected ',' or '}'");
      return false;
    }
  }

  bool array(Value* v, int depth) {
    v->kind = Value::kArray;
    ++pos_;  // '['
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_ws();
      v->array.emplace_back();
      if (!value(&v->array.back(), depth + 1)) return false;
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      fail("expected ',' or ']'");
      return false;
    }
  }

  static void put_utf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool hex4(uint32_t* out) {
    if (pos_ + 4 > s_.size()) {
      fail("truncated \\u escape");
      return false;
    }
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_ + i];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else {
        fail("bad hex digit in \\u escape");
        return false;
      }
    }
    pos_ += 4;
    *out = v;
    return true;
  }

  bool string(std::string* out) {
    ++pos_;  // '"'
    out->clear();
    for (;;) {
      if (pos_ >= s_.size()) {
        fail("unterminated string");
        return false;
      }
      unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) {
        fail("control character in string");
        return false;
      }
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        ++pos_;
        continue;
      }
      ++pos_;
      if (pos_ >= s_.size()) {
        fail("unterminated string");
        return false;
      }
      char e = s_[pos_++];
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t cp;
          if (!hex4(&cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t lo;
            if (s_.compare(pos_, 2, "\\u") != 0) {
              fail("unpaired surrogate in \\u escape");
              return false;
            }
            pos_ += 2;
            if (!hex4(&lo)) return false;
            if (lo < 0xDC00 || lo >= 0xE000) {
              fail("unpaired surrogate in \\u escape");
              return false;
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            fail("unpaired surrogate in \\u escape");
            return false;
          }
          put_utf8(out, cp);
          break;
        }
        default:
          --pos_;
          fail("invalid escape");
          return false;
      }
    }
  }

  bool number(Value* v) {
    size_t start = pos_;
    bool integral = true;
    if (s_[pos_] == '-') ++pos_;
    auto digits = [&] {
      size_t d = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ - d;
    };
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
    } else if (digits() == 0) {
      fail("invalid number");
      return false;
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      integral = false;
      ++pos_;
      if (digits() == 0) {
        fail("invalid number");
        return false;
      }
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      integral = false;
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) {
        fail("invalid number");
        return false;
      }
    }
    std::string text = s_.substr(start, pos_ - start);
    v->kind = Value::kNumber;
    v->number = std::strtod(text.c_str(), nullptr);
    if (integral) {
      errno = 0;
      long long i = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == 0) {
        v->is_int = true;
        v->i = i;
      }
      if (text[0] != '-') {
        errno = 0;
        unsigned long long u = std::strtoull(text.c_str(), nullptr, 10);
        if (errno == 0) {
          v->is_uint = true;
          v->u = u;
        }
      } else if (v->is_int && v->i == 0) {
        v->is_uint = true;  // "-0"
      }
    }
    return true;
  }

  const std::string& s_;
  size_t pos_ = 0;
  std::string err_;
  size_t err_pos_ = 0;
};

}  // namespace

bool parse(const std::string& text, Value* out, std::string* error) {
  *out = Value();
  return Parser(text).run(out, error);
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out += '"';
  return out;
}

std::string number_f32(float x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(x));
  return buf;
}

std::string number_f64(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  return buf;
}

}  // namespace json
}  // namespace hmrt
