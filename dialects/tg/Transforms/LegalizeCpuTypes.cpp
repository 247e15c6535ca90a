//===- LegalizeTypes.cpp - element types the CPU runtime computes in ------===//
//
// The runtime's elementwise kernels compute in f32 (floats) and i64
// (integers). This pass rewrites an arithmetic op on any other element type
// into casts to that type, the op, and a cast back, so that code generation
// meets only types it has kernels for. Pow with operands of different types
// (ONNX allows it) computes in f32.
//
//===----------------------------------------------------------------------===//

#include "tg/Transforms/Passes.h"
#include "tg/IR/TGOps.h"

#include "mlir/IR/Builders.h"

namespace hmcc {
#define GEN_PASS_DEF_TGLEGALIZECPUTYPES
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc::tg;

namespace {

RankedTensorType withElement(Value v, Type element) {
  return RankedTensorType::get(cast<RankedTensorType>(v.getType()).getShape(), element);
}

/// The type the runtime computes `element` in.
Type computeType(Type element, OpBuilder &b) {
  return isa<FloatType>(element) ? Type(b.getF32Type()) : Type(b.getI64Type());
}

bool supported(Type element) { return element.isF32() || element.isInteger(64); }

struct LegalizePass : hmcc::impl::TGLegalizeCpuTypesBase<LegalizePass> {
  void runOnOperation() override {
    SmallVector<Operation *> work;
    getOperation().walk([&](Operation *op) {
      if (!isa<AddOp, SubOp, MulOp, DivOp, PowOp, NegOp, SqrtOp, ReciprocalOp, ExpOp, LogOp,
               TanhOp, SigmoidOp, ErfOp, ReluOp>(op))
        return;
      Type result = cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
      bool mixed = llvm::any_of(op->getOperandTypes(), [&](Type t) {
        return cast<RankedTensorType>(t).getElementType() != result;
      });
      bool floatOnly = !isa<AddOp, SubOp, MulOp, DivOp, NegOp>(op);
      if ((supported(result) && !mixed && (!floatOnly || result.isF32())))
        return;
      work.push_back(op);
    });
    for (Operation *op : work) {
      OpBuilder b(op);
      Type result = cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
      bool floatOnly = !isa<AddOp, SubOp, MulOp, DivOp, NegOp>(op) || isa<PowOp>(op);
      Type compute = floatOnly ? Type(b.getF32Type()) : computeType(result, b);
      SmallVector<Value> operands;
      for (Value v : op->getOperands())
        operands.push_back(
            cast<RankedTensorType>(v.getType()).getElementType() == compute
                ? v
                : CastOp::create(b, op->getLoc(), withElement(v, compute), v).getResult());
      OperationState state(op->getLoc(), op->getName());
      state.addOperands(operands);
      state.addTypes(withElement(op->getResult(0), compute));
      state.addAttributes(op->getAttrs());
      Value computed = b.create(state)->getResult(0);
      Value back = CastOp::create(b, op->getLoc(), op->getResult(0).getType(), computed);
      op->getResult(0).replaceAllUsesWith(back);
      op->erase();
    }
  }
};

} // namespace
