//===- Passes.h - conversions between hmcc's dialects -----------*- C++ -*-===//
#ifndef HMCC_CONVERSION_PASSES_H
#define HMCC_CONVERSION_PASSES_H

#include "hm/IR/HMDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace hmcc {

#define GEN_PASS_DECL
#include "compiler/conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/conversion/Passes.h.inc"

} // namespace hmcc

#endif // HMCC_CONVERSION_PASSES_H
