// Generic tensor operations with ONNX semantics (hmrt/tensor_ops.h):
// elementwise maps with broadcasting, casts and data movement.
//
// Most ops run on one engine.  A Plan describes an iteration space (the
// output's dims) and, for every operand, its element stride along each dim
// (0 where the operand is broadcast).  Dims of size 1 are dropped and
// neighbouring dims that are contiguous for every operand are merged, so a
// no-broadcast op becomes one flat loop and [N, C] + [C] becomes N rows of
// C.  The flat output index range is split across threads (parallel_for);
// each piece walks contiguous runs of the innermost merged dim, whose inner
// loops are specialised for unit and zero strides so they vectorise.
// Every output element is computed the same way whatever the split, so
// results never depend on the thread count.  Transposes whose output rows
// read x with a large stride move 32 x 32 tiles instead; reductions
// (reduce_to, gather backward) fix their summation order by the shapes only.
#include "hmrt/tensor_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <vector>

#include "core/float16.h"
#include "core/plan.h"
#include "core/reduce_math.h"
#include "core/ew_math.h"
#include "core/internal.h"
#include "cpu/arg_checks.h"
#include "cpu/dropout_mask.h"
#include "cpu/ordered_sums.h"
#include "cpu/shape_check.h"
#include "cpu/vmath.h"
#include "cpu/vec.h"

#ifdef __SSE2__
#include <xmmintrin.h>
#endif

namespace hmrt {
namespace {

constexpr int64_t kGrain = 1 << 14;        // elements per thread at least
constexpr int64_t kByteGrain = 1 << 16;    // bytes per thread at least (copies)

// ---- argument checks --------------------------------------------------------

hmrt_status check_elem_size(const char* fn, size_t elem_size, int64_t numel) {
  HMRT_CHECK_ARG(elem_size >= 1, "%s: elem_size must be >= 1", fn);
  int64_t bytes;
  HMRT_CHECK_ARG(!__builtin_mul_overflow(numel, (int64_t)elem_size, &bytes),
                 "%s: %lld elements of %zu bytes overflow", fn,
                 (long long)numel, elem_size);
  return HMRT_OK;
}

#define HMRT_CHECK_DATA(fn, p, count)                                   \
  HMRT_CHECK_ARG((p) != nullptr || (count) == 0,                        \
                 "%s: %s is NULL but has %lld elements", fn, #p,        \
                 (long long)(count))

// check_broadcast, check_broadcast_to: cpu/shape_check.h.


// ---- iteration plans (core/plan.h) ----------------------------------------------

// for_runs: core/plan.h.

template <class Seg>
void run_plan(const Plan& p, int64_t grain, Seg&& seg) {
  parallel_for(p.total, grain, [&](int64_t lo, int64_t hi) {
    for_runs(p, lo, hi, seg);
  });
}

// ---- copies -----------------------------------------------------------------

// Calls f(T{}) with T the unit type of elem_size, or f(uint8_t{}) with
// `wide` set for the other sizes (then the plan gets a byte dim).
template <class F>
void dispatch_size(size_t elem_size, F&& f) {
  switch (elem_size) {
    case 1: f(uint8_t{}, false); break;
    case 2: f(uint16_t{}, false); break;
    case 4: f(uint32_t{}, false); break;
    case 8: f(uint64_t{}, false); break;
    default: f(uint8_t{}, true); break;
  }
}

// dst[off0 + i*ds] = src[off1 + i*ss] over a plan of two operands
// (0: destination, 1: source) in units of T.
template <class T>
void copy_plan(const Plan& p, T* dst, const T* src) {
  const int64_t ds = p.inner_stride(0), ss = p.inner_stride(1);
  run_plan(p, std::max<int64_t>(1, kByteGrain / int64_t(sizeof(T))),
           [&](const int64_t* off, int64_t len) {
             T* d = dst + off[0];
             const T* s = src + off[1];
             if (ds == 1 && ss == 1) {
               std::memcpy(d, s, size_t(len) * sizeof(T));
             } else if (ds == 1 && ss == 0) {
               const T v = *s;
               for (int64_t i = 0; i < len; ++i) d[i] = v;
             } else if (ds == 1 && ss == -1) {
               for (int64_t i = 0; i < len; ++i) d[i] = s[-i];
             } else if (ds == 1) {
               for (int64_t i = 0; i < len; ++i) d[i] = s[i * ss];
             } else if (ss == 1) {
               for (int64_t i = 0; i < len; ++i) d[i * ds] = s[i];
             } else {
               for (int64_t i = 0; i < len; ++i) d[i * ds] = s[i * ss];
             }
           });
}

// Copies a strided view: for every index of dims (rank r), the element of
// dst at dst_base + sum idx*dst_st goes from src at src_base + sum idx*src_st
// (element strides, any sign).  Destination positions must be distinct.
void strided_copy(int r, const int64_t* dims, const int64_t* dst_st,
                  const int64_t* src_st, void* dst, int64_t dst_base,
                  const void* src, int64_t src_base, size_t elem_size) {
  dispatch_size(elem_size, [&](auto unit, bool wide) {
    using T = decltype(unit);
    Plan p;
    p.nops = 2;
    p.set_dims(r, dims);
    if (p.total == 0) return;
    for (int d = 0; d < r; ++d) {
      p.st[0][d] = dst_st[d];
      p.st[1][d] = src_st[d];
    }
    int64_t db = dst_base, sb = src_base;
    if (wide) {
      const bool scale[2] = {true, true};
      p.add_byte_dim(int64_t(elem_size), scale);
      db *= int64_t(elem_size);
      sb *= int64_t(elem_size);
    }
    p.merge();
    copy_plan<T>(p, static_cast<T*>(dst) + db,
                 static_cast<const T*>(src) + sb);
  });
}

// dst[a*dq + b] = src[a + b*si] for a in [a0, a1), b in [b0, b1).
template <class T>
inline void transpose_tile(T* dst, int64_t dq, const T* src, int64_t si,
                           int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  int64_t a = a0;
#ifdef __SSE2__
  if constexpr (sizeof(T) == 4) {
    // 4 x 4 blocks: four contiguous loads along a, an in-register
    // transpose, four contiguous stores along b.
    for (; a + 4 <= a1; a += 4) {
      int64_t b = b0;
      for (; b + 4 <= b1; b += 4) {
        __m128 r0 = _mm_loadu_ps(reinterpret_cast<const float*>(src + a + b * si));
        __m128 r1 = _mm_loadu_ps(reinterpret_cast<const float*>(src + a + (b + 1) * si));
        __m128 r2 = _mm_loadu_ps(reinterpret_cast<const float*>(src + a + (b + 2) * si));
        __m128 r3 = _mm_loadu_ps(reinterpret_cast<const float*>(src + a + (b + 3) * si));
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        _mm_storeu_ps(reinterpret_cast<float*>(dst + a * dq + b), r0);
        _mm_storeu_ps(reinterpret_cast<float*>(dst + (a + 1) * dq + b), r1);
        _mm_storeu_ps(reinterpret_cast<float*>(dst + (a + 2) * dq + b), r2);
        _mm_storeu_ps(reinterpret_cast<float*>(dst + (a + 3) * dq + b), r3);
      }
      for (; b < b1; ++b)
        for (int64_t k = 0; k < 4; ++k) dst[(a + k) * dq + b] = src[a + k + b * si];
    }
  }
#endif
  for (; a < a1; ++a) {
    T* d = dst + a * dq;
    const T* s = src + a;
    for (int64_t b = b0; b < b1; ++b) d[b] = s[b * si];
  }
}

void fill_bytes(void* y, int64_t n, const void* value, size_t elem_size) {
  const unsigned char* v = static_cast<const unsigned char*>(value);
  bool zero = true;
  for (size_t b = 0; b < elem_size; ++b) zero = zero && v[b] == 0;
  if (zero || elem_size == 1) {
    const int c = v[0];
    parallel_for(n * int64_t(elem_size), kByteGrain * 4,
                 [&](int64_t lo, int64_t hi) {
                   std::memset(static_cast<char*>(y) + lo, c, size_t(hi - lo));
                 });
    return;
  }
  dispatch_size(elem_size, [&](auto unit, bool wide) {
    using T = decltype(unit);
    if (!wide) {
      T val;
      std::memcpy(&val, value, sizeof(T));
      T* out = static_cast<T*>(y);
      parallel_for(n, kByteGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) out[i] = val;
      });
    } else {
      char* out = static_cast<char*>(y);
      parallel_for(n, std::max<int64_t>(1, kByteGrain / int64_t(elem_size)),
                   [&](int64_t lo, int64_t hi) {
                     for (int64_t i = lo; i < hi; ++i)
                       std::memcpy(out + i * int64_t(elem_size), value,
                                   elem_size);
                   });
    }
  });
}

void zero_f32(float* x, int64_t n) {
  const float z = 0.0f;
  fill_bytes(x, n, &z, sizeof(float));
}

// ---- elementwise ------------------------------------------------------------

// y[i] = op(x[i]) through cpu/vmath (op an hmrt_fused_op), in pieces.
hmrt_status vmath_map_f32(int64_t op, const float* x, float* y, int64_t n) {
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    vmath::map(op, x + lo, nullptr, nullptr, y + lo, hi - lo);
  });
  return HMRT_OK;
}

// y = op(a, b) over a plan (0: y, 1: a, 2: b); y's inner stride is 1 and
// the inputs' are 0 or 1.
template <class T, class Op>
void binary_plan(const Plan& p, const T* a, const T* b, T* y, Op op) {
  const int64_t sa = p.inner_stride(1), sb = p.inner_stride(2);
  run_plan(p, kGrain, [&](const int64_t* off, int64_t len) {
    T* yp = y + off[0];
    const T* ap = a + off[1];
    const T* bp = b + off[2];
    if (sa == 1 && sb == 1) {
      for (int64_t i = 0; i < len; ++i) yp[i] = op(ap[i], bp[i]);
    } else if (sa == 1) {
      const T bv = *bp;
      for (int64_t i = 0; i < len; ++i) yp[i] = op(ap[i], bv);
    } else if (sb == 1) {
      const T av = *ap;
      for (int64_t i = 0; i < len; ++i) yp[i] = op(av, bp[i]);
    } else {
      const T v = op(*ap, *bp);
      for (int64_t i = 0; i < len; ++i) yp[i] = v;
    }
  });
}

hmrt_status check_binary_args(const char* fn, const void* a, int32_t ra,
                              const int64_t* sa, const void* b, int32_t rb,
                              const int64_t* sb, const void* y, int32_t ry,
                              const int64_t* sy, int64_t* ny) {
  int64_t na, nb;
  hmrt_status st = check_shape(fn, "a", ra, sa, &na);
  if (st != HMRT_OK) return st;
  if ((st = check_shape(fn, "b", rb, sb, &nb)) != HMRT_OK) return st;
  if ((st = check_shape(fn, "y", ry, sy, ny)) != HMRT_OK) return st;
  const char* names[2] = {"a", "b"};
  const int32_t ranks[2] = {ra, rb};
  const int64_t* shapes[2] = {sa, sb};
  if ((st = check_broadcast(fn, 2, names, ranks, shapes, ry, sy)) != HMRT_OK)
    return st;
  HMRT_CHECK_DATA(fn, a, *ny ? na : 0);
  HMRT_CHECK_DATA(fn, b, *ny ? nb : 0);
  HMRT_CHECK_DATA(fn, y, *ny);
  return HMRT_OK;
}

using ew::ipow;
using ew::wrap_add;
using ew::wrap_mul;
using ew::wrap_sub;

// ---- dtypes -----------------------------------------------------------------

template <int DT> struct DType;
template <> struct DType<HMRT_DTYPE_F32> {
  using T = float;
  static constexpr bool kFloat = true, kBool = false;
};
template <> struct DType<HMRT_DTYPE_F64> {
  using T = double;
  static constexpr bool kFloat = true, kBool = false;
};
template <> struct DType<HMRT_DTYPE_U8> {
  using T = uint8_t;
  static constexpr bool kFloat = false, kBool = false;
};
template <> struct DType<HMRT_DTYPE_I8> {
  using T = int8_t;
  static constexpr bool kFloat = false, kBool = false;
};
template <> struct DType<HMRT_DTYPE_I32> {
  using T = int32_t;
  static constexpr bool kFloat = false, kBool = false;
};
template <> struct DType<HMRT_DTYPE_I64> {
  using T = int64_t;
  static constexpr bool kFloat = false, kBool = false;
};
template <> struct DType<HMRT_DTYPE_BOOL> {
  using T = uint8_t;
  static constexpr bool kFloat = false, kBool = true;
};
template <> struct DType<HMRT_DTYPE_U16> {
  using T = uint16_t;
  static constexpr bool kFloat = false, kBool = false;
};
template <> struct DType<HMRT_DTYPE_I16> {
  using T = int16_t;
  static constexpr bool kFloat = false, kBool = false;
};
template <> struct DType<HMRT_DTYPE_U32> {
  using T = uint32_t;
  static constexpr bool kFloat = false, kBool = false;
};
template <> struct DType<HMRT_DTYPE_U64> {
  using T = uint64_t;
  static constexpr bool kFloat = false, kBool = false;
};
// The 16-bit floats are stored as their bits, in distinct types so that
// nothing converts them as integers by accident.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
template <> struct DType<HMRT_DTYPE_F16> {
  using T = Half;
  static constexpr bool kFloat = true, kBool = false;
};
template <> struct DType<HMRT_DTYPE_BF16> {
  using T = BFloat16;
  static constexpr bool kFloat = true, kBool = false;
};
static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2,
              "16-bit floats are two bytes");

static_assert(!DType<HMRT_DTYPE_BOOL>::kFloat && DType<HMRT_DTYPE_BOOL>::kBool,
              "BOOL is a one-byte integer 0 or 1");

template <int DT>
using DTag = std::integral_constant<int, DT>;

// Calls f(DTag<dt>{}) for a supported dtype; false for any other value.
template <class F>
bool dispatch_dtype(int32_t dt, F&& f) {
  switch (dt) {
    case HMRT_DTYPE_F32: f(DTag<HMRT_DTYPE_F32>{}); return true;
    case HMRT_DTYPE_U8: f(DTag<HMRT_DTYPE_U8>{}); return true;
    case HMRT_DTYPE_I8: f(DTag<HMRT_DTYPE_I8>{}); return true;
    case HMRT_DTYPE_I32: f(DTag<HMRT_DTYPE_I32>{}); return true;
    case HMRT_DTYPE_I64: f(DTag<HMRT_DTYPE_I64>{}); return true;
    case HMRT_DTYPE_BOOL: f(DTag<HMRT_DTYPE_BOOL>{}); return true;
    case HMRT_DTYPE_F64: f(DTag<HMRT_DTYPE_F64>{}); return true;
    case HMRT_DTYPE_U16: f(DTag<HMRT_DTYPE_U16>{}); return true;
    case HMRT_DTYPE_I16: f(DTag<HMRT_DTYPE_I16>{}); return true;
    case HMRT_DTYPE_F16: f(DTag<HMRT_DTYPE_F16>{}); return true;
    case HMRT_DTYPE_U32: f(DTag<HMRT_DTYPE_U32>{}); return true;
    case HMRT_DTYPE_U64: f(DTag<HMRT_DTYPE_U64>{}); return true;
    case HMRT_DTYPE_BF16: f(DTag<HMRT_DTYPE_BF16>{}); return true;
  }
  return false;
}

bool valid_dtype(int32_t dt) {
  return dispatch_dtype(dt, [](auto) {});
}

size_t dtype_size(int32_t dt) {
  size_t s = 0;
  dispatch_dtype(dt, [&](auto tag) {
    s = sizeof(typename DType<decltype(tag)::value>::T);
  });
  return s;
}

// Float to integer: truncate toward zero, NaN -> 0, saturate out of range.
template <class To>
inline To float_to_int(double d) {
  constexpr To lo = std::numeric_limits<To>::min();
  constexpr To hi = std::numeric_limits<To>::max();
  if (d != d) return 0;
  // (double)hi rounds up to 2^63 for int64; >= catches it too.
  if (d >= double(hi)) return hi;
  if (d <= double(lo)) return lo;
  return static_cast<To>(d);
}

// ---- 16-bit floats ----

// binary16 and bfloat16: core/float16.h.

// An element's value in a type that C++ converts with the rules we want:
// 16-bit floats widen exactly to float, BOOL reads as 0 or 1.
template <int DT>
inline auto widen(typename DType<DT>::T v) {
  if constexpr (DT == HMRT_DTYPE_F16)
    return half_to_float(v.bits);
  else if constexpr (DT == HMRT_DTYPE_BF16)
    return bf16_to_float(v.bits);
  else if constexpr (DType<DT>::kBool)
    return uint8_t(v != 0);
  else
    return v;
}

template <int F, int To>
inline typename DType<To>::T convert(typename DType<F>::T v) {
  using TT = typename DType<To>::T;
  const auto w = widen<F>(v);
  if constexpr (DType<To>::kBool) {
    return TT(w != 0);
  } else if constexpr (To == HMRT_DTYPE_F16) {
    // Exact in double for every source except integers beyond 2^53, which
    // overflow half anyway.
    return TT{double_to_half(double(w))};
  } else if constexpr (To == HMRT_DTYPE_BF16) {
    return TT{float_to_bf16(static_cast<float>(w))};
  } else if constexpr (DType<To>::kFloat) {
    return static_cast<TT>(w);
  } else if constexpr (DType<F>::kFloat) {
    return float_to_int<TT>(double(w));
  } else {
    return static_cast<TT>(w);  // two's complement wrap
  }
}

// By value: NaN != NaN, -0 == +0, BOOL by truth value.
template <int DT>
inline bool equal_elems(typename DType<DT>::T a, typename DType<DT>::T b) {
  return widen<DT>(a) == widen<DT>(b);
}

// ---- reduce_to helpers ------------------------------------------------------

// unravel_xy and sum_run: core/reduce_math.h.


}  // namespace
}  // namespace hmrt

extern "C" {

using namespace hmrt;

// ---- elementwise ------------------------------------------------------------

hmrt_status hmrt_unary_f32(hmrt_unary_op op, const float* x, float* y,
                           int64_t n) {
  const char* fn = "hmrt_unary_f32";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_DATA(fn, x, n);
  HMRT_CHECK_DATA(fn, y, n);
  switch (op) {
    case HMRT_UNARY_IDENTITY:
      if (x != y)
        parallel_for(n, kGrain * 4, [&](int64_t lo, int64_t hi) {
          std::memcpy(y + lo, x + lo, size_t(hi - lo) * sizeof(float));
        });
      break;
    default: {
      const int64_t f = ew::fused_of_unary(op);
      if (f < 0) return fail(HMRT_INVALID_ARGUMENT, "%s: unknown op %d", fn, (int)op);
      return vmath_map_f32(f, x, y, n);
    }
  }
  return HMRT_OK;
}

hmrt_status hmrt_neg_i64(const int64_t* x, int64_t* y, int64_t n) {
  const char* fn = "hmrt_neg_i64";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_DATA(fn, x, n);
  HMRT_CHECK_DATA(fn, y, n);
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) y[i] = wrap_sub(0, x[i]);
  });
  return HMRT_OK;
}

hmrt_status hmrt_binary_f32(hmrt_binary_op op, const float* a, int32_t ra,
                            const int64_t* sa, const float* b, int32_t rb,
                            const int64_t* sb, float* y, int32_t ry,
                            const int64_t* sy) {
  const char* fn = "hmrt_binary_f32";
  HMRT_CHECK_ARG(op >= HMRT_BINARY_ADD && op <= HMRT_BINARY_MIN,
                 "%s: unknown op %d", fn, (int)op);
  int64_t ny;
  hmrt_status st = check_binary_args(fn, a, ra, sa, b, rb, sb, y, ry, sy, &ny);
  if (st != HMRT_OK) return st;
  Plan p;
  const int32_t ranks[2] = {ra, rb};
  const int64_t* shapes[2] = {sa, sb};
  if (!broadcast_plan(p, 2, ranks, shapes, ry, sy)) return HMRT_OK;
  switch (op) {
    case HMRT_BINARY_ADD:
      binary_plan(p, a, b, y, [](float u, float v) { return u + v; });
      break;
    case HMRT_BINARY_SUB:
      binary_plan(p, a, b, y, [](float u, float v) { return u - v; });
      break;
    case HMRT_BINARY_MUL:
      binary_plan(p, a, b, y, [](float u, float v) { return u * v; });
      break;
    case HMRT_BINARY_DIV:
      binary_plan(p, a, b, y, [](float u, float v) { return u / v; });
      break;
    case HMRT_BINARY_POW:
      binary_plan(p, a, b, y, [](float u, float v) { return std::pow(u, v); });
      break;
    case HMRT_BINARY_MAX:
      binary_plan(p, a, b, y, ew::max);
      break;
    case HMRT_BINARY_MIN:
      binary_plan(p, a, b, y, ew::min);
      break;
  }
  return HMRT_OK;
}

hmrt_status hmrt_binary_i64(hmrt_binary_op op, const int64_t* a, int32_t ra,
                            const int64_t* sa, const int64_t* b, int32_t rb,
                            const int64_t* sb, int64_t* y, int32_t ry,
                            const int64_t* sy) {
  const char* fn = "hmrt_binary_i64";
  HMRT_CHECK_ARG(op >= HMRT_BINARY_ADD && op <= HMRT_BINARY_MIN,
                 "%s: unknown op %d", fn, (int)op);
  int64_t ny;
  hmrt_status st = check_binary_args(fn, a, ra, sa, b, rb, sb, y, ry, sy, &ny);
  if (st != HMRT_OK) return st;
  if (ny == 0) return HMRT_OK;
  // With a non-empty output every element of b is used.
  int64_t nb;
  check_shape(fn, "b", rb, sb, &nb);
  if (op == HMRT_BINARY_DIV || op == HMRT_BINARY_POW) {
    for (int64_t i = 0; i < nb; ++i) {
      HMRT_CHECK_ARG(op != HMRT_BINARY_DIV || b[i] != 0,
                     "%s: division by zero: b[%lld] is 0", fn, (long long)i);
      HMRT_CHECK_ARG(op != HMRT_BINARY_POW || b[i] >= 0,
                     "%s: negative integer exponent: b[%lld] is %lld", fn,
                     (long long)i, (long long)b[i]);
    }
  }
  Plan p;
  const int32_t ranks[2] = {ra, rb};
  const int64_t* shapes[2] = {sa, sb};
  broadcast_plan(p, 2, ranks, shapes, ry, sy);
  switch (op) {
    case HMRT_BINARY_ADD: binary_plan(p, a, b, y, wrap_add); break;
    case HMRT_BINARY_SUB: binary_plan(p, a, b, y, wrap_sub); break;
    case HMRT_BINARY_MUL: binary_plan(p, a, b, y, wrap_mul); break;
    case HMRT_BINARY_DIV:
      binary_plan(p, a, b, y, ew::div_i64);
      break;
    case HMRT_BINARY_POW: binary_plan(p, a, b, y, ipow); break;
    case HMRT_BINARY_MAX:
      binary_plan(p, a, b, y,
                  [](int64_t u, int64_t v) { return u > v ? u : v; });
      break;
    case HMRT_BINARY_MIN:
      binary_plan(p, a, b, y,
                  [](int64_t u, int64_t v) { return u < v ? u : v; });
      break;
  }
  return HMRT_OK;
}

hmrt_status hmrt_equal(int32_t dtype, const void* a, int32_t ra,
                       const int64_t* sa, const void* b, int32_t rb,
                       const int64_t* sb, uint8_t* y, int32_t ry,
                       const int64_t* sy) {
  const char* fn = "hmrt_equal";
  HMRT_CHECK_ARG(valid_dtype(dtype), "%s: unsupported dtype %d", fn,
                 (int)dtype);
  int64_t ny;
  hmrt_status st = check_binary_args(fn, a, ra, sa, b, rb, sb, y, ry, sy, &ny);
  if (st != HMRT_OK) return st;
  Plan p;
  const int32_t ranks[2] = {ra, rb};
  const int64_t* shapes[2] = {sa, sb};
  if (!broadcast_plan(p, 2, ranks, shapes, ry, sy)) return HMRT_OK;
  dispatch_dtype(dtype, [&](auto tag) {
    constexpr int DT = decltype(tag)::value;
    using T = typename DType<DT>::T;
    const T* ap = static_cast<const T*>(a);
    const T* bp = static_cast<const T*>(b);
    const int64_t ia = p.inner_stride(1), ib = p.inner_stride(2);
    run_plan(p, kGrain, [&](const int64_t* off, int64_t len) {
      uint8_t* yo = y + off[0];
      const T* ao = ap + off[1];
      const T* bo = bp + off[2];
      if (ia == 1 && ib == 1) {
        for (int64_t i = 0; i < len; ++i) yo[i] = equal_elems<DT>(ao[i], bo[i]);
      } else if (ia == 1) {
        const T bv = *bo;
        for (int64_t i = 0; i < len; ++i) yo[i] = equal_elems<DT>(ao[i], bv);
      } else {
        for (int64_t i = 0; i < len; ++i)
          yo[i] = equal_elems<DT>(ao[i * ia], bo[i * ib]);
      }
    });
  });
  return HMRT_OK;
}

hmrt_status hmrt_where(const uint8_t* cond, int32_t rc, const int64_t* sc,
                       const void* x, int32_t rx, const int64_t* sx,
                       const void* z, int32_t rz, const int64_t* sz, void* y,
                       int32_t ry, const int64_t* sy, size_t elem_size) {
  const char* fn = "hmrt_where";
  int64_t nc, nx, nz, ny;
  hmrt_status st = check_shape(fn, "cond", rc, sc, &nc);
  if (st != HMRT_OK) return st;
  if ((st = check_shape(fn, "x", rx, sx, &nx)) != HMRT_OK) return st;
  if ((st = check_shape(fn, "z", rz, sz, &nz)) != HMRT_OK) return st;
  if ((st = check_shape(fn, "y", ry, sy, &ny)) != HMRT_OK) return st;
  const char* names[3] = {"cond", "x", "z"};
  const int32_t ranks[3] = {rc, rx, rz};
  const int64_t* shapes[3] = {sc, sx, sz};
  if ((st = check_broadcast(fn, 3, names, ranks, shapes, ry, sy)) != HMRT_OK)
    return st;
  if ((st = check_elem_size(fn, elem_size, std::max({nx, nz, ny}))) != HMRT_OK)
    return st;
  HMRT_CHECK_DATA(fn, cond, ny ? nc : 0);
  HMRT_CHECK_DATA(fn, x, ny ? nx : 0);
  HMRT_CHECK_DATA(fn, z, ny ? nz : 0);
  HMRT_CHECK_DATA(fn, y, ny);
  Plan p;
  if (!broadcast_plan(p, 3, ranks, shapes, ry, sy)) return HMRT_OK;
  dispatch_size(elem_size, [&](auto unit, bool wide) {
    using T = decltype(unit);
    Plan q = p;
    if (wide) {
      // Re-plan with a byte dim: cond keeps its element strides.
      q.nops = 4;
      q.set_dims(ry, sy);
      q.set_dense(0);
      for (int i = 0; i < 3; ++i) q.set_broadcast(i + 1, ranks[i], shapes[i]);
      const bool scale[4] = {true, false, true, true};
      q.add_byte_dim(int64_t(elem_size), scale);
      q.merge();
    }
    T* yp = static_cast<T*>(y);
    const T* xp = static_cast<const T*>(x);
    const T* zp = static_cast<const T*>(z);
    const int64_t ic = q.inner_stride(1), ix = q.inner_stride(2),
                  iz = q.inner_stride(3);
    run_plan(q, kGrain, [&](const int64_t* off, int64_t len) {
      T* yo = yp + off[0];
      const uint8_t* co = cond + off[1];
      const T* xo = xp + off[2];
      const T* zo = zp + off[3];
      if (ic == 1 && ix == 1 && iz == 1) {
        for (int64_t i = 0; i < len; ++i) yo[i] = co[i] ? xo[i] : zo[i];
      } else {
        for (int64_t i = 0; i < len; ++i)
          yo[i] = co[i * ic] ? xo[i * ix] : zo[i * iz];
      }
    });
  });
  return HMRT_OK;
}

hmrt_status hmrt_cast(int32_t from_dtype, const void* x, int32_t to_dtype,
                      void* y, int64_t n) {
  const char* fn = "hmrt_cast";
  HMRT_CHECK_ARG(valid_dtype(from_dtype), "%s: unsupported from_dtype %d", fn,
                 (int)from_dtype);
  HMRT_CHECK_ARG(valid_dtype(to_dtype), "%s: unsupported to_dtype %d", fn,
                 (int)to_dtype);
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_DATA(fn, x, n);
  HMRT_CHECK_DATA(fn, y, n);
  if (from_dtype == to_dtype && from_dtype != HMRT_DTYPE_BOOL) {
    if (x != y) {
      const size_t es = dtype_size(from_dtype);
      parallel_for(n * int64_t(es), kByteGrain * 4,
                   [&](int64_t lo, int64_t hi) {
                     std::memcpy(static_cast<char*>(y) + lo,
                                 static_cast<const char*>(x) + lo,
                                 size_t(hi - lo));
                   });
    }
    return HMRT_OK;
  }
  dispatch_dtype(from_dtype, [&](auto ftag) {
    dispatch_dtype(to_dtype, [&](auto ttag) {
      constexpr int F = decltype(ftag)::value, To = decltype(ttag)::value;
      using TF = typename DType<F>::T;
      using TT = typename DType<To>::T;
      const TF* xp = static_cast<const TF*>(x);
      TT* yp = static_cast<TT*>(y);
      parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) yp[i] = convert<F, To>(xp[i]);
      });
    });
  });
  return HMRT_OK;
}

hmrt_status hmrt_round_bf16(const float* x, uint16_t* y, int64_t n) {
  const char* fn = "hmrt_round_bf16";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_DATA(fn, x, n);
  HMRT_CHECK_DATA(fn, y, n);
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) y[i] = float_to_bf16_rne(x[i]);
  });
  return HMRT_OK;
}

// ---- data movement ----------------------------------------------------------

hmrt_status hmrt_transpose(const void* x, int32_t rank, const int64_t* shape,
                           const int64_t* perm, void* y, size_t elem_size) {
  const char* fn = "hmrt_transpose";
  int64_t n;
  hmrt_status st = check_shape(fn, "x", rank, shape, &n);
  if (st != HMRT_OK) return st;
  if ((st = check_elem_size(fn, elem_size, n)) != HMRT_OK) return st;
  if ((st = check_perm(fn, rank, perm)) != HMRT_OK) return st;
  HMRT_CHECK_DATA(fn, x, n);
  HMRT_CHECK_DATA(fn, y, n);
  if (n == 0) return HMRT_OK;
  int64_t xs[kMaxRank], odims[kMaxRank], src_st[kMaxRank], dst_st[kMaxRank];
  dense_strides(rank, shape, xs);
  for (int d = 0; d < rank; ++d) {
    odims[d] = shape[perm[d]];
    src_st[d] = xs[perm[d]];
  }
  dense_strides(rank, odims, dst_st);
  bool tiled = false;
  dispatch_size(elem_size, [&](auto unit, bool wide) {
    using T = decltype(unit);
    if (wide) return;
    Plan p;
    p.nops = 2;
    p.set_dims(rank, odims);
    for (int d = 0; d < rank; ++d) {
      p.st[0][d] = dst_st[d];
      p.st[1][d] = src_st[d];
    }
    p.merge();
    const int r = p.rank;
    if (r < 2 || p.st[1][r - 1] == 1) return;
    // The output's inner dim reads x with a large stride: move 32 x 32
    // tiles of (dim q, inner dim), q being the dim x is contiguous in, so
    // both the reads and the writes stay in cache.
    int q = -1;
    for (int d = 0; d < r - 1; ++d)
      if (p.st[1][d] == 1) q = d;
    if (q < 0) return;
    int outer_dims[kPlanRank];
    int no = 0;
    int64_t outer = 1;
    for (int d = 0; d < r - 1; ++d)
      if (d != q) {
        outer_dims[no++] = d;
        outer *= p.dims[d];
      }
    constexpr int64_t B = 32;
    const int64_t nq = p.dims[q], ni = p.dims[r - 1];
    const int64_t tq = ceil_div(nq, B), ti = ceil_div(ni, B);
    const int64_t dq = p.st[0][q], si = p.st[1][r - 1];
    const T* src = static_cast<const T*>(x);
    T* dst = static_cast<T*>(y);
    parallel_for(outer * tq * ti, std::max<int64_t>(1, kGrain / (B * B)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t t = lo; t < hi; ++t) {
                     const int64_t o = t / (tq * ti), rem = t % (tq * ti);
                     const int64_t a0 = (rem / ti) * B, b0 = (rem % ti) * B;
                     const int64_t a1 = std::min(nq, a0 + B);
                     const int64_t b1 = std::min(ni, b0 + B);
                     int64_t doff, soff;
                     unravel_xy(p, outer_dims, no, o, &doff, &soff);
                     transpose_tile(dst + doff, dq, src + soff, si, a0, a1,
                                    b0, b1);
                   }
                 });
    tiled = true;
  });
  if (!tiled)
    strided_copy(rank, odims, dst_st, src_st, y, 0, x, 0, elem_size);
  return HMRT_OK;
}

hmrt_status hmrt_slice(const void* x, int32_t rank, const int64_t* shape,
                       const int64_t* starts, const int64_t* steps,
                       const int64_t* out_shape, void* y, size_t elem_size) {
  const char* fn = "hmrt_slice";
  int64_t nx, ny;
  hmrt_status st = check_slice(fn, x, rank, shape, starts, steps, out_shape, y,
                               &nx, &ny);
  if (st != HMRT_OK) return st;
  if ((st = check_elem_size(fn, elem_size, std::max(nx, ny))) != HMRT_OK)
    return st;
  if (ny == 0) return HMRT_OK;
  int64_t src_st[kMaxRank], dst_st[kMaxRank], base;
  slice_strides(rank, shape, starts, steps, src_st, &base);
  dense_strides(rank, out_shape, dst_st);
  strided_copy(rank, out_shape, dst_st, src_st, y, 0, x, base, elem_size);
  return HMRT_OK;
}

hmrt_status hmrt_slice_backward_f32(const float* dy, int32_t rank,
                                    const int64_t* shape,
                                    const int64_t* starts,
                                    const int64_t* steps,
                                    const int64_t* out_shape, float* dx) {
  const char* fn = "hmrt_slice_backward_f32";
  int64_t nx, ny;
  hmrt_status st = check_slice(fn, dx, rank, shape, starts, steps, out_shape,
                               dy, &nx, &ny);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_DATA(fn, dx, nx);
  zero_f32(dx, nx);
  if (ny == 0) return HMRT_OK;
  int64_t dst_st[kMaxRank], src_st[kMaxRank], base;
  slice_strides(rank, shape, starts, steps, dst_st, &base);
  dense_strides(rank, out_shape, src_st);
  strided_copy(rank, out_shape, dst_st, src_st, dx, base, dy, 0,
               sizeof(float));
  return HMRT_OK;
}

hmrt_status hmrt_concat(int32_t n, const void* const* inputs,
                        const int64_t* sizes, int32_t rank,
                        const int64_t* out_shape, int32_t axis, void* y,
                        size_t elem_size) {
  const char* fn = "hmrt_concat";
  int64_t ny, outer, inner;
  hmrt_status st = check_concat(fn, n, inputs, sizes, rank, out_shape, &axis, &ny, &outer,
                                &inner);
  if (st != HMRT_OK) return st;
  if ((st = check_elem_size(fn, elem_size, ny)) != HMRT_OK) return st;
  const int64_t total_axis = out_shape[axis];
  HMRT_CHECK_DATA(fn, y, ny);
  if (ny == 0) return HMRT_OK;
  // Each output row (one outer index) is the inputs' rows side by side; the
  // output's bytes are split across threads and copied segment by segment.
  const int64_t es = int64_t(elem_size);
  const int64_t row = total_axis * inner * es;
  std::vector<int64_t> start;  // byte offset of input i within a row
  try {
    start.resize(size_t(n) + 1);
  } catch (const std::bad_alloc&) {
    return fail(HMRT_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  start[0] = 0;
  for (int32_t i = 0; i < n; ++i) start[i + 1] = start[i] + sizes[i] * inner * es;
  char* out = static_cast<char*>(y);
  parallel_for(outer * row, kByteGrain * 4, [&](int64_t lo, int64_t hi) {
    int64_t pos = lo;
    while (pos < hi) {
      const int64_t o = pos / row, w = pos % row;
      // The input whose segment holds byte w (skipping empty inputs).
      const int64_t i =
          std::upper_bound(start.begin(), start.end(), w) - start.begin() - 1;
      const int64_t seg = start[i + 1] - start[i];
      const int64_t within = w - start[i];
      const int64_t len = std::min(seg - within, hi - pos);
      std::memcpy(out + pos,
                  static_cast<const char*>(inputs[i]) + o * seg + within,
                  size_t(len));
      pos += len;
    }
  });
  return HMRT_OK;
}

hmrt_status hmrt_gather(const void* x, int32_t rank, const int64_t* shape,
                        int32_t axis, int32_t idx_dtype, const void* idx,
                        int64_t n_idx, void* y, size_t elem_size) {
  const char* fn = "hmrt_gather";
  int64_t outer, inner, nx;
  hmrt_status st = check_gather(fn, x, rank, shape, axis, idx_dtype, idx,
                                n_idx, y, &axis, &outer, &inner);
  if (st != HMRT_OK) return st;
  check_shape(fn, "x", rank, shape, &nx);
  if ((st = check_elem_size(fn, elem_size, std::max(nx, outer * n_idx * inner))) !=
      HMRT_OK)
    return st;
  const int64_t rows = outer * n_idx;
  if (rows == 0 || inner == 0) return HMRT_OK;
  const int64_t dim = shape[axis];
  const int64_t rb = inner * int64_t(elem_size);  // bytes per row
  const char* src = static_cast<const char*>(x);
  char* dst = static_cast<char*>(y);
  auto src_row = [&](int64_t r) {
    const int64_t o = r / n_idx, j = r % n_idx;
    int64_t v = load_index(idx, idx_dtype, j);
    if (v < 0) v += dim;
    return o * dim + v;
  };
  bool done = false;
  if (inner == 1) {
    // Scalar rows (e.g. an index select of floats): typed moves.
    dispatch_size(elem_size, [&](auto unit, bool wide) {
      using T = decltype(unit);
      if (wide) return;
      const T* s = reinterpret_cast<const T*>(src);
      T* d = reinterpret_cast<T*>(dst);
      parallel_for(rows, kGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r) d[r] = s[src_row(r)];
      });
      done = true;
    });
  }
  if (!done)
    parallel_for(rows, std::max<int64_t>(1, kByteGrain / rb),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t r = lo; r < hi; ++r)
                     std::memcpy(dst + r * rb, src + src_row(r) * rb,
                                 size_t(rb));
                 });
  return HMRT_OK;
}

hmrt_status hmrt_gather_backward_f32(const float* dy, int32_t rank,
                                     const int64_t* shape, int32_t axis,
                                     int32_t idx_dtype, const void* idx,
                                     int64_t n_idx, float* dx) {
  const char* fn = "hmrt_gather_backward_f32";
  int64_t outer, inner, nx;
  hmrt_status st = check_gather(fn, dx, rank, shape, axis, idx_dtype, idx,
                                n_idx, dy, &axis, &outer, &inner);
  if (st != HMRT_OK) return st;
  check_shape(fn, "dx", rank, shape, &nx);
  zero_f32(dx, nx);
  if (outer * n_idx * inner == 0) return HMRT_OK;
  const int64_t dim = shape[axis];
  // Tasks split the outer index, the columns (inner) and the target rows
  // (index values) into bands; every task scans all indices in order, so
  // each dx element sums its contributions in index order whatever the
  // split.  Bands only help when outer and inner give too few tasks.
  constexpr int64_t kCols = 1024;
  const int64_t ncol = ceil_div(inner, kCols);
  int64_t nband = 1;
  if (outer * ncol < num_threads())
    nband = std::min<int64_t>(dim, num_threads());
  parallel_tasks(outer * ncol * nband, [&](int64_t t) {
    const int64_t o = t / (ncol * nband), rem = t % (ncol * nband);
    const int64_t c0 = (rem / nband) * kCols, band = rem % nband;
    const int64_t c1 = std::min(inner, c0 + kCols);
    const int64_t r0 = dim * band / nband, r1 = dim * (band + 1) / nband;
    float* dxo = dx + o * dim * inner;
    const float* dyo = dy + o * n_idx * inner;
    for (int64_t j = 0; j < n_idx; ++j) {
      int64_t v = load_index(idx, idx_dtype, j);
      if (v < 0) v += dim;
      if (v < r0 || v >= r1) continue;
      float* d = dxo + v * inner;
      const float* s = dyo + j * inner;
      for (int64_t c = c0; c < c1; ++c) d[c] += s[c];
    }
  });
  return HMRT_OK;
}

hmrt_status hmrt_expand(const void* x, int32_t rx, const int64_t* sx, void* y,
                        int32_t ry, const int64_t* sy, size_t elem_size) {
  const char* fn = "hmrt_expand";
  int64_t nx, ny;
  hmrt_status st = check_shape(fn, "x", rx, sx, &nx);
  if (st != HMRT_OK) return st;
  if ((st = check_shape(fn, "y", ry, sy, &ny)) != HMRT_OK) return st;
  if ((st = check_broadcast_to(fn, "x", rx, sx, "y", ry, sy)) != HMRT_OK)
    return st;
  if ((st = check_elem_size(fn, elem_size, std::max(nx, ny))) != HMRT_OK)
    return st;
  HMRT_CHECK_DATA(fn, x, ny ? nx : 0);
  HMRT_CHECK_DATA(fn, y, ny);
  if (ny == 0) return HMRT_OK;
  Plan p;
  p.nops = 2;
  p.set_dims(ry, sy);
  p.set_broadcast(1, rx, sx);
  int64_t dst_st[kMaxRank];
  dense_strides(ry, sy, dst_st);
  strided_copy(ry, sy, dst_st, p.st[1], y, 0, x, 0, elem_size);
  return HMRT_OK;
}

hmrt_status hmrt_reduce_to_f32(const float* x, int32_t rx, const int64_t* sx,
                               float* y, int32_t ry, const int64_t* sy) {
  const char* fn = "hmrt_reduce_to_f32";
  int64_t nx, ny;
  hmrt_status st = check_shape(fn, "x", rx, sx, &nx);
  if (st != HMRT_OK) return st;
  if ((st = check_shape(fn, "y", ry, sy, &ny)) != HMRT_OK) return st;
  if ((st = check_broadcast_to(fn, "y", ry, sy, "x", rx, sx)) != HMRT_OK)
    return st;
  HMRT_CHECK_DATA(fn, x, nx);
  HMRT_CHECK_DATA(fn, y, ny);
  if (ny == 0) return HMRT_OK;
  if (nx == 0) {  // sums over empty dims
    zero_f32(y, ny);
    return HMRT_OK;
  }
  const ReducePlan plan(rx, sx, ry, sy);
  const Plan& p = plan.p;
  const Plan& rp = plan.rp;
  const int r = p.rank, nk = plan.nk;
  const int* kept = plan.kept;
  if (r == 0) {
    y[0] = x[0];
    return HMRT_OK;
  }
  const int64_t rcount = rp.total;
  if (p.st[1][r - 1] != 0) {
    // Inner dim kept: y rows of L columns; each task sums one block of
    // columns over the reduced indices in lexicographic order, in chunks
    // (core/reduce_math.h: reduce_to_row_element's order).
    const int64_t L = p.dims[r - 1];
    constexpr int64_t kCols = 256;
    const int64_t ncol = ceil_div(L, kCols);
    const int64_t rows = ny / L;
    const int nko = nk - 1;  // kept dims without the inner one
    const int64_t rinner = rp.inner_stride(0);
    const int64_t tasks = rows * ncol, nchunk = ceil_div(rcount, kReduceRowChunk);
    // Where task t starts in x and y, its first column and its width.
    struct Task {
      int64_t xo, yo, c0, w;
    };
    auto task_of = [&](int64_t t) {
      Task k;
      k.c0 = (t % ncol) * kCols;
      k.w = std::min(L, k.c0 + kCols) - k.c0;
      unravel_xy(p, kept, nko, t / ncol, &k.xo, &k.yo);
      return k;
    };
    // Adds the chunk of task k's reduced indices from k0 into acc[0, w).
    auto add_chunk = [&](const Task& k, int64_t k0, double* acc) {
      const int64_t w = k.w;
      for_runs(rp, k0, std::min(rcount, k0 + kReduceRowChunk),
               [&](const int64_t* off, int64_t len) {
                 const float* base = x + k.xo + off[0] + k.c0;
                 int64_t e = 0;
                 // Four rows at a time (pairwise, in double), so acc is
                 // read and written once per four elements.
                 for (; e + 4 <= len; e += 4) {
                   const float* r0 = base + e * rinner;
                   const float* r1 = r0 + rinner;
                   const float* r2 = r1 + rinner;
                   const float* r3 = r2 + rinner;
                   for (int64_t c = 0; c < w; ++c)
                     acc[c] += (double(r0[c]) + double(r1[c])) + (double(r2[c]) + double(r3[c]));
                 }
                 for (; e < len; ++e) {
                   const float* r0 = base + e * rinner;
                   for (int64_t c = 0; c < w; ++c) acc[c] += r0[c];
                 }
               });
    };
    if (tasks >= num_threads() || nchunk == 1) {
      parallel_for(tasks, std::max<int64_t>(1, kGrain / (rcount * std::min(L, kCols))),
                   [&](int64_t lo, int64_t hi) {
                     double acc[kCols], total[kCols];
                     for (int64_t t = lo; t < hi; ++t) {
                       const Task k = task_of(t);
                       std::fill(total, total + k.w, 0.0);
                       for (int64_t k0 = 0; k0 < rcount; k0 += kReduceRowChunk) {
                         std::fill(acc, acc + k.w, 0.0);
                         add_chunk(k, k0, acc);
                         for (int64_t c = 0; c < k.w; ++c) total[c] += acc[c];
                       }
                       for (int64_t c = 0; c < k.w; ++c)
                         y[k.yo + k.c0 + c] = static_cast<float>(total[c]);
                     }
                   });
      return HMRT_OK;
    }
    // Fewer tasks than threads (a bias gradient: one row): the chunks of
    // each task in parallel too, their sums added in chunk order, the same
    // order as above (cpu/ordered_sums.h).
    std::vector<double> total;
    if (!ordered_chunk_sums(tasks, nchunk, kCols, &total, [&](int64_t t, int64_t k, double* acc) {
          add_chunk(task_of(t), k * kReduceRowChunk, acc);
        }))
      return fail(HMRT_OUT_OF_MEMORY, "%s: out of memory", fn);
    for (int64_t t = 0; t < tasks; ++t) {
      const Task k = task_of(t);
      for (int64_t c = 0; c < k.w; ++c)
        y[k.yo + k.c0 + c] = static_cast<float>(total[size_t(t * kCols + c)]);
    }
    return HMRT_OK;
  }
  // Inner dim summed: each y element sums rcount elements of x made of
  // contiguous runs.  The reduced index space is cut into fixed blocks
  // (independent of the thread count) whose partial sums are added in
  // order, so large sums to few outputs still use every thread.
  constexpr int64_t kBlock = kReduceRunBlock;  // core/reduce_math.h
  const int64_t nblk = ceil_div(rcount, kBlock);
  std::vector<double> partial;
  try {
    partial.resize(size_t(ny * nblk));
  } catch (const std::bad_alloc&) {
    return fail(HMRT_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  parallel_for(ny * nblk, std::max<int64_t>(1, kGrain / std::min(rcount, kBlock)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t t = lo; t < hi; ++t) {
                   const int64_t yi = t / nblk, b = t % nblk;
                   int64_t xo, yo;
                   unravel_xy(p, kept, nk, yi, &xo, &yo);
                   double s = 0.0;
                   for_runs(rp, b * kBlock, std::min(rcount, (b + 1) * kBlock),
                            [&](const int64_t* off, int64_t len) {
                              s += sum_run(x + xo + off[0], len);
                            });
                   partial[size_t(t)] = s;
                 }
               });
  parallel_for(ny, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t yi = lo; yi < hi; ++yi) {
      int64_t xo, yo;
      unravel_xy(p, kept, nk, yi, &xo, &yo);
      double s = 0.0;
      for (int64_t b = 0; b < nblk; ++b) s += partial[size_t(yi * nblk + b)];
      y[yo] = static_cast<float>(s);
    }
  });
  return HMRT_OK;
}

hmrt_status hmrt_trilu(const void* x, int32_t rank, const int64_t* shape,
                       int64_t k, int32_t upper, void* y, size_t elem_size) {
  const char* fn = "hmrt_trilu";
  int64_t n;
  hmrt_status st = check_shape(fn, "x", rank, shape, &n);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_ARG(rank >= 2, "%s: x must have rank >= 2, got %d", fn,
                 (int)rank);
  if ((st = check_elem_size(fn, elem_size, n)) != HMRT_OK) return st;
  HMRT_CHECK_DATA(fn, x, n);
  HMRT_CHECK_DATA(fn, y, n);
  if (n == 0) return HMRT_OK;
  const int64_t M = shape[rank - 2], N = shape[rank - 1];
  // |j - i| < max(M, N), so clamping k this far changes nothing.
  const int64_t lim = M + N;
  k = std::max(-lim, std::min(lim, k));
  const int64_t es = int64_t(elem_size);
  const int64_t rows = n / N;  // batch * M
  const char* src = static_cast<const char*>(x);
  char* dst = static_cast<char*>(y);
  parallel_for(rows, std::max<int64_t>(1, kByteGrain / (N * es)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t r = lo; r < hi; ++r) {
                   const int64_t i = r % M;
                   // Kept columns [j0, j1).
                   int64_t j0, j1;
                   if (upper) {
                     j0 = std::max<int64_t>(0, std::min(N, i + k));
                     j1 = N;
                   } else {
                     j0 = 0;
                     j1 = std::max<int64_t>(0, std::min(N, i + k + 1));
                   }
                   char* d = dst + r * N * es;
                   const char* s = src + r * N * es;
                   std::memset(d, 0, size_t(j0 * es));
                   if (d != s && j1 > j0)
                     std::memcpy(d + j0 * es, s + j0 * es,
                                 size_t((j1 - j0) * es));
                   std::memset(d + j1 * es, 0, size_t((N - j1) * es));
                 }
               });
  return HMRT_OK;
}

hmrt_status hmrt_fill(void* y, int64_t n, const void* value,
                      size_t elem_size) {
  const char* fn = "hmrt_fill";
  HMRT_CHECK_SIZE(fn, n);
  hmrt_status st = check_elem_size(fn, elem_size, n);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_DATA(fn, y, n);
  HMRT_CHECK_ARG(value != nullptr, "%s: value is NULL", fn);
  if (n > 0) fill_bytes(y, n, value, elem_size);
  return HMRT_OK;
}

hmrt_status hmrt_range_f32(float start, float delta, float* y, int64_t n) {
  const char* fn = "hmrt_range_f32";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_DATA(fn, y, n);
  const double s = start, dl = delta;
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      y[i] = static_cast<float>(s + double(i) * dl);
  });
  return HMRT_OK;
}

hmrt_status hmrt_range_i64(int64_t start, int64_t delta, int64_t* y,
                           int64_t n) {
  const char* fn = "hmrt_range_i64";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_DATA(fn, y, n);
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) y[i] = wrap_add(start, wrap_mul(i, delta));
  });
  return HMRT_OK;
}

// ---- dropout ----------------------------------------------------------------

hmrt_status hmrt_dropout_f32(const float* x, float* y, uint8_t* mask,
                             int64_t n, float ratio, uint64_t seed,
                             uint64_t counter) {
  const char* fn = "hmrt_dropout_f32";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_DATA(fn, x, n);
  HMRT_CHECK_DATA(fn, y, n);
  hmrt_status st = check_dropout_ratio(fn, ratio);
  if (st != HMRT_OK) return st;
  if (ratio == 0.0f) {
    if (x != y)
      parallel_for(n, kGrain * 4, [&](int64_t lo, int64_t hi) {
        std::memcpy(y + lo, x + lo, size_t(hi - lo) * sizeof(float));
      });
    if (mask != nullptr && n > 0) std::memset(mask, 1, size_t(n));
    return HMRT_OK;
  }
  const DropoutMask drop(ratio, seed, counter);
  parallel_for(n, kGrain / 4, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const bool keep = drop.keep(uint64_t(i));
      y[i] = keep ? x[i] * drop.scale : 0.0f;
      if (mask != nullptr) mask[i] = keep;
    }
  });
  return HMRT_OK;
}

hmrt_status hmrt_dropout_backward_f32(const float* dy, const uint8_t* mask,
                                      float* dx, int64_t n, float ratio) {
  const char* fn = "hmrt_dropout_backward_f32";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_DATA(fn, dy, n);
  HMRT_CHECK_DATA(fn, mask, n);
  HMRT_CHECK_DATA(fn, dx, n);
  hmrt_status st = check_dropout_ratio(fn, ratio);
  if (st != HMRT_OK) return st;
  const float scale = dropout_scale(ratio);
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) dx[i] = mask[i] ? dy[i] * scale : 0.0f;
  });
  return HMRT_OK;
}

}  // extern "C"
