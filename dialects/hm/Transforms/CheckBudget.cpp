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
    if (vram.empty() && ram.empty() && nvme.empty())
      return;
    ModuleOp module = getOperation();
    if (module.getOps<hm::ArenaOp>().empty()) {
      module.emitError("hm-check-budget: the module is not scheduled (run hm-place-buffers)");
      return signalPassFailure();
    }
    ScheduleMemory m = scheduleMemory(module);
    // Each given budget against its arena; the first that fails says so.
    auto check = [&](StringRef option, StringRef text, int64_t bytes, StringRef memory,
                     const std::string &split, StringRef advice) {
      if (text.empty())
        return true;
      auto budget = parseSize(text);
      if (!budget) {
        module.emitError() << "hm-check-budget: " << option << ": "
                           << llvm::toString(budget.takeError());
        return false;
      }
      if (static_cast<uint64_t>(bytes) <= *budget)
        return true;
      // The device arena's budget is --vram less what the runtime holds
      // beside it: the message names the user's --vram and the whole need.
      const int64_t reserve = option == "vram" ? int64_t(vramReserve) : 0;
      module.emitError() << "the program does not fit --" << option << " "
                         << formatBytes(*budget + reserve) << ": it needs "
                         << formatBytes(bytes + reserve) << " of " << memory << " memory ("
                         << split
                         << (reserve ? ", and " + formatBytes(reserve) + " the runtime holds" : "")
                         << ")" << advice;
      return false;
    };
    // plan-recompute records its chain when there is a backward to plan.
    const bool planned = module->hasAttr(hm::kRecomputeAttr);
    if (!check("vram", vram, m.arena, "device", describeSplit(m),
               planned ? ", though the planner's own placement of it fit: an hmcc bug, please "
                         "report it with the model and the command"
                       : ", and plan-recompute found nothing to recompute (a program without a "
                         "backward)") ||
        !check("ram", ram, m.hostArena, "host", describeHostSplit(m),
               nvme.empty()
                   ? "; with --nvme DIR:SIZE, optimizer states and parameters can live in storage"
                   : "; moving optimizer states and parameters to storage (--nvme) does not "
                     "bring it under the budget") ||
        !check("nvme", nvme, m.storageArena, "storage",
               "parameters " + formatBytes(m.storageParameters) + ", optimizer states " +
                   formatBytes(m.storageStates),
               ""))
      signalPassFailure();
  }
};

} // namespace
