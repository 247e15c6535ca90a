//===- CheckBudget.cpp - hm-check-budget: the arena fits --vram -----------===//
#include "hm/Analysis/Memory.h"
#include "hm/IR/HMOps.h"
#include "hm/Transforms/Passes.h"
#include "lib/support/Size.h"

namespace hmcc {
#define GEN_PASS_DEF_HMCHECKBUDGET
#include "hm/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;

namespace {

struct CheckBudgetPass : hmcc::impl::HMCheckBudgetBase<CheckBudgetPass> {
  using HMCheckBudgetBase::HMCheckBudgetBase;

  void runOnOperation() override {
    if (vram.empty() && ram.empty())
      return;
    ModuleOp module = getOperation();
    if (module.getOps<hm::ArenaOp>().empty()) {
      module.emitError("hm-check-budget: the module is not scheduled (run hm-place-buffers)");
      return signalPassFailure();
    }
    ScheduleMemory m = scheduleMemory(module);
    if (!vram.empty()) {
      auto budget = parseSize(vram);
      if (!budget) {
        module.emitError() << "hm-check-budget: vram: " << llvm::toString(budget.takeError());
        return signalPassFailure();
      }
      if (static_cast<uint64_t>(m.arena) > *budget) {
        module.emitError() << "the program does not fit --vram " << formatBytes(*budget)
                           << ": it needs " << formatBytes(m.arena) << " of device memory ("
                           << describeSplit(m)
                           << "), and plan-recompute found nothing to recompute (a program "
                              "without a backward)";
        return signalPassFailure();
      }
    }
    if (!ram.empty()) {
      auto budget = parseSize(ram);
      if (!budget) {
        module.emitError() << "hm-check-budget: ram: " << llvm::toString(budget.takeError());
        return signalPassFailure();
      }
      if (static_cast<uint64_t>(m.hostArena) > *budget) {
        module.emitError() << "the program does not fit --ram " << formatBytes(*budget)
                           << ": it needs " << formatBytes(m.hostArena) << " of host memory ("
                           << describeHostSplit(m)
                           << "); spilling to storage (--nvme) is not built yet";
        return signalPassFailure();
      }
    }
  }
};

} // namespace
