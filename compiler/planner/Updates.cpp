//===- Updates.cpp - plan-updates: updates on the device, early -----------===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/planner/PassOptions.h"
#include "compiler/planner/Passes.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"

namespace hmcc {
#define GEN_PASS_DEF_PLANUPDATES
#include "compiler/planner/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;

namespace {

struct PlanUpdatesPass : hmcc::impl::PlanUpdatesBase<PlanUpdatesPass> {
  void runOnOperation() override {
    if (func::FuncOp fn = planner::trainingFunction(getOperation()))
      planner::moveUpdates(fn, [](Operation *op) { return !hm::isHostHomed(op); });
  }
};

} // namespace
