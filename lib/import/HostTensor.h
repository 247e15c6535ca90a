//===- HostTensor.h - small tensors evaluated at import ---------*- C++ -*-===//
//
// The importer evaluates ONNX nodes whose inputs are all known at compile
// time (shape arithmetic, masks built from constants) instead of emitting
// them. HostTensor holds such a value: floating-point elements as doubles
// rounded to the element type after every op, integer and boolean elements
// as int64.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_IMPORT_HOSTTENSOR_H
#define HMCC_IMPORT_HOSTTENSOR_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onnx {
class NodeProto;
class TensorProto;
} // namespace onnx

namespace hmcc::import {

struct HostTensor {
  int32_t dtype = 0; ///< onnx::TensorProto::DataType
  std::vector<int64_t> shape;
  std::vector<double> f;  ///< elements of floating-point tensors
  std::vector<int64_t> i; ///< elements of integer and boolean tensors

  static bool isFloatType(int32_t dtype);
  bool isFloat() const { return isFloatType(dtype); }
  int64_t size() const;
  double real(int64_t k) const { return isFloat() ? f[k] : double(i[k]); }
  int64_t integer(int64_t k) const { return isFloat() ? int64_t(f[k]) : i[k]; }
  /// Resizes the element storage to match the shape.
  void allocate();
  /// Stores `v` at `k`, rounding to the element type.
  void setReal(int64_t k, double v);
  void setInteger(int64_t k, int64_t v);
};

/// Decodes an ONNX TensorProto; `bytes` holds the external data when the
/// tensor is stored outside the model. Returns an error message on failure.
std::optional<std::string> decodeTensor(const onnx::TensorProto &proto,
                                        const std::string *bytes, HostTensor &out);

/// Elements above which a foldable node is kept in the graph instead (the
/// op computes its value at run time); evaluation checks a result's size
/// before it allocates it.
constexpr int64_t kMaxFoldedElements = 1 << 20;
/// Elements all folded values of a model may hold together; past it, nodes
/// stay in the graph. Bounds the importer's memory (8 bytes an element).
constexpr int64_t kMaxFoldedTotal = int64_t(64) << 20;

/// Evaluates `node` on constant inputs (absent optional inputs are null).
/// Returns false when hmcc does not fold this op; sets `error` when the node
/// is invalid.
bool evaluateNode(const onnx::NodeProto &node,
                  const std::vector<const HostTensor *> &inputs,
                  std::vector<HostTensor> &outputs, std::string &error);

} // namespace hmcc::import

#endif // HMCC_IMPORT_HOSTTENSOR_H
