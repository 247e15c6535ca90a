//===- Cost.cpp - floating-point work and memory traffic of tg ops --------===//
#include "tg/Analysis/Cost.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace hmcc::tg;

namespace hmcc {
namespace {

int64_t numel(Value v) { return cast<RankedTensorType>(v.getType()).getNumElements(); }

/// The innermost live SymbolLookupScope of this thread.
thread_local SymbolLookupScope *currentScope = nullptr;

/// Bytes of the tg.parameter or tg.state `ref` names.
int64_t symbolBytes(Operation *op, FlatSymbolRefAttr ref) {
  Operation *decl = lookupDecl(op, ref);
  if (auto p = dyn_cast_or_null<ParameterOp>(decl))
    return tg::tensorBytes(p.getType());
  if (auto s = dyn_cast_or_null<StateOp>(decl))
    return tg::tensorBytes(s.getType());
  return 0;
}

/// Contraction length of a matmul: the last dim of lhs (or the one before
/// it when lhs is transposed); a 1-D lhs is a row vector.
int64_t contraction(MatMulOp op) {
  auto lhs = cast<RankedTensorType>(op.getLhs().getType());
  int64_t rank = lhs.getRank();
  if (rank == 1)
    return lhs.getDimSize(0);
  return op.getTransA() ? lhs.getDimSize(rank - 2) : lhs.getDimSize(rank - 1);
}

/// `gemms` GEMMs of attention's (queries x keys x head_dim) size per head,
/// half of it under a causal mask.
template <class AttentionLike>
int64_t attentionFlops(AttentionLike o, int64_t gemms) {
  tg::AttentionDims d = tg::attentionDims(o);
  int64_t f = gemms * 2 * d.batch * d.heads * d.queries * d.keys * d.headDim;
  return o.getCausal() ? f / 2 : f;
}

int64_t flopsOf(Operation *op) {
  auto out = [&] { return op->getNumResults() ? numel(op->getResult(0)) : 0; };
  auto in = [&] { return op->getNumOperands() ? numel(op->getOperand(0)) : 0; };
  return TypeSwitch<Operation *, int64_t>(op)
      .Case([&](MatMulOp o) { return 2 * numel(o.getResult()) * contraction(o); })
      .Case([&](GemmOp o) {
        auto a = cast<RankedTensorType>(o.getA().getType());
        int64_t k = o.getTransA() ? a.getDimSize(0) : a.getDimSize(1);
        return 2 * numel(o.getResult()) * k + (o.getC() ? numel(o.getResult()) : 0);
      })
      .Case<SqrtOp, ReciprocalOp, NegOp, ExpOp, LogOp, TanhOp, SigmoidOp, ErfOp, ReluOp, AddOp,
            SubOp, MulOp, DivOp, PowOp, EqualOp, WhereOp, ReluGradOp, DropoutOp, DropoutGradOp,
            ClipCoefficientOp>([&](Operation *) { return out(); })
      .Case([&](AttentionOp o) { return attentionFlops(o, 2); })
      .Case([&](AttentionGradOp o) { return attentionFlops(o, 5); })
      .Case([&](FusedOp o) { return int64_t(o.getOps().size()) * out(); })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, SumToOp, GatherGradOp, ReduceMaxGradOp>(
          [&](Operation *) { return in(); })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](Operation *) { return 5 * out(); })
      .Case<SoftmaxGradOp, LogSoftmaxGradOp>([&](Operation *) { return 3 * out(); })
      .Case([&](LayerNormOp o) { return 8 * numel(o.getX()); })
      .Case([&](LayerNormGradOp o) { return 12 * numel(o.getX()); })
      .Case([&](SoftmaxCrossEntropyLossOp o) { return 5 * numel(o.getScores()); })
      .Case([&](SoftmaxCrossEntropyLossGradOp o) { return 3 * numel(o.getScores()); })
      .Case([&](SumSquaresOp o) { return 2 * numel(o.getGrad()); })
      .Case([&](NormOfSumOp) { return int64_t(1); })
      .Case([&](SgdUpdateOp o) { return 4 * numel(o.getGrad()); })
      .Case([&](AdamWUpdateOp o) { return 12 * numel(o.getGrad()); })
      .Case([&](AdamW8bitUpdateOp o) { return 20 * numel(o.getGrad()); })
      .Case([&](OnnxOptimizerOp o) {
        int64_t n = 0;
        for (unsigned i = 0; i < o.getTensors().size() / (2 + o.getStatesPerTensor()); ++i)
          n += numel(o.getResult(i));
        return 10 * n;
      })
      .Default([](Operation *) { return int64_t(0); });
}

} // namespace

SymbolLookupScope::SymbolLookupScope() : outer(currentScope) { currentScope = this; }

SymbolLookupScope::~SymbolLookupScope() { currentScope = outer; }

Operation *SymbolLookupScope::lookup(Operation *from, FlatSymbolRefAttr ref) {
  return tables.lookupNearestSymbolFrom(from, ref.getAttr());
}

Operation *lookupDecl(Operation *from, FlatSymbolRefAttr ref) {
  return currentScope ? currentScope->lookup(from, ref)
                      : SymbolTable::lookupNearestSymbolFrom(from, ref);
}

OpCost opCost(Operation *op) {
  OpCost cost;
  if (!isa<TGDialect>(op->getDialect()) || isa<ParamOp, ParameterOp, StateOp>(op))
    return cost;
  cost.flops = flopsOf(op);
  // An operand read twice (packed attention's q, k and v) is read once.
  llvm::SmallDenseSet<Value, 8> read;
  for (Value v : op->getOperands())
    if (read.insert(v).second)
      cost.bytes += tg::tensorBytes(v.getType());
  for (Value v : op->getResults())
    cost.bytes += tg::tensorBytes(v.getType());
  // In-place updates read and write the parameters and states they name.
  for (NamedAttribute a : op->getAttrs())
    if (auto ref = dyn_cast<FlatSymbolRefAttr>(a.getValue()))
      cost.bytes += 2 * symbolBytes(op, ref);
  if (auto c = dyn_cast<ConstantOp>(op))
    cost.bytes = tg::tensorBytes(c.getType()); // filled once, read by its users
  return cost;
}

} // namespace hmcc
