//===- ProgramDescriptor.h - hmcc_program() for every target ----*- C++ -*-===//
//
// The descriptor the runtime's driver reads (runtime/include/hmrt/program.h,
// ABI 4): inputs with their loader roles, outputs, parameters and states at
// their arena offsets, arena sizes per tier, hyper-parameters and the
// learning-rate schedule, the entry points and the names of the ops they
// run. Every target writes it as the same C++ text; a target only says how
// its generated code names things.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_TARGET_COMMON_PROGRAMDESCRIPTOR_H
#define HMCC_TARGET_COMMON_PROGRAMDESCRIPTOR_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hmcc {

/// What the target's generated code defines, for the descriptor to name.
struct ProgramSymbols {
  llvm::StringRef backend;      ///< the hmrt backend it runs on ("cpu")
  llvm::StringRef stepFunction; ///< the training step; empty without one
  llvm::StringRef forwardFunction; ///< the forward entry; empty without one
  llvm::ArrayRef<std::string> stepOps, forwardOps; ///< op names, for the trace
  /// The name of a static int64 array holding `dims` (a tensor's shape).
  llvm::function_ref<std::string(llvm::ArrayRef<int64_t>)> shapeArray;
};

/// A parameter or optimizer state as checkpoints and the driver know it:
/// one declaration, or the pieces of a whole (hm.whole: plan-tiers splits a
/// parameter by rows where its chunks have different homes), declared one
/// after the other in order.
struct WholeTensor {
  std::string name;
  mlir::RankedTensorType type; ///< the whole's
  llvm::SmallVector<mlir::Operation *, 2> pieces; ///< its declarations, in order
};

/// The tg.parameter (`states` false) or tg.state declarations of `module`
/// as wholes, in declaration order.
std::vector<WholeTensor> wholeTensors(mlir::ModuleOp module, bool states);

/// The precondition of code generation for any target: `module` is a
/// scheduled program (hm-place-buffers ran) and every result of `train` and
/// `eval` (either may be null) has a place. Fails after a diagnostic.
mlir::LogicalResult checkScheduled(mlir::ModuleOp module, mlir::func::FuncOp train,
                                   mlir::func::FuncOp eval);

/// The C++ text defining hmcc_program() for the scheduled program in
/// `module` (after hm-place-buffers and tg-input-roles; checkScheduled
/// holds). `train` (the step entry) and `eval` (the forward entry, whose
/// results are the outputs) may each be null, not both.
std::string programDescriptor(mlir::ModuleOp module, mlir::func::FuncOp train,
                              mlir::func::FuncOp eval, const ProgramSymbols &symbols);

/// A C++ float literal that reads back as the same float ("1.0f", "1e-08f").
std::string cFloatLiteral(double v);

/// `text` as a C string literal (control characters become '?').
std::string cStringLiteral(llvm::StringRef text);

} // namespace hmcc

#endif // HMCC_TARGET_COMMON_PROGRAMDESCRIPTOR_H
