//===- hmcc-opt.cpp - runs hmcc passes on MLIR files ----------------------===//
//
// mlir-opt for hmcc: the tg and hm dialects, func, every hmcc pass, hmcc's
// whole pipeline (--hmcc-pipeline="..."), and MLIR's generic transforms
// (canonicalize, cse, ...).
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/Passes.h"
#include "compiler/planner/Passes.h"
#include "compiler/pipeline/Pipeline.h"
#include "hm/IR/HMDialect.h"
#include "hm/Transforms/Passes.h"
#include "tg/IR/TGDialect.h"
#include "tg/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<hmcc::tg::TGDialect, hmcc::hm::HMDialect, mlir::func::FuncDialect>();
  mlir::registerTransformsPasses();
  hmcc::registerTGPasses();
  hmcc::registerHMPasses();
  hmcc::registerConversionPasses();
  hmcc::registerPlannerPasses();
  hmcc::registerPipeline();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "hmcc optimizer driver\n", registry));
}
