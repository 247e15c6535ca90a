//===- MemoryPlot.h - memory over one step, as a web page -------*- C++ -*-===//
#ifndef HMCC_HM_EXPORT_MEMORYPLOT_H
#define HMCC_HM_EXPORT_MEMORYPLOT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace hmcc {

/// Writes a self-contained HTML page (inline SVG, no external resource)
/// plotting, for one call of the scheduled function `fn`, the bytes in use
/// in each arena (device, host) at every op, stacked by class: parameters,
/// optimizer states, inputs, fetched parameters, gradients, activations;
/// with the arena size and, for the device, the `vram` budget as lines.
/// What `hmcc --memory-plot=FILE` writes.
mlir::LogicalResult writeMemoryPlot(mlir::ModuleOp module, mlir::func::FuncOp fn,
                                    std::optional<int64_t> vram, llvm::raw_ostream &os);

} // namespace hmcc

#endif // HMCC_HM_EXPORT_MEMORYPLOT_H
