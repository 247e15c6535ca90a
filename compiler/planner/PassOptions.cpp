//===- PassOptions.cpp - the planner passes' shared options ----------------===//
#include "compiler/planner/PassOptions.h"
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

} // namespace hmcc::planner
