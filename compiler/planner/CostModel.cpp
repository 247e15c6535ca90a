//===- CostModel.cpp - predicted time of tg ops on a device ---------------===//
#include "compiler/planner/CostModel.h"
#include "hm/Analysis/Memory.h"
#include "hm/IR/HMOps.h"
#include "tg/Analysis/Cost.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace hmcc::tg;

namespace hmcc::planner {

std::vector<double> computeClock(func::FuncOp fn, const DeviceProfile &profile) {
  SymbolLookupScope symbols;
  std::vector<double> clock(1, 0.0);
  for (Operation &op : fn.getBody().front())
    clock.push_back(clock.back() + (runsInProgram(op) && streamOf(op) == "compute"
                                        ? predictSeconds(&op, profile)
                                        : 0.0));
  return clock;
}

StringRef opKind(Operation *op) {
  if (!isa<TGDialect>(op->getDialect()) || isa<ParamOp, ParameterOp, StateOp, ConstantOp>(op))
    return "";
  if (isView(op))
    return "data";
  return TypeSwitch<Operation *, StringRef>(op)
      .Case<MatMulOp, GemmOp>([](auto) { return "matmul"; })
      .Case<AttentionOp, AttentionGradOp>([](auto) { return "attention"; })
      .Case<FusedOp>([](auto) { return "fused"; })
      .Case<SoftmaxOp, LogSoftmaxOp, SoftmaxGradOp, LogSoftmaxGradOp, SoftmaxCrossEntropyLossOp,
            SoftmaxCrossEntropyLossGradOp>([](auto) { return "softmax"; })
      .Case<LayerNormOp, LayerNormGradOp>([](auto) { return "norm"; })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, SumToOp, SumSquaresOp, NormOfSumOp, ReduceMaxGradOp>(
          [](auto) { return "reduction"; })
      .Case<SgdUpdateOp, AdamWUpdateOp, AdamW8bitUpdateOp, OnnxOptimizerOp>(
          [](auto) { return "optimizer"; })
      .Case<ExpOp, LogOp, ErfOp, TanhOp, SigmoidOp, PowOp>(
          [](auto) { return "transcendental"; })

      .Default([](Operation *o) {
        return opCost(o).flops == 0 ? StringRef("data") : StringRef("elementwise");
      });
}

namespace {

/// The element type whose peak applies: bf16 for GEMMs with bf16 products,
/// else that of the first float result or operand.
std::string computeType(Operation *op) {
  if (hasBf16Math(op)) // bf16 products (tg-precision)
    return "bf16";
  auto name = [](Type t) -> std::string {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor)
      return "";
    Type e = tensor.getElementType();
    if (e.isBF16())
      return "bf16";
    if (e.isF16())
      return "f16";
    return e.isF32() ? "f32" : "";
  };
  for (Type t : op->getResultTypes())
    if (std::string n = name(t); !n.empty())
      return n;
  for (Type t : op->getOperandTypes())
    if (std::string n = name(t); !n.empty())
      return n;
  return "f32";
}

} // namespace

double chunkShare(Operation *op) {
  auto chunk = hm::chunkOf(op);
  if (!chunk || op->getNumOperands() == 0)
    return 1.0;
  // An update's first operand is its gradient, of the parameter's shape.
  double n = double(cast<RankedTensorType>(op->getOperand(0).getType()).getNumElements());
  return double(chunk->second - chunk->first) / std::max(1.0, n);
}

double hostUpdateSeconds(double elements, StringRef format, const DeviceProfile &p) {
  auto rate = p.hostOptimizer.find(format.str());
  return elements / (rate != p.hostOptimizer.end() ? rate->second : 1e9);
}

double predictSeconds(Operation *op, const DeviceProfile &p) {
  StringRef kind = opKind(op);
  if (kind.empty())
    return 0.0;
  if (isView(op))
    return p.launchOverhead;
  OpCost cost = opCost(op);
  if (double share = chunkShare(op); share != 1.0) {
    cost.flops = int64_t(double(cost.flops) * share);
    cost.bytes = int64_t(double(cost.bytes) * share);
  }
  // A GEMM of bf16 tensors (A and B) reads them as they are; one of fp32
  // operands (with bf16 products; two, or one beside a bf16 one) has them
  // rounded first, which the `matmul` efficiency measured on such operands
  // includes.
  auto bf16 = [&](unsigned i) {
    auto tensor = dyn_cast<RankedTensorType>(op->getOperand(i).getType());
    return tensor && tensor.getElementType().isBF16();
  };
  if (kind == "matmul" && op->getNumOperands() >= 2 && bf16(0) && bf16(1))
    kind = "matmul_bf16";
  double eff = p.efficiencyOf(kind);
  double compute = double(cost.flops) / (p.flopsFor(computeType(op)) * eff);
  double memory = double(cost.bytes) / (p.memoryBandwidth * eff);
  // A device kernel that reads values homed on the host (the gradient norm
  // over the host copies of host parameters' gradients) reads them over
  // the host-to-device link.
  if (!p.sharedHost && streamOf(*op) == "compute") {
    int64_t hostBytes = 0;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp(); def && hm::isHostHomed(def))
        hostBytes += tensorBytes(v.getType());
    if (hostBytes)
      memory = std::max(memory, transferSeconds(hostBytes, p.hostToDevice));
  }
  return p.launchOverhead + std::max(compute, memory);
}

} // namespace hmcc::planner
