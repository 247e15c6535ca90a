//===- Passes.h - the planner's passes --------------------------*- C++ -*-===//
#ifndef HMCC_PLANNER_PASSES_H
#define HMCC_PLANNER_PASSES_H

#include "hm/IR/HMDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace hmcc {

#define GEN_PASS_DECL
#include "compiler/planner/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/planner/Passes.h.inc"

} // namespace hmcc

#endif // HMCC_PLANNER_PASSES_H
