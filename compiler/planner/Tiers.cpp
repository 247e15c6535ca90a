//===- Tiers.cpp - plan-tiers: parameters homed in host memory ------------===//
//
// See the pass description in Passes.td: homeOnHost rewrites a training
// function for a set of parameters; the pass picks the set.
//
//===----------------------------------------------------------------------===//

#include "compiler/planner/CostModel.h"
#include "compiler/planner/PassOptions.h"
#include "compiler/planner/Passes.h"
#include "compiler/planner/Recompute.h"
#include "compiler/planner/Timeline.h"
#include "compiler/conversion/TGToHM/PlaceBuffers.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/SetVector.h"

#include <set>
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace hmcc {
#define GEN_PASS_DEF_PLANTIERS
#include "compiler/planner/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;
using namespace hmcc::tg;

namespace {

/// Homes the parameters `names` of `module` on the host (see the pass
/// description) in its training function `fn`; the updates of those in
/// `onDevice` stay on the device, where they read the gradient.
/// With `bf16Fetches`, the device copies of a host parameter for readers
/// that round it to bf16 anyway (tg::readsRoundedToBf16) are fetched in
/// bf16: rounded once on the host (a `tg.cast {nearest_even}` homed there,
/// right after the tg.param, which each such fetch copies), half the bytes.
void homeOnHost(ModuleOp module, func::FuncOp fn, const llvm::StringSet<> &names,
                const llvm::StringSet<> &onDevice, bool bf16Fetches) {
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
  llvm::SmallSetVector<Operation *, 8> dead; // roundings now done on the host
  for (Operation &op : fn.getBody().front())
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (dead.contains(op))
      continue;
    // A fetch before each reader of a host parameter.
    if (auto param = dyn_cast<ParamOp>(op); param && names.contains(param.getName())) {
      Value rounded; // the host's bf16 copy, once a reader takes it
      for (OpOperand &use : llvm::make_early_inc_range(param.getResult().getUses())) {
        Operation *user = use.getOwner();
        if (isa<func::ReturnOp>(user) || (rounded && user == rounded.getDefiningOp()))
          continue; // the placement copies returned parameters itself
        if (!bf16Fetches || !readsRoundedToBf16(use) ||
            !cast<RankedTensorType>(param.getType()).getElementType().isF32()) {
          b.setInsertionPoint(user);
          use.set(IdentityOp::create(b, user->getLoc(), param.getType(), param.getResult()));
          continue;
        }
        if (!rounded) {
          b.setInsertionPointAfter(param);
          CastOp c = roundToBf16(b, param.getLoc(), param.getResult());
          c->setAttr(hm::kHomeAttr, host);
          rounded = c.getResult();
        }
        b.setInsertionPoint(user);
        auto fetch = IdentityOp::create(b, user->getLoc(), rounded.getType(), rounded);
        if (auto c = dyn_cast<CastOp>(user)) { // its rounding done on the host
          c.getResult().replaceAllUsesWith(fetch.getResult());
          dead.insert(c);
          continue;
        }
        use.set(fetch.getResult()); // a GEMM factor, of bf16 now
        for (Operation *unused : readWidenedFactors(user))
          dead.insert(unused);
      }
      continue;
    }
    // The gradient to the host once complete, and the update there; its
    // other readers (its sum of squares for the norm) read it on the device.
    auto [ref, grad] = optimizerUpdate(op);
    if (!ref || !names.contains(ref.getValue()) || onDevice.contains(ref.getValue()))
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
  for (Operation *op : dead)
    op->erase();
  // An update on the device right after its gradient, so that the
  // gradient's bytes free there (as the copy to the host frees them).
  if (!onDevice.empty())
    planner::moveUpdates(fn, [&](Operation *op) {
      auto ref = optimizerUpdate(op).first;
      return ref && onDevice.contains(ref.getValue());
    });
}

/// The rows a split of a parameter of `type` falls after a multiple of:
/// with 4096 elements or more (which may have 8-bit moments), whole
/// 256-element blocks, so that the moments split exactly.
int64_t splitUnit(RankedTensorType type) {
  int64_t inner = type.getNumElements() / type.getDimSize(0);
  return type.getNumElements() >= kMin8bitElements ? k8bitBlock / std::gcd(inner, k8bitBlock) : 1;
}

/// Why parameter `decl` cannot be split by rows at all (see
/// splitParameter) in `fn`; empty when it can.
std::string splitProblem(ModuleOp module, func::FuncOp fn, ParameterOp decl) {
  auto type = cast<RankedTensorType>(decl.getType());
  if (type.getRank() == 0 || type.getDimSize(0) < 2)
    return "it has fewer than two rows";
  if (decl.getInitialValueAttr() || decl->hasAttr(hm::kWholeAttr))
    return "its initial value is computed, or it is a piece already";
  int updates = 0;
  for (Operation &op : fn.getBody().front()) {
    if (auto [ref, grad] = optimizerUpdate(&op); ref && ref.getValue() == decl.getSymName())
      ++updates;
    if (auto param = dyn_cast<ParamOp>(op); param && param.getName() == decl.getSymName())
      for (Operation *user : param->getUsers())
        if (isa<func::ReturnOp>(user))
          return "the function returns it";
  }
  if (updates != 1)
    return "it has no single optimizer update of hmcc's";
  for (auto s : module.getOps<StateOp>())
    if (s.getParam() == decl.getSymName()) {
      auto st = cast<RankedTensorType>(s.getType());
      bool rowsAlike = st.getShape() == type.getShape();
      bool blocks = st.getRank() == 1 && s.getKind().ends_with("_absmax");
      if (!rowsAlike && !blocks)
        return ("its state '" + s.getSymName() + "' is not split like it").str();
    }
  return "";
}

/// Why a parameter of `type` that can be split (splitProblem) cannot be
/// after its first `rows` rows; empty when it can.
std::string rowsProblem(RankedTensorType type, int64_t rows) {
  int64_t all = type.getDimSize(0), inner = type.getNumElements() / all;
  if (rows <= 0 || rows >= all)
    return "a split after row " + std::to_string(rows) + " of its " + std::to_string(all) +
           " leaves a piece empty";
  if (type.getNumElements() < kMin8bitElements)
    return "";
  std::string rule = "a parameter of " + std::to_string(kMin8bitElements) +
                     " elements or more splits into pieces of whole " +
                     std::to_string(k8bitBlock) + "-element blocks, each of " +
                     std::to_string(kMin8bitElements) +
                     " elements or more (so that 8-bit moments split exactly): ";
  if (int64_t unit = splitUnit(type); rows % unit != 0)
    return rule + "a split after a multiple of " + std::to_string(unit) + " rows";
  if (std::min(rows, all - rows) * inner < kMin8bitElements)
    return rule + "pieces of " + std::to_string((kMin8bitElements + inner - 1) / inner) +
           " rows or more";
  return "";
}

/// `type` with `extent` as its first dimension.
RankedTensorType withRows(RankedTensorType type, int64_t extent) {
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = extent;
  return RankedTensorType::get(shape, type.getElementType());
}

/// Splits parameter `name` after its first `rows` rows, where splitProblem
/// and rowsProblem find nothing against it: `name#0` holds rows [0, rows) and `name#1` the
/// rest (hm.whole names `name` on both), each with its optimizer states
/// split alike (block-wise absmax states by blocks) and its own update of
/// its rows of the gradient (tg.slice); every reader reads a tg.concat of
/// the two made just before it. The gradient's sum of squares for the norm
/// still reads the whole gradient, and every piece's update computes what
/// the whole's did on its elements, so the program computes the same values.
/// Returns the second piece's name.
std::string splitParameter(ModuleOp module, func::FuncOp fn, StringRef name, int64_t rows) {
  SymbolTable symbols(module);
  auto decl = symbols.lookup<ParameterOp>(name);
  auto type = cast<RankedTensorType>(decl.getType());
  int64_t inner = type.getNumElements() / type.getDimSize(0);
  RankedTensorType pieceType[2] = {withRows(type, rows),
                                   withRows(type, type.getDimSize(0) - rows)};
  int64_t rowsBytes[2] = {tensorBytes(pieceType[0]), tensorBytes(pieceType[1])};
  auto fresh = [&](std::string base) {
    while (symbols.lookup(base))
      base += "'";
    return base;
  };
  std::string wholeName = name.str();
  std::string pieceName[2] = {fresh(wholeName + "#0"), fresh(wholeName + "#1")};
  Builder attrs(module.getContext());
  auto whole = attrs.getStringAttr(wholeName);
  OpBuilder b(decl);
  for (int k = 0; k < 2; ++k) {
    auto piece = cast<ParameterOp>(b.clone(*decl));
    piece.setSymName(pieceName[k]);
    piece.setType(pieceType[k]);
    if (decl.getLength()) {
      piece.setLength(rowsBytes[k]);
      piece.setOffset((decl.getOffset() ? *decl.getOffset() : 0) + (k ? rowsBytes[0] : 0));
    }
    piece->setAttr(hm::kWholeAttr, whole);
    symbols.insert(piece);
  }
  // The states, split alike; old name -> the pieces' names.
  llvm::StringMap<std::array<std::string, 2>> stateNames;
  for (auto s : llvm::make_early_inc_range(module.getOps<StateOp>())) {
    if (s.getParam() != wholeName)
      continue;
    auto st = cast<RankedTensorType>(s.getType());
    // Shaped like the parameter (moments, 8-bit codes), or one entry per
    // 256-element block (absmax: a 1-D parameter's is 1-D too).
    int64_t first = st.getShape() == type.getShape() ? rows : rows * inner / k8bitBlock;
    RankedTensorType types[2] = {withRows(st, first), withRows(st, st.getDimSize(0) - first)};
    b.setInsertionPoint(s);
    std::array<std::string, 2> names;
    for (int k = 0; k < 2; ++k) {
      auto piece = cast<StateOp>(b.clone(*s));
      names[k] = fresh((pieceName[k] + "." + s.getKind()).str());
      piece.setSymName(names[k]);
      piece.setType(types[k]);
      piece.setParam(pieceName[k]);
      piece->setAttr(hm::kWholeAttr, s.getSymNameAttr());
      symbols.insert(piece);
    }
    stateNames[s.getSymName()] = names;
    symbols.erase(s);
  }
  SmallVector<Operation *> ops;
  for (Operation &op : fn.getBody().front())
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (auto param = dyn_cast<ParamOp>(op); param && param.getName() == wholeName) {
      for (OpOperand &use : llvm::make_early_inc_range(param.getResult().getUses())) {
        b.setInsertionPoint(use.getOwner());
        Value pieces[2];
        for (int k = 0; k < 2; ++k)
          pieces[k] = ParamOp::create(b, param.getLoc(), pieceType[k],
                                      FlatSymbolRefAttr::get(b.getContext(), pieceName[k]));
        use.set(ConcatOp::create(b, param.getLoc(), type, ValueRange(pieces),
                                 b.getI64IntegerAttr(0)));
      }
      param.erase();
      continue;
    }
    auto [ref, grad] = optimizerUpdate(op);
    if (!ref || ref.getValue() != wholeName)
      continue;
    Value g = grad->get();
    b.setInsertionPoint(op);
    for (int k = 0; k < 2; ++k) {
      int64_t lo = k ? rows : 0, hi = k ? type.getDimSize(0) : rows;
      Value slice = SliceOp::create(b, op->getLoc(), pieceType[k], g,
                                    b.getDenseI64ArrayAttr({lo}), b.getDenseI64ArrayAttr({hi}),
                                    b.getDenseI64ArrayAttr({0}), b.getDenseI64ArrayAttr({1}));
      Operation *update = b.clone(*op);
      optimizerUpdate(update).second->set(slice);
      for (NamedAttribute attr : op->getAttrs()) {
        auto sym = dyn_cast<FlatSymbolRefAttr>(attr.getValue());
        if (!sym)
          continue;
        if (sym.getValue() == wholeName)
          update->setAttr(attr.getName(), FlatSymbolRefAttr::get(b.getContext(), pieceName[k]));
        else if (auto it = stateNames.find(sym.getValue()); it != stateNames.end())
          update->setAttr(attr.getName(), FlatSymbolRefAttr::get(b.getContext(), it->second[k]));
      }
    }
    op->erase();
  }
  symbols.erase(decl);
  return pieceName[1];
}

/// The least share of the predicted step a split must save to be made.
constexpr double kSplitGain = 1e-3;

/// What plan-tiers homes on the host: whole parameters, and the last rows
/// of at most one more (`split`, of which the first `rows` stay).
struct Choice {
  llvm::StringSet<> names;
  std::string split;
  int64_t rows = 0;
  /// Of those, the ones whose updates run on the device (plan-staging
  /// stages them there), or all of them.
  llvm::StringSet<> onDevice;
  bool allOnDevice = false;
};

/// Applies `choice` to the training function `fn` of `module`, with
/// parameter chunks of `chunk` elements for staging (0: whole).
void apply(ModuleOp module, func::FuncOp fn, const Choice &choice, int64_t chunk,
           bool bf16Fetches) {
  llvm::StringSet<> names = choice.names;
  if (!choice.split.empty())
    names.insert(splitParameter(module, fn, choice.split, choice.rows));
  if (names.empty())
    return;
  llvm::StringSet<> onDevice = choice.allOnDevice ? names : choice.onDevice;
  homeOnHost(module, fn, names, onDevice, bf16Fetches);
  if (onDevice.empty())
    return;
  // The device bytes of plan-staging's two buffers for those updates.
  llvm::StringMap<SmallVector<Operation *>> staged;
  for (auto p : module.getOps<ParameterOp>())
    if (onDevice.contains(p.getSymName()))
      staged[p.getSymName()].push_back(p);
  for (auto s : module.getOps<StateOp>())
    if (onDevice.contains(s.getParam()))
      staged[s.getParam()].push_back(s);
  int64_t slot = 0;
  for (auto &[name, tensors] : staged) {
    int64_t n = cast<RankedTensorType>(hm::storedType(tensors.front())).getNumElements();
    slot = std::max(slot, planner::stagingBytes(tensors, n, chunk, /*fromStorage=*/false));
  }
  module->setAttr(hm::kDeviceStagingAttr,
                  IntegerAttr::get(IntegerType::get(module.getContext(), 64), 2 * slot));
}

struct PlanTiersPass : hmcc::impl::PlanTiersBase<PlanTiersPass> {
  using PlanTiersBase::PlanTiersBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (bf16Fetches != "auto" && bf16Fetches != "always" && bf16Fetches != "never") {
      module.emitError() << "plan-tiers: bf16-fetches (hmcc --bf16-fetches) must be auto, "
                            "always or never, not '"
                         << bf16Fetches << "'";
      return signalPassFailure();
    }
    fetchBf16 = bf16Fetches == "always";
    if (bf16Fetches == "auto") {
      auto profile = planner::profileOption(module, "plan-tiers", deviceProfile);
      if (failed(profile))
        return signalPassFailure();
      fetchBf16 = !profile->sharedHost;
    }
    func::FuncOp fn = planner::trainingFunction(module);
    if (!fn)
      return; // nothing updated by hmcc's optimizers: nothing to move
    Choice choice;
    auto chunk = planner::budgetOption(module, "plan-tiers", "chunk-size", chunkSize);
    if (failed(chunk))
      return signalPassFailure();
    chunkBytes = chunk->value_or(0);
    if (!force.empty()) {
      if (failed(parseForce(module, fn, choice)))
        return signalPassFailure();
    } else if (!vram.empty()) {
      auto budget = planner::budgetOption(module, "plan-tiers", "vram", vram);
      auto profile = planner::profileOption(module, "plan-tiers", deviceProfile);
      if (failed(budget) || failed(profile))
        return signalPassFailure();
      choice = chooseWithRoom(module, fn.getSymName(), **budget, *profile);
      if (deviceUpdates == "auto")
        choice = withDeviceUpdates(module, fn.getSymName(), choice, **budget, *profile);
    }
    if (failed(parseDeviceUpdates(module, choice)))
      return signalPassFailure();
    apply(module, fn, choice, chunkElementsOrNone(), fetchBf16);
  }

  int64_t chunkElementsOrNone() const {
    return chunkBytes > 0 ? planner::chunkElements(chunkBytes) : 0;
  }

  /// Reads `deviceUpdates` into `choice`: none, all, or names of parameters
  /// it homes on the host.
  LogicalResult parseDeviceUpdates(ModuleOp module, Choice &choice) {
    if (deviceUpdates.empty() || deviceUpdates == "none" || deviceUpdates == "auto")
      return success(); // auto: decided with the parameters, under vram
    if (deviceUpdates == "all") {
      choice.allOnDevice = true;
      return success();
    }
    SmallVector<StringRef> parts;
    StringRef(deviceUpdates).split(parts, ',');
    for (StringRef part : parts) {
      StringRef name = part.trim();
      if (!choice.names.contains(name))
        return module.emitError() << "plan-tiers: device-updates (hmcc --device-updates): '"
                                  << name << "' is not a parameter homed on the host";
      choice.onDevice.insert(name);
    }
    return success();
  }

  LogicalResult parseForce(ModuleOp module, func::FuncOp fn, Choice &choice) {
    if (force == "none")
      return success();
    if (force == "all") {
      for (auto p : module.getOps<ParameterOp>())
        choice.names.insert(p.getSymName());
      return success();
    }
    SmallVector<StringRef> parts;
    StringRef(force).split(parts, ',');
    for (StringRef part : parts) {
      // NAME, or NAME:ROWS (a name may hold ':' itself).
      StringRef name = part.trim(), rows;
      bool counted = false;
      if (!module.lookupSymbol<ParameterOp>(name) && name.contains(':')) {
        std::tie(name, rows) = name.rsplit(':');
        counted = true;
      }
      auto decl = module.lookupSymbol<ParameterOp>(name);
      if (!decl)
        return module.emitError() << "plan-tiers: force (hmcc --host-params): '" << name
                                  << "' is not a parameter";
      if (!counted) {
        choice.names.insert(name);
        continue;
      }
      // NAME:ROWS, its last ROWS rows.
      auto type = cast<RankedTensorType>(decl.getType());
      int64_t last = 0;
      if (!choice.split.empty() || rows.getAsInteger(10, last) || last <= 0)
        return module.emitError() << "plan-tiers: force (hmcc --host-params): '" << part
                                  << "': NAME:ROWS takes a count of rows, for one parameter";
      std::string why = splitProblem(module, fn, decl);
      if (why.empty() && last >= type.getDimSize(0))
        why = "it has " + std::to_string(type.getDimSize(0)) + " rows (all of it: give '" +
              name.str() + "' alone)";
      if (why.empty())
        why = rowsProblem(type, type.getDimSize(0) - last);
      if (!why.empty())
        return module.emitError() << "plan-tiers: force (hmcc --host-params): cannot home the last "
                                  << last << " rows of '" << name << "' on the host: " << why;
      choice.split = name.str();
      choice.rows = type.getDimSize(0) - last;
    }
    return success();
  }

  /// Whether the program with `choice` applied fits `budget` with what
  /// plan-recompute can do.
  bool fits(ModuleOp module, StringRef fnName, const Choice &choice, int64_t budget,
            const planner::DeviceProfile &profile) {
    OwningOpRef<ModuleOp> copy(module.clone());
    auto fn = copy->lookupSymbol<func::FuncOp>(fnName);
    apply(*copy, fn, choice, chunkElementsOrNone(), fetchBf16);
    // What plan-recompute will do with the module so tiered: its own
    // search, without its exhaustive fallback (plan-recompute runs that once
    // on the result), beside any staging buffers.
    planner::RecomputeSearch search(*copy, fn, profile);
    return search.planned &&
           search.fit(budget - planner::deviceStaging(*copy), /*thorough=*/false).has_value();
  }

  /// The predicted step of the program with `choice` applied and planned
  /// on by the passes after this one that shape the step (plan-recompute
  /// and plan-overlap under `budget`, placement, plan-staging,
  /// plan-streams), on a copy; none when that fails.
  std::optional<double> predictedStep(ModuleOp module, StringRef fnName, const Choice &choice,
                                      int64_t budget) {
    std::optional<Prediction> p = predict(module, fnName, choice, budget);
    return p ? std::optional<double>(p->step) : std::nullopt;
  }

  /// The step predictedStep predicts, and when the host optimizer stream's
  /// last op ends in it (0 without one).
  struct Prediction {
    double step = 0, hostEnd = 0;
  };
  std::optional<Prediction> predict(ModuleOp module, StringRef fnName, const Choice &choice,
                                    int64_t budget) {
    OwningOpRef<ModuleOp> copy(module.clone());
    auto fn = copy->lookupSymbol<func::FuncOp>(fnName);
    apply(*copy, fn, choice, chunkElementsOrNone(), fetchBf16);
    ScopedDiagnosticHandler quiet(module.getContext(), [](Diagnostic &) { return success(); });
    PassManager pm(module.getContext());
    PlanRecomputeOptions recompute;
    recompute.vram = std::to_string(budget);
    recompute.deviceProfile = deviceProfile;
    pm.addPass(createPlanRecompute(recompute));
    PlanOverlapOptions overlap;
    overlap.vram = std::to_string(budget);
    overlap.deviceProfile = deviceProfile;
    pm.addPass(createPlanOverlap(overlap));
    if (failed(pm.run(*copy)) || failed(placeBuffers(*copy, {})))
      return std::nullopt;
    PassManager streams(module.getContext());
    PlanStagingOptions staging;
    staging.chunkSize = chunkSize;
    streams.addPass(createPlanStaging(staging));
    streams.addPass(createPlanStreams());
    if (failed(streams.run(*copy)))
      return std::nullopt;
    auto profile = planner::profileOption(*copy, "plan-tiers", deviceProfile);
    if (failed(profile))
      return std::nullopt;
    hm::Timeline t = planner::predictTimeline(copy->lookupSymbol<func::FuncOp>(fnName), *profile);
    Prediction p{t.step, 0};
    for (auto &[op, timing] : t.ops)
      if (timing.stream == "host_optimizer")
        p.hostEnd = std::max(p.hostEnd, timing.end);
    return p;
  }

  /// The first `count` parameters of `order`, whole.
  static Choice first(ArrayRef<StringRef> order, size_t count) {
    Choice choice;
    for (StringRef name : order.take_front(count))
      choice.names.insert(name);
    return choice;
  }

  /// The parameters for the host under `budget` (none when the program
  /// fits without): the fewest for the whole budget or, where that fits
  /// and its step predicts faster, for the budget less the prefetch
  /// headroom.
  Choice chooseWithRoom(ModuleOp module, StringRef fnName, int64_t budget,
                        const planner::DeviceProfile &profile) {
    predicted.reset();
    chosenRoom = 0;
    auto fn = module.lookupSymbol<func::FuncOp>(fnName);
    planner::RecomputeSearch untiered(module, fn, profile);
    if (!untiered.planned || untiered.fit(budget, /*thorough=*/false))
      return {};
    int64_t room = planner::prefetchHeadroom(module, profile);
    bool roomless = room <= 0 || room >= budget;
    // The quick search is not monotonic in the budget: where it fits the
    // program into less, it fits into the budget (plan-recompute's
    // thorough search finds that).
    if (!roomless && untiered.fit(budget - room, /*thorough=*/false))
      return {};
    SmallVector<StringRef> order = planner::hostCandidates(module, fn, profile);
    size_t count = choose(module, fnName, order, untiered, budget, profile);
    Choice plain = refine(module, fnName, order, count, budget, profile);
    if (roomless)
      return plain;
    size_t roomy = choose(module, fnName, order, untiered, budget - room, profile);
    if ((roomy == count && chunkBytes <= 0) ||
        !fits(module, fnName, first(order, roomy), budget - room, profile))
      return plain; // the same parameters, or no room to be had
    // Room costs parameters on the host (their updates, their fetches) and
    // spares compute the wait for fetches that have no room to come early:
    // the one whose planned step predicts faster.
    Choice withRoom = refine(module, fnName, order, roomy, budget - room, profile);
    std::optional<Prediction> a = predict(module, fnName, withRoom, budget);
    std::optional<Prediction> b = predict(module, fnName, plain, budget);
    bool keepPlain = !a || (b && b->step < a->step);
    predicted = keepPlain ? b : a;
    chosenRoom = keepPlain ? 0 : room;
    return keepPlain ? plain : withRoom;
  }

  /// Shares of the host's parameters whose updates device-updates=auto
  /// may put on the device; it starts at kFirstShare.
  static constexpr double kDeviceShares[] = {1.0 / 16, 1.0 / 8, 1.0 / 4, 1.0 / 2, 1.0};
  static constexpr int kFirstShare = 2;
  /// Rounds of halving the gaps between the best share and its neighbours.
  static constexpr int kRefinements = 2;

  /// device-updates=auto: where the host optimizer's stream ends the step
  /// `best` predicts, the same with the updates of a share of the host's
  /// parameters on the device (kDeviceShares; those whose gradients come
  /// last first: their host updates end the step), each with the fewest
  /// parameters on the host that fit beside the staging buffers
  /// (planner::hostCandidates' order again). More updates on the device
  /// take less host work and more copies over the link: from a quarter,
  /// the share moves up or down while the step planned on predicts faster.
  /// The fastest is kept where it beats `best` by kSplitGain.
  Choice withDeviceUpdates(ModuleOp module, StringRef fnName, const Choice &best, int64_t budget,
                           const planner::DeviceProfile &profile) {
    if (profile.sharedHost || best.names.empty())
      return best; // on the CPU target the host's cores are the device's
    std::optional<Prediction> base = predicted ? predicted : predict(module, fnName, best, budget);
    if (!base || base->hostEnd < base->step * (1 - kSplitGain))
      return best; // the host's updates do not end the step
    auto fn = module.lookupSymbol<func::FuncOp>(fnName);
    SmallVector<StringRef> order = planner::hostCandidates(module, fn, profile);
    // When each parameter's gradient is complete (compute's clock).
    std::vector<double> clock = planner::computeClock(fn, profile);
    DenseMap<Operation *, double> endOf;
    for (auto [op, at] : llvm::zip(fn.getBody().front(), ArrayRef<double>(clock).drop_front()))
      endOf[&op] = at;
    llvm::StringMap<double> gradientAt;
    for (Operation &op : fn.getBody().front())
      if (auto [ref, grad] = optimizerUpdate(&op); ref)
        gradientAt[ref.getValue()] = endOf.lookup(grad->get().getDefiningOp());
    auto with = [&](size_t count, size_t k) {
      Choice c = first(order, count);
      SmallVector<StringRef> latest(order.begin(), order.begin() + count);
      llvm::stable_sort(latest, [&](StringRef a, StringRef b) {
        return gradientAt.lookup(a) > gradientAt.lookup(b);
      });
      for (StringRef name : ArrayRef<StringRef>(latest).take_front(k))
        c.onDevice.insert(name);
      return c;
    };
    const size_t hosted = best.names.size() + !best.split.empty();
    size_t guess = hosted; // the last count that fit: the next is close
    std::map<size_t, std::pair<double, Choice>> tried; // by updates on the device
    auto stepWith = [&](size_t k) {
      auto it = tried.find(k);
      if (it != tried.end())
        return it->second.first;
      // The search tries the count it returns, except when none fits (all
      // of them): only that one is tried again.
      std::set<size_t> fitting;
      size_t count = planner::fewestFrom(std::max(guess, k), order.size(), [&](size_t n) {
        bool fit = n >= k && fits(module, fnName, with(n, k), budget - chosenRoom, profile);
        if (fit)
          fitting.insert(n);
        return fit;
      });
      Choice c = with(count, k);
      double step = std::numeric_limits<double>::infinity();
      if (fitting.count(count) || fits(module, fnName, c, budget - chosenRoom, profile)) {
        guess = count;
        step = predictedStep(module, fnName, c, budget).value_or(step);
      }
      tried.emplace(k, std::make_pair(step, std::move(c)));
      return step;
    };
    auto shareOf = [&](int i) {
      return std::max<size_t>(1, size_t(std::ceil(kDeviceShares[i] * double(hosted))));
    };
    auto stepAt = [&](int i) { return stepWith(shareOf(i)); };
    int at = kFirstShare, last = int(std::size(kDeviceShares)) - 1;
    int dir = at < last && stepAt(at + 1) < stepAt(at) ? 1 : -1;
    if (dir > 0)
      ++at;
    while (at + dir >= 0 && at + dir <= last && stepAt(at + dir) < stepAt(at))
      at += dir;
    // Then the counts between the best share and its neighbours, halving
    // the gaps toward whichever half predicts faster (kRefinements rounds).
    size_t bestK = shareOf(at);
    size_t below = at > 0 ? shareOf(at - 1) : bestK, above = at < last ? shareOf(at + 1) : bestK;
    for (int round = 0; round < kRefinements; ++round)
      for (size_t *side : {&below, &above}) {
        size_t mid = (bestK + *side) / 2;
        if (mid == bestK || mid == *side)
          continue;
        if (stepWith(mid) < stepWith(bestK)) {
          (side == &below ? above : below) = bestK;
          bestK = mid;
        } else {
          *side = mid;
        }
      }
    if (!(stepWith(bestK) < base->step * (1 - kSplitGain)))
      return best;
    return tried.at(bestK).second;
  }

  /// With a chunk size: the last of the `count` parameters of `order`
  /// that fit (seen not to fit without it) split into chunks of its rows,
  /// the fewest last chunks on the host that fit (a bisection, each count
  /// judged as `choose` judges), the first ones staying on the device,
  /// where the step planned on predicts faster than with all of it on the
  /// host; else the `count` whole.
  Choice refine(ModuleOp module, StringRef fnName, ArrayRef<StringRef> order, size_t count,
                int64_t budget, const planner::DeviceProfile &profile) {
    Choice whole = first(order, count);
    if (chunkBytes <= 0 || count == 0)
      return whole;
    auto fn = module.lookupSymbol<func::FuncOp>(fnName);
    auto decl = module.lookupSymbol<ParameterOp>(order[count - 1]);
    if (!splitProblem(module, fn, decl).empty())
      return whole;
    auto type = cast<RankedTensorType>(decl.getType());
    int64_t rows = type.getDimSize(0), unit = splitUnit(type);
    // Chunks of whole rows (of whole 256-element blocks where 8-bit
    // moments could split with them).
    int64_t chunkRows = std::max<int64_t>(1, chunkBytes / (tensorBytes(type) / rows));
    chunkRows = (chunkRows + unit - 1) / unit * unit;
    // The rows that may stay on the device, whole chunks from the first
    // row, the most first.
    SmallVector<int64_t> stay;
    for (int64_t kept = (rows - 1) / chunkRows * chunkRows; kept > 0; kept -= chunkRows)
      if (rowsProblem(type, kept).empty())
        stay.push_back(kept);
    auto with = [&](size_t k) {
      Choice choice = first(order, count - 1);
      choice.split = decl.getSymName().str();
      choice.rows = stay[k];
      return choice;
    };
    // The more rows stay, the less likely the program fits: bisect for the
    // most that do, when even the fewest do.
    if (stay.empty() || !fits(module, fnName, with(stay.size() - 1), budget, profile))
      return whole;
    size_t lo = 0, hi = stay.size() - 1;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (fits(module, fnName, with(mid), budget, profile))
        hi = mid;
      else
        lo = mid + 1;
    }
    // Split only where the step planned on predicts faster (by kSplitGain
    // of it at least) than with the whole on the host: the device keeps
    // the first rows, but every reader then waits for a concatenation, and
    // less room may mean more recompute.
    std::optional<double> split = predictedStep(module, fnName, with(hi), budget);
    std::optional<double> unsplit = predictedStep(module, fnName, whole, budget);
    if (split && unsplit && *split < *unsplit * (1 - kSplitGain))
      return with(hi);
    return whole;
  }

  /// How many first parameters of `order` (planner::hostCandidates), the
  /// fewest, the host takes under `budget`, which the program placed as it
  /// is (`untiered`) exceeds.
  size_t choose(ModuleOp module, StringRef fnName, ArrayRef<StringRef> order,
                planner::RecomputeSearch &untiered, int64_t budget,
                const planner::DeviceProfile &profile) {
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
    // Then the fewest that fit, searched from the guess (which is close:
    // with the least activations, fewer cannot fit); all when nothing else
    // does.
    return planner::fewestFrom(count, order.size(), [&](size_t n) {
      return fits(module, fnName, first(order, n), budget, profile);
    });
  }

  int64_t chunkBytes = 0;
  /// Whether host parameters are fetched in bf16 where read so (bf16-fetches).
  bool fetchBf16 = false;
  /// What predict gave for the choice chooseWithRoom returned, where it
  /// asked (withDeviceUpdates starts from it).
  std::optional<Prediction> predicted;
  /// The room chooseWithRoom's choice left for prefetches (0 or
  /// planner::prefetchHeadroom); withDeviceUpdates leaves the same.
  int64_t chosenRoom = 0;
};

} // namespace
