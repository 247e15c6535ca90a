// One GEMM on the calling thread, for kernels (attention) that run many
// small GEMMs inside their own parallel loops: OpenBLAS's where the runtime
// links it (its kernels for the CPU at hand), else the runtime's blocked
// GEMM.  No argument checks.
#ifndef HMRT_CPU_GEMM_INTERNAL_H
#define HMRT_CPU_GEMM_INTERNAL_H

#include <cstdint>
#include <vector>

namespace hmrt {

// Floats of scratch enough for one single-threaded GEMM of any shape up to
// (m, n, k), each dimension at most the given one.
int64_t gemm_workspace_floats(int64_t m, int64_t n, int64_t k);

// C = alpha*op(A)*op(B) + beta*C on the calling thread (same meaning as
// hmrt_sgemm) using `workspace` (gemm_workspace_floats(m, n, k) floats,
// 64-byte aligned; the blocked GEMM's packing space).
void sgemm_serial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  float alpha, const float* a, int64_t lda, const float* b,
                  int64_t ldb, float beta, float* c, int64_t ldc,
                  float* workspace);

// The same, always with the runtime's own blocked GEMM (for comparisons).
void sgemm_own_serial(bool trans_a, bool trans_b, int64_t m, int64_t n,
                      int64_t k, float alpha, const float* a, int64_t lda,
                      const float* b, int64_t ldb, float beta, float* c,
                      int64_t ldc, float* workspace);

// x[0, n) rounded to bf16 (nearest even) and widened, in `out`: the
// operand of a GEMM with bf16 products (cpu/nn_ops.cpp, on all threads).
// False when the memory cannot be had.
bool bf16_values(const float* x, int64_t n, std::vector<float>* out);

}  // namespace hmrt

#endif  // HMRT_CPU_GEMM_INTERNAL_H
