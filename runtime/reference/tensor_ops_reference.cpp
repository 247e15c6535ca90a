// Scalar references of the generic tensor operations; see
// tensor_ops_reference.h.
#include "reference/tensor_ops_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace hmrt {
namespace ref {
namespace {

// A multi-index (rank <= HMRT_MAX_RANK).
struct Index {
  int64_t v[HMRT_MAX_RANK];
  int64_t& operator[](int64_t d) { return v[d]; }
  int64_t operator[](int64_t d) const { return v[d]; }
};

// The multi-index of flat in a row-major tensor of shape dims.
Index unravel(int64_t flat, int32_t rank, const int64_t* dims) {
  Index idx{};
  for (int32_t d = rank - 1; d >= 0; --d) {
    idx[d] = flat % dims[d];
    flat /= dims[d];
  }
  return idx;
}

int64_t ravel(const Index& idx, int32_t rank, const int64_t* dims) {
  int64_t flat = 0;
  for (int32_t d = 0; d < rank; ++d) flat = flat * dims[d] + idx[d];
  return flat;
}

// Flat index into a tensor of shape (r, s) of the element that output
// index idx (rank ry) reads under broadcasting.
int64_t bcast_flat(const Index& idx, int32_t ry, int32_t r, const int64_t* s) {
  int64_t flat = 0;
  for (int32_t d = 0; d < r; ++d) {
    const int64_t i = s[d] == 1 ? 0 : idx[ry - r + d];
    flat = flat * s[d] + i;
  }
  return flat;
}

void copy_elem(void* y, int64_t i, const void* x, int64_t j, size_t es) {
  std::memcpy(static_cast<char*>(y) + i * es,
              static_cast<const char*>(x) + j * es, es);
}

// One element of any dtype, as a float or an integer value.  U64 values
// above INT64_MAX are held as their two's complement bits with u set.
struct Value {
  bool is_float;
  double f;
  int64_t i;
  bool u = false;
};

// binary16 bits -> value, by the definition: (-1)^s 2^(e-15) (1 + m/1024),
// or 2^-14 m/1024 for e = 0.
double half_value(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 31) return m ? std::copysign(std::nan(""), sign) : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(double(m), -24);
  return sign * std::ldexp(double(1024 + m), e - 25);
}

// Value -> binary16 bits, rounding to nearest even with std::nearbyint (the
// default rounding mode) on the scaled magnitude.
uint16_t half_bits(double d) {
  const uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  const double a = std::fabs(d);
  if (std::isnan(d)) return sign | 0x7E00;
  if (a >= 65520.0) return sign | 0x7C00;  // halfway above 65504 and up
  if (a < 0x1p-14) return sign | uint16_t(std::nearbyint(a * 0x1p24));
  int e;
  std::frexp(a, &e);  // a = f 2^e, f in [0.5, 1): exponent e - 1
  const double q = std::nearbyint(std::ldexp(a, 11 - e));  // [1024, 2048]
  return uint16_t(sign | ((e - 1 + 15) << 10)) + uint16_t(q - 1024);
}

double bf16_value(uint16_t h) {
  const uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Value -> bfloat16 bits: to float (nearest even), then toward zero to 8
// significant bits (or to a multiple of 2^-133 below 2^-126).
uint16_t bf16_bits(double d) {
  const float f = float(d);
  if (std::isnan(f)) return std::signbit(f) ? 0xFFC0 : 0x7FC0;
  float t = f;
  if (std::isfinite(f) && f != 0.0f) {
    int e;
    std::frexp(f, &e);
    const double quantum = std::ldexp(1.0, std::max(e - 8, -133));
    t = float(std::trunc(double(f) / quantum) * quantum);
    if (t == 0.0f) t = std::copysign(0.0f, f);
  }
  uint32_t bits;
  std::memcpy(&bits, &t, 4);
  return uint16_t(bits >> 16);
}

Value load(int32_t dtype, const void* p, int64_t k) {
  switch (dtype) {
    case HMRT_DTYPE_F32: return {true, double(static_cast<const float*>(p)[k]), 0};
    case HMRT_DTYPE_F64: return {true, static_cast<const double*>(p)[k], 0};
    case HMRT_DTYPE_F16:
      return {true, half_value(static_cast<const uint16_t*>(p)[k]), 0};
    case HMRT_DTYPE_BF16:
      return {true, bf16_value(static_cast<const uint16_t*>(p)[k]), 0};
    case HMRT_DTYPE_U8: return {false, 0, static_cast<const uint8_t*>(p)[k]};
    case HMRT_DTYPE_I8: return {false, 0, static_cast<const int8_t*>(p)[k]};
    case HMRT_DTYPE_U16: return {false, 0, static_cast<const uint16_t*>(p)[k]};
    case HMRT_DTYPE_I16: return {false, 0, static_cast<const int16_t*>(p)[k]};
    case HMRT_DTYPE_I32: return {false, 0, static_cast<const int32_t*>(p)[k]};
    case HMRT_DTYPE_U32: return {false, 0, static_cast<const uint32_t*>(p)[k]};
    case HMRT_DTYPE_I64: return {false, 0, static_cast<const int64_t*>(p)[k]};
    case HMRT_DTYPE_U64: {
      const uint64_t v = static_cast<const uint64_t*>(p)[k];
      return {false, 0, int64_t(v), v > uint64_t(INT64_MAX)};
    }
    case HMRT_DTYPE_BOOL:
      return {false, 0, static_cast<const uint8_t*>(p)[k] != 0 ? 1 : 0};
  }
  return {false, 0, 0};
}

// Float -> integer type of `bits` bits: truncate, NaN -> 0, saturate.
int64_t saturate(double f, int64_t lo, int64_t hi) {
  if (std::isnan(f)) return 0;
  const double t = std::trunc(f);
  if (t <= double(lo)) return lo;
  if (t >= double(hi)) return hi;
  return int64_t(t);
}

void store(int32_t dtype, void* p, int64_t k, Value v) {
  // An integer as a double, rounded once.
  const double as_double = v.u ? double(uint64_t(v.i)) : double(v.i);
  switch (dtype) {
    case HMRT_DTYPE_BOOL:
      static_cast<uint8_t*>(p)[k] = v.is_float ? v.f != 0.0 : v.i != 0;
      return;
    case HMRT_DTYPE_F32:
      // int64 -> float rounds once, directly (not through double).
      static_cast<float*>(p)[k] =
          v.is_float ? float(v.f) : v.u ? float(uint64_t(v.i)) : float(v.i);
      return;
    case HMRT_DTYPE_F64:
      static_cast<double*>(p)[k] = v.is_float ? v.f : as_double;
      return;
    case HMRT_DTYPE_F16:
      // Integers big enough to round in double overflow half anyway.
      static_cast<uint16_t*>(p)[k] = half_bits(v.is_float ? v.f : as_double);
      return;
    case HMRT_DTYPE_BF16: {
      const float f =
          v.is_float ? float(v.f) : v.u ? float(uint64_t(v.i)) : float(v.i);
      static_cast<uint16_t*>(p)[k] = bf16_bits(f);
      return;
    }
    case HMRT_DTYPE_U64: {
      uint64_t w = uint64_t(v.i);
      if (v.is_float) {
        const double t = std::trunc(v.f);
        w = std::isnan(v.f) || t <= 0 ? 0
            : t >= 0x1p64            ? UINT64_MAX
                                     : uint64_t(t);
      }
      static_cast<uint64_t*>(p)[k] = w;
      return;
    }
    default: break;
  }
  // Integers: from a float saturate, from an integer keep the low bits.
  int64_t lo = 0, hi = 0;
  switch (dtype) {
    case HMRT_DTYPE_U8: lo = 0; hi = 255; break;
    case HMRT_DTYPE_I8: lo = -128; hi = 127; break;
    case HMRT_DTYPE_U16: lo = 0; hi = 65535; break;
    case HMRT_DTYPE_I16: lo = -32768; hi = 32767; break;
    case HMRT_DTYPE_I32: lo = INT32_MIN; hi = INT32_MAX; break;
    case HMRT_DTYPE_U32: lo = 0; hi = UINT32_MAX; break;
    case HMRT_DTYPE_I64: lo = INT64_MIN; hi = INT64_MAX; break;
  }
  const int64_t w = v.is_float ? saturate(v.f, lo, hi) : v.i;
  const uint64_t bits = uint64_t(w);
  switch (dtype) {
    case HMRT_DTYPE_U8: static_cast<uint8_t*>(p)[k] = uint8_t(bits & 0xff); break;
    case HMRT_DTYPE_I8: {
      const int64_t b = int64_t(bits & 0xff);
      static_cast<int8_t*>(p)[k] = int8_t(b >= 128 ? b - 256 : b);
      break;
    }
    case HMRT_DTYPE_U16:
      static_cast<uint16_t*>(p)[k] = uint16_t(bits & 0xffff);
      break;
    case HMRT_DTYPE_I16: {
      const int64_t b = int64_t(bits & 0xffff);
      static_cast<int16_t*>(p)[k] = int16_t(b >= 32768 ? b - 65536 : b);
      break;
    }
    case HMRT_DTYPE_I32: {
      const int64_t b = int64_t(bits & 0xffffffffull);
      static_cast<int32_t*>(p)[k] =
          int32_t(b >= (int64_t{1} << 31) ? b - (int64_t{1} << 32) : b);
      break;
    }
    case HMRT_DTYPE_U32:
      static_cast<uint32_t*>(p)[k] = uint32_t(bits & 0xffffffffull);
      break;
    case HMRT_DTYPE_I64: static_cast<int64_t*>(p)[k] = w; break;
  }
}

int64_t index_at(int32_t idx_dtype, const void* idx, int64_t j, int64_t dim) {
  const int64_t v = idx_dtype == HMRT_DTYPE_I64
                        ? static_cast<const int64_t*>(idx)[j]
                        : static_cast<const int32_t*>(idx)[j];
  return v < 0 ? v + dim : v;
}

}  // namespace

int64_t numel(int32_t rank, const int64_t* dims) {
  int64_t n = 1;
  for (int32_t d = 0; d < rank; ++d) n *= dims[d];
  return n;
}

void unary(hmrt_unary_op op, const double* x, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    double r = 0;
    switch (op) {
      case HMRT_UNARY_EXP: r = std::exp(v); break;
      case HMRT_UNARY_LOG: r = std::log(v); break;
      case HMRT_UNARY_SQRT: r = std::sqrt(v); break;
      case HMRT_UNARY_NEG: r = -v; break;
      case HMRT_UNARY_RECIPROCAL: r = 1.0 / v; break;
      case HMRT_UNARY_TANH: r = std::tanh(v); break;
      case HMRT_UNARY_SIGMOID: r = 1.0 / (1.0 + std::exp(-v)); break;
      case HMRT_UNARY_ERF: r = std::erf(v); break;
      case HMRT_UNARY_RELU: r = std::isnan(v) ? v : (v > 0 ? v : 0.0); break;
      case HMRT_UNARY_IDENTITY: r = v; break;
      case HMRT_UNARY_ABS: r = std::fabs(v); break;
      case HMRT_UNARY_SIGN:
        r = std::isnan(v) || v == 0 ? v : (v > 0 ? 1.0 : -1.0);
        break;
    }
    y[i] = r;
  }
}

void binary(hmrt_binary_op op, const double* a, int32_t ra, const int64_t* sa,
            const double* b, int32_t rb, const int64_t* sb, double* y,
            int32_t ry, const int64_t* sy) {
  const int64_t n = numel(ry, sy);
  for (int64_t i = 0; i < n; ++i) {
    const auto idx = unravel(i, ry, sy);
    const double u = a[bcast_flat(idx, ry, ra, sa)];
    const double v = b[bcast_flat(idx, ry, rb, sb)];
    double r = 0;
    switch (op) {
      case HMRT_BINARY_ADD: r = u + v; break;
      case HMRT_BINARY_SUB: r = u - v; break;
      case HMRT_BINARY_MUL: r = u * v; break;
      case HMRT_BINARY_DIV: r = u / v; break;
      case HMRT_BINARY_POW: r = std::pow(u, v); break;
      case HMRT_BINARY_MAX:
        r = std::isnan(u) || std::isnan(v) ? NAN : std::fmax(u, v);
        break;
      case HMRT_BINARY_MIN:
        r = std::isnan(u) || std::isnan(v) ? NAN : std::fmin(u, v);
        break;
    }
    y[i] = r;
  }
}

void binary_i64(hmrt_binary_op op, const int64_t* a, int32_t ra,
                const int64_t* sa, const int64_t* b, int32_t rb,
                const int64_t* sb, int64_t* y, int32_t ry, const int64_t* sy) {
  const int64_t n = numel(ry, sy);
  for (int64_t i = 0; i < n; ++i) {
    const auto idx = unravel(i, ry, sy);
    const int64_t u = a[bcast_flat(idx, ry, ra, sa)];
    const int64_t v = b[bcast_flat(idx, ry, rb, sb)];
    // Wrapping arithmetic through uint64 (modulo 2^64).
    const uint64_t uu = uint64_t(u), uv = uint64_t(v);
    int64_t r = 0;
    switch (op) {
      case HMRT_BINARY_ADD: r = int64_t(uu + uv); break;
      case HMRT_BINARY_SUB: r = int64_t(uu - uv); break;
      case HMRT_BINARY_MUL: r = int64_t(uu * uv); break;
      case HMRT_BINARY_DIV:
        r = (u == INT64_MIN && v == -1) ? INT64_MIN : u / v;
        break;
      case HMRT_BINARY_POW: {
        uint64_t p = 1;
        for (int64_t k = 0; k < v; ++k) p *= uu;  // v is small in tests
        r = int64_t(p);
        break;
      }
      case HMRT_BINARY_MAX: r = u > v ? u : v; break;
      case HMRT_BINARY_MIN: r = u < v ? u : v; break;
    }
    y[i] = r;
  }
}

void equal(int32_t dtype, const void* a, int32_t ra, const int64_t* sa,
           const void* b, int32_t rb, const int64_t* sb, uint8_t* y,
           int32_t ry, const int64_t* sy) {
  const int64_t n = numel(ry, sy);
  for (int64_t i = 0; i < n; ++i) {
    const auto idx = unravel(i, ry, sy);
    const Value u = load(dtype, a, bcast_flat(idx, ry, ra, sa));
    const Value v = load(dtype, b, bcast_flat(idx, ry, rb, sb));
    y[i] = u.is_float ? u.f == v.f : u.i == v.i;
  }
}

void where(const uint8_t* cond, int32_t rc, const int64_t* sc, const void* x,
           int32_t rx, const int64_t* sx, const void* z, int32_t rz,
           const int64_t* sz, void* y, int32_t ry, const int64_t* sy,
           size_t elem_size) {
  const int64_t n = numel(ry, sy);
  for (int64_t i = 0; i < n; ++i) {
    const auto idx = unravel(i, ry, sy);
    if (cond[bcast_flat(idx, ry, rc, sc)])
      copy_elem(y, i, x, bcast_flat(idx, ry, rx, sx), elem_size);
    else
      copy_elem(y, i, z, bcast_flat(idx, ry, rz, sz), elem_size);
  }
}

void cast(int32_t from_dtype, const void* x, int32_t to_dtype, void* y,
          int64_t n) {
  for (int64_t i = 0; i < n; ++i) store(to_dtype, y, i, load(from_dtype, x, i));
}

void transpose(const void* x, int32_t rank, const int64_t* shape,
               const int64_t* perm, void* y, size_t elem_size) {
  std::vector<int64_t> out(rank);
  for (int32_t d = 0; d < rank; ++d) out[d] = shape[perm[d]];
  const int64_t n = numel(rank, shape);
  for (int64_t i = 0; i < n; ++i) {
    const auto oi = unravel(i, rank, out.data());
    Index xi{};
    for (int32_t d = 0; d < rank; ++d) xi[perm[d]] = oi[d];
    copy_elem(y, i, x, ravel(xi, rank, shape), elem_size);
  }
}

void slice(const void* x, int32_t rank, const int64_t* shape,
           const int64_t* starts, const int64_t* steps,
           const int64_t* out_shape, void* y, size_t elem_size) {
  const int64_t n = numel(rank, out_shape);
  for (int64_t i = 0; i < n; ++i) {
    auto idx = unravel(i, rank, out_shape);
    for (int32_t d = 0; d < rank; ++d) idx[d] = starts[d] + idx[d] * steps[d];
    copy_elem(y, i, x, ravel(idx, rank, shape), elem_size);
  }
}

void slice_backward(const double* dy, int32_t rank, const int64_t* shape,
                    const int64_t* starts, const int64_t* steps,
                    const int64_t* out_shape, double* dx) {
  for (int64_t j = 0; j < numel(rank, shape); ++j) dx[j] = 0.0;
  const int64_t n = numel(rank, out_shape);
  for (int64_t i = 0; i < n; ++i) {
    auto idx = unravel(i, rank, out_shape);
    for (int32_t d = 0; d < rank; ++d) idx[d] = starts[d] + idx[d] * steps[d];
    dx[ravel(idx, rank, shape)] += dy[i];
  }
}

void concat(int32_t n, const void* const* inputs, const int64_t* sizes,
            int32_t rank, const int64_t* out_shape, int32_t axis, void* y,
            size_t elem_size) {
  if (axis < 0) axis += rank;
  const int64_t total = numel(rank, out_shape);
  for (int64_t i = 0; i < total; ++i) {
    auto idx = unravel(i, rank, out_shape);
    // Find the input holding position idx[axis] along the axis.
    int32_t k = 0;
    int64_t pos = idx[axis];
    while (k + 1 < n && pos >= sizes[k]) pos -= sizes[k++];
    idx[axis] = pos;
    Index in_shape{};
    for (int32_t d = 0; d < rank; ++d) in_shape[d] = out_shape[d];
    in_shape[axis] = sizes[k];
    copy_elem(y, i, inputs[k], ravel(idx, rank, in_shape.v), elem_size);
  }
}

void gather(const void* x, int32_t rank, const int64_t* shape, int32_t axis,
            int32_t idx_dtype, const void* idx, int64_t n_idx, void* y,
            size_t elem_size) {
  if (axis < 0) axis += rank;
  // y viewed as shape[:axis] + [n_idx] + shape[axis+1:].
  std::vector<int64_t> ys(shape, shape + rank);
  ys[axis] = n_idx;
  const int64_t n = numel(rank, ys.data());
  for (int64_t i = 0; i < n; ++i) {
    auto id = unravel(i, rank, ys.data());
    id[axis] = index_at(idx_dtype, idx, id[axis], shape[axis]);
    copy_elem(y, i, x, ravel(id, rank, shape), elem_size);
  }
}

void gather_backward(const double* dy, int32_t rank, const int64_t* shape,
                     int32_t axis, int32_t idx_dtype, const void* idx,
                     int64_t n_idx, double* dx) {
  if (axis < 0) axis += rank;
  for (int64_t j = 0; j < numel(rank, shape); ++j) dx[j] = 0.0;
  std::vector<int64_t> ys(shape, shape + rank);
  ys[axis] = n_idx;
  const int64_t n = numel(rank, ys.data());
  for (int64_t i = 0; i < n; ++i) {
    auto id = unravel(i, rank, ys.data());
    id[axis] = index_at(idx_dtype, idx, id[axis], shape[axis]);
    dx[ravel(id, rank, shape)] += dy[i];
  }
}

void expand(const void* x, int32_t rx, const int64_t* sx, void* y, int32_t ry,
            const int64_t* sy, size_t elem_size) {
  const int64_t n = numel(ry, sy);
  for (int64_t i = 0; i < n; ++i)
    copy_elem(y, i, x, bcast_flat(unravel(i, ry, sy), ry, rx, sx), elem_size);
}

void reduce_to(const double* x, int32_t rx, const int64_t* sx, double* y,
               int32_t ry, const int64_t* sy) {
  for (int64_t j = 0; j < numel(ry, sy); ++j) y[j] = 0.0;
  const int64_t n = numel(rx, sx);
  for (int64_t i = 0; i < n; ++i)
    y[bcast_flat(unravel(i, rx, sx), rx, ry, sy)] += x[i];
}

void trilu(const void* x, int32_t rank, const int64_t* shape, int64_t k,
           bool upper, void* y, size_t elem_size) {
  const int64_t n = numel(rank, shape);
  for (int64_t f = 0; f < n; ++f) {
    const auto idx = unravel(f, rank, shape);
    const int64_t i = idx[rank - 2], j = idx[rank - 1];
    const int64_t diff = j - i;  // no overflow: 0 <= i, j < 2^63
    const bool keep = upper ? diff >= k : diff <= k;
    if (keep)
      copy_elem(y, f, x, f, elem_size);
    else
      std::memset(static_cast<char*>(y) + f * elem_size, 0, elem_size);
  }
}

void range(double start, double delta, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = start + double(i) * delta;
}

uint64_t splitmix64(uint64_t seed, uint64_t j) {
  // Advance the state j+1 times, then apply the output function.
  uint64_t z = seed + (j + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void dropout(const double* x, double* y, uint8_t* mask, int64_t n,
             double ratio, uint64_t seed, uint64_t counter) {
  const uint64_t key = splitmix64(seed, counter);
  for (int64_t i = 0; i < n; ++i) {
    const double u = std::ldexp(double(splitmix64(key, uint64_t(i)) >> 11), -53);
    const bool keep = u >= ratio;
    mask[i] = keep;
    y[i] = keep ? x[i] / (1.0 - ratio) : 0.0;
  }
}

}  // namespace ref
}  // namespace hmrt
