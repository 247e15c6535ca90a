//===- TGDialect.h - the training-graph dialect -----------------*- C++ -*-===//
#ifndef HMCC_TG_TGDIALECT_H
#define HMCC_TG_TGDIALECT_H

#include "mlir/IR/Dialect.h"

#include "tg/IR/TGDialect.h.inc"

#endif // HMCC_TG_TGDIALECT_H
