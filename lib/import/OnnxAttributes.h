//===- OnnxAttributes.h - reading ONNX node attributes ----------*- C++ -*-===//
#ifndef HMCC_IMPORT_ONNXATTRIBUTES_H
#define HMCC_IMPORT_ONNXATTRIBUTES_H

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <string>
#include <vector>

namespace hmcc::import {

inline const onnx::AttributeProto *findAttr(const onnx::NodeProto &node,
                                            const std::string &name) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

inline int64_t attrInt(const onnx::NodeProto &node, const std::string &name,
                       int64_t fallback) {
  const onnx::AttributeProto *a = findAttr(node, name);
  return a ? a->i() : fallback;
}

inline float attrFloat(const onnx::NodeProto &node, const std::string &name,
                       float fallback) {
  const onnx::AttributeProto *a = findAttr(node, name);
  return a ? a->f() : fallback;
}

inline std::string attrString(const onnx::NodeProto &node, const std::string &name,
                              const std::string &fallback) {
  const onnx::AttributeProto *a = findAttr(node, name);
  return a ? a->s() : fallback;
}

inline std::vector<int64_t> attrInts(const onnx::NodeProto &node,
                                     const std::string &name) {
  const onnx::AttributeProto *a = findAttr(node, name);
  if (!a)
    return {};
  return {a->ints().begin(), a->ints().end()};
}

/// Clamps ONNX Slice bounds for one axis of size `dim` into `start`/`end`:
/// negative values count from the end; for positive steps the result lies in
/// [0, dim], for negative steps start in [0, dim-1] and end in [-1, dim-1].
inline void clampSlice(int64_t start, int64_t end, int64_t step, int64_t dim,
                       int64_t &outStart, int64_t &outEnd) {
  if (start < 0)
    start += dim;
  if (end < 0 && end > INT64_MIN / 2)
    end += dim;
  if (step > 0) {
    outStart = std::clamp<int64_t>(start, 0, dim);
    outEnd = std::clamp<int64_t>(end, 0, dim);
  } else {
    outStart = std::clamp<int64_t>(start, 0, dim - 1);
    outEnd = std::clamp<int64_t>(end, -1, dim - 1);
  }
}

} // namespace hmcc::import

#endif // HMCC_IMPORT_ONNXATTRIBUTES_H
