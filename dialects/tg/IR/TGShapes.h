//===- TGShapes.h - shape rules shared by verifiers and passes --*- C++ -*-===//
#ifndef HMCC_TG_TGSHAPES_H
#define HMCC_TG_TGSHAPES_H

#include "mlir/IR/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace hmcc::tg {

using Shape = llvm::SmallVector<int64_t, 4>;

/// Numpy-style (ONNX multidirectional) broadcast of two shapes; nullopt when
/// some aligned pair of dimensions differs and neither is 1.
std::optional<Shape> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                     llvm::ArrayRef<int64_t> b);

/// Result shape of numpy matmul; nullopt when the contracted dimensions or
/// the batch dimensions do not agree.
std::optional<Shape> matmulShape(llvm::ArrayRef<int64_t> a,
                                 llvm::ArrayRef<int64_t> b);

/// Number of elements of a slice from `start` to `end` (exclusive) by `step`,
/// with bounds already clamped as ONNX Slice prescribes.
int64_t sliceExtent(int64_t start, int64_t end, int64_t step);

/// Product of the dimensions.
int64_t numElements(llvm::ArrayRef<int64_t> shape);

/// Bytes one element of an integer or float type takes in memory (i1
/// takes a byte).
int64_t elementBytes(mlir::Type element);

/// Bytes of a ranked tensor's elements.
int64_t tensorBytes(mlir::Type tensorType);

} // namespace hmcc::tg

#endif // HMCC_TG_TGSHAPES_H
