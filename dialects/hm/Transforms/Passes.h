//===- Passes.h - passes on the scheduled program (hm) ----------*- C++ -*-===//
#ifndef HMCC_HM_TRANSFORMS_PASSES_H
#define HMCC_HM_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace hmcc {

#define GEN_PASS_DECL
#include "hm/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "hm/Transforms/Passes.h.inc"

} // namespace hmcc

#endif // HMCC_HM_TRANSFORMS_PASSES_H
