//===- Codegen.h - static buffers and C++ for tg programs -------*- C++ -*-===//
#ifndef HMCC_COMPILER_CODEGEN_H
#define HMCC_COMPILER_CODEGEN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace hmcc {

/// The hmrt_dtype (ONNX TensorProto.DataType) number of an element type, 0
/// for types the runtime has none for.
int hmrtDtypeOf(mlir::Type element);

/// Places every tensor of `module`'s program in one arena and records the
/// plan as attributes (the schedule `--emit=schedule` prints):
///  - `hm.offset` on each tg.parameter, tg.state and function argument,
///  - `hm.offsets` (one per result) on each op whose results need memory,
///  - `hm.arena_bytes` on the module.
/// Persistent tensors (parameters, states, inputs) come first; the values of
/// each function then share the rest by lifetime (first fit over live
/// ranges), so `train` and `eval` reuse the same activation memory.
/// Returns failure with a diagnostic on anything it cannot place.
mlir::LogicalResult assignBuffers(mlir::ModuleOp module, mlir::func::FuncOp train,
                                  mlir::func::FuncOp eval);

/// Writes the C++ translation unit of the planned program: one runtime call
/// per op at static arena offsets, and hmcc_program() describing inputs,
/// outputs, parameters, states and hyper-parameters (runtime/include/hmrt/
/// program.h). `train` (the step entry) and `eval` (the forward entry, whose
/// results are the program's outputs) may each be null.
mlir::LogicalResult emitProgramCpp(mlir::ModuleOp module, mlir::func::FuncOp train,
                                   mlir::func::FuncOp eval, llvm::raw_ostream &os);

} // namespace hmcc

#endif // HMCC_COMPILER_CODEGEN_H
