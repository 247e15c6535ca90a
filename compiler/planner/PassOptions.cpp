//===- PassOptions.cpp - the planner passes' shared options ----------------===//
#include "compiler/planner/PassOptions.h"
#include "compiler/planner/CostModel.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"
#include "lib/support/Size.h"

#include "llvm/ADT/StringSet.h"

#include <algorithm>

using namespace mlir;

namespace hmcc::planner {

FailureOr<std::optional<int64_t>> budgetOption(ModuleOp module, StringRef pass, StringRef option,
                                               StringRef text) {
  if (text.empty())
    return std::optional<int64_t>();
  auto parsed = parseSize(text);
  if (!parsed) {
    module.emitError() << pass << ": " << option << ": " << llvm::toString(parsed.takeError());
    return failure();
  }
  return std::optional<int64_t>(int64_t(std::min<uint64_t>(*parsed, INT64_MAX)));
}

FailureOr<DeviceProfile> profileOption(ModuleOp module, StringRef pass, StringRef spec) {
  std::string error;
  std::optional<DeviceProfile> profile = loadDeviceProfile(spec, error);
  if (!profile) {
    module.emitError() << pass << ": " << error;
    return failure();
  }
  return *profile;
}

int64_t prefetchHeadroom(ModuleOp module, const DeviceProfile &profile) {
  if (profile.sharedHost)
    return 0;
  int64_t largest = 0;
  for (auto p : module.getOps<tg::ParameterOp>())
    largest = std::max(largest, tg::tensorBytes(p.getType()));
  return largest;
}

SmallVector<StringRef> hostCandidates(ModuleOp module, func::FuncOp fn,
                                      const DeviceProfile &profile) {
  SymbolLookupScope symbols;
  llvm::StringMap<double> firstRead, gradientDone;
  llvm::DenseMap<Operation *, double> doneAt; // predicted compute time at each op's end
  double clock = 0;
  for (Operation &op : fn.getBody().front()) {
    // Parameters' tg.param ops may all come first: their readers count.
    for (Value v : op.getOperands())
      if (auto param = v.getDefiningOp<tg::ParamOp>())
        firstRead.try_emplace(param.getName(), clock);
    clock += predictSeconds(&op, profile);
    doneAt[&op] = clock;
    if (auto [ref, grad] = tg::optimizerUpdate(&op); ref) // done when its gradient is made
      gradientDone[ref.getValue()] = doneAt.lookup(grad->get().getDefiningOp());
  }
  llvm::StringSet<> quantized;
  for (auto s : module.getOps<tg::StateOp>())
    if (getElementTypeOrSelf(s.getType()).isInteger(8))
      quantized.insert(s.getParam());
  struct Ranked {
    bool overlaps;
    int64_t bytes;
    StringRef name;
  };
  SmallVector<Ranked> ranked;
  for (auto p : module.getOps<tg::ParameterOp>()) {
    StringRef name = p.getSymName();
    int64_t bytes = tg::tensorBytes(p.getType());
    double elements = double(cast<RankedTensorType>(p.getType()).getNumElements());
    double slack = firstRead.lookup(name) + (clock - gradientDone.lookup(name));
    double roundTrip =
        transferSeconds(bytes, profile.deviceToHost) +
        hostUpdateSeconds(elements, quantized.contains(name) ? "8bit" : "f32", profile) +
        transferSeconds(bytes, profile.hostToDevice);
    ranked.push_back({slack >= roundTrip, bytes, name});
  }
  llvm::stable_sort(ranked, [](const Ranked &a, const Ranked &b) {
    return a.overlaps != b.overlaps ? a.overlaps : a.bytes > b.bytes;
  });
  SmallVector<StringRef> names;
  for (const Ranked &r : ranked)
    names.push_back(r.name);
  return names;
}

func::FuncOp trainingFunction(ModuleOp module) {
  for (auto fn : module.getOps<func::FuncOp>()) {
    bool updates = false, own = false;
    fn.walk([&](Operation *op) {
      updates |= static_cast<bool>(tg::optimizerUpdate(op).first);
      own |= isa<tg::OnnxOptimizerOp, tg::AssignOp>(op);
    });
    if (updates && !own)
      return fn;
  }
  return func::FuncOp();
}

size_t fewestFrom(size_t guess, size_t total, llvm::function_ref<bool(size_t)> meets) {
  size_t lo = 0, hi = total; // from hi on, meets; at lo and below, not known to
  if (guess >= total || meets(guess)) {
    hi = std::min(guess, total);
    for (size_t step = 1; hi > 0; step *= 2) {
      size_t below = hi > step ? hi - step : 0;
      if (!meets(below)) {
        lo = below;
        break;
      }
      hi = below;
    }
  } else {
    lo = guess;
    for (size_t step = 1; lo + step < total; step *= 2) {
      if (meets(lo + step)) {
        hi = lo + step;
        break;
      }
      lo += step;
    }
  }
  while (lo + 1 < hi) {
    size_t mid = lo + (hi - lo) / 2;
    (meets(mid) ? hi : lo) = mid;
  }
  return hi;
}

int64_t chunkElements(int64_t bytes) {
  return std::max<int64_t>(1, bytes / 4 / hm::kChunkElements) * hm::kChunkElements;
}

SmallVector<std::pair<int64_t, int64_t>> chunkRanges(ArrayRef<Operation *> states, int64_t n,
                                                      int64_t chunk) {
  SmallVector<std::pair<int64_t, int64_t>> ranges;
  if (chunk <= 0)
    return ranges;
  int64_t granularity = hm::kChunkElements;
  for (Operation *s : states)
    granularity = std::max(granularity, hm::chunkGranularity(s));
  chunk = (chunk + granularity - 1) / granularity * granularity;
  if (n > chunk)
    for (int64_t lo = 0; lo < n; lo += chunk)
      ranges.push_back({lo, std::min(n, lo + chunk)});
  return ranges;
}

int64_t stagingFootprint(int64_t sliceBytes, bool fromStorage) {
  return fromStorage ? sliceBytes : hm::alignedSize(sliceBytes);
}

int64_t stagingBytes(ArrayRef<Operation *> staged, int64_t n, int64_t chunk, bool fromStorage) {
  auto bytesOf = [&](std::optional<std::pair<int64_t, int64_t>> part) {
    int64_t bytes = 0;
    for (Operation *s : staged)
      bytes += stagingFootprint(hm::stateSlice(s, part, fromStorage).bytes, fromStorage);
    return bytes;
  };
  auto ranges = chunkRanges(staged, n, chunk);
  int64_t most = ranges.empty() ? bytesOf(std::nullopt) : 0;
  for (auto range : ranges)
    most = std::max(most, bytesOf(range));
  return most;
}

int64_t deviceStaging(ModuleOp module) {
  auto bytes = module->getAttrOfType<IntegerAttr>(hm::kDeviceStagingAttr);
  return bytes ? bytes.getInt() : 0;
}

void moveUpdates(func::FuncOp fn, llvm::function_ref<bool(Operation *)> which, bool down) {
  Block &block = fn.getBody().front();
  llvm::StringMap<SmallVector<Value>> params;
  for (auto p : block.getOps<tg::ParamOp>())
    params[p.getName()].push_back(p.getResult());
  for (Operation *op : llvm::to_vector(llvm::map_range(block, [](Operation &o) { return &o; }))) {
    FlatSymbolRefAttr param = tg::optimizerUpdate(op).first;
    if (!param || !which(op))
      continue;
    Operation *last = nullptr;
    auto after = [&](Operation *other) {
      if (other && other->getBlock() == &block && other != op &&
          (!last || last->isBeforeInBlock(other)))
        last = other;
    };
    for (Value v : op->getOperands())
      after(v.getDefiningOp());
    SmallVector<Value> pending(params.lookup(param.getValue()));
    while (!pending.empty()) {
      Value v = pending.pop_back_val();
      after(v.getDefiningOp());
      for (Operation *user : v.getUsers()) {
        after(user);
        if (tg::isView(user))
          pending.append(user->result_begin(), user->result_end());
      }
    }
    if (!last)
      continue;
    bool before = last->isBeforeInBlock(op);
    if (down ? !before : before && last->getNextNode() != op)
      op->moveAfter(last);
  }
}

} // namespace hmcc::planner
