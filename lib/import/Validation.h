//===- Validation.h - the model checked before anything uses it -*- C++ -*-===//
//
// The step right after loading: every tensor, type and opset the file holds
// is checked before ONNX's checker, its shape inference or hmcc's folding
// read them, so that no later step sees a size that overflows, a tensor whose
// data does not match its shape, or an opset hmcc does not implement.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_IMPORT_VALIDATION_H
#define HMCC_IMPORT_VALIDATION_H

#include <cstdint>

namespace hmcc::import {

struct Model;

/// The default-domain opsets hmcc implements.
constexpr int64_t kMinOpset = 1, kMaxOpset = 17;

/// Bytes per element of an ONNX element type; 0 for STRING, UNDEFINED and
/// values outside the enum.
int64_t elementBytes(int64_t dtype);

/// Checks, in every graph of the model (the main graph, training_info's,
/// subgraphs in attributes and functions):
///  - opset imports: the default domain within [kMinOpset, kMaxOpset],
///    ai.onnx.preview.training at version 1;
///  - every tensor (initializers, tensor attributes): a known element type,
///    non-negative dimensions, a byte size within kMaxTensorBytes, data that
///    matches the shape (raw bytes or typed values), well-formed external
///    data entries;
///  - every declared value type: a known element type, non-negative
///    dimensions, a byte size within kMaxTensorBytes;
///  - attributes against the operator's schema (names, types, required
///    ones), and those whose values name element types (Cast's `to`) hold one.
/// Throws ImportError naming the tensor, value or node.
void validateModel(const Model &model);

} // namespace hmcc::import

#endif // HMCC_IMPORT_VALIDATION_H
