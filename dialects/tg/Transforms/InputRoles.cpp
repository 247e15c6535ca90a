//===- InputRoles.cpp - tg-input-roles: tokens, targets and the vocabulary ===//
#include "tg/Transforms/Passes.h"

#include "tg/IR/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace hmcc {
#define GEN_PASS_DEF_TGINPUTROLES
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc::tg;

namespace {

/// Whether argument `k` of `fn` is a data input holding int64 [B, T] ids.
bool isIdWindow(func::FuncOp fn, unsigned k) {
  auto type = dyn_cast<RankedTensorType>(fn.getArgument(k).getType());
  return fn.getArgAttr(k, "tg.input") && type && type.getRank() == 2 &&
         type.getElementType().isInteger(64);
}

/// The rows of the parameter that `tokens` index along axis 0 (an
/// embedding), or 0 when no such gather reads them.
int64_t vocabularyOf(Value tokens) {
  for (Operation *user : tokens.getUsers())
    if (auto gather = dyn_cast<GatherOp>(user))
      if (gather.getIndices() == tokens && gather.getAxis() == 0 &&
          gather.getX().getDefiningOp<ParamOp>())
        return gather.getX().getType().getDimSize(0);
  return 0;
}

struct InputRolesPass : hmcc::impl::TGInputRolesBase<InputRolesPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      SmallVector<unsigned> ids;
      for (unsigned k = 0; k < fn.getNumArguments(); ++k)
        if (isIdWindow(fn, k))
          ids.push_back(k);
      if (ids.size() != 2 || fn.getArgument(ids[0]).getType() != fn.getArgument(ids[1]).getType())
        continue;
      Builder b(fn.getContext());
      fn.setArgAttr(ids[0], "tg.input_role", b.getStringAttr("tokens"));
      fn.setArgAttr(ids[1], "tg.input_role", b.getStringAttr("targets"));
      if (int64_t vocab = vocabularyOf(fn.getArgument(ids[0])))
        fn.setArgAttr(ids[0], "tg.vocab_size", b.getI64IntegerAttr(vocab));
    }
  }
};

} // namespace
