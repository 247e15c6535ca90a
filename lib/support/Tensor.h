//===- Tensor.h - a dense tensor of doubles ---------------------*- C++ -*-===//
//
// The value type shared by the reference interpreter (test/reference/) and the
// loader of initial parameter values (lib/import/): every element a double,
// whatever the declared element type.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_SUPPORT_TENSOR_H
#define HMCC_SUPPORT_TENSOR_H

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace hmcc {

/// A dense row-major tensor of doubles.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> values;

  Tensor() = default;
  Tensor(std::vector<int64_t> shape, std::vector<double> values)
      : shape(std::move(shape)), values(std::move(values)) {}
  /// A tensor of `shape` filled with `fill`.
  static Tensor filled(std::vector<int64_t> shape, double fill = 0.0) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return Tensor(std::move(shape), std::vector<double>(n, fill));
  }
  static Tensor scalar(double v) { return Tensor({}, {v}); }

  int64_t size() const { return static_cast<int64_t>(values.size()); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

/// Parameter values by symbol name.
using TensorMap = std::map<std::string, Tensor>;

} // namespace hmcc

#endif // HMCC_SUPPORT_TENSOR_H
