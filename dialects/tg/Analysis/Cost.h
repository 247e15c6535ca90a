//===- Cost.h - floating-point work and memory traffic of tg ops -*- C++ -*-===//
//
// How much work an op is, as hmcc counts it; the input of the cost model the
// planner will use (time = max(flops / peak, bytes / bandwidth) per op).
//  - flops: 2 per multiply-add in matmul and gemm; 1 per output element for
//    elementwise ops (transcendentals included); 1 per input element for
//    reductions; a small constant per element for norms, softmax and losses
//    and per parameter element for optimizer updates; 0 for ops that only
//    move data (reshape, transpose, slice, gather, concat, cast, copies).
//  - bytes: every tensor operand read once and every result written once,
//    plus the parameters and states an update reads and writes in place (no
//    cache reuse: an upper bound on traffic for ops that stream).
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_COMPILER_COST_H
#define HMCC_COMPILER_COST_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"

#include <cstdint>

namespace hmcc {

struct OpCost {
  int64_t flops = 0;
  int64_t bytes = 0;
};

/// The cost of one tg op (zero for ops of other dialects and for leaves).
OpCost opCost(mlir::Operation *op);

/// The declaration `ref` names, nearest `from` (tg.parameter, tg.state):
/// through the symbol tables of the innermost live SymbolLookupScope, else
/// by SymbolTable::lookupNearestSymbolFrom, which walks every symbol.
mlir::Operation *lookupDecl(mlir::Operation *from, mlir::FlatSymbolRefAttr ref);

/// While alive, lookupDecl on this thread goes through symbol tables built
/// once (mlir::SymbolTableCollection), not a walk per lookup. For loops
/// that cost every op of a program (a timeline, a chain's profile): no
/// symbol may be added, removed or renamed while one is alive.
class SymbolLookupScope {
public:
  SymbolLookupScope();
  ~SymbolLookupScope();
  SymbolLookupScope(const SymbolLookupScope &) = delete;
  SymbolLookupScope &operator=(const SymbolLookupScope &) = delete;

  mlir::Operation *lookup(mlir::Operation *from, mlir::FlatSymbolRefAttr ref);

private:
  mlir::SymbolTableCollection tables;
  SymbolLookupScope *outer;
};

} // namespace hmcc

#endif // HMCC_COMPILER_COST_H
