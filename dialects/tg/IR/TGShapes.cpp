//===- TGShapes.cpp - shape rules shared by verifiers and passes ----------===//
#include "tg/IR/TGShapes.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

namespace hmcc::tg {

std::optional<Shape> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                     llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

std::optional<Shape> matmulShape(llvm::ArrayRef<int64_t> a,
                                 llvm::ArrayRef<int64_t> b) {
  if (a.empty() || b.empty())
    return std::nullopt;
  Shape sa(a.begin(), a.end()), sb(b.begin(), b.end());
  bool vecA = sa.size() == 1, vecB = sb.size() == 1;
  if (vecA)
    sa.insert(sa.begin(), 1);
  if (vecB)
    sb.push_back(1);
  if (sa.back() != sb[sb.size() - 2])
    return std::nullopt;
  auto batch = broadcastShapes(llvm::ArrayRef(sa).drop_back(2),
                               llvm::ArrayRef(sb).drop_back(2));
  if (!batch)
    return std::nullopt;
  Shape out = *batch;
  if (!vecA)
    out.push_back(sa[sa.size() - 2]);
  if (!vecB)
    out.push_back(sb.back());
  return out;
}

int64_t sliceExtent(int64_t start, int64_t end, int64_t step) {
  if (step > 0)
    return end > start ? (end - start + step - 1) / step : 0;
  return start > end ? (start - end - step - 1) / -step : 0;
}

int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t elementBytes(mlir::Type element) {
  return (element.getIntOrFloatBitWidth() + 7) / 8;
}

int64_t tensorBytes(mlir::Type tensorType) {
  auto t = mlir::cast<mlir::RankedTensorType>(tensorType);
  return t.getNumElements() * elementBytes(t.getElementType());
}

} // namespace hmcc::tg
