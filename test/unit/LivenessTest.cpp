//===- LivenessTest.cpp - the replay of a scheduled program ---------------===//
//
// hm/Analysis/Liveness.h on a small scheduled function: which values are
// born and freed at each op, a view resolved to the value owning its bytes,
// the live bytes and their peak, the persistent tensors, and where the
// replay stops on a broken schedule.
//
//===----------------------------------------------------------------------===//

#include "hm/Analysis/Liveness.h"
#include "hm/IR/HMDialect.h"
#include "tg/IR/TGDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace hmcc;

namespace {

struct Parsed {
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  func::FuncOp fn;
  explicit Parsed(const char *text) {
    context.loadDialect<tg::TGDialect, hm::HMDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(text, &context);
    if (module)
      fn = *module->getOps<func::FuncOp>().begin();
  }
};

// 64 bytes a tensor: %a dies into %b, %c is a view in %b's bytes (%b is
// released before %c is placed), %d outlives the function.
constexpr const char *kProgram = R"mlir(
  hm.arena @arena tier "device" size 256
  tg.parameter @w : tensor<16xf32> {hm.offset = 128 : i64, source = "w"}
  func.func @f(%x: tensor<16xf32> {hm.offset = 0 : i64, tg.input = "x"}) -> tensor<4x4xf32> {
    %a = tg.exp %x : tensor<16xf32>
    hm.place %a in @arena at 64 : tensor<16xf32>
    %b = tg.exp %a : tensor<16xf32>
    hm.place %b in @arena at 192 : tensor<16xf32>
    hm.release %a : tensor<16xf32>
    %c = tg.reshape %b : tensor<16xf32> -> tensor<4x4xf32>
    hm.release %b : tensor<16xf32>
    hm.place %c in @arena at 192 : tensor<4x4xf32>
    %d = tg.exp %c : tensor<4x4xf32>
    hm.place %d in @arena at 64 : tensor<4x4xf32>
    hm.release %c : tensor<4x4xf32>
    return %d : tensor<4x4xf32>
  }
)mlir";

TEST(Liveness, StepsViewsAndPeak) {
  Parsed p(kProgram);
  ASSERT_TRUE(p.module);
  hm::FunctionLiveness live = hm::replayFunction(p.fn);
  EXPECT_EQ(live.broken, nullptr);
  ASSERT_EQ(live.steps.size(), 5u); // exp, exp, reshape, exp, return
  Value a = live.steps[0].op->getResult(0), b = live.steps[1].op->getResult(0),
        c = live.steps[2].op->getResult(0), d = live.steps[3].op->getResult(0);

  std::vector<int64_t> bytes;
  for (const hm::LiveStep &step : live.steps)
    bytes.push_back(step.liveBytes);
  EXPECT_EQ(bytes, (std::vector<int64_t>{64, 128, 64, 128, 64}));
  EXPECT_EQ(live.peakBytes, 128);

  EXPECT_EQ(live.steps[1].born, (SmallVector<Value, 1>{b}));
  EXPECT_EQ(live.steps[1].freed, (SmallVector<Value, 1>{a}));
  // The view holds %b's bytes: nothing born or freed at the reshape, and
  // %b's bytes are free only once %c is released.
  EXPECT_TRUE(live.steps[2].born.empty());
  EXPECT_TRUE(live.steps[2].freed.empty());
  EXPECT_EQ(live.steps[3].freed, (SmallVector<Value, 1>{b}));
  EXPECT_EQ(live.lifetimes.lookup(c).owner, b);
  EXPECT_EQ(live.lifetimes.lookup(b).owner, b);

  // Lifetimes: %b is placed at step 1 and released at step 2; %d never.
  EXPECT_FALSE(live.lifetimes.lookup(b).readableAt(1));
  EXPECT_TRUE(live.lifetimes.lookup(b).readableAt(2));
  EXPECT_FALSE(live.lifetimes.lookup(b).readableAt(3));
  EXPECT_TRUE(live.lifetimes.lookup(d).readableAt(4));
  EXPECT_EQ(live.lifetimes.lookup(d).end, hm::Lifetime::kNever);
}

TEST(Liveness, PersistentTensors) {
  Parsed p(kProgram);
  ASSERT_TRUE(p.module);
  auto tensors = hm::persistentTensors(*p.module);
  ASSERT_EQ(tensors.size(), 2u);
  EXPECT_EQ(tensors[0].kind, "param");
  EXPECT_EQ(tensors[0].name, "w");
  EXPECT_EQ(tensors[0].offset, 128);
  EXPECT_EQ(tensors[1].kind, "input");
  EXPECT_EQ(tensors[1].name, "x");
  EXPECT_EQ(tensors[1].offset, 0);
}

TEST(Liveness, StopsAtABrokenRelease) {
  Parsed p(R"mlir(
    hm.arena @arena tier "device" size 256
    func.func @f(%x: tensor<16xf32> {hm.offset = 0 : i64, tg.input = "x"}) -> tensor<16xf32> {
      %a = tg.exp %x : tensor<16xf32>
      hm.place %a in @arena at 64 : tensor<16xf32>
      hm.release %a : tensor<16xf32>
      hm.release %a : tensor<16xf32>
      return %x : tensor<16xf32>
    }
  )mlir");
  ASSERT_TRUE(p.module);
  hm::FunctionLiveness live = hm::replayFunction(p.fn);
  ASSERT_NE(live.broken, nullptr);
  EXPECT_EQ(live.broken->getName().getStringRef(), "hm.release");
  EXPECT_EQ(live.brokenValue, live.steps[0].op->getResult(0));
  EXPECT_EQ(live.steps.size(), 1u); // the return is not reached
}

} // namespace
