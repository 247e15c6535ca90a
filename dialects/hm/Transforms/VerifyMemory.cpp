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
    auto arenas = module.getOps<hm::ArenaOp>();
    if (arenas.empty())
      return; // not scheduled yet: nothing to prove
    if (std::next(arenas.begin()) != arenas.end()) {
      module.emitError("hm-verify-memory: one arena is supported");
      return signalPassFailure();
    }
    hm::ArenaOp arena = *arenas.begin();
    int64_t size = arena.getBytes();

    // Persistent tensors never overlap one another.
    Occupancy persistent;
    std::vector<Interval> fixed;
    auto addFixed = [&](Operation *op, int64_t offset, Type type, const std::string &what) {
      Interval interval{offset, offset + bytesOf(type), what};
      if (interval.end > size) {
        op->emitError() << "hm-verify-memory: " << what << " lies at [" << interval.begin << ", "
                        << interval.end << "), beyond the arena's " << size << " bytes";
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
      return addFixed(op, offset.getInt(), type, (kind + " @" + name).str());
    };
    for (auto p : module.getOps<ParameterOp>())
      ok &= addSymbol(p, "parameter", p.getSymName(), p.getType());
    for (auto s : module.getOps<StateOp>())
      ok &= addSymbol(s, "state", s.getSymName(), s.getType());
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
      if (scheduled && failed(verifyFunction(fn, size, fixed)))
        return signalPassFailure();
    }
  }

  LogicalResult verifyFunction(func::FuncOp fn, int64_t size, const std::vector<Interval> &fixed) {
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
    for (auto [index, step] : llvm::enumerate(liveness.steps)) {
      unsigned i = index;
      Operation *op = step.op;
      for (Value v : op->getOperands()) {
        auto lifetime = liveness.lifetimes.find(v);
        bool placed = lifetime != liveness.lifetimes.end();
        if (placed ? lifetime->second.readableAt(i) : unplacedReadable(v))
          continue;
        return fail(op) << "reads " << describe(v)
                        << (placed && i > lifetime->second.end ? " after its release"
                                                               : ", which has no memory");
      }
      // The op writes its results when it runs: their bytes must be free
      // then, except that a view may sit in its operand's own bytes.
      for (Value r : op->getResults()) {
        auto where = places.find(r);
        if (where == places.end()) {
          if (isa<ParamOp, ConstantOp>(op))
            continue; // the parameter's memory; static data
          return fail(op) << describe(r) << " has no memory (no hm.place)";
        }
        int64_t begin = where->second.getByteOffset(), end = begin + bytesOf(r.getType());
        const Interval *other = occupancy.overlapping(begin, end);
        if (!other)
          continue;
        // (The operand is in memory: the reads are checked above.)
        Value x = tg::isView(op) ? op->getOperand(0) : Value();
        hm::PlaceOp xPlace = x ? places.lookup(x) : hm::PlaceOp();
        bool ownOperand = xPlace && xPlace.getByteOffset() == begin && other->begin == begin &&
                          other->end == begin + bytesOf(x.getType());
        if (!ownOperand)
          return fail(op) << "writes " << describe(r) << " at [" << begin << ", " << end
                          << ") over " << other->what << ", which is live";
      }
      // Values with bytes of their own occupy them from here on.
      for (Value v : step.born) {
        hm::PlaceOp place = places.lookup(v);
        int64_t offset = place.getByteOffset();
        Interval interval{offset, offset + bytesOf(v.getType()),
                          describe(v) + " (placed at " + std::to_string(offset) + ")"};
        if (interval.end > size)
          return fail(place) << describe(v) << " lies beyond the arena's " << size << " bytes";
        if (const Interval *other = occupancy.add(interval))
          return fail(place) << describe(v) << " at [" << interval.begin << ", " << interval.end
                             << ") overlaps " << other->what;
      }
      for (Value v : step.freed)
        occupancy.remove(places.lookup(v).getByteOffset());
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
