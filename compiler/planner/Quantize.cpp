//===- Quantize.cpp - 8-bit optimizer states where the budget needs them --===//
//
// plan-quantize (see Passes.td). `always` is tg-optimizer's adamw8bit rule,
// applied when the optimizer is built; this pass is `auto`: it turns the
// AdamW updates of the largest parameters homed on the host into 8-bit
// AdamW while the host arena exceeds --ram. Host states are packed first in
// the host arena, so each conversion takes exactly the bytes it saves out of
// the arena, which one trial placement measures beforehand.
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/TGToHM/PlaceBuffers.h"
#include "compiler/planner/CostModel.h"
#include "compiler/planner/PassOptions.h"
#include "compiler/planner/Recompute.h"
#include "compiler/planner/Timeline.h"
#include "compiler/planner/Passes.h"
#include "hm/Analysis/Memory.h"
#include "hm/IR/HMOps.h"
#include "tg/Analysis/Cost.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <limits>
#include <map>

namespace hmcc {
#define GEN_PASS_DEF_PLANQUANTIZE
#define GEN_PASS_DEF_PLANQUANTIZETRAFFIC
#define GEN_PASS_DEF_PLANQUANTIZEDEVICE
#include "compiler/planner/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;
using namespace hmcc::tg;

namespace {

/// The arena bytes a parameter of `type` saves with 8-bit moments: its two
/// fp32 moments less the codes and absmax of both.
int64_t bytesSaved(RankedTensorType type) {
  return 2 * hm::arenaBytes(type) -
         2 * (hm::arenaBytes(adamw8bitCodesType(type)) + hm::arenaBytes(adamw8bitAbsmaxType(type)));
}

/// Replaces `update` by 8-bit AdamW: its fp32 moments by codes and absmax
/// states of the names tg-optimizer gives them, in the same home. `symbols`
/// is the module's table (a module of thousands of symbols is searched
/// once, not for each update), kept up to date.
void quantize(SymbolTable &symbols, AdamWUpdateOp update) {
  OpBuilder b(update.getContext());
  auto param = symbols.lookup<ParameterOp>(update.getParam());
  auto m = symbols.lookup<StateOp>(update.getExpAvg());
  auto v = symbols.lookup<StateOp>(update.getExpAvgSq());
  auto type = cast<RankedTensorType>(param.getType());
  auto codes = adamw8bitCodesType(type), absmax = adamw8bitAbsmaxType(type);
  Attribute home = m->getAttr(hm::kHomeAttr);
  Location loc = m.getLoc();
  // The new states take the old ones' names and place.
  Operation *next = m->getNextNode();
  while (next == m.getOperation() || next == v.getOperation())
    next = next->getNextNode();
  symbols.erase(m);
  symbols.erase(v);
  b.setInsertionPoint(next);
  auto declare = [&](StringRef kind, RankedTensorType t) {
    std::string name = (param.getSymName() + "." + kind).str();
    auto s = StateOp::create(b, loc, name, t, param.getSymName(), kind);
    if (home)
      s->setAttr(hm::kHomeAttr, home);
    symbols.insert(s); // in place already; its name is free
    return FlatSymbolRefAttr::get(b.getContext(), name);
  };
  auto ma = declare("exp_avg", codes), maa = declare("exp_avg_absmax", absmax);
  auto va = declare("exp_avg_sq", codes), vaa = declare("exp_avg_sq_absmax", absmax);
  b.setInsertionPoint(update);
  auto q = AdamW8bitUpdateOp::create(b, update.getLoc(), update.getParamAttr(), update.getGrad(),
                                     update.getLr(), update.getStep(), update.getBeta1Attr(),
                                     update.getBeta2Attr(), update.getEpsAttr(),
                                     update.getWeightDecayAttr(), ma, maa, va, vaa);
  for (NamedAttribute attr : update->getDiscardableAttrs())
    q->setAttr(attr.getName(), attr.getValue());
  update.erase();
}

struct PlanQuantizePass : hmcc::impl::PlanQuantizeBase<PlanQuantizePass> {
  using PlanQuantizeBase::PlanQuantizeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (mode == "never" || mode == "always")
      return; // always: tg-optimizer built 8-bit AdamW already
    if (mode != "auto" && mode != "host") {
      module.emitError() << "plan-quantize: mode must be never, auto or always, not '" << mode
                         << "'";
      return signalPassFailure();
    }
    auto budget = planner::budgetOption(module, "plan-quantize", "ram", ram);
    if (failed(budget))
      return signalPassFailure();
    // The AdamW updates of parameters on the host, largest first.
    SymbolTable symbols(module);
    SmallVector<AdamWUpdateOp> updates;
    module.walk([&](AdamWUpdateOp u) {
      auto param = symbols.lookup<ParameterOp>(u.getParam());
      auto type = cast<RankedTensorType>(param.getType());
      // A piece of a split parameter keeps the format its whole had (as
      // plan-quantize-device decided it): pieces of one tensor in two
      // formats would not make one tensor in checkpoints.
      if (hm::isHostHomed(param) && type.getNumElements() >= kMin8bitElements &&
          !param->hasAttr(hm::kWholeAttr))
        updates.push_back(u);
    });
    auto size = [&](AdamWUpdateOp u) {
      return tensorBytes(symbols.lookup<ParameterOp>(u.getParam()).getType());
    };
    llvm::stable_sort(updates, [&](AdamWUpdateOp a, AdamWUpdateOp c) { return size(a) > size(c); });
    if (updates.empty())
      return;
    if (mode == "host") { // for tests: every state on the host
      for (AdamWUpdateOp u : updates)
        quantize(symbols, u);
      return;
    }
    if (!*budget)
      return;
    std::optional<ScheduleMemory> placed = placedMemory(module);
    if (!placed)
      return signalPassFailure();
    int64_t host = placed->hostArena;
    SmallVector<AdamWUpdateOp> chosen;
    for (AdamWUpdateOp u : updates) {
      if (host <= **budget)
        break;
      auto type = cast<RankedTensorType>(symbols.lookup<ParameterOp>(u.getParam()).getType());
      host -= bytesSaved(type);
      chosen.push_back(u);
    }
    for (AdamWUpdateOp u : chosen)
      quantize(symbols, u);
  }
};

/// The fp32 AdamW updates of `module` that can be 8-bit (parameters of
/// kMin8bitElements or more), largest parameter first.
SmallVector<AdamWUpdateOp> quantizable(ModuleOp module) {
  SmallVector<std::pair<int64_t, AdamWUpdateOp>> sized;
  module.walk([&](AdamWUpdateOp u) {
    auto type = cast<RankedTensorType>(u.getGrad().getType());
    if (type.getNumElements() >= kMin8bitElements)
      sized.push_back({type.getNumElements(), u});
  });
  llvm::stable_sort(sized, [](auto &a, auto &b) { return a.first > b.first; });
  return SmallVector<AdamWUpdateOp>(llvm::make_second_range(sized));
}

struct PlanQuantizeDevicePass : hmcc::impl::PlanQuantizeDeviceBase<PlanQuantizeDevicePass> {
  using PlanQuantizeDeviceBase::PlanQuantizeDeviceBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (mode != "auto" || vram.empty())
      return;
    auto budget = planner::budgetOption(module, "plan-quantize-device", "vram", vram);
    auto profile = planner::profileOption(module, "plan-quantize-device", deviceProfile);
    if (failed(budget) || failed(profile))
      return signalPassFailure();
    func::FuncOp fn = planner::trainingFunction(module);
    if (!fn)
      return;
    SmallVector<AdamWUpdateOp> updates = quantizable(module);
    if (updates.empty())
      return;
    // The predicted recompute time of the program with the `count` largest
    // quantized where it fits the device with what plan-recompute can do
    // (its quick search, on a copy); none where it does not fit. Each count
    // is judged once.
    planner::RecomputeSearch search(module, fn, *profile);
    std::map<size_t, std::optional<double>> judged;
    auto recomputeSeconds = [&](size_t count) -> std::optional<double> {
      if (auto it = judged.find(count); it != judged.end())
        return it->second;
      OwningOpRef<ModuleOp> copy;
      std::optional<planner::RecomputeSearch> other;
      if (count) {
        copy = module.clone();
        SmallVector<AdamWUpdateOp> theirs = quantizable(*copy);
        SymbolTable symbols(*copy);
        for (AdamWUpdateOp u : ArrayRef<AdamWUpdateOp>(theirs).take_front(count))
          quantize(symbols, u);
        other.emplace(*copy, copy->lookupSymbol<func::FuncOp>(fn.getSymName()), *profile);
      }
      planner::RecomputeSearch &s = count ? *other : search;
      std::optional<double> &answer = judged[count];
      if (!s.planned)
        return answer = std::nullopt;
      if (recompute == "none") // nothing will be recomputed: the unplanned arena
        return answer = s.base.arena <= **budget ? std::optional<double>(0.0) : std::nullopt;
      std::optional<planner::Decision> decision = s.fit(**budget, /*thorough=*/false);
      return answer = decision ? std::optional<double>(decision->seconds) : std::nullopt;
    };
    // The fewest largest ones for which `meets(count)` holds (a bisection
    // on how many, to within `step`), given that it holds for all of them
    // and not for the first `from`.
    auto fewest = [&](size_t from, llvm::function_ref<bool(size_t)> meets, size_t step) {
      size_t lo = from, hi = updates.size(); // lo does not meet it, hi does
      while (lo + step < hi) {
        size_t mid = lo + (hi - lo) / 2;
        (meets(mid) ? hi : lo) = mid;
      }
      return hi;
    };
    auto quantizeFirst = [&](size_t count) {
      SymbolTable symbols(module);
      for (AdamWUpdateOp u : ArrayRef<AdamWUpdateOp>(updates).take_front(count))
        quantize(symbols, u);
    };
    // The bytes the `count` largest free on the device.
    SmallVector<int64_t> freed(1, 0);
    for (AdamWUpdateOp u : updates) {
      auto type = cast<RankedTensorType>(u.getGrad().getType());
      freed.push_back(freed.back() + bytesSaved(type));
    }
    // The fewest that fit: none when the program fits as it is.
    size_t least = 0;
    std::optional<double> seconds = recomputeSeconds(0);
    if (!seconds) {
      if (!recomputeSeconds(updates.size())) {
        // Parameters go to the host anyway (plan-tiers). With host updates
        // of 8-bit moments no slower than fp32 ones, every moment 8-bit
        // leaves room on the device for more parameters, whose updates
        // move nothing; else nothing changes here.
        if (planner::hostUpdateSeconds(1.0, "8bit", *profile) <=
            planner::hostUpdateSeconds(1.0, "f32", *profile))
          quantizeFirst(updates.size());
        return;
      }
      // From a first guess: the count that frees the bytes over the budget
      // with the least activations the model predicts (fewer cannot fit).
      size_t guess = 0;
      if (search.planned) {
        int64_t over = search.base.persistent + search.leastActivations() - int64_t(**budget);
        while (guess < updates.size() && freed[guess] < over)
          ++guess;
      }
      least = planner::fewestFrom(guess, updates.size(), [&](size_t count) {
        return recomputeSeconds(count).has_value();
      });
      seconds = recomputeSeconds(least);
    }
    // More 8-bit moments still pay where the room they free on the device
    // saves recompute, by 1% of the step's compute or more: about the
    // fewest (to within a quarter of them) that come within 1% of the time
    // all of them save, as plan-recompute's model predicts it (its decision
    // without offload for the activation budget their bytes widen,
    // unplaced), against the quick search's time with the fewest that fit.
    if (*seconds > 0 && recompute != "none" && search.planned) {
      auto predicted = [&](size_t count) {
        auto d = planner::solve(search.chain, **budget + freed[count] - search.base.persistent);
        return d ? d->seconds : std::numeric_limits<double>::infinity();
      };
      // Savings under 1% of the step's compute are not worth 8 bits.
      double step = 0;
      {
        SymbolLookupScope lookups;
        for (Operation &op : fn.getBody().front())
          step += planner::predictSeconds(&op, *profile);
      }
      double all = predicted(updates.size());
      auto close = [&](size_t count) { return predicted(count) <= all + 0.01 * (*seconds - all); };
      if (*seconds - all >= 0.01 * step)
        least = fewest(least, close, std::max<size_t>(1, updates.size() / 4));
    }
    quantizeFirst(least);
  }
};

/// The storage bytes one step moves each way for `states` (whole blocks).
int64_t storedBytes(ArrayRef<int64_t> stateBytes) {
  int64_t total = 0;
  for (int64_t b : stateBytes)
    total += hm::storageBlocks(b);
  return total;
}

struct PlanQuantizeTrafficPass
    : hmcc::impl::PlanQuantizeTrafficBase<PlanQuantizeTrafficPass> {
  using PlanQuantizeTrafficBase::PlanQuantizeTrafficBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (mode != "auto")
      return;
    auto profile = planner::profileOption(module, "plan-quantize-traffic", deviceProfile);
    if (failed(profile))
      return signalPassFailure();
    func::FuncOp fn = planner::trainingFunction(module);
    if (!fn)
      return;
    SymbolTable symbols(module);
    // Each resource's load over one step: the ops as they are, plus the
    // staging traffic of the states in storage (plan-staging adds it).
    std::map<std::string, double> loads;
    struct Candidate {
      AdamWUpdateOp update;
      int64_t elements;
      std::map<std::string, double> delta; ///< load changes when 8-bit
    };
    SmallVector<Candidate> candidates;
    {
      SymbolLookupScope lookups; // the costs' lookups; symbols change only below
      for (Operation &op : fn.getBody().front()) {
        if (!runsInProgram(op))
          continue;
        auto [stream, seconds] = planner::streamSeconds(op, *profile);
        loads[stream.str()] += seconds;
        SmallVector<int64_t> stored;
        for (NamedAttribute attr : op.getAttrs())
          if (auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue()))
            if (auto s = symbols.lookup<StateOp>(ref.getValue()); s && hm::isStorageHomed(s))
              stored.push_back(tensorBytes(s.getType()));
        if (stored.empty())
          continue;
        int64_t bytes = storedBytes(stored);
        loads["storage_read"] += planner::transferSeconds(bytes, profile->storageRead);
        loads["storage_write"] += planner::transferSeconds(bytes, profile->storageWrite);
        auto update = dyn_cast<AdamWUpdateOp>(op);
        auto type = update ? cast<RankedTensorType>(update.getGrad().getType()) : nullptr;
        if (!update || type.getNumElements() < kMin8bitElements || stored.size() != 2 ||
            symbols.lookup<ParameterOp>(update.getParam())->hasAttr(hm::kWholeAttr))
          continue; // see plan-quantize on pieces
        int64_t n = type.getNumElements();
        int64_t codes = tensorBytes(adamw8bitCodesType(type));
        int64_t absmax = tensorBytes(adamw8bitAbsmaxType(type));
        int64_t saved = bytes - storedBytes({codes, absmax, codes, absmax});
        candidates.push_back(
            {update, n,
             {{"storage_read", -planner::transferSeconds(saved, profile->storageRead)},
              {"storage_write", -planner::transferSeconds(saved, profile->storageWrite)},
              {"host_optimizer", planner::hostUpdateSeconds(double(n), "8bit", *profile) -
                                     planner::hostUpdateSeconds(double(n), "f32", *profile)}}});
      }
    }
    // The lower bound: the largest load, or their sum on a shared host.
    auto bound = [&](const std::map<std::string, double> &l) {
      double most = 0, all = 0;
      for (auto &[resource, seconds] : l) {
        most = std::max(most, seconds);
        all += seconds;
      }
      return profile->sharedHost ? all : most;
    };
    llvm::stable_sort(candidates,
                      [](const Candidate &a, const Candidate &b) { return a.elements > b.elements; });
    for (Candidate &c : candidates) {
      std::map<std::string, double> trial = loads;
      for (auto &[resource, seconds] : c.delta)
        trial[resource] += seconds;
      if (!(bound(trial) < bound(loads) * (1 - 1e-9)))
        break; // the largest left gains nothing; smaller ones gain less
      loads = std::move(trial);
      quantize(symbols, c.update);
    }
  }
};

} // namespace
