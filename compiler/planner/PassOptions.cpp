//===- PassOptions.cpp - the planner passes' shared options ----------------===//
#include "compiler/planner/PassOptions.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
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

int64_t chunkElements(int64_t bytes) {
  return std::max<int64_t>(1, bytes / 4 / hm::kChunkElements) * hm::kChunkElements;
}

int64_t chunkFor(ArrayRef<tg::StateOp> states, int64_t chunk) {
  int64_t granularity = hm::kChunkElements;
  for (tg::StateOp s : states)
    granularity = std::max(granularity, hm::chunkGranularity(s));
  return (chunk + granularity - 1) / granularity * granularity;
}

} // namespace hmcc::planner
