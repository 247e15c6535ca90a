//===- OnnxBackendImportTest.cpp - ONNX's own node tests import -----------===//
//
// Debian's libonnx-testdata ships ONNX's backend test suite. Every node test
// whose graph uses only operators hmcc supports must import; the test prints
// how many did out of how many exist for those operators.
//
//===----------------------------------------------------------------------===//

#include "lib/import/OnnxImporter.h"

#include "mlir/IR/MLIRContext.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

namespace fs = std::filesystem;

namespace {

struct Case {
  std::set<std::string> ops;
  bool defaultDomainOnly = true;
  /// Some input or output is a string tensor, a sequence or an optional:
  /// hmcc compiles numeric tensor programs, so these are out of its scope.
  bool nonNumeric = false;
  /// Graph inputs whose values the graph needs at compile time (shapes,
  /// axes, slice bounds, ...), with the test's value for each.
  std::vector<std::pair<std::string, std::string>> compileTimeInputs;
};

Case readCase(const fs::path &dir) {
  Case c;
  onnx::ModelProto model;
  std::ifstream in(dir / "model.onnx", std::ios::binary);
  if (!model.ParseFromIstream(&in))
    return c;
  const auto &graph = model.graph();
  std::set<std::string> initializers;
  for (const auto &t : graph.initializer())
    initializers.insert(t.name());
  std::set<std::string> needed;
  for (const auto &node : graph.node()) {
    c.ops.insert(node.op_type());
    c.defaultDomainOnly &= node.domain().empty() || node.domain() == "ai.onnx";
    for (int k = 0; k < node.input_size(); ++k)
      if (hmcc::needsCompileTimeValue(node.op_type(), k))
        needed.insert(node.input(k));
  }
  for (const auto *list : {&graph.input(), &graph.output()})
    for (const auto &vi : *list)
      c.nonNumeric |= !vi.type().has_tensor_type() ||
                      vi.type().tensor_type().elem_type() == onnx::TensorProto::STRING;
  int k = 0;
  for (const auto &input : graph.input()) {
    if (initializers.count(input.name()))
      continue;
    if (needed.count(input.name()))
      c.compileTimeInputs.emplace_back(
          input.name(), (dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb")).string());
    ++k;
  }
  return c;
}

TEST(OnnxBackend, NodeTestsOfSupportedOpsImport) {
  fs::path root = fs::path(HMCC_ONNX_TESTDATA) / "node";
  if (!fs::is_directory(root))
    GTEST_SKIP() << "ONNX backend test data not found at " << root
                 << " (Debian package libonnx-testdata)";
  const auto &supported = hmcc::supportedOnnxOps();
  std::vector<fs::path> cases;
  for (const auto &entry : fs::directory_iterator(root))
    if (fs::exists(entry.path() / "model.onnx"))
      cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());

  int total = 0, imported = 0, nonNumeric = 0, withValues = 0;
  std::vector<std::string> failures;
  for (const fs::path &dir : cases) {
    Case c = readCase(dir);
    if (c.ops.empty() || !c.defaultDomainOnly ||
        !std::all_of(c.ops.begin(), c.ops.end(), [&](const std::string &op) {
          return std::find(supported.begin(), supported.end(), op) != supported.end();
        }))
      continue;
    if (c.nonNumeric) {
      ++nonNumeric;
      continue;
    }
    ++total;
    hmcc::ImportOptions options;
    options.inputValues = c.compileTimeInputs;
    withValues += !c.compileTimeInputs.empty();
    mlir::MLIRContext context;
    std::string error;
    auto module = hmcc::importOnnxModel(context, (dir / "model.onnx").string(), options, error);
    if (module)
      ++imported;
    else
      failures.push_back(dir.filename().string() + ": " + error);
  }
  std::cout << "ONNX backend node tests using only supported operators: imported "
            << imported << " of " << total << " (" << withValues
            << " with shape/axes inputs given at compile time via --input-value; "
            << nonNumeric << " more use string, sequence or optional values, which hmcc "
            << "does not compile, and are not counted)\n";
  for (const std::string &f : failures)
    ADD_FAILURE() << f;
  EXPECT_GT(total, 100);
}

} // namespace
