//===- SelectEntries.cpp - tg-select-entries: only what the program exports ===//
#include "tg/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace hmcc {
#define GEN_PASS_DEF_TGSELECTENTRIES
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;

namespace {

struct SelectEntriesPass : hmcc::impl::TGSelectEntriesBase<SelectEntriesPass> {
  using TGSelectEntriesBase::TGSelectEntriesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (const std::string &name : functions)
      if (!module.lookupSymbol<func::FuncOp>(name)) {
        module.emitError() << "tg-select-entries: no function @" << name;
        return signalPassFailure();
      }
    for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (!llvm::is_contained(functions, fn.getSymName().str()))
        fn.erase();
  }
};

} // namespace
