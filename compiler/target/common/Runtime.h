//===- Runtime.h - what every target shares about the runtime ---*- C++ -*-===//
//
// The parts of the runtime's interface (runtime/include/hmrt) that code
// generation for any target needs: element type numbers and the initial
// state written beside the executable.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_TARGET_COMMON_RUNTIME_H
#define HMCC_TARGET_COMMON_RUNTIME_H

#include "lib/support/Tensor.h"

#include "hmrt/program.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace hmcc {

/// The hmrt_dtype (ONNX TensorProto.DataType) number of an element type, 0
/// for types the runtime has none for.
int hmrtDtypeOf(mlir::Type element);

/// The program's hyper-parameters: the optimizer (tg.optimizer; none
/// unless `training`) and the learning-rate schedule (tg.lr_schedule).
hmrt_hyperparams programHyperparams(mlir::ModuleOp module, bool training);

/// Writes the program's initial state to the directory `path` in the
/// runtime's checkpoint format: every tg.parameter with its value from
/// `values`, every tg.state zero; the manifest records the program (ABI and
/// hyper-parameters). Returns false with `error` set.
bool writeInitialState(mlir::ModuleOp module, bool training, const TensorMap &values,
                       llvm::StringRef path, std::string &error);

/// About the most memory that loading the parameters (loadParameters: each
/// element decoded, then kept as a double) and writeInitialState (every
/// parameter and state in its own bytes) hold at once.
uint64_t initialStateMemory(mlir::ModuleOp module);

} // namespace hmcc

#endif // HMCC_TARGET_COMMON_RUNTIME_H
