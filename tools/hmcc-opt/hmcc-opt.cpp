//===- hmcc-opt.cpp - runs hmcc passes on MLIR files ----------------------===//
//
// mlir-opt for hmcc: the tg and hm dialects, func, and every hmcc pass plus MLIR's
// generic transforms (canonicalize, cse, ...) are registered.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "hm/HMDialect.h"
#include "tg/TGDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<hmcc::tg::TGDialect, hmcc::hm::HMDialect, mlir::func::FuncDialect>();
  mlir::registerTransformsPasses();
  hmcc::registerHMCCPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "hmcc optimizer driver\n", registry));
}
