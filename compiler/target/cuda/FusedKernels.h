//===- FusedKernels.h - fused programs as CUDA kernels ----------*- C++ -*-===//
//
// The CUDA target's own code: each distinct fused elementwise program
// (tg.fused) of a scheduled module written as a struct whose eval applies
// its instructions one a line, for the runtime's generated-kernel template
// (runtime/cuda/fused_generated.h), and compiled by nvcc beside the
// program. The runtime's interpreter decodes every instruction for every
// element and keeps its values in shared memory; the generated kernel keeps
// them in registers. Same results, bit for bit: the same ew::fused_apply on
// the same operands, built without fused multiply-adds as the runtime is.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_TARGET_CUDA_FUSEDKERNELS_H
#define HMCC_TARGET_CUDA_FUSEDKERNELS_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace hmcc {

/// Writes the CUDA source of `module`'s distinct fused programs to `os`;
/// returns how many it wrote (0: none, and nothing was written).
unsigned emitFusedKernels(mlir::ModuleOp module, llvm::raw_ostream &os);

/// Compiles that source (`cuPath`) with nvcc for `arch` ("sm_90") into the
/// object `objPath`, nvcc's output to `logPath`. Returns false with `error`
/// set, also when this hmcc was built without nvcc.
bool compileFusedKernels(llvm::StringRef cuPath, llvm::StringRef objPath, llvm::StringRef arch,
                         llvm::StringRef logPath, std::string &error);

} // namespace hmcc

#endif // HMCC_TARGET_CUDA_FUSEDKERNELS_H
