//===- OnnxImporter.h - ONNX ModelProto to the tg dialect -------*- C++ -*-===//
#ifndef HMCC_IMPORT_ONNXIMPORTER_H
#define HMCC_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hmcc {

struct ImportOptions {
  /// Binds dimension 0 of every data input whose dimension 0 is symbolic.
  std::optional<int64_t> batch;
  /// Binds dimension 1 of every data input whose dimension 1 is symbolic.
  std::optional<int64_t> seq;
  /// Binds the whole shape of one named data input (--input-shape NAME=D0,D1).
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputShapes;
  /// Initializers (names or glob patterns) to keep as constants although the
  /// rule would make them trainable parameters (--frozen NAME).
  std::vector<std::string> frozen;
  /// Data inputs given a fixed value at compile time, as (name, file with a
  /// serialized onnx.TensorProto) pairs (--input-value NAME=FILE.pb). The
  /// input becomes a constant; shapes, axes and slice bounds that arrive as
  /// graph inputs need this.
  std::vector<std::pair<std::string, std::string>> inputValues;
};

/// Whether operand `operand` of ONNX op `opType` must be known at compile
/// time (a shape, axes, slice bounds, a dropout ratio, ...).
bool needsCompileTimeValue(llvm::StringRef opType, int operand);

/// The ONNX operator types the importer accepts (default domain).
const std::vector<std::string> &supportedOnnxOps();

/// The operators of other domains it accepts, as "domain.OpType"
/// (ai.onnx.preview.training's Adagrad, Momentum and Adam).
const std::vector<std::string> &supportedPreviewTrainingOps();

/// Reads the ONNX model at `path` (binary protobuf, or ONNX's text syntax when
/// the file name ends in .onnxtxt) and returns it as a module in the tg
/// dialect. On failure returns null and sets `error` to one message that
/// names the file and, where one is at fault, the node, op, domain and opset.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxModel(mlir::MLIRContext &context,
                                                  llvm::StringRef path,
                                                  const ImportOptions &options,
                                                  std::string &error);

} // namespace hmcc

#endif // HMCC_IMPORT_ONNXIMPORTER_H
