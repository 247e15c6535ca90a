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

} // namespace hmcc

#endif // HMCC_TG_TRANSFORMS_PASSES_H
