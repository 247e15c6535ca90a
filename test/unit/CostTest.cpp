//===- CostTest.cpp - FLOP and byte counts of tg ops ----------------------===//
//
// dialects/tg/Analysis/Cost.h against counts written out by hand from the shapes: the
// multiply-adds of matmul and gemm, per-element ops, and the traffic of an
// in-place update (its parameter and states are read and written).
//
//===----------------------------------------------------------------------===//

#include "tg/Analysis/Cost.h"
#include "tg/IR/TGDialect.h"
#include "tg/IR/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace mlir;

namespace {

/// The cost of each op of @f's body, keyed by op name (the first of a name).
std::map<std::string, hmcc::OpCost> costs(const char *text) {
  MLIRContext context;
  context.loadDialect<hmcc::tg::TGDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  EXPECT_TRUE(module);
  std::map<std::string, hmcc::OpCost> out;
  if (!module)
    return out;
  module->walk([&](Operation *op) {
    out.emplace(op->getName().getStringRef().str(), hmcc::opCost(op));
  });
  return out;
}

TEST(Cost, CountsWorkAndTraffic) {
  auto c = costs(R"mlir(
    tg.parameter @w : tensor<4x3xf32> {source = "w"}
    tg.state @w.m : tensor<4x3xf32> {kind = "exp_avg", param = @w}
    tg.state @w.v : tensor<4x3xf32> {kind = "exp_avg_sq", param = @w}
    func.func @f(%x: tensor<2x5x4xf32>, %a: tensor<4x2xf32>, %b: tensor<4x3xf32>,
                 %bias: tensor<3xf32>, %g: tensor<4x3xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
      %w = tg.param @w : tensor<4x3xf32>
      %y = tg.matmul %x, %w : (tensor<2x5x4xf32>, tensor<4x3xf32>) -> tensor<2x5x3xf32>
      %z = tg.gemm %a, %b, %bias {transA} : (tensor<4x2xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
      %e = tg.exp %y : tensor<2x5x3xf32>
      %r = tg.reshape %e : tensor<2x5x3xf32> -> tensor<10x3xf32>
      %sm = tg.softmax %r {axis = 1 : i64} : tensor<10x3xf32>
      tg.adamw_update @w, %g, %lr, %s {beta1 = 0.9 : f32, beta2 = 0.999 : f32, eps = 1.0e-8 : f32, exp_avg = @w.m, exp_avg_sq = @w.v, weight_decay = 0.0 : f32} : tensor<4x3xf32>
      return
    }
  )mlir");
  // matmul: 2 * (2*5*3 outputs) * 4 = 240; reads 160 + 48 bytes, writes 120.
  EXPECT_EQ(c["tg.matmul"].flops, 240);
  EXPECT_EQ(c["tg.matmul"].bytes, 160 + 48 + 120);
  // gemm with transA: k = 4 rows of a; 2*(2*3)*4 + 6 for the bias.
  EXPECT_EQ(c["tg.gemm"].flops, 2 * 6 * 4 + 6);
  EXPECT_EQ(c["tg.exp"].flops, 30);
  // A reshape moves data only.
  EXPECT_EQ(c["tg.reshape"].flops, 0);
  EXPECT_EQ(c["tg.reshape"].bytes, 240);
  EXPECT_EQ(c["tg.softmax"].flops, 5 * 30);
  // AdamW: 12 per element; reads grad, lr and step, reads and writes w, m, v.
  EXPECT_EQ(c["tg.adamw_update"].flops, 12 * 12);
  EXPECT_EQ(c["tg.adamw_update"].bytes, 48 + 4 + 8 + 2 * 3 * 48);
  // Declarations and parameter reads cost nothing.
  EXPECT_EQ(c["tg.param"].bytes, 0);
  EXPECT_EQ(c["tg.parameter"].bytes, 0);
}

// Inside a SymbolLookupScope, declarations are found through symbol tables
// built once per module: an op of a module and of its clone each find
// their own module's declaration, and the costs are those found without a
// scope; scopes nest, and lookups fall back to the walk after the last.
TEST(Cost, SymbolLookupScopeFindsEachModulesDeclarations) {
  MLIRContext context;
  context.loadDialect<hmcc::tg::TGDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    tg.parameter @w : tensor<4x3xf32> {source = "w"}
    tg.state @w.m : tensor<4x3xf32> {kind = "exp_avg", param = @w}
    tg.state @w.v : tensor<4x3xf32> {kind = "exp_avg_sq", param = @w}
    func.func @f(%g: tensor<4x3xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
      tg.adamw_update @w, %g, %lr, %s {beta1 = 0.9 : f32, beta2 = 0.999 : f32, eps = 1.0e-8 : f32, exp_avg = @w.m, exp_avg_sq = @w.v, weight_decay = 0.0 : f32} : tensor<4x3xf32>
      return
    }
  )mlir", &context);
  ASSERT_TRUE(module);
  OwningOpRef<ModuleOp> copy(module->clone());
  auto updateOf = [](ModuleOp m) {
    Operation *found = nullptr;
    m.walk([&](hmcc::tg::AdamWUpdateOp u) { found = u; });
    return found;
  };
  Operation *mine = updateOf(*module), *theirs = updateOf(*copy);
  auto ref = FlatSymbolRefAttr::get(&context, "w");
  const int64_t unscoped = hmcc::opCost(mine).bytes;
  {
    hmcc::SymbolLookupScope outer;
    EXPECT_EQ(hmcc::lookupDecl(mine, ref), module->lookupSymbol("w"));
    EXPECT_EQ(hmcc::lookupDecl(theirs, ref), copy->lookupSymbol("w"));
    EXPECT_EQ(hmcc::opCost(mine).bytes, unscoped);
    {
      hmcc::SymbolLookupScope inner;
      EXPECT_EQ(hmcc::opCost(theirs).bytes, unscoped);
    }
    EXPECT_EQ(hmcc::lookupDecl(theirs, ref), copy->lookupSymbol("w"));
  }
  EXPECT_EQ(hmcc::lookupDecl(mine, ref), module->lookupSymbol("w"));
  EXPECT_EQ(hmcc::lookupDecl(mine, FlatSymbolRefAttr::get(&context, "nope")), nullptr);
}

} // namespace
