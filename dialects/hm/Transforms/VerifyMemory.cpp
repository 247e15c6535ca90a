//===- VerifyMemory.cpp - a scheduled program stays inside its arena ------===//
//
// hm-verify-memory checks each function of a scheduled program (see
// Passes.td). Which values are live when comes from the one replay of the
// places and releases (hm/Analysis/Liveness.h); the bytes each occupies are
// read from the IR here: persistent tensors are fixed intervals, a value
// born opens an interval and one freed closes it. Any read of a value must
// find it in memory; no two live intervals may overlap; everything lies in
// the arena.
//
//===----------------------------------------------------------------------===//

#include "hm/Transforms/Passes.h"
#include "hm/Analysis/Liveness.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <map>

namespace hmcc {
#define GEN_PASS_DEF_HMVERIFYMEMORY
#include "hm/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc;
using namespace hmcc::tg;

namespace {

struct Interval {
  int64_t begin, end;
  std::string what;
};

int64_t bytesOf(Type type) { return tg::tensorBytes(type); }

/// Live intervals, ordered by start; reports the first overlap.
class Occupancy {
public:
  /// The live interval that [begin, end) overlaps first, if any.
  const Interval *overlapping(int64_t begin, int64_t end) const {
    auto next = live.lower_bound(begin);
    if (next != live.end() && next->first < end)
      return &next->second;
    if (next != live.begin() && std::prev(next)->second.end > begin)
      return &std::prev(next)->second;
    return nullptr;
  }
  /// Adds [begin, end); returns the interval it overlaps instead, if any.
  const Interval *add(Interval interval) {
    if (const Interval *other = overlapping(interval.begin, interval.end))
      return other;
    live.emplace(interval.begin, std::move(interval));
    return nullptr;
  }
  void remove(int64_t begin) { live.erase(begin); }

private:
  std::map<int64_t, Interval> live;
};

std::string describe(Value v) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto arg = dyn_cast<BlockArgument>(v))
    os << "argument #" << arg.getArgNumber();
  else
    os << "the result of " << v.getDefiningOp()->getName();
  return text;
}

struct VerifyMemoryPass : hmcc::impl::HMVerifyMemoryBase<VerifyMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (module.getOps<hm::ArenaOp>().empty())
      return; // not scheduled yet: nothing to prove
    // One device arena and at most one host and one storage arena. Each
    // arena's offsets are checked in an address range of their own,
    // [base, base + 2^61), so that bytes of different arenas never compare
    // as overlapping.
    for (auto arena : module.getOps<hm::ArenaOp>()) {
      int tier = arena.getTier() == "storage" ? 2 : arena.getTier() == "host";
      if (arenas[tier]) {
        arena.emitError() << "hm-verify-memory: a second arena of tier \"" << arena.getTier()
                          << "\"";
        return signalPassFailure();
      }
      arenas[tier] = arena;
    }
    if (!arenas[0]) {
      module.emitError("hm-verify-memory: there is no device arena");
      return signalPassFailure();
    }

    // Persistent tensors never overlap one another.
    Occupancy persistent;
    std::vector<Interval> fixed;
    auto addFixed = [&](Operation *op, int64_t offset, Type type, const std::string &what,
                        int tier = 0) {
      if (!arenas[tier]) {
        op->emitError() << "hm-verify-memory: " << what << " is homed in "
                        << (tier == 2 ? "storage" : "the host") << ", which has no arena";
        return false;
      }
      int64_t size = arenas[tier].getBytes(), base = baseOf(tier);
      Interval interval{base + offset, base + offset + bytesOf(type), what};
      if (offset + bytesOf(type) > size) {
        op->emitError() << "hm-verify-memory: " << what << " lies at [" << offset << ", "
                        << offset + bytesOf(type) << "), beyond the " << arenas[tier].getTier()
                        << " arena's " << size << " bytes";
        return false;
      }
      if (const Interval *other = persistent.add(interval)) {
        op->emitError() << "hm-verify-memory: " << what << " overlaps " << other->what;
        return false;
      }
      fixed.push_back(interval);
      return true;
    };
    // Parameters and states each have a fixed offset.
    bool ok = true;
    auto addSymbol = [&](Operation *op, StringRef kind, StringRef name, Type type) {
      auto offset = op->getAttrOfType<IntegerAttr>(hm::kOffsetAttr);
      if (!offset) {
        op->emitError() << "hm-verify-memory: the " << kind << " has no hm.offset";
        return false;
      }
      return addFixed(op, offset.getInt(), type, (kind + " @" + name).str(), hm::homeTier(op));
    };
    for (auto p : module.getOps<ParameterOp>())
      ok &= addSymbol(p, "parameter", p.getSymName(), p.getType());
    for (auto s : module.getOps<StateOp>())
      ok &= addSymbol(s, "state", s.getSymName(), s.getType());
    ok &= succeeded(verifyPieces(module.getOps<ParameterOp>())) &&
          succeeded(verifyPieces(module.getOps<StateOp>()));
    // Inputs: one interval per distinct (offset, name, type); functions
    // share them.
    std::map<int64_t, std::pair<std::string, Type>> inputs;
    for (auto fn : module.getOps<func::FuncOp>())
      for (unsigned k = 0; k < fn.getNumArguments(); ++k) {
        auto offset = fn.getArgAttrOfType<IntegerAttr>(k, hm::kOffsetAttr);
        auto name = fn.getArgAttrOfType<StringAttr>(k, "tg.input");
        if (!offset)
          continue;
        std::string what = "input '" + (name ? name.str() : std::to_string(k)) + "'";
        Type type = fn.getArgument(k).getType();
        auto [it, inserted] = inputs.emplace(offset.getInt(), std::make_pair(what, type));
        if (!inserted) {
          if (it->second.first != what || it->second.second != type) {
            fn.emitError() << "hm-verify-memory: " << what << " (" << type << ") and "
                           << it->second.first << " (" << it->second.second
                           << ") share offset " << offset.getInt();
            ok = false;
          }
          continue;
        }
        ok &= addFixed(fn, offset.getInt(), fn.getArgument(k).getType(), what);
      }
    if (!ok)
      return signalPassFailure();

    // The scheduled functions: those with placements or placed inputs.
    for (auto fn : module.getOps<func::FuncOp>()) {
      bool scheduled = !fn.getOps<hm::PlaceOp>().empty();
      for (unsigned k = 0; k < fn.getNumArguments(); ++k)
        scheduled |= static_cast<bool>(fn.getArgAttr(k, hm::kOffsetAttr));
      if (scheduled && failed(verifyFunction(fn, fixed)))
        return signalPassFailure();
    }
  }

  /// The device arena, the host arena and the storage arena (null without).
  hm::ArenaOp arenas[3];
  static int64_t baseOf(int tier) { return tier * (int64_t(1) << 61); }

  /// Where `place` puts its value: the start in the arenas' common address
  /// range, and the arena; null when the place names no arena of the module.
  std::pair<int64_t, hm::ArenaOp> addressOf(hm::PlaceOp place) {
    for (int tier = 0; tier < 3; ++tier)
      if (arenas[tier] && arenas[tier].getSymName() == place.getArena())
        return {baseOf(tier) + place.getByteOffset(), arenas[tier]};
    return {0, hm::ArenaOp()};
  }

  /// Pieces of one whole (hm.whole) are declared one after the other and
  /// make one tensor: the same element type and dimensions but the first,
  /// and no declaration has the whole's name.
  template <class Decls> LogicalResult verifyPieces(Decls decls) {
    llvm::StringSet<> names, done;
    for (auto d : decls)
      names.insert(d.getSymName());
    StringRef current;
    RankedTensorType first;
    for (auto d : decls) {
      auto whole = d->template getAttrOfType<StringAttr>(hm::kWholeAttr);
      auto type = cast<RankedTensorType>(d.getType());
      if (!whole) {
        current = StringRef();
        continue;
      }
      auto fail = [&](const Twine &why) {
        return d->emitError() << "hm-verify-memory: @" << d.getSymName() << ", a piece of '"
                              << whole.getValue() << "', " << why;
      };
      if (names.contains(whole.getValue()))
        return fail("names a whole that is declared itself");
      if (whole.getValue() != current) {
        if (!done.insert(whole.getValue()).second)
          return fail("does not follow the other pieces of its whole");
        current = whole.getValue();
        first = type;
        continue;
      }
      if (type.getRank() == 0 || type.getElementType() != first.getElementType() ||
          type.getShape().drop_front() != first.getShape().drop_front())
        return fail("differs from the first piece in more than its first dimension");
    }
    return success();
  }

  LogicalResult verifyFunction(func::FuncOp fn, const std::vector<Interval> &fixed) {
    // Which values are in memory when comes from the replay; where they are
    // is read from the hm.place ops here, so that no offset the allocator
    // chose is taken on trust.
    hm::FunctionLiveness liveness = hm::replayFunction(fn);
    DenseMap<Value, hm::PlaceOp> places; // the first placement of each value
    for (auto place : fn.getOps<hm::PlaceOp>())
      places.try_emplace(place.getValue(), place);
    Occupancy occupancy;
    for (const Interval &interval : fixed)
      occupancy.add(interval);
    auto fail = [&](Operation *op) {
      return op->emitError() << "hm-verify-memory: in @" << fn.getSymName() << ": ";
    };
    // What is readable without a placement: arguments in memory or passed
    // by value, parameters (persistent) and small constants (static data).
    auto unplacedReadable = [&](Value v) {
      if (auto arg = dyn_cast<BlockArgument>(v))
        return fn.getArgAttr(arg.getArgNumber(), hm::kOffsetAttr) ||
               fn.getArgAttr(arg.getArgNumber(), "tg.role");
      return isa<ParamOp, ConstantOp>(v.getDefiningOp());
    };
    // A staging copy of a state or parameter homed in storage or on the
    // host (hm.stage, an update's hm.staged) lies in the arena a tier up
    // (the host's, the device's) over no live value; an update stages
    // those it changes where it runs: on the host, what is in storage; on
    // the device, what is on the host.
    SymbolTable symbols(fn->getParentOfType<ModuleOp>());
    auto checkStaging = [&](Operation *op, StringRef state, int64_t offset) -> LogicalResult {
      Operation *decl = symbols.lookup(state);
      if (!decl || !isa<tg::StateOp, tg::ParameterOp>(decl) || hm::homeTier(decl) == 0)
        return fail(op) << "stages @" << state
                        << ", which is no state or parameter in storage or on the host";
      int tier = hm::stagingTier(decl);
      const char *arena = tier ? "the host arena" : "the device arena";
      if (tier == 1 && offset % hm::kStorageAlignment)
        return fail(op) << "stages @" << state << " from storage at " << offset
                        << ", not a multiple of " << hm::kStorageAlignment;
      if (!isa<hm::StageOp>(op) && tier != (hm::isHostHomed(op) ? 1 : 0))
        return fail(op) << "stages @" << state << " in " << arena << " but runs "
                        << (hm::isHostHomed(op) ? "on the host" : "on the device");
      if (!arenas[tier])
        return fail(op) << "stages @" << state << " in " << arena << ", and there is none";
      int64_t bytes = hm::stagedSlice(op, decl).bytes, begin = baseOf(tier) + offset;
      if (offset + bytes > arenas[tier].getBytes())
        return fail(op) << "stages @" << state << " at [" << offset << ", " << offset + bytes
                        << "), beyond " << arena << "'s " << arenas[tier].getBytes()
                        << " bytes";
      if (const Interval *other = occupancy.overlapping(begin, begin + bytes))
        return fail(op) << "stages @" << state << " at [" << offset << ", " << offset + bytes
                        << ") of " << arena << " over " << other->what;
      return success();
    };
    // An update on the device that changes a state or parameter homed on
    // the host reaches it through a staging copy only.
    auto checkUnstaged = [&](Operation *op) -> LogicalResult {
      if (hm::isHostHomed(op) || !tg::optimizerUpdate(op).first)
        return success();
      auto staged = op->getAttrOfType<DictionaryAttr>(hm::kStagedAttr);
      for (NamedAttribute attr : op->getAttrs())
        if (auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue()))
          if (Operation *decl = symbols.lookup(ref.getValue());
              decl && hm::isHostHomed(decl) && !(staged && staged.get(ref.getValue())))
            return fail(op) << "runs on the device and changes @" << ref.getValue()
                            << ", which is homed on the host, without a staging copy";
      return success();
    };
    for (auto [index, step] : llvm::enumerate(liveness.steps)) {
      unsigned i = index;
      Operation *op = step.op;
      if (auto stage = dyn_cast<hm::StageOp>(op))
        if (failed(checkStaging(op, stage.getState(), stage.getOffsetAttr().getInt())))
          return failure();
      if (auto staged = op->getAttrOfType<DictionaryAttr>(hm::kStagedAttr))
        for (NamedAttribute entry : staged)
          if (failed(checkStaging(op, entry.getName(),
                                  cast<IntegerAttr>(entry.getValue()).getInt())))
            return failure();
      if (failed(checkUnstaged(op)))
        return failure();
      for (Value v : op->getOperands()) {
        // A parameter in storage is not addressable: only a copy to the
        // host arena reads it.
        if (auto param = v.getDefiningOp<ParamOp>())
          if (hm::isStoredTensor(symbols.lookup(param.getName())) &&
              !(isa<IdentityOp>(op) && hm::isHostHomed(op)))
            return fail(op) << "reads parameter @" << param.getName()
                            << ", which is in storage, other than by a copy to the host";
        auto lifetime = liveness.lifetimes.find(v);
        bool placed = lifetime != liveness.lifetimes.end();
        if (placed ? lifetime->second.readableAt(i) : unplacedReadable(v))
          continue;
        return fail(op) << "reads " << describe(v)
                        << (placed && i > lifetime->second.end ? " after its release"
                                                               : ", which has no memory");
      }
      // The op writes its results when it runs: their bytes must be free
      // then, except that a view may sit in its operand's own bytes, and so
      // may a result written in place of an operand (hm::inPlaceOperand)
      // that nothing reads after it.
      Value taken = hm::bytesTakenFrom(op);
      if (taken && !tg::isView(op)) {
        auto lifetime = liveness.lifetimes.find(taken);
        if (lifetime == liveness.lifetimes.end() || lifetime->second.end != i)
          return fail(op) << "writes its result in place of " << describe(taken)
                          << ", which is not released right after it";
      }
      for (Value r : op->getResults()) {
        auto where = places.find(r);
        if (where == places.end()) {
          if (isa<ParamOp, ConstantOp>(op))
            continue; // the parameter's memory; static data
          return fail(op) << describe(r) << " has no memory (no hm.place)";
        }
        auto [begin, arena] = addressOf(where->second);
        if (!arena)
          return fail(where->second) << describe(r) << " is placed in @"
                                     << where->second.getArena() << ", which is no arena";
        int64_t end = begin + bytesOf(r.getType());
        const Interval *other = occupancy.overlapping(begin, end);
        if (!other)
          continue;
        // (The operand is in memory: the reads are checked above.)
        Value x = taken;
        hm::PlaceOp xPlace = x ? places.lookup(x) : hm::PlaceOp();
        bool ownOperand = xPlace && addressOf(xPlace).first == begin && other->begin == begin &&
                          other->end == begin + bytesOf(x.getType());
        int64_t offset = where->second.getByteOffset();
        if (!ownOperand)
          return fail(op) << "writes " << describe(r) << " at [" << offset << ", "
                          << offset + (end - begin) << ") of the " << arena.getTier()
                          << " arena over " << other->what << ", which is live";
      }
      // Values with bytes of their own occupy them from here on.
      for (Value v : step.born) {
        hm::PlaceOp place = places.lookup(v);
        int64_t offset = place.getByteOffset();
        auto [begin, arena] = addressOf(place);
        Interval interval{begin, begin + bytesOf(v.getType()),
                          describe(v) + " (placed at " + std::to_string(offset) + ")"};
        if (offset + bytesOf(v.getType()) > arena.getBytes())
          return fail(place) << describe(v) << " lies beyond the " << arena.getTier()
                             << " arena's " << arena.getBytes() << " bytes";
        if (const Interval *other = occupancy.add(interval))
          return fail(place) << describe(v) << " at [" << offset << ", "
                             << offset + bytesOf(v.getType()) << ") overlaps " << other->what;
      }
      for (Value v : step.freed)
        occupancy.remove(addressOf(places.lookup(v)).first);
    }
    if (Operation *op = liveness.broken) {
      if (isa<hm::PlaceOp>(op))
        return fail(op) << describe(liveness.brokenValue) << " is placed twice";
      return fail(op) << "releases " << describe(liveness.brokenValue)
                      << ", which is not in memory";
    }
    return success();
  }
};

} // namespace
