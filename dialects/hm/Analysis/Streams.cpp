//===- Streams.cpp - the bytes each op touches, and what orders them ------===//
#include "hm/Analysis/Streams.h"
#include "hm/Analysis/Memory.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace hmcc::tg;

namespace hmcc::hm {

unsigned streamIndex(StringRef name) {
  return std::find(kStreams.begin(), kStreams.end(), name) - kStreams.begin();
}

AccessMap::AccessMap(func::FuncOp fn) {
  auto module = fn->getParentOfType<ModuleOp>();
  llvm::StringMap<int> arenaTier;
  for (auto arena : module.getOps<ArenaOp>())
    arenaTier[arena.getSymName()] = arena.getTier() == "host";
  auto addSymbol = [&](Operation *op, StringRef name, Type type) {
    if (auto offset = op->getAttrOfType<IntegerAttr>(kOffsetAttr))
      symbols[name] = {Where{homeTier(op), offset.getInt()}, tensorBytes(type)};
  };
  for (auto p : module.getOps<ParameterOp>())
    addSymbol(p, p.getSymName(), p.getType());
  for (auto s : module.getOps<StateOp>())
    addSymbol(s, s.getSymName(), s.getType());

  Block &block = fn.getBody().front();
  for (unsigned k = 0; k < fn.getNumArguments(); ++k)
    if (auto offset = fn.getArgAttrOfType<IntegerAttr>(k, kOffsetAttr))
      values[block.getArgument(k)] = {0, offset.getInt()};
  for (Operation &op : block) {
    if (auto place = dyn_cast<PlaceOp>(op))
      values.try_emplace(place.getValue(), Where{arenaTier.lookup(place.getArena()),
                                                 static_cast<int64_t>(place.getByteOffset())});
    else if (auto param = dyn_cast<ParamOp>(op))
      if (auto it = symbols.find(param.getName()); it != symbols.end())
        values[param.getResult()] = it->second.first;
  }
}

SmallVector<Access, 6> AccessMap::accesses(Operation &op) const {
  SmallVector<Access, 6> out;
  if (!runsInProgram(op) || isAliasingView(&op))
    return out;
  auto add = [&](Value v, bool write) {
    auto it = values.find(v);
    if (it != values.end())
      out.push_back({it->second.tier, it->second.offset,
                     it->second.offset + tensorBytes(v.getType()), write});
  };
  for (Value v : op.getOperands())
    add(v, false);
  for (Value v : op.getResults())
    add(v, true);
  // A staging copy: the state's bytes at home (storage, the host) and in
  // the arena a tier up (the host's, the device's).
  if (auto stage = dyn_cast<StageOp>(op)) {
    auto it = symbols.find(stage.getState());
    if (it == symbols.end())
      return out;
    Where stored = it->second.first;
    Slice slice = stagedSlice(stage);
    bool in = stage.getDirection() == "in";
    int64_t at = stage.getOffsetAttr().getInt();
    int64_t from = stored.offset + slice.begin;
    out.push_back({stored.tier, from, from + slice.bytes, in ? false : true});
    out.push_back({stored.tier - 1, at, at + slice.bytes, in});
    return out;
  }
  // An update names the parameter and states it changes by symbol; a
  // staged one it changes in its staging copy, a tier up from its home.
  auto staged = op.getAttrOfType<DictionaryAttr>(kStagedAttr);
  auto addSymbol = [&](Attribute attr) {
    auto ref = dyn_cast<FlatSymbolRefAttr>(attr);
    if (!ref)
      return;
    auto it = symbols.find(ref.getValue());
    if (it == symbols.end())
      return;
    int64_t bytes = it->second.second;
    if (auto at = staged ? staged.getAs<IntegerAttr>(ref.getValue()) : IntegerAttr())
      out.push_back({it->second.first.tier - 1, at.getInt(),
                     at.getInt() + stagedSlice(&op, SymbolTable::lookupNearestSymbolFrom(&op, ref))
                                       .bytes,
                     true});
    else
      out.push_back({it->second.first.tier, it->second.first.offset,
                     it->second.first.offset + bytes, true});
  };
  for (NamedAttribute attr : op.getAttrs()) {
    if (attr.getName() == kStagedAttr)
      continue;
    addSymbol(attr.getValue());
    if (auto array = dyn_cast<ArrayAttr>(attr.getValue()))
      for (Attribute a : array)
        addSymbol(a);
  }
  return out;
}

StreamOps streamOps(func::FuncOp fn) {
  StreamOps s;
  for (Operation &op : fn.getBody().front())
    if (runsInProgram(op)) {
      s.ops.push_back(&op);
      s.streams.push_back(streamIndex(streamOf(op)));
    }
  return s;
}

namespace {

/// Who last touched a run of bytes: its last writer and, per stream, its
/// last reader since that write (op indices; -1 for none).
struct Touch {
  int writer = -1;
  std::array<int, kStreams.size()> readers;
  Touch() { readers.fill(-1); }
};

/// Runs of bytes of all arenas (tier t at t * 2^61) with who touched them.
class History {
public:
  History() { runs[0] = Touch(); } // one run covering everything
  /// The runs in [begin, end), split at both ends.
  template <typename F> void forRuns(int64_t begin, int64_t end, F f) {
    split(begin);
    split(end);
    for (auto it = runs.find(begin); it != runs.end() && it->first < end; ++it)
      f(it->second);
  }

private:
  void split(int64_t at) {
    auto it = runs.upper_bound(at);
    --it; // the run holding `at` (the first starts at 0)
    if (it->first != at)
      runs.emplace(at, it->second);
  }
  std::map<int64_t, Touch> runs;
};

} // namespace

void forEachConflict(const StreamOps &s, const AccessMap &map,
                     function_ref<void(unsigned j, unsigned i)> conflict) {
  History history;
  constexpr int64_t kTierBase = int64_t(1) << 61;
  for (unsigned j = 0; j < s.ops.size(); ++j) {
    unsigned t = s.streams[j];
    // The latest op per stream that j must follow.
    std::array<int, kStreams.size()> latest;
    latest.fill(-1);
    auto need = [&](int i) {
      if (i >= 0 && s.streams[i] != t)
        latest[s.streams[i]] = std::max(latest[s.streams[i]], i);
    };
    SmallVector<Access, 6> accesses = map.accesses(*s.ops[j]);
    for (const Access &a : accesses)
      history.forRuns(a.tier * kTierBase + a.begin, a.tier * kTierBase + a.end, [&](Touch &run) {
        need(run.writer);
        if (a.write)
          for (int r : run.readers)
            need(r);
      });
    for (int i : latest)
      if (i >= 0)
        conflict(j, i);
    // Then j's own reads and writes (a write clears the readers).
    for (const Access &a : accesses)
      history.forRuns(a.tier * kTierBase + a.begin, a.tier * kTierBase + a.end, [&](Touch &run) {
        if (a.write) {
          run = Touch();
          run.writer = j;
        }
      });
    for (const Access &a : accesses)
      if (!a.write)
        history.forRuns(a.tier * kTierBase + a.begin, a.tier * kTierBase + a.end,
                        [&](Touch &run) {
                          if (run.writer != static_cast<int>(j))
                            run.readers[t] = j;
                        });
  }
}

} // namespace hmcc::hm
