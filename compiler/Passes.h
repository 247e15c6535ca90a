//===- Passes.h - hmcc compiler passes --------------------------*- C++ -*-===//
#ifndef HMCC_COMPILER_PASSES_H
#define HMCC_COMPILER_PASSES_H

#include "hm/HMDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace hmcc {

#define GEN_PASS_DECL
#include "compiler/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Passes.h.inc"

} // namespace hmcc

#endif // HMCC_COMPILER_PASSES_H
