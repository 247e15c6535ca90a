//===- EmitCpp.h - the scheduled program as C++ for the CPU -----*- C++ -*-===//
#ifndef HMCC_TARGET_CPU_EMITCPP_H
#define HMCC_TARGET_CPU_EMITCPP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/Support/raw_ostream.h"

namespace hmcc {

/// Lowers the scheduled program (after hm-place-buffers) to the EmitC
/// dialect: what --emit=emitc prints and emitProgramCpp translates. `train`
/// and `eval` as for emitProgramCpp. Returns null after a diagnostic.
mlir::OwningOpRef<mlir::ModuleOp> lowerToEmitC(mlir::ModuleOp module, mlir::func::FuncOp train,
                                               mlir::func::FuncOp eval,
                                               llvm::StringRef backend = "cpu");

/// Writes the C++ translation unit of the scheduled program (after
/// hm-place-buffers), through EmitC and MLIR's C++ translator: one runtime
/// call per op at its static arena offset, and hmcc_program() describing
/// inputs, outputs, parameters, states and hyper-parameters
/// (runtime/include/hmrt/program.h). `train` (the step entry) and `eval`
/// (the forward entry, whose results are the program's outputs) may each
/// be null. `backend` is the device the program opens by default ("cpu",
/// "cuda"): the code is the same, every kernel on device memory is called
/// through the device's kernel table (hmrt/kernel_table.h).
mlir::LogicalResult emitProgramCpp(mlir::ModuleOp module, mlir::func::FuncOp train,
                                   mlir::func::FuncOp eval, llvm::raw_ostream &os,
                                   llvm::StringRef backend = "cpu");

/// Compiles the C++ file `cppPath` with the host C++ compiler and links it
/// and `objects` with the runtime into the executable `exePath`, with `cuda`
/// the runtime's CUDA backend too; the compiler's output goes to `logPath`.
/// Returns false with `error` set.
bool compileHostExecutable(llvm::StringRef cppPath, llvm::StringRef exePath,
                           llvm::StringRef logPath, bool cuda,
                           llvm::ArrayRef<std::string> objects, std::string &error);

/// Whether this hmcc can link programs with the runtime's CUDA backend (the
/// CUDA toolkit was found when it was built).
bool haveCudaRuntime();
/// The GPU architectures its CUDA kernels were built for ("sm_90"), and
/// whether `arch` ("sm_90") is one of them.
std::string cudaRuntimeArchs();
bool cudaRuntimeHasArch(llvm::StringRef arch);
/// The device memory the CUDA backend holds beside a program's device arena
/// (hmrt/device.h: its scratch and cuBLAS's workspace).
uint64_t cudaRuntimeDeviceBytes();

} // namespace hmcc

#endif // HMCC_TARGET_CPU_EMITCPP_H
