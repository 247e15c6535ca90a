// Scalar double-precision references of the ONNX-semantics ops of
// hmrt/nn_ops.h, written for clarity, not speed: every op walks the full
// multi-index of its tensors.  Same layouts and semantics as the header
// (axes here must already be non-negative).  The unit tests compare the float
// kernels with these and check the backward functions against central
// finite differences of the forward ones.
// Built into the test-only library hmrt_reference, never into hmrt.
#ifndef HMRT_REFERENCE_NN_OPS_REFERENCE_H
#define HMRT_REFERENCE_NN_OPS_REFERENCE_H

#include <cstdint>
#include <vector>

namespace hmrt {
namespace ref {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s);

// numpy matmul with the transposes and 1-D rules of hmrt_matmul_f32; returns
// the result shape and fills y (resized).
Shape matmul(const std::vector<double>& a, const Shape& sa, bool trans_a,
             const std::vector<double>& b, const Shape& sb, bool trans_b,
             std::vector<double>& y);

// ONNX Gemm; c may be empty (no C), else it has shape sc broadcast to [m, n].
void onnx_gemm(const std::vector<double>& a, const std::vector<double>& b,
               const std::vector<double>& c, const Shape& sc, int64_t m,
               int64_t n, int64_t k, bool trans_a, bool trans_b, double alpha,
               double beta, std::vector<double>& y);

// op: 0 sum, 1 mean, 2 max (hmrt_reduce_op).  reduce[d] selects the axes.
void reduce(int op, const std::vector<double>& x, const Shape& shape,
            const std::vector<bool>& reduce, std::vector<double>& y);
void reduce_max_backward(const std::vector<double>& x,
                         const std::vector<double>& y,
                         const std::vector<double>& dy, const Shape& shape,
                         const std::vector<bool>& reduce,
                         std::vector<double>& dx);

void softmax_axis(const std::vector<double>& x, const Shape& shape,
                  int64_t axis, bool log, std::vector<double>& y);
void softmax_axis_backward(const std::vector<double>& y,
                           const std::vector<double>& dy, const Shape& shape,
                           int64_t axis, bool log, std::vector<double>& dx);

// scale/bias may be empty (1 and 0).
void layer_norm(const std::vector<double>& x, const Shape& shape, int64_t axis,
                const std::vector<double>& scale,
                const std::vector<double>& bias, double eps,
                std::vector<double>& y, std::vector<double>& mean,
                std::vector<double>& rstd);
// dscale and dbias are overwritten.
void layer_norm_backward(const std::vector<double>& dy,
                         const std::vector<double>& x, const Shape& shape,
                         int64_t axis, const std::vector<double>& scale,
                         const std::vector<double>& mean,
                         const std::vector<double>& rstd,
                         std::vector<double>& dx, std::vector<double>& dscale,
                         std::vector<double>& dbias);

// reduction: 0 mean, 1 sum, 2 none (hmrt_loss_reduction); weights may be
// empty.  loss gets 1 or E values; log_prob gets scores' size.
void sce_loss(const std::vector<double>& scores, const Shape& shape,
              const std::vector<int64_t>& labels,
              const std::vector<double>& weights, int reduction,
              bool has_ignore, int64_t ignore_index, std::vector<double>& loss,
              std::vector<double>& log_prob);
void sce_loss_backward(const std::vector<double>& scores, const Shape& shape,
                       const std::vector<int64_t>& labels,
                       const std::vector<double>& weights, int reduction,
                       bool has_ignore, int64_t ignore_index,
                       const std::vector<double>& dloss,
                       std::vector<double>& dscores);

}  // namespace ref
}  // namespace hmrt

#endif  // HMRT_REFERENCE_NN_OPS_REFERENCE_H
