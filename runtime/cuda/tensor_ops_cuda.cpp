// The CUDA backend's kernel-table entries for the broadcasting binary ops,
// Transpose, Trilu, Equal, the int64 ops and the reductions: the CPU kernels' checks (shared, with their
// messages), then cuda/tensor_kernels.cu (or cuda_kernels.cu's plan copy
// for Transpose) on the context's stream.  Integer division and powers
// check b's elements on the host, as the CPU does, after reading them back.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "core/internal.h"
#include "cpu/nn_ops_shared.h"
#include "cpu/shape_check.h"
#include "cuda/context.h"
#include "cuda/cuda_kernels.h"
#include "cuda/tensor_kernels.h"
#include "hmrt/io.h"  // hmrt_dtype_size

namespace hmrt {
namespace {

hmrt_status cuda_transpose(const void* x, int32_t rank, const int64_t* shape, const int64_t* perm,
                           void* y, size_t elem_size) {
  const char* fn = "hmrt_transpose (cuda)";
  int64_t n;
  hmrt_status st;
  if ((st = check_shape(fn, "x", rank, shape, &n)) != HMRT_OK ||
      (st = check_elem(fn, elem_size)) != HMRT_OK || (st = check_perm(fn, rank, perm)) != HMRT_OK)
    return st;
  HMRT_CHECK_GPU(fn, x, n);
  HMRT_CHECK_GPU(fn, y, n);
  if (n == 0) return HMRT_OK;
  // y's dims in order (operand 0, dense); x read through its permuted strides.
  int64_t xs[kMaxRank], odims[kMaxRank];
  dense_strides(rank, shape, xs);
  for (int d = 0; d < rank; ++d) odims[d] = shape[perm[d]];
  Plan p;
  p.nops = 2;
  p.set_dims(rank, odims);
  p.set_dense(0);
  for (int d = 0; d < rank; ++d) p.st[1][d] = xs[perm[d]];
  p.merge();
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::plan_copy(g_context->stream, p, x, y, elem_size));
}

hmrt_status cuda_trilu(const void* x, int32_t rank, const int64_t* shape, int64_t k,
                       int32_t upper, void* y, size_t elem_size) {
  const char* fn = "hmrt_trilu (cuda)";
  int64_t n;
  hmrt_status st = check_shape(fn, "x", rank, shape, &n);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_ARG(rank >= 2, "%s: x must have rank >= 2, got %d", fn, (int)rank);
  if ((st = check_elem(fn, elem_size)) != HMRT_OK) return st;
  HMRT_CHECK_GPU(fn, x, n);
  HMRT_CHECK_GPU(fn, y, n);
  if (n == 0) return HMRT_OK;
  const int64_t M = shape[rank - 2], N = shape[rank - 1];
  const int64_t lim = M + N;  // |j - i| < max(M, N): clamping k this far changes nothing
  k = std::max(-lim, std::min(lim, k));
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::trilu(g_context->stream, x, y, n, M, N, k, upper, elem_size));
}

// The checks of a broadcasting binary kernel (hmrt_binary_i64, hmrt_equal)
// and its plan; false in *any when y is empty.  (hmrt_binary_f32 too.)
hmrt_status binary_plan_on_gpu(const char* fn, const void* a, int32_t ra, const int64_t* sa,
                               const void* b, int32_t rb, const int64_t* sb, const void* y,
                               int32_t ry, const int64_t* sy, Plan* p, int64_t* nb, bool* any) {
  int64_t na, ny;
  hmrt_status st;
  if ((st = check_shape(fn, "a", ra, sa, &na)) != HMRT_OK ||
      (st = check_shape(fn, "b", rb, sb, nb)) != HMRT_OK ||
      (st = check_shape(fn, "y", ry, sy, &ny)) != HMRT_OK)
    return st;
  const char* names[2] = {"a", "b"};
  const int32_t ranks[2] = {ra, rb};
  const int64_t* shapes[2] = {sa, sb};
  if ((st = check_broadcast(fn, 2, names, ranks, shapes, ry, sy)) != HMRT_OK) return st;
  HMRT_CHECK_GPU(fn, a, ny ? na : 0);
  HMRT_CHECK_GPU(fn, b, ny ? *nb : 0);
  HMRT_CHECK_GPU(fn, y, ny);
  *any = broadcast_plan(*p, 2, ranks, shapes, ry, sy);
  return HMRT_OK;
}

hmrt_status cuda_binary_f32(hmrt_binary_op op, const float* a, int32_t ra, const int64_t* sa,
                            const float* b, int32_t rb, const int64_t* sb, float* y, int32_t ry,
                            const int64_t* sy) {
  const char* fn = "hmrt_binary_f32 (cuda)";
  HMRT_CHECK_ARG(op >= HMRT_BINARY_ADD && op <= HMRT_BINARY_MIN, "%s: unknown op %d", fn,
                 (int)op);
  Plan p;
  int64_t nb = 0;
  bool any = false;
  hmrt_status st = binary_plan_on_gpu(fn, a, ra, sa, b, rb, sb, y, ry, sy, &p, &nb, &any);
  if (st != HMRT_OK || !any) return st;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::binary_f32(g_context->stream, p, int(op), a, b, y));
}

hmrt_status cuda_binary_i64(hmrt_binary_op op, const int64_t* a, int32_t ra, const int64_t* sa,
                            const int64_t* b, int32_t rb, const int64_t* sb, int64_t* y,
                            int32_t ry, const int64_t* sy) {
  const char* fn = "hmrt_binary_i64 (cuda)";
  HMRT_CHECK_ARG(op >= HMRT_BINARY_ADD && op <= HMRT_BINARY_MIN, "%s: unknown op %d", fn,
                 (int)op);
  Plan p;
  int64_t nb = 0;
  bool any = false;
  hmrt_status st = binary_plan_on_gpu(fn, a, ra, sa, b, rb, sb, y, ry, sy, &p, &nb, &any);
  if (st != HMRT_OK || !any) return st;
  if (op == HMRT_BINARY_DIV || op == HMRT_BINARY_POW) {
    std::vector<int64_t> hb(static_cast<size_t>(nb));
    if ((st = copy_with_kernels(fn, "reading b", hb.data(), b, hb.size() * sizeof(int64_t))) !=
        HMRT_OK)
      return st;
    for (int64_t i = 0; i < nb; ++i) {
      HMRT_CHECK_ARG(op != HMRT_BINARY_DIV || hb[size_t(i)] != 0,
                     "%s: division by zero: b[%lld] is 0", fn, (long long)i);
      HMRT_CHECK_ARG(op != HMRT_BINARY_POW || hb[size_t(i)] >= 0,
                     "%s: negative integer exponent: b[%lld] is %lld", fn, (long long)i,
                     (long long)hb[size_t(i)]);
    }
  }
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::binary_i64(g_context->stream, p, int(op), a, b, y));
}

hmrt_status cuda_neg_i64(const int64_t* x, int64_t* y, int64_t n) {
  const char* fn = "hmrt_neg_i64 (cuda)";
  HMRT_CHECK_SIZE(fn, n);
  HMRT_CHECK_GPU(fn, x, n);
  HMRT_CHECK_GPU(fn, y, n);
  if (n == 0) return HMRT_OK;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::neg_i64(g_context->stream, x, y, n));
}

bool equal_kind(int32_t dtype, cuda::EqualKind* kind) {
  using K = cuda::EqualKind;
  switch (dtype) {
    case HMRT_DTYPE_F32: *kind = K::F32; return true;
    case HMRT_DTYPE_F64: *kind = K::F64; return true;
    case HMRT_DTYPE_F16: *kind = K::F16; return true;
    case HMRT_DTYPE_BF16: *kind = K::BF16; return true;
    case HMRT_DTYPE_BOOL: *kind = K::Bool; return true;
    case HMRT_DTYPE_U8: case HMRT_DTYPE_I8: *kind = K::Int1; return true;
    case HMRT_DTYPE_U16: case HMRT_DTYPE_I16: *kind = K::Int2; return true;
    case HMRT_DTYPE_U32: case HMRT_DTYPE_I32: *kind = K::Int4; return true;
    case HMRT_DTYPE_U64: case HMRT_DTYPE_I64: *kind = K::Int8; return true;
  }
  return false;
}

hmrt_status cuda_equal(int32_t dtype, const void* a, int32_t ra, const int64_t* sa, const void* b,
                       int32_t rb, const int64_t* sb, uint8_t* y, int32_t ry, const int64_t* sy) {
  const char* fn = "hmrt_equal (cuda)";
  cuda::EqualKind kind;
  HMRT_CHECK_ARG(equal_kind(dtype, &kind), "%s: unsupported dtype %d", fn, (int)dtype);
  Plan p;
  int64_t nb = 0;
  bool any = false;
  hmrt_status st = binary_plan_on_gpu(fn, a, ra, sa, b, rb, sb, y, ry, sy, &p, &nb, &any);
  if (st != HMRT_OK || !any) return st;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::equal(g_context->stream, kind, p, a, b, y));
}

// The plans of a reduction over x's dims: `kept` walks the kept dims (x's
// offset of each output element, operand 0), `red` the reduced ones.
void reduce_plans(int32_t rank, const int64_t* shape, const uint8_t* reduce_axis, Plan* kept,
                  Plan* red) {
  int64_t xs[kMaxRank], kd[kMaxRank], rd[kMaxRank];
  dense_strides(rank, shape, xs);
  for (int d = 0; d < rank; ++d) {
    kd[d] = reduce_axis[d] ? 1 : shape[d];
    rd[d] = reduce_axis[d] ? shape[d] : 1;
  }
  for (Plan* q : {kept, red}) {
    q->nops = 1;
    q->set_dims(rank, q == kept ? kd : rd);
    for (int d = 0; d < rank; ++d) q->st[0][d] = xs[d];
    q->merge();
  }
}

hmrt_status cuda_reduce_f32(hmrt_reduce_op op, const float* x, int32_t rank, const int64_t* shape,
                            const uint8_t* reduce_axis, float* y) {
  const char* fn = "hmrt_reduce_f32 (cuda)";
  HMRT_CHECK_ARG(op == HMRT_REDUCE_SUM || op == HMRT_REDUCE_MEAN || op == HMRT_REDUCE_MAX,
                 "%s: unknown reduce op %d", fn, (int)op);
  int64_t count, kept, reduced;
  hmrt_status st = check_reduce(fn, rank, shape, reduce_axis, &count, &kept, &reduced);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_GPU(fn, x, count);
  HMRT_CHECK_GPU(fn, y, kept);
  if (kept == 0) return HMRT_OK;
  std::lock_guard<std::mutex> lock(g_context->mutex);
  if (reduced == 0) {  // every group is empty
    const float v = op == HMRT_REDUCE_SUM    ? 0.0f
                    : op == HMRT_REDUCE_MEAN ? std::numeric_limits<float>::quiet_NaN()
                                             : -std::numeric_limits<float>::infinity();
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    return finish(fn, cuda::fill(g_context->stream, y, kept, bits, sizeof(float)));
  }
  Plan kp, rp;
  reduce_plans(rank, shape, reduce_axis, &kp, &rp);
  const double divisor = op == HMRT_REDUCE_MEAN ? double(reduced) : 1.0;
  return finish(fn, cuda::reduce(g_context->stream, int(op), kp, rp, divisor, x, y, kept));
}

hmrt_status cuda_reduce_max_backward_f32(const float* x, const float* y, const float* dy,
                                         int32_t rank, const int64_t* shape,
                                         const uint8_t* reduce_axis, float* dx) {
  const char* fn = "hmrt_reduce_max_backward_f32 (cuda)";
  int64_t count, kept, reduced;
  hmrt_status st = check_reduce(fn, rank, shape, reduce_axis, &count, &kept, &reduced);
  if (st != HMRT_OK) return st;
  HMRT_CHECK_GPU(fn, x, count);
  HMRT_CHECK_GPU(fn, y, count > 0 ? kept : 0);
  HMRT_CHECK_GPU(fn, dy, count > 0 ? kept : 0);
  HMRT_CHECK_GPU(fn, dx, count);
  if (count == 0) return HMRT_OK;
  // x's dims; y is x's shape with the reduced dims 1, broadcast back.
  int64_t ys[kMaxRank];
  for (int d = 0; d < rank; ++d) ys[d] = reduce_axis[d] ? 1 : shape[d];
  Plan p;
  p.nops = 2;
  p.set_dims(rank, shape);
  p.set_dense(0);
  p.set_broadcast(1, rank, ys);
  p.merge();
  std::lock_guard<std::mutex> lock(g_context->mutex);
  return finish(fn, cuda::reduce_max_backward(g_context->stream, p, x, y, dy, dx));
}

}  // namespace

void add_tensor_kernels(hmrt_kernels* k) {
  k->binary_f32 = cuda_binary_f32;
  k->transpose = cuda_transpose;
  k->trilu = cuda_trilu;
  k->binary_i64 = cuda_binary_i64;
  k->neg_i64 = cuda_neg_i64;
  k->equal = cuda_equal;
  k->reduce_f32 = cuda_reduce_f32;
  k->reduce_max_backward_f32 = cuda_reduce_max_backward_f32;
}

}  // namespace hmrt
