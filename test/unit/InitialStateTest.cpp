//===- InitialStateTest.cpp - hmcc::writeInitialState ---------------------===//
//
// The initial state is written one parameter at a time through the
// runtime's filled writer: the values read back are those given, states
// are zero, and a value that cannot be had (an error, or memory that runs
// out) is a message naming the parameter, with nothing written.
//
//===----------------------------------------------------------------------===//

#include "compiler/target/common/Runtime.h"
#include "tg/IR/TGDialect.h"

#include "hmrt/io.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <new>
#include <string>

namespace {

constexpr const char *kModule = R"mlir(
tg.parameter @w : tensor<4x3xf32> {source = "w"}
tg.parameter @b : tensor<3xf32> {source = "b"}
tg.state @w.exp_avg : tensor<4x3xf32> {kind = "exp_avg", param = @w}
)mlir";

struct InitialState : ::testing::Test {
  void SetUp() override {
    context.loadDialect<hmcc::tg::TGDialect, mlir::func::FuncDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(kModule, &context);
    ASSERT_TRUE(module);
    std::string pattern =
        (std::filesystem::temp_directory_path() / "hmcc-initial-state-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string state() const { return dir + "/state"; }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string dir;
};

TEST_F(InitialState, ValuesOneAtATimeStatesZero) {
  std::vector<std::string> asked;
  auto valueOf = [&](llvm::StringRef name, std::string &) -> std::optional<hmcc::Tensor> {
    asked.push_back(name.str());
    hmcc::Tensor t;
    t.shape = name == "w" ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{3};
    for (int64_t k = 0; k < (name == "w" ? 12 : 3); ++k)
      t.values.push_back(name == "w" ? 0.5 * k : -1.0 - k);
    return t;
  };
  // Progress is heard after each piece, growing to the state's bytes.
  uint64_t heard = 0, last = 0;
  bool growing = true;
  auto progress = [&](uint64_t done, uint64_t total) {
    growing &= done > heard && total == hmcc::initialStateBytes(*module);
    heard = done;
    last = total;
  };
  std::string error;
  ASSERT_TRUE(hmcc::writeInitialState(*module, true, valueOf, state(), error, progress)) << error;
  EXPECT_EQ(asked, (std::vector<std::string>{"w", "b"}));
  EXPECT_TRUE(growing);
  EXPECT_EQ(heard, (12 + 3 + 12) * sizeof(float));
  EXPECT_EQ(last, heard);
  hmrt_npy w, b, m;
  ASSERT_EQ(hmrt_checkpoint_read_tensor(state().c_str(), "w", &w), HMRT_OK) << hmrt_last_error();
  ASSERT_EQ(hmrt_checkpoint_read_tensor(state().c_str(), "b", &b), HMRT_OK) << hmrt_last_error();
  ASSERT_EQ(hmrt_checkpoint_read_tensor(state().c_str(), "w.exp_avg", &m), HMRT_OK)
      << hmrt_last_error();
  for (int k = 0; k < 12; ++k) {
    EXPECT_EQ(static_cast<const float *>(w.data)[k], 0.5f * k);
    EXPECT_EQ(static_cast<const float *>(m.data)[k], 0.0f);
  }
  for (int k = 0; k < 3; ++k)
    EXPECT_EQ(static_cast<const float *>(b.data)[k], -1.0f - k);
  hmrt_npy_free(&w);
  hmrt_npy_free(&b);
  hmrt_npy_free(&m);
}

TEST_F(InitialState, ValuesThatCannotBeHadAreMessages) {
  std::string error;
  auto failing = [](llvm::StringRef name, std::string &why) -> std::optional<hmcc::Tensor> {
    why = "model.onnx: parameter @" + name.str() + ": cannot be read";
    return std::nullopt;
  };
  EXPECT_FALSE(hmcc::writeInitialState(*module, true, failing, state(), error));
  EXPECT_EQ(error, "model.onnx: parameter @w: cannot be read");
  EXPECT_FALSE(std::filesystem::exists(state()));
  // Memory that runs out while a value is read: a message, not an abort.
  auto exhausted = [](llvm::StringRef, std::string &) -> std::optional<hmcc::Tensor> {
    throw std::bad_alloc();
  };
  EXPECT_FALSE(hmcc::writeInitialState(*module, true, exhausted, state(), error));
  EXPECT_EQ(error, "out of memory for parameter 'w' (12 elements) while writing the initial "
                   "state; --no-initial-state writes the program without it");
  EXPECT_FALSE(std::filesystem::exists(state()));
}

} // namespace
