//===- PassOptions.cpp - the planner passes' shared options ----------------===//
#include "compiler/planner/PassOptions.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"
#include "lib/support/Size.h"

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

int64_t chunkElements(int64_t bytes) {
  return std::max<int64_t>(1, bytes / 4 / hm::kChunkElements) * hm::kChunkElements;
}

SmallVector<std::pair<int64_t, int64_t>> chunkRanges(ArrayRef<tg::StateOp> states, int64_t n,
                                                      int64_t chunk) {
  SmallVector<std::pair<int64_t, int64_t>> ranges;
  if (chunk <= 0)
    return ranges;
  int64_t granularity = hm::kChunkElements;
  for (tg::StateOp s : states)
    granularity = std::max(granularity, hm::chunkGranularity(s));
  chunk = (chunk + granularity - 1) / granularity * granularity;
  if (n > chunk)
    for (int64_t lo = 0; lo < n; lo += chunk)
      ranges.push_back({lo, std::min(n, lo + chunk)});
  return ranges;
}

} // namespace hmcc::planner
