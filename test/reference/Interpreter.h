//===- Interpreter.h - double-precision reference interpreter ---*- C++ -*-===//
//
// Evaluates a func.func whose body is tg ops and a func.return, with every
// element held as a double whatever the declared element type (integer and
// boolean tensors too: indices and masks are small). This is the scalar
// reference that numerical claims about the compiler are checked against:
// straightforward index loops with ONNX semantics, no speed tricks.
//
// Dropout in training mode (ratio > 0) draws its keep-mask from a seeded
// generator: a dropout op with a `seed` attribute uses its own generator
// seeded with it, the others share one stream that starts afresh from the
// interpreter's seed at every run. Two runs of the same function therefore
// see the same masks, and so do @forward and @forward_backward (their
// dropouts come in the same order).
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_COMPILER_INTERPRETER_H
#define HMCC_COMPILER_INTERPRETER_H

#include "lib/support/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hmcc {

class Interpreter {
public:
  explicit Interpreter(uint64_t dropoutSeed = 0) : dropoutSeed(dropoutSeed) {}

  /// Evaluates `func` on `args` (one per function argument, in order) with
  /// the parameters' values taken from `params` (by tg.param symbol name).
  /// Returns the function's results, or nullopt with error() set: an op the
  /// interpreter does not know, a missing parameter, a shape that disagrees
  /// with the IR, an index out of range.
  std::optional<std::vector<Tensor>> run(mlir::func::FuncOp func,
                                         const std::vector<Tensor> &args,
                                         const TensorMap &params);

  /// Looks `name` up in `module` and runs it.
  std::optional<std::vector<Tensor>> run(mlir::ModuleOp module, llvm::StringRef name,
                                         const std::vector<Tensor> &args,
                                         const TensorMap &params);

  /// The message of the last failed run.
  const std::string &error() const { return message; }

private:
  uint64_t dropoutSeed;
  std::string message;
};

} // namespace hmcc

#endif // HMCC_COMPILER_INTERPRETER_H
