//===- Precision.cpp - the arithmetic of the GEMMs ------------------------===//
//
// Marks every tg.matmul and tg.gemm with `tg.math = "bf16"` under
// precision=bf16 (bf16 products, fp32 sums: hmrt_matmul_f32_bf16), or
// clears the mark under fp32. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tg/Transforms/Passes.h"
#include "tg/IR/TGOps.h"

#include "mlir/IR/Builders.h"

namespace hmcc {
#define GEN_PASS_DEF_TGPRECISION
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc::tg;

namespace {

struct PrecisionPass : hmcc::impl::TGPrecisionBase<PrecisionPass> {
  using TGPrecisionBase::TGPrecisionBase;

  void runOnOperation() override {
    if (precision != "fp32" && precision != "bf16") {
      getOperation().emitError() << "tg-precision: precision must be fp32 or bf16, not '"
                                 << precision << "'";
      return signalPassFailure();
    }
    bool bf16 = precision == "bf16";
    Builder b(&getContext());
    getOperation().walk([&](Operation *op) {
      if (!isa<MatMulOp, GemmOp>(op))
        return;
      if (bf16)
        op->setAttr(kMathAttr, b.getStringAttr("bf16"));
      else
        op->removeAttr(kMathAttr);
    });
  }
};

} // namespace
