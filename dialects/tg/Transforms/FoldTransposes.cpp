//===- FoldTransposes.cpp - a matrix read transposed is not copied --------===//
//
// tg-fold-transposes (see Passes.td): torch.onnx exports nn.Linear as
// MatMul(x, Transpose(W)); the GEMM can read W transposed as it is.
//
//===----------------------------------------------------------------------===//

#include "tg/IR/TGOps.h"
#include "tg/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace hmcc {
#define GEN_PASS_DEF_TGFOLDTRANSPOSES
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc::tg;

namespace {

struct FoldTransposesPass : hmcc::impl::TGFoldTransposesBase<FoldTransposesPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    SmallVector<TransposeOp> dead;
    getOperation().walk([&](MatMulOp m) {
      auto t = m.getRhs().getDefiningOp<TransposeOp>();
      if (!t || m.getTransB() || m.getTransA())
        return;
      auto lhs = cast<RankedTensorType>(m.getLhs().getType());
      ArrayRef<int64_t> perm = t.getPerm();
      if (perm.size() != 2 || perm[0] != 1 || perm[1] != 0 || lhs.getRank() < 2)
        return; // only a matrix on the right, swapped whole
      m.getRhsMutable().assign(t.getX());
      m.setTransB(true);
      if (t->use_empty())
        dead.push_back(t);
    });
    for (TransposeOp t : dead)
      if (t->use_empty())
        t.erase();
  }
};

} // namespace
