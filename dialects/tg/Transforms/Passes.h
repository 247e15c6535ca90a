//===- Passes.h - passes on the training graph (tg) -------------*- C++ -*-===//
#ifndef HMCC_TG_TRANSFORMS_PASSES_H
#define HMCC_TG_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace hmcc {

#define GEN_PASS_DECL
#include "tg/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tg/Transforms/Passes.h.inc"

/// What tg-summary prints: parameters, constants, each function's inputs
/// and outputs, and the op histogram.
void printSummary(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace hmcc

#endif // HMCC_TG_TRANSFORMS_PASSES_H
