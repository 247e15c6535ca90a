//===- HMDialect.h - the memory/schedule dialect ----------------*- C++ -*-===//
#ifndef HMCC_HM_HMDIALECT_H
#define HMCC_HM_HMDIALECT_H

#include "mlir/IR/Dialect.h"

#include "hm/IR/HMDialect.h.inc"

#endif // HMCC_HM_HMDIALECT_H
