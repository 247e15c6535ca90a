//===- Initializers.h - parameter values from the ONNX model ----*- C++ -*-===//
//
// Reads the initial value of every tg.parameter of an imported module: its
// `initial_value` where the importer set one, else from the ONNX model it
// came from: the initializer named by the parameter's `source` (in the graph
// or in a training_info algorithm), or, where the parameter records external data (`location`,
// `offset`, `length`), those bytes of that file next to the model.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_IMPORT_INITIALIZERS_H
#define HMCC_IMPORT_INITIALIZERS_H

#include "lib/support/Tensor.h"

#include "tg/IR/TGOps.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringRef.h"

#include "onnx/onnx_pb.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace hmcc {

/// Reads parameter values one at a time, so that no more than one is held
/// at once (beside the model itself, whose inline initializers it keeps).
class ParameterReader {
public:
  /// `modelPath` is the ONNX file, or the directory holding it (then the
  /// module's `tg.source` attribute names the file). On failure returns
  /// null and sets `error` to a message naming the file.
  static std::unique_ptr<ParameterReader> open(mlir::ModuleOp module, llvm::StringRef modelPath,
                                               std::string &error);
  ~ParameterReader();
  /// The value of `param`, as doubles; nullopt with `error` naming the file
  /// and the parameter on failure.
  std::optional<Tensor> read(tg::ParameterOp param, std::string &error) const;

private:
  ParameterReader() = default;
  std::string path, dir;
  onnx::ModelProto model;
  std::unordered_map<std::string, const onnx::TensorProto *> initializers;
};

/// Values of the parameters of `module` by symbol name, as doubles.
/// `modelPath` is the ONNX file, or the directory holding it (then the
/// module's `tg.source` attribute names the file). On failure returns nullopt
/// and sets `error` to a message naming the file and the parameter.
std::optional<TensorMap> loadParameters(mlir::ModuleOp module, llvm::StringRef modelPath,
                                        std::string &error);

} // namespace hmcc

#endif // HMCC_IMPORT_INITIALIZERS_H
