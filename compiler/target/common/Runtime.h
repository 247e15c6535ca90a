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

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace hmcc {

/// The hmrt_dtype (ONNX TensorProto.DataType) number of an element type, 0
/// for types the runtime has none for.
int hmrtDtypeOf(mlir::Type element);

/// The program's hyper-parameters: the optimizer (tg.optimizer; none
/// unless `training`) and the learning-rate schedule (tg.lr_schedule).
hmrt_hyperparams programHyperparams(mlir::ModuleOp module, bool training);

/// Writes the program's initial state to the directory `path` in the
/// runtime's checkpoint format: every tg.parameter (whole, where the program
/// keeps one in pieces) with the value `valueOf` gives for its name, every
/// tg.state zero; the manifest records the program (ABI and
/// hyper-parameters). Values are asked for one at a time and each is
/// dropped once written, so the state may be far larger than memory.
/// Returns false with `error` set (`valueOf`'s message where it failed; a
/// parameter's value that memory cannot hold is a message too, not an
/// abort).
/// `progress`, where given, hears the bytes written so far and in all after
/// each piece.
bool writeInitialState(
    mlir::ModuleOp module, bool training,
    llvm::function_ref<std::optional<Tensor>(llvm::StringRef name, std::string &error)> valueOf,
    llvm::StringRef path, std::string &error,
    llvm::function_ref<void(uint64_t done, uint64_t total)> progress = {});

/// The bytes of the tensors writeInitialState writes.
uint64_t initialStateBytes(mlir::ModuleOp module);

/// About the most memory writeInitialState holds at once beside the model
/// (with the values from hmcc::ParameterReader): the largest parameter,
/// decoded and in its own bytes, and the writer's buffer.
uint64_t initialStateMemory(mlir::ModuleOp module);

} // namespace hmcc

#endif // HMCC_TARGET_COMMON_RUNTIME_H
