// ONNX-semantics NN ops over arbitrary shapes and axes (hmrt/nn_ops.h).
//
// Each op first reduces its shape to the few numbers the work needs
// (outer x n x inner around an axis, merged runs of reduced/kept dims, a
// uniform run of batch dims) and hands the common layouts to the existing
// kernels: MatMul and Gemm run on hmrt_sgemm(_strided_batched), softmax
// along the last axis on hmrt_(log_)softmax_*, LayerNormalization on
// hmrt_layernorm_*, and the row log-sum-exp and gradient of the [N, C] cross
// entropy on hmrt_cross_entropy_*.  The strided layouts (an axis that is not
// the last one) are processed in tiles of up to kTile contiguous columns so
// the inner loops stay unit-stride; they use the generic 4-float vectors of
// cpu/vec.h (vexp gives the same bits in a vector lane as in vexp1, so a
// column's result does not depend on where it sits in its tile).
//
// Reductions over several threads use a split fixed by the shapes alone, so
// results do not depend on the thread count.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <string>
#include <vector>

#include "core/float16.h"
#include "core/internal.h"
#include "cpu/gemm_internal.h"
#include "cpu/nn_ops_shared.h"
#include "cpu/vec.h"
#include "hmrt/kernels.h"
#include "hmrt/nn_ops.h"

namespace hmrt {
namespace {

constexpr int32_t kMaxRank = HMRT_MAX_RANK;
constexpr int64_t kTile = 64;  // contiguous columns per tile (strided axes)

// ---- argument checks ---------------------------------------------------------

// "[2, 3, 4]" for messages; rank and dims must already be valid.
struct ShapeText {
  char s[256];
};
ShapeText shape_text(int32_t rank, const int64_t* dims) {
  ShapeText t;
  size_t pos = 0;
  t.s[pos++] = '[';
  for (int32_t d = 0; d < rank; ++d)
    pos += std::snprintf(t.s + pos, sizeof(t.s) - pos, "%s%lld",
                         d ? ", " : "", (long long)dims[d]);
  std::snprintf(t.s + pos, sizeof(t.s) - pos, "]");
  return t;
}

// Checks min_rank <= rank <= kMaxRank, dims != NULL, dims >= 0 and that the
// element count fits int64_t; *count = that count.
hmrt_status check_shape(const char* fn, const char* what, int32_t rank,
                        const int64_t* dims, int32_t min_rank,
                        int64_t* count) {
  HMRT_CHECK_ARG(rank >= min_rank && rank <= kMaxRank,
                 "%s: the rank of %s must be in [%d, %d], got %d", fn, what,
                 min_rank, kMaxRank, rank);
  HMRT_CHECK_ARG(dims != nullptr || rank == 0,
                 "%s: the dims of %s are NULL but its rank is %d", fn, what,
                 rank);
  int64_t n = 1;
  for (int32_t d = 0; d < rank; ++d)
    HMRT_CHECK_ARG(dims[d] >= 0, "%s: dim %d of %s is %lld, must be >= 0", fn,
                   d, what, (long long)dims[d]);
  for (int32_t d = 0; d < rank; ++d)
    HMRT_CHECK_ARG(!__builtin_mul_overflow(n, dims[d], &n),
                   "%s: the element count of %s %s overflows int64", fn, what,
                   shape_text(rank, dims).s);
  *count = n;
  return HMRT_OK;
}

// axis in [-rank, rank) -> [0, rank).
hmrt_status check_axis(const char* fn, int32_t axis, int32_t rank,
                       int32_t* out) {
  HMRT_CHECK_ARG(axis >= -rank && axis < rank,
                 "%s: axis %d is outside [%d, %d) for a rank-%d tensor", fn,
                 axis, -rank, rank, rank);
  *out = axis < 0 ? axis + rank : axis;
  return HMRT_OK;
}

// Product of dims[lo, hi) (no overflow: a sub-product of a checked count,
// or checked by the caller).
int64_t prod(const int64_t* dims, int32_t lo, int32_t hi) {
  int64_t n = 1;
  for (int32_t d = lo; d < hi; ++d) n *= dims[d];
  return n;
}

// malloc'ed scratch freed at scope exit (nullptr when the allocation fails).
template <class T>
struct Buffer {
  T* p;
  explicit Buffer(int64_t n)
      : p(static_cast<T*>(std::malloc(
            static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(T)))) {}
  ~Buffer() { std::free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

// Walks the multi-indices of a row-major box of dims in order, keeping the
// offset sum idx[d] * stride[d] up to date.  n == 0 is one point.
struct Odometer {
  int n = 0;
  int64_t size[kMaxRank], stride[kMaxRank], idx[kMaxRank];
  int64_t off = 0;

  void add(int64_t sz, int64_t st) {
    size[n] = sz;
    stride[n] = st;
    ++n;
  }
  void seek(int64_t i) {
    off = 0;
    for (int d = n - 1; d >= 0; --d) {
      idx[d] = i % size[d];
      i /= size[d];
      off += idx[d] * stride[d];
    }
  }
  void next() {
    for (int d = n - 1; d >= 0; --d) {
      off += stride[d];
      if (++idx[d] < size[d]) return;
      off -= idx[d] * stride[d];
      idx[d] = 0;
    }
  }
};

// Elements per parallel piece: ~16k floats of work.
int64_t grain_for(int64_t work_per_item) {
  return std::max<int64_t>(1, (int64_t{1} << 14) /
                                  std::max<int64_t>(work_per_item, 1));
}

// ---- log-sum-exp along a strided axis -------------------------------------------

// Calls fv(j) for j = 0, 4, 8, ... while j + 4 <= w (one vector of columns),
// then fs(j) for each remaining column.  fv and fs must compute the same
// per-column result.
template <class FV, class FS>
inline void columns(int64_t w, FV fv, FS fs) {
  int64_t j = 0;
  for (; j + 4 <= w; j += 4) fv(j);
  for (; j < w; ++j) fs(j);
}

// For columns [0, w) of the tile starting at xb (n rows of stride `inner`):
// m[j] = max over rows, s[j] = sum over rows of exp(x - m[j]).
void tile_max_sumexp(const float* xb, int64_t n, int64_t inner, int64_t w,
                     float* m, float* s) {
  std::memcpy(m, xb, static_cast<size_t>(w) * sizeof(float));
  for (int64_t c = 1; c < n; ++c) {
    const float* row = xb + c * inner;
    columns(
        w, [&](int64_t j) { vstore(m + j, vmax(vload(m + j), vload(row + j))); },
        [&](int64_t j) { m[j] = m[j] > row[j] ? m[j] : row[j]; });
  }
  std::fill(s, s + w, 0.0f);
  for (int64_t c = 0; c < n; ++c) {
    const float* row = xb + c * inner;
    columns(
        w,
        [&](int64_t j) {
          vstore(s + j, vload(s + j) + vexp(vload(row + j) - vload(m + j)));
        },
        [&](int64_t j) { s[j] += vexp1(row[j] - m[j]); });
  }
}

// lse[o * inner + j] = log sum_c exp(x[o, c, j]) for x of (outer, n, inner),
// n >= 1.
void strided_lse(const float* x, int64_t outer, int64_t n, int64_t inner,
                 float* lse) {
  const int64_t tiles = ceil_div(inner, kTile);
  parallel_for(outer * tiles, grain_for(n * std::min(inner, kTile)),
               [&](int64_t lo, int64_t hi) {
                 float m[kTile], s[kTile];
                 for (int64_t u = lo; u < hi; ++u) {
                   const int64_t o = u / tiles, j0 = u % tiles * kTile;
                   const int64_t w = std::min(kTile, inner - j0);
                   tile_max_sumexp(x + o * n * inner + j0, n, inner, w, m, s);
                   for (int64_t j = 0; j < w; ++j)
                     lse[o * inner + j0 + j] = m[j] + std::log(s[j]);
                 }
               });
}

// ---- reductions -------------------------------------------------------------------

// Two floats widened to doubles, and two doubles.
typedef double v2d __attribute__((vector_size(16)));
typedef float v2f __attribute__((vector_size(8)));
inline v2d vload2(const float* p) {
  v2f f;
  std::memcpy(&f, p, sizeof(f));
  return __builtin_convertvector(f, v2d);
}
inline v2d vloadd(const double* p) {
  v2d v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void vstored(double* p, v2d v) { std::memcpy(p, &v, sizeof(v)); }

struct SumOp {
  static double init() { return 0.0; }
  static void merge(double& a, double b) { a += b; }
  // acc[j] += row[j] for j < w (each column on its own: any grouping gives
  // the same bits).
  static void add_row(double* acc, const float* row, int64_t w) {
    int64_t j = 0;
    for (; j + 4 <= w; j += 4) {
      vstored(acc + j, vloadd(acc + j) + vload2(row + j));
      vstored(acc + j + 2, vloadd(acc + j + 2) + vload2(row + j + 2));
    }
    for (; j < w; ++j) acc[j] += row[j];
  }
  // a += sum of a contiguous run: 4 interleaved partial sums (lanes of s01
  // and s23), combined pairwise, then the tail.  A fixed order.
  static void add_run(double& a, const float* p, int64_t n) {
    v2d s01 = {0, 0}, s23 = {0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      s01 += vload2(p + i);
      s23 += vload2(p + i + 2);
    }
    double s = (s01[0] + s01[1]) + (s23[0] + s23[1]);
    for (; i < n; ++i) s += p[i];
    a += s;
  }
};

struct MaxOp {
  static double init() { return -std::numeric_limits<double>::infinity(); }
  // NaN wins and then stays.
  static void merge(double& a, double b) {
    if (a == a && (b != b || b > a)) a = b;
  }
  static void add_row(double* acc, const float* row, int64_t w) {
    for (int64_t j = 0; j < w; ++j) merge(acc[j], row[j]);
  }
  static void add_run(double& a, const float* p, int64_t n) {
    // Float max (exact), NaN-propagating, then one merge.
    float m = p[0];
    bool nan = false;
    for (int64_t i = 0; i < n; ++i) {
      nan |= p[i] != p[i];
      m = p[i] > m ? p[i] : m;
    }
    merge(a, nan ? std::numeric_limits<double>::quiet_NaN() : double(m));
  }
};

// Shape of a reduction after dropping size-1 dims and merging neighbours of
// the same kind.  The last merged dim is contiguous (stride 1).
struct ReducePlan {
  Odometer kept, red;    // kept dims but the last one when inner_kept
  bool inner_kept;       // the contiguous dim is kept (else reduced)
  int64_t inner;         // its size
  int64_t outer_count;   // product of kept's sizes
  int64_t red_count;     // product of red's sizes
};

struct MergedDim {
  int64_t size, stride;
  bool red;
};

// Drops size-1 dims and merges neighbours of the same kind; returns the count.
int merge_dims(int32_t rank, const int64_t* shape, const uint8_t* reduce_axis,
               MergedDim* out) {
  int n = 0;
  int64_t stride = 1;
  MergedDim tmp[kMaxRank];
  for (int32_t d = rank - 1; d >= 0; --d) {  // innermost first
    if (shape[d] != 1) {
      const bool red = reduce_axis[d] != 0;
      if (n > 0 && tmp[n - 1].red == red)
        tmp[n - 1].size *= shape[d];
      else
        tmp[n++] = {shape[d], stride, red};
    }
    stride *= shape[d];
  }
  for (int i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  return n;
}

// Partial-sum splits of each output's reduced range: more than 1 only when
// there are few outputs (so the threads need the split), from the shapes
// alone.
int64_t reduce_splits(int64_t units, int64_t work_per_unit, int64_t range) {
  if (units >= 16) return 1;
  return std::max<int64_t>(
      1, std::min<int64_t>({16, range, work_per_unit / 32768}));
}

// Writes y = reduce(x) / divisor for the plan; false when out of memory.
template <class Op>
bool run_reduce(const float* x, const ReducePlan& p, double divisor,
                float* y) {
  if (p.inner_kept) {
    // y[o, j] = reduce over r of x[kept(o) + red(r) + j], j in tiles.
    constexpr int64_t TJ = 1024;
    const int64_t I = p.inner, tiles = ceil_div(I, TJ);
    const int64_t units = p.outer_count * tiles;
    const int64_t splits =
        reduce_splits(units, p.red_count * std::min(I, TJ), p.red_count);
    // Accumulates rows [r0, r1) of unit u into acc[0, w).
    auto accumulate = [&](int64_t u, int64_t r0, int64_t r1, double* acc) {
      const int64_t o = u / tiles, j0 = u % tiles * TJ;
      const int64_t w = std::min(TJ, I - j0);
      Odometer ko = p.kept, ro = p.red;
      ko.seek(o);
      ro.seek(r0);
      for (int64_t r = r0; r < r1; ++r, ro.next())
        Op::add_row(acc, x + ko.off + ro.off + j0, w);
    };
    auto finish = [&](int64_t u, const double* acc) {
      const int64_t o = u / tiles, j0 = u % tiles * TJ;
      const int64_t w = std::min(TJ, I - j0);
      for (int64_t j = 0; j < w; ++j)
        y[o * I + j0 + j] = static_cast<float>(acc[j] / divisor);
    };
    const int64_t grain = grain_for(p.red_count * std::min(I, TJ) / splits);
    if (splits == 1) {
      parallel_for(units, grain, [&](int64_t lo, int64_t hi) {
        double acc[TJ];
        for (int64_t u = lo; u < hi; ++u) {
          std::fill(acc, acc + TJ, Op::init());
          accumulate(u, 0, p.red_count, acc);
          finish(u, acc);
        }
      });
      return true;
    }
    Buffer<double> part(units * splits * TJ);
    if (part.p == nullptr) return false;
    parallel_for(units * splits, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t u = t / splits, s = t % splits;
        double* acc = part.p + t * TJ;
        std::fill(acc, acc + TJ, Op::init());
        accumulate(u, p.red_count * s / splits, p.red_count * (s + 1) / splits,
                   acc);
      }
    });
    for (int64_t u = 0; u < units; ++u) {
      double* acc = part.p + u * splits * TJ;
      for (int64_t s = 1; s < splits; ++s)
        for (int64_t j = 0; j < TJ; ++j) Op::merge(acc[j], acc[s * TJ + j]);
      finish(u, acc);
    }
    return true;
  }

  // y[o] = reduce over (r, l) of x[kept(o) + red(r) + l], l < L contiguous.
  const int64_t L = p.inner, T = p.red_count * L;
  const int64_t splits = reduce_splits(p.outer_count, T, T);
  // Reduces the flat range [t0, t1) of (r, l) for output o.
  auto accumulate = [&](int64_t o, int64_t t0, int64_t t1) {
    double acc = Op::init();
    Odometer ko = p.kept, ro = p.red;
    ko.seek(o);
    ro.seek(t0 / L);
    int64_t t = t0;
    while (t < t1) {
      const int64_t l0 = t % L, l1 = std::min(L, l0 + (t1 - t));
      Op::add_run(acc, x + ko.off + ro.off + l0, l1 - l0);
      t += l1 - l0;
      ro.next();
    }
    return acc;
  };
  const int64_t grain = grain_for(T / splits);
  if (splits == 1) {
    parallel_for(p.outer_count, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o)
        y[o] = static_cast<float>(accumulate(o, 0, T) / divisor);
    });
    return true;
  }
  Buffer<double> part(p.outer_count * splits);
  if (part.p == nullptr) return false;
  parallel_for(p.outer_count * splits, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t o = t / splits, s = t % splits;
      part.p[t] = accumulate(o, T * s / splits, T * (s + 1) / splits);
    }
  });
  for (int64_t o = 0; o < p.outer_count; ++o) {
    double acc = part.p[o * splits];
    for (int64_t s = 1; s < splits; ++s) Op::merge(acc, part.p[o * splits + s]);
    y[o] = static_cast<float>(acc / divisor);
  }
  return true;
}

// Shared checks of the reduce entry points: *count = elements of x,
// *kept = elements of y, *reduced = elements per group.
}  // namespace
}  // namespace hmrt

hmrt_status hmrt::check_reduce(const char* fn, int32_t rank, const int64_t* shape,
                               const uint8_t* reduce_axis, int64_t* count, int64_t* kept,
                               int64_t* reduced) {
  hmrt_status st = check_shape(fn, "x", rank, shape, 0, count);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_ARG(reduce_axis != nullptr || rank == 0,
                 "%s: reduce_axis is NULL but the rank is %d", fn, rank);
  *kept = 1;
  *reduced = 1;
  for (int32_t d = 0; d < rank; ++d) {
    if (reduce_axis[d])
      *reduced *= shape[d];
    else
      *kept *= shape[d];
  }
  return HMRT_OK;
}

// ---- MatMul (over a GEMM engine: cpu/nn_ops_shared.h) ------------------------------------

namespace {
// "f32", "bf16" or "mixed_bf16" (one of each): the operands' types in the
// names of the functions.
template <class TA, class TB>
const char* operand_type() {
  if (sizeof(TA) != sizeof(TB)) return "mixed_bf16";
  return sizeof(TA) == 2 ? "bf16" : "f32";
}
}  // namespace

template <class TA, class TB>
hmrt_status hmrt::matmul_on(const GemmEngine<TA, TB>& e, const TA* a, int32_t ra,
                            const int64_t* sa, int32_t trans_a, const TB* b, int32_t rb,
                            const int64_t* sb, int32_t trans_b, float* y, int32_t ry,
                            const int64_t* sy) {
  const std::string name = std::string("hmrt_matmul_") + operand_type<TA, TB>() + e.suffix;
  const char* fn = name.c_str();
  int64_t na, nb, ny;
  hmrt_status st = check_shape(fn, "a", ra, sa, 1, &na);
  if (st == HMRT_OK) st = check_shape(fn, "b", rb, sb, 1, &nb);
  if (st == HMRT_OK) st = check_shape(fn, "y", ry, sy, 0, &ny);
  if (st != HMRT_OK) return st;

  const bool a1 = ra == 1, b1 = rb == 1;
  const bool ta = !a1 && trans_a != 0, tb = !b1 && trans_b != 0;
  const int64_t M = a1 ? 1 : (ta ? sa[ra - 1] : sa[ra - 2]);
  const int64_t K = a1 ? sa[0] : (ta ? sa[ra - 2] : sa[ra - 1]);
  const int64_t Kb = b1 ? sb[0] : (tb ? sb[rb - 1] : sb[rb - 2]);
  const int64_t N = b1 ? 1 : (tb ? sb[rb - 2] : sb[rb - 1]);
  HMRT_CHECK_ARG(K == Kb,
                 "%s: the contracted dims differ: a %s%s has K = %lld, b %s%s "
                 "has K = %lld",
                 fn, shape_text(ra, sa).s, ta ? " (transposed)" : "",
                 (long long)K, shape_text(rb, sb).s,
                 tb ? " (transposed)" : "", (long long)Kb);

  // Broadcast batch dims, right-aligned; per dim the element strides of
  // a's and b's matrices (0 where the operand broadcasts).
  const int32_t nba = a1 ? 0 : ra - 2, nbb = b1 ? 0 : rb - 2;
  const int32_t nbt = std::max(nba, nbb);
  int64_t batch[kMaxRank], stra[kMaxRank], strb[kMaxRank];
  int64_t acc_a = M * K, acc_b = K * N;
  for (int32_t i = nbt - 1; i >= 0; --i) {
    const int32_t ia = i - (nbt - nba), ib = i - (nbt - nbb);
    const int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
    HMRT_CHECK_ARG(da == db || da == 1 || db == 1,
                   "%s: the batch dims of a %s and b %s do not broadcast "
                   "(%lld vs %lld)",
                   fn, shape_text(ra, sa).s, shape_text(rb, sb).s,
                   (long long)da, (long long)db);
    batch[i] = da == 1 ? db : da;
    stra[i] = da == 1 ? 0 : acc_a;
    strb[i] = db == 1 ? 0 : acc_b;
    acc_a *= da;
    acc_b *= db;
  }
  int64_t want[kMaxRank];
  int32_t rw = 0;
  for (int32_t i = 0; i < nbt; ++i) want[rw++] = batch[i];
  if (!a1) want[rw++] = M;
  if (!b1) want[rw++] = N;
  bool same = rw == ry;
  for (int32_t i = 0; same && i < rw; ++i) same = want[i] == sy[i];
  HMRT_CHECK_ARG(same, "%s: y has shape %s, but a %s x b %s gives %s", fn,
                 shape_text(ry, sy).s, shape_text(ra, sa).s,
                 shape_text(rb, sb).s, shape_text(rw, want).s);
  HMRT_CHECK_PTR(fn, a, na);
  HMRT_CHECK_PTR(fn, b, nb);
  HMRT_CHECK_PTR(fn, y, ny);
  if (ny == 0) return HMRT_OK;

  // Batch dims of size > 1; the innermost run of them in which both
  // operands advance by a uniform stride becomes one strided-batched call,
  // the rest is looped over.
  Odometer outer_a, outer_b;
  int64_t run = 1, run_sa = 0, run_sb = 0;
  bool in_run = true;
  for (int32_t i = nbt - 1; i >= 0; --i) {
    if (batch[i] == 1) continue;
    if (in_run && (run == 1 || (stra[i] == run_sa * run &&
                                strb[i] == run_sb * run))) {
      if (run == 1) {
        run_sa = stra[i];
        run_sb = strb[i];
      }
      run *= batch[i];
      continue;
    }
    in_run = false;
    outer_a.add(batch[i], stra[i]);
    outer_b.add(batch[i], strb[i]);
  }
  // The outer dims were added innermost first: reverse them.
  std::reverse(outer_a.size, outer_a.size + outer_a.n);
  std::reverse(outer_a.stride, outer_a.stride + outer_a.n);
  std::reverse(outer_b.size, outer_b.size + outer_b.n);
  std::reverse(outer_b.stride, outer_b.stride + outer_b.n);
  const int64_t outer = prod(outer_a.size, 0, outer_a.n);

  const int64_t lda = std::max<int64_t>(1, ta ? M : K);
  const int64_t ldb = std::max<int64_t>(1, tb ? K : N);
  const int64_t ldc = std::max<int64_t>(1, N);
  // A stack of row-major matrices times one shared b (a linear layer on a
  // [batch, seq, features] activation) is a single GEMM with run*M rows:
  // one packing of b and one large, well-threaded call.
  if (outer == 1 && run > 1 && run_sb == 0 && run_sa == M * K && !ta)
    return e.sgemm(0, tb, run * M, N, K, 1.0f, a, std::max<int64_t>(1, K), b, ldb, 0.0f, y,
                   ldc);
  auto call = [&](int64_t o) {
    Odometer oa = outer_a, ob = outer_b;
    oa.seek(o);
    ob.seek(o);
    return e.sgemm_strided_batched(ta, tb, M, N, K, 1.0f, a + oa.off, lda,
                                      run_sa, b + ob.off, ldb, run_sb, 0.0f,
                                      y + o * run * M * N, ldc, M * N, run);
  };
  // Small GEMMs: spread the outer loop over the threads (each call then
  // runs on its thread); large ones use the threads inside each call.
  // The GEMM results do not depend on how it is threaded.
  const double flops = 2.0 * double(run) * double(M) * double(N) * double(K);
  if (e.threaded_batches && outer > 1 && flops < double(1 << 22)) {
    std::atomic<int> failed{HMRT_OK};
    parallel_tasks(outer, [&](int64_t o) {
      const hmrt_status s = call(o);
      if (s != HMRT_OK) failed.store(s);
    });
    if (failed.load() != HMRT_OK)
      return fail(static_cast<hmrt_status>(failed.load()),
                  "%s: a batched GEMM failed (out of memory for its packing "
                  "buffers)",
                  fn);
    return HMRT_OK;
  }
  for (int64_t o = 0; o < outer; ++o) {
    st = call(o);
    if (st != HMRT_OK) return st;
  }
  return HMRT_OK;
}


// ---- Gemm -----------------------------------------------------------------------------

template <class TA, class TB>
hmrt_status hmrt::gemm_on(const GemmEngine<TA, TB>& e, const TA* a, const TB* b, const float* c,
                          int32_t rc, const int64_t* sc, int64_t m, int64_t n, int64_t k,
                          int32_t trans_a, int32_t trans_b, float alpha, float beta, float* y) {
  const std::string name = std::string("hmrt_gemm_") + operand_type<TA, TB>() + e.suffix;
  const char* fn = name.c_str();
  HMRT_CHECK_SIZE(fn, m);
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_SIZE(fn, k);
  int64_t unused;
  HMRT_CHECK_ARG(!__builtin_mul_overflow(m, n, &unused) &&
                     !__builtin_mul_overflow(m, k, &unused) &&
                     !__builtin_mul_overflow(k, n, &unused),
                 "%s: m, n, k = %lld, %lld, %lld overflow int64", fn,
                 (long long)m, (long long)n, (long long)k);
  int64_t cm = 1, cn = 1, nc = 0;
  if (c != nullptr) {
    hmrt_status st = check_shape(fn, "C", rc, sc, 0, &nc);
    if (st != HMRT_OK) return st;
    HMRT_CHECK_ARG(rc <= 2, "%s: C must have rank <= 2, got %d", fn, rc);
    if (rc >= 1) cn = sc[rc - 1];
    if (rc == 2) cm = sc[0];
    HMRT_CHECK_ARG((cm == m || cm == 1) && (cn == n || cn == 1),
                   "%s: C of shape %s does not broadcast to [%lld, %lld]", fn,
                   shape_text(rc, sc).s, (long long)m, (long long)n);
    HMRT_CHECK_ARG(c != y || (cm == m && cn == n) || m * n == 0,
                   "%s: c may be y only when C has shape [M, N] = [%lld, %lld]",
                   fn, (long long)m, (long long)n);
  }
  HMRT_CHECK_PTR(fn, a, m * k);
  HMRT_CHECK_PTR(fn, b, k * n);
  HMRT_CHECK_PTR(fn, y, m * n);
  const int64_t lda = std::max<int64_t>(1, trans_a ? m : k);
  const int64_t ldb = std::max<int64_t>(1, trans_b ? k : n);
  const int64_t ldc = std::max<int64_t>(1, n);
  if (m * n == 0) return HMRT_OK;
  if (c == nullptr || beta == 0.0f)
    return e.sgemm(trans_a != 0, trans_b != 0, m, n, k, alpha, a, lda, b, ldb, 0.0f, y, ldc);
  // y = broadcast(C), then y = alpha*op(A)*op(B) + beta*y.
  if (c != y) {
    hmrt_status st = e.broadcast_c(c, cm, cn, y, m, n);
    if (st != HMRT_OK) return st;
  }
  return e.sgemm(trans_a != 0, trans_b != 0, m, n, k, alpha, a, lda, b, ldb, beta, y, ldc);
}

namespace hmrt {
HMRT_GEMM_ON(float, float, )
HMRT_GEMM_ON(uint16_t, uint16_t, )
HMRT_GEMM_ON(uint16_t, float, )
HMRT_GEMM_ON(float, uint16_t, )
}  // namespace hmrt

hmrt_status hmrt::matmul_mixed_on(const GemmEngine<uint16_t, float>& bf,
                                  const GemmEngine<float, uint16_t>& fb, const void* a,
                                  int32_t a_bf16, int32_t ra, const int64_t* sa,
                                  int32_t trans_a, const void* b, int32_t rb,
                                  const int64_t* sb, int32_t trans_b, float* y, int32_t ry,
                                  const int64_t* sy) {
  if (a_bf16)
    return matmul_on(bf, static_cast<const uint16_t*>(a), ra, sa, trans_a,
                     static_cast<const float*>(b), rb, sb, trans_b, y, ry, sy);
  return matmul_on(fb, static_cast<const float*>(a), ra, sa, trans_a,
                   static_cast<const uint16_t*>(b), rb, sb, trans_b, y, ry, sy);
}

hmrt_status hmrt::gemm_mixed_on(const GemmEngine<uint16_t, float>& bf,
                                const GemmEngine<float, uint16_t>& fb, const void* a,
                                int32_t a_bf16, const void* b, const float* c, int32_t rc,
                                const int64_t* sc, int64_t m, int64_t n, int64_t k,
                                int32_t trans_a, int32_t trans_b, float alpha, float beta,
                                float* y) {
  if (a_bf16)
    return gemm_on(bf, static_cast<const uint16_t*>(a), static_cast<const float*>(b), c, rc,
                   sc, m, n, k, trans_a, trans_b, alpha, beta, y);
  return gemm_on(fb, static_cast<const float*>(a), static_cast<const uint16_t*>(b), c, rc, sc,
                 m, n, k, trans_a, trans_b, alpha, beta, y);
}

namespace {
// C broadcast into y by rows, on the CPU's threads.
hmrt_status cpu_broadcast_c(const float* c, int64_t cm, int64_t cn, float* y, int64_t m,
                            int64_t n) {
  hmrt::parallel_for(m, hmrt::grain_for(n), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      float* row = y + i * n;
      const float* crow = c + (cm == 1 ? 0 : i * cn);
      if (cn == 1)
        std::fill(row, row + n, crow[0]);
      else
        std::memcpy(row, crow, static_cast<size_t>(n) * sizeof(float));
    }
  });
  return HMRT_OK;
}
}  // namespace

const hmrt::GemmEngine<float> hmrt::kCpuGemm = {"", hmrt_sgemm, hmrt_sgemm_strided_batched,
                                                cpu_broadcast_c, true};

// ---- GEMMs with bfloat16 products (hmrt_matmul_f32_bf16, hmrt_matmul_bf16, their Gemms) ----

namespace {

// A GEMM operand's element as the bf16 value it multiplies by, in fp32: an
// fp32 one rounded to bf16 (nearest even), a bf16 one (its bits) widened.
inline float bf16_value(float x) { return hmrt::round_to_bf16(x); }
inline float bf16_value(uint16_t x) { return hmrt::bf16_to_float(x); }

// The elements of a GEMM operand of rows x cols (leading dim ld) over
// `batches` batches `stride` apart, as bf16 values in `out`: the products
// of such values are exact in fp32, so the fp32 GEMM over them multiplies
// in bf16 and accumulates in fp32, as a GPU's bf16 tensor cores do.  False
// when the memory cannot be had.
template <class T>
bool bf16_operand(const T* x, int64_t batches, int64_t stride, int64_t rows, int64_t cols,
                  int64_t ld, std::vector<float>* out) {
  const int64_t n = (batches - 1) * stride + (rows - 1) * ld + cols;
  try {
    out->resize(static_cast<size_t>(n));
  } catch (const std::bad_alloc&) {
    return false;
  }
  float* y = out->data();
  hmrt::parallel_for(n, int64_t{1} << 16, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) y[i] = bf16_value(x[i]);
  });
  return true;
}

template <class TA, class TB>
hmrt_status sgemm_bf16_batched(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                               const TA* a, int64_t lda, int64_t sa, const TB* b, int64_t ldb,
                               int64_t sb, float beta, float* c, int64_t ldc, int64_t sc,
                               int64_t batch) {
  const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  // Anything the fp32 GEMM would refuse, or that reads no operand, goes to
  // it as it is (its checks and messages; it reads no operand then).
  const bool plain = m <= 0 || n <= 0 || k <= 0 || batch <= 0 || a == nullptr ||
                     b == nullptr || lda < ac || ldb < bc || sa < 0 || sb < 0;
  std::vector<float> va, vb;
  if (!plain && (!bf16_operand(a, batch, sa, ar, ac, lda, &va) ||
                 !bf16_operand(b, batch, sb, br, bc, ldb, &vb)))
    return hmrt::fail(HMRT_OUT_OF_MEMORY,
                      "hmrt_sgemm (bf16 products): cannot allocate the bf16 operands");
  const float* pa = plain ? reinterpret_cast<const float*>(a) : va.data();
  const float* pb = plain ? reinterpret_cast<const float*>(b) : vb.data();
  if (batch == 1 && sc == 0)
    return hmrt_sgemm(ta, tb, m, n, k, alpha, pa, lda, pb, ldb, beta, c, ldc);
  return hmrt_sgemm_strided_batched(ta, tb, m, n, k, alpha, pa, lda, sa, pb, ldb, sb, beta, c,
                                    ldc, sc, batch);
}

template <class TA, class TB>
hmrt_status sgemm_bf16(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const TA* a,
                       int64_t lda, const TB* b, int64_t ldb, float beta, float* c,
                       int64_t ldc) {
  return sgemm_bf16_batched(ta, tb, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
}

}  // namespace

bool hmrt::bf16_values(const float* x, int64_t n, std::vector<float>* out) {
  return bf16_operand(x, 1, 0, 1, n, n, out);
}

const hmrt::GemmEngine<float> hmrt::kCpuGemmBf16Products = {
    " (bf16 products)", sgemm_bf16<float, float>, sgemm_bf16_batched<float, float>,
    cpu_broadcast_c, true};
const hmrt::GemmEngine<uint16_t> hmrt::kCpuGemmBf16 = {
    "", sgemm_bf16<uint16_t, uint16_t>, sgemm_bf16_batched<uint16_t, uint16_t>, cpu_broadcast_c,
    true};
const hmrt::GemmEngine<uint16_t, float> hmrt::kCpuGemmBf16F32 = {
    "", sgemm_bf16<uint16_t, float>, sgemm_bf16_batched<uint16_t, float>, cpu_broadcast_c,
    true};
const hmrt::GemmEngine<float, uint16_t> hmrt::kCpuGemmF32Bf16 = {
    "", sgemm_bf16<float, uint16_t>, sgemm_bf16_batched<float, uint16_t>, cpu_broadcast_c,
    true};

hmrt_status hmrt_matmul_f32_bf16(const float* a, int32_t ra, const int64_t* sa, int32_t trans_a,
                                 const float* b, int32_t rb, const int64_t* sb, int32_t trans_b,
                                 float* y, int32_t ry, const int64_t* sy) {
  return hmrt::matmul_on(hmrt::kCpuGemmBf16Products, a, ra, sa, trans_a, b, rb, sb, trans_b, y,
                         ry, sy);
}

hmrt_status hmrt_gemm_f32_bf16(const float* a, const float* b, const float* c, int32_t rc,
                               const int64_t* sc, int64_t m, int64_t n, int64_t k,
                               int32_t trans_a, int32_t trans_b, float alpha, float beta,
                               float* y) {
  return hmrt::gemm_on(hmrt::kCpuGemmBf16Products, a, b, c, rc, sc, m, n, k, trans_a, trans_b,
                       alpha, beta, y);
}

hmrt_status hmrt_matmul_bf16(const uint16_t* a, int32_t ra, const int64_t* sa, int32_t trans_a,
                             const uint16_t* b, int32_t rb, const int64_t* sb, int32_t trans_b,
                             float* y, int32_t ry, const int64_t* sy) {
  return hmrt::matmul_on(hmrt::kCpuGemmBf16, a, ra, sa, trans_a, b, rb, sb, trans_b, y, ry, sy);
}

hmrt_status hmrt_gemm_bf16(const uint16_t* a, const uint16_t* b, const float* c, int32_t rc,
                           const int64_t* sc, int64_t m, int64_t n, int64_t k, int32_t trans_a,
                           int32_t trans_b, float alpha, float beta, float* y) {
  return hmrt::gemm_on(hmrt::kCpuGemmBf16, a, b, c, rc, sc, m, n, k, trans_a, trans_b, alpha,
                       beta, y);
}

hmrt_status hmrt_matmul_mixed_bf16(const void* a, int32_t a_bf16, int32_t ra, const int64_t* sa,
                                   int32_t trans_a, const void* b, int32_t rb,
                                   const int64_t* sb, int32_t trans_b, float* y, int32_t ry,
                                   const int64_t* sy) {
  return hmrt::matmul_mixed_on(hmrt::kCpuGemmBf16F32, hmrt::kCpuGemmF32Bf16, a, a_bf16, ra, sa,
                               trans_a, b, rb, sb, trans_b, y, ry, sy);
}

hmrt_status hmrt_gemm_mixed_bf16(const void* a, int32_t a_bf16, const void* b, const float* c,
                                 int32_t rc, const int64_t* sc, int64_t m, int64_t n, int64_t k,
                                 int32_t trans_a, int32_t trans_b, float alpha, float beta,
                                 float* y) {
  return hmrt::gemm_mixed_on(hmrt::kCpuGemmBf16F32, hmrt::kCpuGemmF32Bf16, a, a_bf16, b, c, rc,
                             sc, m, n, k, trans_a, trans_b, alpha, beta, y);
}

hmrt_status hmrt_matmul_f32(const float* a, int32_t ra, const int64_t* sa,
                            int32_t trans_a, const float* b, int32_t rb,
                            const int64_t* sb, int32_t trans_b, float* y,
                            int32_t ry, const int64_t* sy) {
  return hmrt::matmul_on(hmrt::kCpuGemm, a, ra, sa, trans_a, b, rb, sb, trans_b, y, ry, sy);
}

hmrt_status hmrt_gemm_f32(const float* a, const float* b, const float* c,
                          int32_t rc, const int64_t* sc, int64_t m, int64_t n,
                          int64_t k, int32_t trans_a, int32_t trans_b,
                          float alpha, float beta, float* y) {
  return hmrt::gemm_on(hmrt::kCpuGemm, a, b, c, rc, sc, m, n, k, trans_a, trans_b, alpha,
                           beta, y);
}

extern "C" {

// ---- Reduce ---------------------------------------------------------------------------

hmrt_status hmrt_reduce_f32(hmrt_reduce_op op, const float* x, int32_t rank,
                            const int64_t* shape, const uint8_t* reduce_axis,
                            float* y) {
  using namespace hmrt;
  const char* fn = "hmrt_reduce_f32";
  HMRT_CHECK_ARG(op == HMRT_REDUCE_SUM || op == HMRT_REDUCE_MEAN ||
                     op == HMRT_REDUCE_MAX,
                 "%s: unknown reduce op %d", fn, (int)op);
  int64_t count, kept, reduced;
  hmrt_status st =
      check_reduce(fn, rank, shape, reduce_axis, &count, &kept, &reduced);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_PTR(fn, x, count);
  HMRT_CHECK_PTR(fn, y, kept);
  if (kept == 0) return HMRT_OK;
  if (reduced == 0) {  // every group is empty
    const float v = op == HMRT_REDUCE_SUM    ? 0.0f
                    : op == HMRT_REDUCE_MEAN ? std::numeric_limits<float>::quiet_NaN()
                                             : -std::numeric_limits<float>::infinity();
    std::fill(y, y + kept, v);
    return HMRT_OK;
  }
  MergedDim md[kMaxRank];
  const int nd = merge_dims(rank, shape, reduce_axis, md);
  bool any_red = false;
  for (int i = 0; i < nd; ++i) any_red |= md[i].red;
  if (!any_red) {  // groups of one element
    if (y != x) std::memcpy(y, x, static_cast<size_t>(count) * sizeof(float));
    return HMRT_OK;
  }
  ReducePlan p;
  p.inner_kept = !md[nd - 1].red;
  p.inner = md[nd - 1].size;
  for (int i = 0; i < nd - 1; ++i)
    (md[i].red ? p.red : p.kept).add(md[i].size, md[i].stride);
  p.outer_count = prod(p.kept.size, 0, p.kept.n);
  p.red_count = prod(p.red.size, 0, p.red.n);
  const double divisor = op == HMRT_REDUCE_MEAN ? double(reduced) : 1.0;
  const bool ok = op == HMRT_REDUCE_MAX ? run_reduce<MaxOp>(x, p, 1.0, y)
                                        : run_reduce<SumOp>(x, p, divisor, y);
  if (!ok)
    return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate partial results", fn);
  return HMRT_OK;
}

hmrt_status hmrt_reduce_max_backward_f32(const float* x, const float* y,
                                         const float* dy, int32_t rank,
                                         const int64_t* shape,
                                         const uint8_t* reduce_axis,
                                         float* dx) {
  using namespace hmrt;
  const char* fn = "hmrt_reduce_max_backward_f32";
  int64_t count, kept, reduced;
  hmrt_status st =
      check_reduce(fn, rank, shape, reduce_axis, &count, &kept, &reduced);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_PTR(fn, x, count);
  HMRT_CHECK_PTR(fn, y, count > 0 ? kept : 0);
  HMRT_CHECK_PTR(fn, dy, count > 0 ? kept : 0);
  HMRT_CHECK_PTR(fn, dx, count);
  if (count == 0) return HMRT_OK;
  MergedDim md[kMaxRank];
  int nd = merge_dims(rank, shape, reduce_axis, md);
  if (nd == 0) md[nd++] = {1, 1, false};
  // Offsets into y: kept dims row-major, reduced dims 0.
  int64_t ystride[kMaxRank];
  int64_t acc = 1;
  for (int i = nd - 1; i >= 0; --i) {
    ystride[i] = md[i].red ? 0 : acc;
    if (!md[i].red) acc *= md[i].size;
  }
  Odometer rows;  // all dims but the contiguous last one, over y
  for (int i = 0; i < nd - 1; ++i) rows.add(md[i].size, ystride[i]);
  const int64_t L = md[nd - 1].size, ys = ystride[nd - 1];
  parallel_for(count / L, grain_for(L), [&](int64_t lo, int64_t hi) {
    Odometer o = rows;
    o.seek(lo);
    for (int64_t r = lo; r < hi; ++r, o.next()) {
      const float* xr = x + r * L;
      float* dxr = dx + r * L;
      for (int64_t l = 0; l < L; ++l) {
        const float m = y[o.off + l * ys];
        const float v = xr[l];
        const bool hit = v == m || (v != v && m != m);
        dxr[l] = hit ? dy[o.off + l * ys] : 0.0f;
      }
    }
  });
  return HMRT_OK;
}

// ---- Softmax ------------------------------------------------------------------------

hmrt_status hmrt_softmax_axis_f32(const float* x, int32_t rank,
                                  const int64_t* shape, int32_t axis,
                                  int32_t log, float* y) {
  using namespace hmrt;
  const char* fn = "hmrt_softmax_axis_f32";
  int64_t outer, n, inner;
  hmrt_status st = check_softmax_axis(fn, "x", rank, shape, axis, &outer, &n, &inner);
  if (st != HMRT_OK) return st;
  const int64_t count = outer * n * inner;
  HMRT_CHECK_PTR(fn, x, count);
  HMRT_CHECK_PTR(fn, y, count);
  if (count == 0) return HMRT_OK;
  if (inner == 1)
    return log ? hmrt_log_softmax_forward(x, y, outer, n)
               : hmrt_softmax_forward(x, y, outer, n);
  const int64_t tiles = ceil_div(inner, kTile);
  parallel_for(outer * tiles, grain_for(n * std::min(inner, kTile)),
               [&](int64_t lo, int64_t hi) {
    float m[kTile], s[kTile];
    for (int64_t u = lo; u < hi; ++u) {
      const int64_t o = u / tiles, j0 = u % tiles * kTile;
      const int64_t w = std::min(kTile, inner - j0);
      const float* xb = x + o * n * inner + j0;
      float* yb = y + o * n * inner + j0;
      tile_max_sumexp(xb, n, inner, w, m, s);
      if (log) {
        for (int64_t j = 0; j < w; ++j) s[j] = m[j] + std::log(s[j]);
        for (int64_t c = 0; c < n; ++c) {
          const float* xr = xb + c * inner;
          float* yr = yb + c * inner;
          columns(
              w, [&](int64_t j) { vstore(yr + j, vload(xr + j) - vload(s + j)); },
              [&](int64_t j) { yr[j] = xr[j] - s[j]; });
        }
      } else {
        for (int64_t j = 0; j < w; ++j) s[j] = 1.0f / s[j];
        for (int64_t c = 0; c < n; ++c) {
          const float* xr = xb + c * inner;
          float* yr = yb + c * inner;
          columns(
              w,
              [&](int64_t j) {
                vstore(yr + j,
                       vexp(vload(xr + j) - vload(m + j)) * vload(s + j));
              },
              [&](int64_t j) { yr[j] = vexp1(xr[j] - m[j]) * s[j]; });
        }
      }
    }
  });
  return HMRT_OK;
}

hmrt_status hmrt_softmax_axis_backward_f32(const float* y, const float* dy,
                                           int32_t rank, const int64_t* shape,
                                           int32_t axis, int32_t log,
                                           float* dx) {
  using namespace hmrt;
  const char* fn = "hmrt_softmax_axis_backward_f32";
  int64_t outer, n, inner;
  hmrt_status st = check_softmax_axis(fn, "y", rank, shape, axis, &outer, &n, &inner);
  if (st != HMRT_OK) return st;
  const int64_t count = outer * n * inner;
  HMRT_CHECK_PTR(fn, y, count);
  HMRT_CHECK_PTR(fn, dy, count);
  HMRT_CHECK_PTR(fn, dx, count);
  if (count == 0) return HMRT_OK;
  if (inner == 1)
    return log ? hmrt_log_softmax_backward(y, dy, dx, outer, n)
               : hmrt_softmax_backward(y, dy, dx, outer, n);
  const int64_t tiles = ceil_div(inner, kTile);
  parallel_for(outer * tiles, grain_for(n * std::min(inner, kTile)),
               [&](int64_t lo, int64_t hi) {
    float s[kTile];
    for (int64_t u = lo; u < hi; ++u) {
      const int64_t o = u / tiles, j0 = u % tiles * kTile;
      const int64_t w = std::min(kTile, inner - j0);
      const int64_t base = o * n * inner + j0;
      const float* yb = y + base;
      const float* dyb = dy + base;
      float* dxb = dx + base;
      std::fill(s, s + w, 0.0f);
      for (int64_t c = 0; c < n; ++c) {
        const float* yr = yb + c * inner;
        const float* dyr = dyb + c * inner;
        if (log)
          columns(
              w, [&](int64_t j) { vstore(s + j, vload(s + j) + vload(dyr + j)); },
              [&](int64_t j) { s[j] += dyr[j]; });
        else
          columns(
              w,
              [&](int64_t j) {
                vstore(s + j, vload(s + j) + vload(dyr + j) * vload(yr + j));
              },
              [&](int64_t j) { s[j] += dyr[j] * yr[j]; });
      }
      for (int64_t c = 0; c < n; ++c) {
        const float* yr = yb + c * inner;
        const float* dyr = dyb + c * inner;
        float* dxr = dxb + c * inner;
        if (log)
          columns(
              w,
              [&](int64_t j) {
                vstore(dxr + j, vload(dyr + j) - vexp(vload(yr + j)) * vload(s + j));
              },
              [&](int64_t j) { dxr[j] = dyr[j] - vexp1(yr[j]) * s[j]; });
        else
          columns(
              w,
              [&](int64_t j) {
                vstore(dxr + j, vload(yr + j) * (vload(dyr + j) - vload(s + j)));
              },
              [&](int64_t j) { dxr[j] = yr[j] * (dyr[j] - s[j]); });
      }
    }
  });
  return HMRT_OK;
}

// ---- LayerNormalization --------------------------------------------------------------

}  // extern "C"

hmrt_status hmrt::check_softmax_axis(const char* fn, const char* what, int32_t rank,
                                     const int64_t* shape, int32_t axis, int64_t* outer,
                                     int64_t* n, int64_t* inner) {
  int64_t count;
  int32_t ax = 0;
  hmrt_status st = check_shape(fn, what, rank, shape, 1, &count);
  if (st == HMRT_OK) st = check_axis(fn, axis, rank, &ax);
  if (st != HMRT_OK) return st;
  *outer = prod(shape, 0, ax);
  *n = shape[ax];
  *inner = prod(shape, ax + 1, rank);
  return HMRT_OK;
}

hmrt_status hmrt::check_layer_norm(const char* fn, int32_t rank, const int64_t* shape,
                                   int32_t axis, int64_t* outer, int64_t* cols) {
  int64_t count;
  int32_t ax = 0;
  hmrt_status st = check_shape(fn, "x", rank, shape, 1, &count);
  if (st == HMRT_OK) st = check_axis(fn, axis, rank, &ax);
  if (st != HMRT_OK) return st;
  *outer = prod(shape, 0, ax);
  *cols = prod(shape, ax, rank);
  HMRT_CHECK_ARG(*cols > 0 || *outer == 0,
                 "%s: the normalised dims %s (from axis %d) of x %s have no "
                 "elements",
                 fn, shape_text(rank - ax, shape + ax).s, axis,
                 shape_text(rank, shape).s);
  return HMRT_OK;
}

hmrt_status hmrt::check_layer_norm_forward(const char* fn, int32_t rank, const int64_t* shape,
                                           int32_t axis, float eps, int64_t* outer,
                                           int64_t* cols) {
  hmrt_status st = check_layer_norm(fn, rank, shape, axis, outer, cols);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_ARG(eps >= 0.0f, "%s: eps must be >= 0, got %g", fn, (double)eps);
  return HMRT_OK;
}

extern "C" {

hmrt_status hmrt_layer_norm_backward_f32(const float* dy, const float* x,
                                         int32_t rank, const int64_t* shape,
                                         int32_t axis, const float* scale,
                                         const float* mean, const float* rstd,
                                         float* dx, float* dscale,
                                         float* dbias) {
  using namespace hmrt;
  const char* fn = "hmrt_layer_norm_backward_f32";
  int64_t outer, cols;
  hmrt_status st = check_layer_norm(fn, rank, shape, axis, &outer, &cols);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_PTR(fn, dy, outer * cols);
  HMRT_CHECK_PTR(fn, x, outer * cols);
  HMRT_CHECK_PTR(fn, mean, outer);
  HMRT_CHECK_PTR(fn, rstd, outer);
  HMRT_CHECK_PTR(fn, dx, outer * cols);
  // hmrt_layernorm_backward accumulates the parameter gradients; these
  // are overwritten.
  if (dscale) std::fill(dscale, dscale + cols, 0.0f);
  if (dbias) std::fill(dbias, dbias + cols, 0.0f);
  return hmrt_layernorm_backward(dy, x, scale, mean, rstd, dx, dscale, dbias,
                                 outer, cols);
}

}  // extern "C"

hmrt_status hmrt::check_sce_shape(const char* fn, int32_t rank, const int64_t* shape,
                                  hmrt_loss_reduction reduction, Sce* s) {
  int64_t count;
  hmrt_status st = check_shape(fn, "scores", rank, shape, 2, &count);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_ARG(reduction == HMRT_LOSS_MEAN || reduction == HMRT_LOSS_SUM ||
                     reduction == HMRT_LOSS_NONE,
                 "%s: unknown reduction %d", fn, (int)reduction);
  s->N = shape[0];
  s->C = shape[1];
  s->D = 1;
  for (int32_t d = 2; d < rank; ++d)
    HMRT_CHECK_ARG(!__builtin_mul_overflow(s->D, shape[d], &s->D),
                   "%s: the label count of scores %s overflows int64", fn,
                   shape_text(rank, shape).s);
  HMRT_CHECK_ARG(!__builtin_mul_overflow(s->N, s->D, &s->E),
                 "%s: the label count of scores %s overflows int64", fn,
                 shape_text(rank, shape).s);
  HMRT_CHECK_ARG(s->C > 0 || s->E == 0,
                 "%s: scores %s has no classes (dim 1) but %lld labels", fn,
                 shape_text(rank, shape).s, (long long)s->E);
  return HMRT_OK;
}

hmrt_status hmrt::check_sce_labels(const char* fn, const int64_t* labels, const float* weights,
                                   int32_t has_ignore, int64_t ignore_index, Sce* s) {
  s->ignore = has_ignore != 0;
  s->ignore_index = ignore_index;
  double denom = 0.0;
  for (int64_t e = 0; e < s->E; ++e) {
    const int64_t t = labels[e];
    if (s->skip(t)) continue;
    if (t < 0 || t >= s->C) {
      if (s->ignore)
        return fail(HMRT_OUT_OF_RANGE,
                    "%s: labels[%lld] = %lld is outside [0, %lld) and is not "
                    "ignore_index %lld",
                    fn, (long long)e, (long long)t, (long long)s->C,
                    (long long)ignore_index);
      return fail(HMRT_OUT_OF_RANGE,
                  "%s: labels[%lld] = %lld is outside [0, %lld) (no "
                  "ignore_index)",
                  fn, (long long)e, (long long)t, (long long)s->C);
    }
    denom += weights ? double(weights[t]) : 1.0;
  }
  s->denom = denom;
  return HMRT_OK;
}

// ---- SoftmaxCrossEntropyLoss ------------------------------------------------------------

namespace hmrt {
namespace {

hmrt_status check_sce(const char* fn, const float* scores, int32_t rank,
                      const int64_t* shape, const int64_t* labels,
                      const float* weights, hmrt_loss_reduction reduction,
                      int32_t has_ignore, int64_t ignore_index, Sce* s) {
  using namespace hmrt;
  hmrt_status st = check_sce_shape(fn, rank, shape, reduction, s);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_PTR(fn, scores, s->E * s->C);
  HMRT_CHECK_PTR(fn, labels, s->E);
  return check_sce_labels(fn, labels, weights, has_ignore, ignore_index, s);
}

// lse[e] = log sum_c exp(scores[n, c, d]) for every label position e.
hmrt_status sce_lse(const float* scores, const int64_t* labels, const Sce& s,
                    float* lse) {
  if (s.D == 1) {
    // Rows of (N, C): the cross-entropy kernel saves each row's lse.  Its
    // ignore_index must skip exactly ours; with no ignore_index every label
    // is already known to be in range, so -1 skips nothing.
    float unused;
    return hmrt_cross_entropy_forward(scores, labels, &unused, lse, s.N, s.C,
                                      s.ignore ? s.ignore_index : -1);
  }
  hmrt::strided_lse(scores, s.N, s.C, s.D, lse);
  return HMRT_OK;
}


// The gradient of hmrt_sce_loss_f32 (hmrt_sce_loss_backward_f32), written in
// fp32, or in bf16: computed in fp32 into scratch (a row, or a tile of
// columns) and rounded from there to nearest even.
template <class Out>
hmrt_status sce_backward(const char* fn, const float* scores, int32_t rank,
                         const int64_t* shape, const int64_t* labels, const float* weights,
                         hmrt_loss_reduction reduction, int32_t has_ignore,
                         int64_t ignore_index, const float* dloss, Out* dscores) {
  constexpr bool kF32 = std::is_same_v<Out, float>;
  Sce s;
  hmrt_status st = check_sce(fn, scores, rank, shape, labels, weights,
                             reduction, has_ignore, ignore_index, &s);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_PTR(fn, dloss, reduction == HMRT_LOSS_NONE ? s.E : 1);
  HMRT_CHECK_PTR(fn, dscores, s.E * s.C);
  if (s.E == 0) return HMRT_OK;
  if constexpr (kF32)
    if (s.D == 1 && weights == nullptr && reduction == HMRT_LOSS_MEAN)
      return hmrt_cross_entropy_backward(scores, labels, nullptr, dloss, dscores,
                                         s.N, s.C, s.ignore ? s.ignore_index : -1);

  Buffer<float> lse(s.E), coef(s.E);
  if (lse.p == nullptr || coef.p == nullptr)
    return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate %lld floats of "
                "scratch", fn, (long long)(2 * s.E));
  st = sce_lse(scores, labels, s, lse.p);
  if (st != HMRT_OK) return st;
  // coef[e] = d loss / d l[e] * w[label]; 0 marks nothing (ignored labels are
  // tested again below so their gradient is exactly 0).  With mean and no
  // weights this is hmrt_cross_entropy_backward's scale.
  const double g = reduction == HMRT_LOSS_MEAN
                       ? (s.denom != 0.0 ? double(dloss[0]) / s.denom : 0.0)
                       : double(dloss[0]);
  for (int64_t e = 0; e < s.E; ++e) {
    const int64_t t = labels[e];
    if (s.skip(t)) {
      coef.p[e] = 0.0f;
      continue;
    }
    const double w = weights ? double(weights[t]) : 1.0;
    coef.p[e] = static_cast<float>(
        w * (reduction == HMRT_LOSS_NONE ? double(dloss[e]) : g));
  }

  const int64_t C = s.C, D = s.D;
  if (D == 1) {  // rows of (N, C)
    parallel_for(s.N, grain_for(C), [&](int64_t lo, int64_t hi) {
      std::vector<float> row(kF32 ? 0 : static_cast<size_t>(C));
      for (int64_t r = lo; r < hi; ++r) {
        float* d;
        if constexpr (kF32)
          d = dscores + r * C;
        else
          d = row.data();
        const int64_t t = labels[r];
        if (s.skip(t)) {
          std::fill(d, d + C, 0.0f);
        } else {
          exp_sub_scale(scores + r * C, lse.p[r], coef.p[r], d, C);
          d[t] -= coef.p[r];
        }
        if constexpr (!kF32)
          for (int64_t c = 0; c < C; ++c) dscores[r * C + c] = float_to_bf16_rne(d[c]);
      }
    });
    return HMRT_OK;
  }
  const int64_t tiles = ceil_div(D, kTile);
  parallel_for(s.N * tiles, grain_for(C * std::min(D, kTile)),
               [&](int64_t lo, int64_t hi) {
    std::vector<float> tile(kF32 ? 0 : static_cast<size_t>(C * kTile));
    for (int64_t u = lo; u < hi; ++u) {
      const int64_t n = u / tiles, j0 = u % tiles * kTile;
      const int64_t w = std::min(kTile, D - j0);
      const int64_t e0 = n * D + j0;
      const float* l = lse.p + e0;
      const float* k = coef.p + e0;
      const float* xb = scores + n * C * D + j0;
      // The tile's rows: in dscores (stride D), or in scratch (stride w).
      float* db;
      int64_t ds;
      if constexpr (kF32) {
        db = dscores + n * C * D + j0;
        ds = D;
      } else {
        db = tile.data();
        ds = w;
      }
      for (int64_t c = 0; c < C; ++c) {
        const float* xr = xb + c * D;
        float* dr = db + c * ds;
        columns(
            w,
            [&](int64_t j) {
              vstore(dr + j, vexp(vload(xr + j) - vload(l + j)) * vload(k + j));
            },
            [&](int64_t j) { dr[j] = vexp1(xr[j] - l[j]) * k[j]; });
      }
      for (int64_t j = 0; j < w; ++j) {
        const int64_t t = labels[e0 + j];
        if (!s.skip(t)) {
          db[t * ds + j] -= k[j];
          continue;
        }
        for (int64_t c = 0; c < C; ++c) db[c * ds + j] = 0.0f;  // exactly 0
      }
      if constexpr (!kF32)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t j = 0; j < w; ++j)
            dscores[n * C * D + j0 + c * D + j] = float_to_bf16_rne(db[c * ds + j]);
    }
  });
  return HMRT_OK;
}

}  // namespace
}  // namespace hmrt

extern "C" {

hmrt_status hmrt_sce_loss_f32(const float* scores, int32_t rank,
                              const int64_t* shape, const int64_t* labels,
                              const float* weights,
                              hmrt_loss_reduction reduction,
                              int32_t has_ignore, int64_t ignore_index,
                              float* loss, float* log_prob) {
  using namespace hmrt;
  const char* fn = "hmrt_sce_loss_f32";
  Sce s;
  hmrt_status st = check_sce(fn, scores, rank, shape, labels, weights,
                             reduction, has_ignore, ignore_index, &s);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_PTR(fn, loss, reduction == HMRT_LOSS_NONE ? s.E : 1);
  if (s.E == 0) {
    if (reduction == HMRT_LOSS_MEAN)
      loss[0] = std::numeric_limits<float>::quiet_NaN();
    else if (reduction == HMRT_LOSS_SUM)
      loss[0] = 0.0f;
    return HMRT_OK;
  }
  Buffer<float> lse(s.E);
  constexpr int64_t kChunk = 1024;  // labels per partial sum
  const int64_t chunks = ceil_div(s.E, kChunk);
  Buffer<double> partial(chunks);
  if (lse.p == nullptr || partial.p == nullptr)
    return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate %lld floats of "
                "scratch", fn, (long long)s.E);
  st = sce_lse(scores, labels, s, lse.p);
  if (st != HMRT_OK) return st;

  if (log_prob) {
    const int64_t C = s.C, D = s.D;
    parallel_for(s.N * C, grain_for(D), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const float* l = lse.p + (r / C) * D;
        for (int64_t d = 0; d < D; ++d)
          log_prob[r * D + d] = scores[r * D + d] - l[d];
      }
    });
  }

  parallel_for(chunks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t ch = lo; ch < hi; ++ch) {
      double acc = 0.0;
      for (int64_t e = ch * kChunk; e < std::min(s.E, (ch + 1) * kChunk);
           ++e) {
        const int64_t t = labels[e];
        double l = 0.0;
        if (!s.skip(t)) {
          const int64_t n = e / s.D, d = e % s.D;
          const double w = weights ? double(weights[t]) : 1.0;
          l = w * (double(lse.p[e]) - double(scores[(n * s.C + t) * s.D + d]));
        }
        if (reduction == HMRT_LOSS_NONE)
          loss[e] = static_cast<float>(l);
        else
          acc += l;
      }
      partial.p[ch] = acc;
    }
  });
  if (reduction == HMRT_LOSS_NONE) return HMRT_OK;
  double total = 0.0;
  for (int64_t ch = 0; ch < chunks; ++ch) total += partial.p[ch];
  if (reduction == HMRT_LOSS_SUM)
    loss[0] = static_cast<float>(total);
  else
    loss[0] = s.denom != 0.0 ? static_cast<float>(total / s.denom)
                             : std::numeric_limits<float>::quiet_NaN();
  return HMRT_OK;
}

hmrt_status hmrt_sce_loss_backward_f32(const float* scores, int32_t rank,
                                       const int64_t* shape,
                                       const int64_t* labels,
                                       const float* weights,
                                       hmrt_loss_reduction reduction,
                                       int32_t has_ignore, int64_t ignore_index,
                                       const float* dloss, float* dscores) {
  return hmrt::sce_backward("hmrt_sce_loss_backward_f32", scores, rank, shape, labels, weights,
                            reduction, has_ignore, ignore_index, dloss, dscores);
}

hmrt_status hmrt_sce_loss_backward_f32_to_bf16(const float* scores, int32_t rank,
                                               const int64_t* shape, const int64_t* labels,
                                               const float* weights,
                                               hmrt_loss_reduction reduction,
                                               int32_t has_ignore, int64_t ignore_index,
                                               const float* dloss, uint16_t* dscores) {
  return hmrt::sce_backward("hmrt_sce_loss_backward_f32_to_bf16", scores, rank, shape, labels,
                            weights, reduction, has_ignore, ignore_index, dloss, dscores);
}

}  // extern "C"
