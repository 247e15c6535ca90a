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

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace hmcc {

/// Values of the parameters of `module` by symbol name, as doubles.
/// `modelPath` is the ONNX file, or the directory holding it (then the
/// module's `tg.source` attribute names the file). On failure returns nullopt
/// and sets `error` to a message naming the file and the parameter.
std::optional<TensorMap> loadParameters(mlir::ModuleOp module, llvm::StringRef modelPath,
                                        std::string &error);

} // namespace hmcc

#endif // HMCC_IMPORT_INITIALIZERS_H
