//===- Tiers.cpp - plan-tiers: parameters homed in host memory ------------===//
//
// See the pass description in Passes.td: homeOnHost rewrites a training
// function for a set of parameters; the pass picks the set.
//
//===----------------------------------------------------------------------===//

#include "compiler/planner/PassOptions.h"
#include "compiler/planner/Passes.h"
#include "compiler/planner/Recompute.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/StringSet.h"

#include <algorithm>

namespace hmcc {
#define GEN_PASS_DEF_PLANTIERS
#include "compiler/planner/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;
using namespace hmcc::tg;

namespace {

/// Homes the parameters `names` of `module` on the host (see the pass
/// description) in its training function `fn`.
void homeOnHost(ModuleOp module, func::FuncOp fn, const llvm::StringSet<> &names) {
  Builder attrs(module.getContext());
  auto host = attrs.getStringAttr("host");
  for (auto p : module.getOps<ParameterOp>())
    if (names.contains(p.getSymName()))
      p->setAttr(hm::kHomeAttr, host);
  for (auto s : module.getOps<StateOp>())
    if (names.contains(s.getParam()))
      s->setAttr(hm::kHomeAttr, host);

  OpBuilder b(module.getContext());
  SmallVector<Operation *> ops;
  for (Operation &op : fn.getBody().front())
    ops.push_back(&op);
  for (Operation *op : ops) {
    // A fetch before each reader of a host parameter.
    if (auto param = dyn_cast<ParamOp>(op); param && names.contains(param.getName())) {
      for (OpOperand &use : llvm::make_early_inc_range(param.getResult().getUses())) {
        Operation *user = use.getOwner();
        if (isa<func::ReturnOp>(user))
          continue; // the placement copies returned parameters itself
        b.setInsertionPoint(user);
        use.set(IdentityOp::create(b, user->getLoc(), param.getType(), param.getResult()));
      }
      continue;
    }
    // The gradient to the host once complete, and the update there; its
    // other readers (its sum of squares for the norm) read it on the device.
    auto [ref, grad] = optimizerUpdate(op);
    if (!ref || !names.contains(ref.getValue()))
      continue;
    op->setAttr(hm::kHomeAttr, host);
    Value g = grad->get();
    if (!g.getDefiningOp() || hm::isHostHomed(g.getDefiningOp()))
      continue; // already copied (a gradient shared by two updates)
    b.setInsertionPointAfter(g.getDefiningOp());
    auto copy = IdentityOp::create(b, op->getLoc(), g.getType(), g);
    copy->setAttr(hm::kHomeAttr, host);
    g.replaceUsesWithIf(copy.getResult(), [](OpOperand &use) {
      return static_cast<bool>(optimizerUpdate(use.getOwner()).first);
    });
  }
}

struct PlanTiersPass : hmcc::impl::PlanTiersBase<PlanTiersPass> {
  using PlanTiersBase::PlanTiersBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp fn = planner::trainingFunction(module);
    if (!fn)
      return; // nothing updated by hmcc's optimizers: nothing to move
    llvm::StringSet<> names;
    if (!force.empty()) {
      if (failed(parseForce(module, names)))
        return signalPassFailure();
    } else if (!vram.empty()) {
      auto budget = planner::budgetOption(module, "plan-tiers", "vram", vram);
      auto profile = planner::profileOption(module, "plan-tiers", deviceProfile);
      if (failed(budget) || failed(profile))
        return signalPassFailure();
      names = chooseWithRoom(module, fn.getSymName(), **budget, *profile);
    }
    if (!names.empty())
      homeOnHost(module, fn, names);
  }

  LogicalResult parseForce(ModuleOp module, llvm::StringSet<> &names) {
    if (force == "none")
      return success();
    if (force == "all") {
      for (auto p : module.getOps<ParameterOp>())
        names.insert(p.getSymName());
      return success();
    }
    SmallVector<StringRef> parts;
    StringRef(force).split(parts, ',');
    for (StringRef part : parts) {
      if (!module.lookupSymbol<ParameterOp>(part.trim()))
        return module.emitError() << "plan-tiers: force (hmcc --host-params): '" << part
                                  << "' is not a parameter";
      names.insert(part.trim());
    }
    return success();
  }

  /// Whether the program with the first `count` parameters of `order` on the host
  /// fits `budget` with what plan-recompute can do.
  bool fits(ModuleOp module, StringRef fnName, ArrayRef<StringRef> order, size_t count,
            int64_t budget, const planner::DeviceProfile &profile) {
    OwningOpRef<ModuleOp> copy(module.clone());
    auto fn = copy->lookupSymbol<func::FuncOp>(fnName);
    llvm::StringSet<> names;
    for (StringRef name : order.take_front(count))
      names.insert(name);
    homeOnHost(*copy, fn, names);
    // What plan-recompute will do with the module so tiered: its own
    // search, without its exhaustive fallback (plan-recompute runs that once
    // on the result).
    planner::RecomputeSearch search(*copy, fn, profile);
    return search.planned && search.fit(budget, /*thorough=*/false).has_value();
  }

  /// The parameters for the host under `budget` (none when the program
  /// fits without), leaving the prefetch headroom free when that fits.
  llvm::StringSet<> chooseWithRoom(ModuleOp module, StringRef fnName, int64_t budget,
                                   const planner::DeviceProfile &profile) {
    auto fn = module.lookupSymbol<func::FuncOp>(fnName);
    planner::RecomputeSearch untiered(module, fn, profile);
    if (!untiered.planned || untiered.fit(budget, /*thorough=*/false))
      return {};
    SmallVector<StringRef> order = planner::hostCandidates(module, fn, profile);
    int64_t room = planner::prefetchHeadroom(module, profile);
    if (room > 0 && room < budget) {
      llvm::StringSet<> names = choose(module, fnName, order, untiered, budget - room, profile);
      if (fits(module, fnName, order, names.size(), budget - room, profile))
        return names;
    }
    return choose(module, fnName, order, untiered, budget, profile);
  }

  /// The fewest first parameters of `order` (planner::hostCandidates) for
  /// the host under `budget`, which the program placed as it is
  /// (`untiered`) exceeds.
  llvm::StringSet<> choose(ModuleOp module, StringRef fnName, ArrayRef<StringRef> order,
                           planner::RecomputeSearch &untiered, int64_t budget,
                           const planner::DeviceProfile &profile) {
    llvm::StringSet<> names;
    // A first guess: the bytes over the budget with the least activations
    // the model predicts, moved in that order, each parameter taking its
    // optimizer states and its gradient with it.
    int64_t over = untiered.base.persistent + untiered.leastActivations() - budget;
    llvm::StringMap<int64_t> movable; // parameter and gradient, then states
    for (auto p : module.getOps<ParameterOp>())
      movable[p.getSymName()] = 2 * tensorBytes(p.getType());
    for (auto s : module.getOps<StateOp>())
      movable[s.getParam()] += tensorBytes(s.getType());
    size_t count = 0;
    for (int64_t moved = 0; count < order.size() && moved < over; ++count)
      moved += movable.lookup(order[count]);
    // Then the fewest that fit: a galloping search from the guess (which is
    // close: with the least activations, fewer cannot fit) for a count
    // seen to fail below one that fits (all, when nothing else does), then
    // a bisection between them.
    size_t lo = 0, hi = order.size();
    if (count >= hi) {
      lo = hi - 1;
    } else if (fits(module, fnName, order, count, budget, profile)) {
      hi = count;
      for (size_t step = 1; hi > 0; step *= 2) {
        size_t below = hi > step ? hi - step : 0;
        if (!fits(module, fnName, order, below, budget, profile)) {
          lo = below;
          break;
        }
        hi = below;
      }
    } else {
      lo = count;
      for (size_t step = 1; lo + step < order.size(); step *= 2) {
        if (fits(module, fnName, order, lo + step, budget, profile)) {
          hi = lo + step;
          break;
        }
        lo += step;
      }
    }
    while (lo + 1 < hi) {
      size_t mid = lo + (hi - lo) / 2;
      (fits(module, fnName, order, mid, budget, profile) ? hi : lo) = mid;
    }
    for (StringRef name : order.take_front(hi))
      names.insert(name);
    return names;
  }
};

} // namespace
