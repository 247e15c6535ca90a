//===- OpTableTest.cpp - invariants of the importer's op table ------------===//
//
// The op table (lib/import/OpConverters.h) is the one list of supported ONNX
// operators; these tests pin what hmcc --list-ops reports from it and check
// that every entry is well-formed: one entry per op and opset, folded-only
// ops without a converter, compile-time inputs that carry no gradient.
//
//===----------------------------------------------------------------------===//

#include "lib/import/OnnxImporter.h"
#include "lib/import/OpConverters.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>

namespace {

using hmcc::import::OpDef;

TEST(OpTable, ListsTheSupportedOps) {
  std::vector<std::string> expected = {
      "Add", "Cast", "Concat", "Constant", "ConstantOfShape", "Div", "Dropout", "Equal", "Erf",
      "Exp", "Expand", "Flatten", "Gather", "Gemm", "Identity", "LayerNormalization", "Log",
      "LogSoftmax", "MatMul", "Mul", "Neg", "Pow", "Range", "Reciprocal", "ReduceMax",
      "ReduceMean", "ReduceSum", "Relu", "Reshape", "Shape", "Sigmoid", "Slice", "Softmax",
      "SoftmaxCrossEntropyLoss", "Split", "Sqrt", "Squeeze", "Sub", "Tanh", "Transpose", "Trilu",
      "Unsqueeze", "Where"};
  EXPECT_EQ(hmcc::supportedOnnxOps(), expected);
  std::vector<std::string> training = {
      "ai.onnx.preview.training.Adagrad", "ai.onnx.preview.training.Adam",
      "ai.onnx.preview.training.Gradient", "ai.onnx.preview.training.Momentum"};
  EXPECT_EQ(hmcc::supportedPreviewTrainingOps(), training);
  EXPECT_TRUE(hmcc::needsCompileTimeValue("Reshape", 1));
  EXPECT_FALSE(hmcc::needsCompileTimeValue("Reshape", 0));
  EXPECT_TRUE(hmcc::needsCompileTimeValue("Slice", 4));
  EXPECT_TRUE(hmcc::needsCompileTimeValue("Range", 0));
  EXPECT_FALSE(hmcc::needsCompileTimeValue("Gather", 1));
}

TEST(OpTable, OneEntryPerOpAndOpset) {
  // The opset ranges of one op's entries tile all versions without overlap,
  // so the lookup never depends on the order of the table.
  std::map<std::pair<std::string, std::string>, std::vector<const OpDef *>> byOp;
  for (const OpDef &def : hmcc::import::opTable())
    byOp[{def.domain, def.opType}].push_back(&def);
  for (auto &[key, defs] : byOp) {
    std::sort(defs.begin(), defs.end(),
              [](const OpDef *a, const OpDef *b) { return a->minOpset < b->minOpset; });
    SCOPED_TRACE(key.first + "." + key.second);
    EXPECT_EQ(defs.front()->minOpset, std::numeric_limits<int64_t>::min());
    EXPECT_EQ(defs.back()->maxOpset, std::numeric_limits<int64_t>::max());
    for (size_t k = 1; k < defs.size(); ++k)
      EXPECT_EQ(defs[k]->minOpset, defs[k - 1]->maxOpset + 1);
  }
}

TEST(OpTable, EntriesAreWellFormed) {
  for (const OpDef &def : hmcc::import::opTable()) {
    SCOPED_TRACE(def.opType);
    if (def.mnemonic.empty()) {
      // Always folded: nothing converts it, and no gradient flows through it.
      EXPECT_EQ(def.convert, nullptr);
      EXPECT_FALSE(def.carriesGradient);
    }
    if (!def.domain.empty()) {
      EXPECT_NE(def.convert, nullptr) << "ops of other domains are hand-written";
    }
    for (int k : def.compileTime)
      EXPECT_TRUE(def.nonDifferentiable.count(k)) << "input " << k;
  }
}

} // namespace
