//===- Summary.cpp - what a training graph holds --------------------------===//
//
// Counts parameters (tensors, elements, bytes), constants and data inputs,
// and builds a histogram of the ops in the graph functions.
//
//===----------------------------------------------------------------------===//

#include "tg/Transforms/Passes.h"
#include "lib/support/Size.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/ToolOutputFile.h"

#include <algorithm>

namespace hmcc {
#define GEN_PASS_DEF_TGSUMMARY
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;

void hmcc::printSummary(ModuleOp module, llvm::raw_ostream &os) {
  {
    uint64_t params = 0, paramElements = 0, paramBytes = 0;
    for (auto p : module.getOps<hmcc::tg::ParameterOp>()) {
      ++params;
      paramElements += cast<RankedTensorType>(p.getType()).getNumElements();
      paramBytes += hmcc::tg::tensorBytes(p.getType());
    }
    uint64_t constants = 0, constantBytes = 0, total = 0;
    llvm::MapVector<StringRef, uint64_t> histogram;
    module.walk([&](Operation *op) {
      if (!isa<hmcc::tg::TGDialect>(op->getDialect()) || isa<hmcc::tg::ParameterOp>(op))
        return;
      if (auto c = dyn_cast<hmcc::tg::ConstantOp>(op)) {
        ++constants;
        constantBytes += hmcc::tg::tensorBytes(c.getType());
      }
      ++histogram[op->getName().getStringRef()];
      ++total;
    });

    if (auto name = module.getSymNameAttr())
      os << "model " << name.getValue() << "\n";
    os << "  parameters   " << hmcc::formatCount(params) << " tensors, "
       << hmcc::formatCount(paramElements) << " elements, "
       << hmcc::formatBytes(paramBytes) << "\n";
    os << "  constants    " << hmcc::formatCount(constants) << " tensors, "
       << hmcc::formatBytes(constantBytes) << "\n";
    for (auto func : module.getOps<func::FuncOp>()) {
      os << "  function @" << func.getSymName() << "\n";
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        auto name = func.getArgAttrOfType<StringAttr>(i, "tg.input");
        os << "    input  " << (name ? name.getValue() : StringRef("?")) << " "
           << func.getArgument(i).getType() << "\n";
      }
      for (unsigned i = 0; i < func.getNumResults(); ++i) {
        auto name = func.getResultAttrOfType<StringAttr>(i, "tg.output");
        os << "    output " << (name ? name.getValue() : StringRef("?")) << " "
           << func.getResultTypes()[i] << "\n";
      }
    }
    auto rows = histogram.takeVector();
    std::stable_sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    os << "  ops          " << hmcc::formatCount(total) << " in all\n";
    for (auto &[name, count] : rows)
      os << llvm::format("    %-34s %6llu\n", name.str().c_str(),
                         static_cast<unsigned long long>(count));
  }
}

namespace {

struct TGSummaryPass : hmcc::impl::TGSummaryBase<TGSummaryPass> {
  using TGSummaryBase::TGSummaryBase;

  void runOnOperation() override {
    std::string error;
    auto file = openOutputFile(output, &error);
    if (!file) {
      emitError(getOperation().getLoc()) << error;
      return signalPassFailure();
    }
    hmcc::printSummary(getOperation(), file->os());
    file->keep();
    markAllAnalysesPreserved();
  }
};

} // namespace
