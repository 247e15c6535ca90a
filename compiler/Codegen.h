//===- Codegen.h - C++ for scheduled programs -------------------*- C++ -*-===//
#ifndef HMCC_COMPILER_CODEGEN_H
#define HMCC_COMPILER_CODEGEN_H

#include "compiler/Cost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace hmcc {

/// The hmrt_dtype (ONNX TensorProto.DataType) number of an element type, 0
/// for types the runtime has none for.
int hmrtDtypeOf(mlir::Type element);

/// Where the memory of a scheduled program goes, in bytes (each tensor
/// rounded up to the arena's alignment).
struct ScheduleMemory {
  int64_t arena = 0;       ///< what the program allocates
  int64_t parameters = 0, states = 0, inputs = 0;
  int64_t activations = 0; ///< the most that is live at once
};
ScheduleMemory scheduleMemory(mlir::ModuleOp module);

/// The work of one call of a scheduled function: the sum of compiler/Cost.h
/// over the ops that run.
OpCost functionCost(mlir::func::FuncOp fn);

/// Writes the scheduled program (after hm-place-buffers) as JSON: the arena,
/// the persistent tensors and every entry function's ops in execution order
/// with the bytes they read and write (docs/schedule-format.md).
mlir::LogicalResult dumpScheduleJson(mlir::ModuleOp module, llvm::raw_ostream &os);

/// Lowers the scheduled program (after hm-place-buffers) to the EmitC
/// dialect: what --emit=emitc prints and emitProgramCpp translates. `train`
/// and `eval` as for emitProgramCpp. Returns null after a diagnostic.
mlir::OwningOpRef<mlir::ModuleOp> lowerToEmitC(mlir::ModuleOp module, mlir::func::FuncOp train,
                                               mlir::func::FuncOp eval);

/// Writes the C++ translation unit of the scheduled program (after
/// hm-place-buffers), through EmitC and MLIR's C++ translator: one runtime
/// call per op at its static arena offset,
/// and hmcc_program() describing inputs, outputs, parameters, states and
/// hyper-parameters (runtime/include/hmrt/program.h). `train` (the step entry) and `eval` (the forward entry, whose
/// results are the program's outputs) may each be null.
mlir::LogicalResult emitProgramCpp(mlir::ModuleOp module, mlir::func::FuncOp train,
                                   mlir::func::FuncOp eval, llvm::raw_ostream &os);

} // namespace hmcc

#endif // HMCC_COMPILER_CODEGEN_H
