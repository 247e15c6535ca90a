//===- InterpreterTest.cpp - the reference interpreter -------------------===//
//
// First a few ops against values computed by hand; then the end-to-end
// check: each PyTorch fixture (test/fixtures/{mlp,gpt2,llama}) is imported,
// differentiated by tg-autodiff and interpreted at its initial weights on its
// fixed batch, and the loss and every gradient are compared with PyTorch's.
//
// PyTorch computed in float32, the interpreter in float64 from the same
// float32 weights, so the two differ by float32 rounding accumulated over a
// few dozen ops: relative errors of 1e-6 to 1e-5 are expected. The bound
// 1e-4 (max |a - b| / max |b| per tensor) is safely above that and far below
// what a wrong rule or a dropped term produces (order 1).
//
//===----------------------------------------------------------------------===//

#include "test/reference/Interpreter.h"
#include "tg/Transforms/Passes.h"
#include "lib/import/Initializers.h"
#include "lib/import/OnnxImporter.h"
#include "tg/IR/TGDialect.h"
#include "tg/IR/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace mlir;
using hmcc::Tensor;
using hmcc::TensorMap;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

struct Context {
  MLIRContext context;
  std::string diagnostics;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  Context() {
    context.loadDialect<hmcc::tg::TGDialect, func::FuncDialect>();
    handler = std::make_unique<ScopedDiagnosticHandler>(&context, [this](Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return success();
    });
  }
};

/// Parses `text` and runs @f on `args`; fails the test on any error.
std::vector<Tensor> run(const std::string &text, const std::vector<Tensor> &args,
                        const TensorMap &params = {}, uint64_t seed = 0) {
  Context c;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &c.context);
  EXPECT_TRUE(module) << c.diagnostics;
  if (!module)
    return {};
  hmcc::Interpreter interpreter(seed);
  auto results = interpreter.run(*module, "f", args, params);
  EXPECT_TRUE(results) << interpreter.error();
  return results ? *results : std::vector<Tensor>{};
}

void expectNear(const Tensor &actual, const std::vector<int64_t> &shape,
                const std::vector<double> &expected, double tolerance = 1e-12) {
  ASSERT_EQ(actual.shape, shape);
  ASSERT_EQ(actual.values.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual.values[i], expected[i], tolerance) << "element " << i;
}

//===----------------------------------------------------------------------===//
// Ops against hand-computed values
//===----------------------------------------------------------------------===//

TEST(Interpreter, BroadcastAdd) {
  auto r = run(R"(
  func.func @f(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xf32>, %d: tensor<1x3xf32>)
      -> (tensor<2x3xf32>, tensor<2x3xf32>) {
    %0 = tg.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %1 = tg.add %c, %d : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
    return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
  })",
               {Tensor({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor({3}, {10, 20, 30}),
                Tensor({2, 1}, {1, 2}), Tensor({1, 3}, {10, 20, 30})});
  ASSERT_EQ(r.size(), 2u);
  expectNear(r[0], {2, 3}, {11, 22, 33, 14, 25, 36});
  expectNear(r[1], {2, 3}, {11, 21, 31, 12, 22, 32});
}

TEST(Interpreter, MatMul) {
  auto r = run(R"(
  func.func @f(%a: tensor<2x1x2xf32>, %b: tensor<2x3xf32>, %c: tensor<2x1x1x2xf32>,
               %d: tensor<3x2x1xf32>, %e: tensor<2xf32>)
      -> (tensor<2x1x3xf32>, tensor<2x3x1x1xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<f32>) {
    %0 = tg.matmul %a, %b : (tensor<2x1x2xf32>, tensor<2x3xf32>) -> tensor<2x1x3xf32>
    %1 = tg.matmul %c, %d : (tensor<2x1x1x2xf32>, tensor<3x2x1xf32>) -> tensor<2x3x1x1xf32>
    %2 = tg.matmul %b, %b {transB} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
    %3 = tg.matmul %e, %b : (tensor<2xf32>, tensor<2x3xf32>) -> tensor<3xf32>
    %4 = tg.matmul %e, %e : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>
    return %0, %1, %2, %3, %4 : tensor<2x1x3xf32>, tensor<2x3x1x1xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<f32>
  })",
               {Tensor({2, 1, 2}, {1, 2, 3, 4}), Tensor({2, 3}, {1, 2, 3, 4, 5, 6}),
                Tensor({2, 1, 1, 2}, {1, 2, 3, 4}), Tensor({3, 2, 1}, {1, 1, 2, 0, 0, -1}),
                Tensor({2}, {1, 2})});
  ASSERT_EQ(r.size(), 5u);
  // Batch 2 against one matrix: [1,2]·b and [3,4]·b.
  expectNear(r[0], {2, 1, 3}, {9, 12, 15, 19, 26, 33});
  // Batch [2,1] against [3]: every pair of rows and columns.
  expectNear(r[1], {2, 3, 1, 1}, {3, 2, -2, 7, 6, -4});
  expectNear(r[2], {2, 2}, {14, 32, 32, 77});
  expectNear(r[3], {3}, {9, 12, 15});
  expectNear(r[4], {}, {5});
}

TEST(Interpreter, Gemm) {
  // alpha * a^T b^T + beta * c with c a row.
  auto r = run(R"(
  func.func @f(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>, %c: tensor<2xf32>) -> tensor<2x2xf32> {
    %0 = tg.gemm %a, %b, %c {alpha = 2.0 : f32, beta = 0.5 : f32, transA, transB} : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
    return %0 : tensor<2x2xf32>
  })",
               {Tensor({2, 2}, {1, 2, 3, 4}), Tensor({2, 2}, {1, 0, 1, 1}), Tensor({2}, {2, 4})});
  // a^T = [[1,3],[2,4]], b^T = [[1,1],[0,1]], product [[1,4],[2,6]].
  expectNear(r[0], {2, 2}, {2 + 1, 8 + 2, 4 + 1, 12 + 2});
}

TEST(Interpreter, Softmax) {
  double l3 = std::log(3.0);
  auto r = run(R"(
  func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
    %0 = tg.softmax %x {axis = 1 : i64} : tensor<2x3xf32>
    %1 = tg.softmax %x {axis = 0 : i64} : tensor<2x3xf32>
    %2 = tg.log_softmax %x {axis = 1 : i64} : tensor<2x3xf32>
    return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  })",
               {Tensor({2, 3}, {0, std::log(2.0), l3, l3, 0, 0})});
  ASSERT_EQ(r.size(), 3u);
  expectNear(r[0], {2, 3}, {1.0 / 6, 2.0 / 6, 3.0 / 6, 3.0 / 5, 1.0 / 5, 1.0 / 5});
  expectNear(r[1], {2, 3}, {1.0 / 4, 2.0 / 3, 3.0 / 4, 3.0 / 4, 1.0 / 3, 1.0 / 4});
  expectNear(r[2], {2, 3},
             {std::log(1.0 / 6), std::log(2.0 / 6), std::log(3.0 / 6), std::log(3.0 / 5),
              std::log(1.0 / 5), std::log(1.0 / 5)});
}

TEST(Interpreter, LayerNorm) {
  // Row [1,2,3,4]: mean 2.5, variance 1.25; row [2,2,2,6]: mean 3, variance 3.
  auto r = run(R"(
  func.func @f(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>)
      -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
    %0, %m, %r = tg.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 0.0 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
    return %0, %m, %r : tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>
  })",
               {Tensor({2, 4}, {1, 2, 3, 4, 2, 2, 2, 6}), Tensor({4}, {1, 2, 1, 1}),
                Tensor({4}, {0, 0, 0, 1})});
  ASSERT_EQ(r.size(), 3u);
  double a = 1.0 / std::sqrt(1.25), b = 1.0 / std::sqrt(3.0);
  expectNear(r[0], {2, 4},
             {-1.5 * a, -0.5 * a * 2, 0.5 * a, 1.5 * a + 1, -b, -b * 2, -b, 3 * b + 1});
  expectNear(r[1], {2, 1}, {2.5, 3});
  expectNear(r[2], {2, 1}, {a, b});
}

TEST(Interpreter, CrossEntropyIgnoreIndex) {
  // Row 0: scores [0,0], label 1: -log(1/2). Row 1 ignored. Row 2: scores
  // [0, log 3], label 1: -log(3/4). Weights [1, 3] scale both by 3.
  std::string text = R"(
  func.func @f(%s: tensor<3x2xf32>, %t: tensor<3xi64>, %w: tensor<2xf32>)
      -> (tensor<f32>, tensor<f32>, tensor<3xf32>, tensor<f32>, tensor<3x2xf32>) {
    %0 = tg.softmax_cross_entropy_loss %s, %t {ignore_index = -100 : i64, reduction = "mean"} : (tensor<3x2xf32>, tensor<3xi64>) -> tensor<f32>
    %1 = tg.softmax_cross_entropy_loss %s, %t {ignore_index = -100 : i64, reduction = "sum"} : (tensor<3x2xf32>, tensor<3xi64>) -> tensor<f32>
    %2 = tg.softmax_cross_entropy_loss %s, %t {ignore_index = -100 : i64, reduction = "none"} : (tensor<3x2xf32>, tensor<3xi64>) -> tensor<3xf32>
    %3, %lp = tg.softmax_cross_entropy_loss %s, %t, %w {ignore_index = -100 : i64, reduction = "mean"} : (tensor<3x2xf32>, tensor<3xi64>, tensor<2xf32>) -> (tensor<f32>, tensor<3x2xf32>)
    return %0, %1, %2, %3, %lp : tensor<f32>, tensor<f32>, tensor<3xf32>, tensor<f32>, tensor<3x2xf32>
  })";
  double l2 = std::log(2.0), l43 = std::log(4.0 / 3.0);
  auto r = run(text, {Tensor({3, 2}, {0, 0, std::log(3.0), 0, 0, std::log(3.0)}),
                      Tensor({3}, {1, -100, 1}), Tensor({2}, {1, 3})});
  ASSERT_EQ(r.size(), 5u);
  expectNear(r[0], {}, {(l2 + l43) / 2});
  expectNear(r[1], {}, {l2 + l43});
  expectNear(r[2], {3}, {l2, 0, l43});
  expectNear(r[3], {}, {(3 * l2 + 3 * l43) / 6});
  expectNear(r[4], {3, 2},
             {-l2, -l2, std::log(0.75), std::log(0.25), std::log(0.25), std::log(0.75)});
}

TEST(Interpreter, GatherSliceTriluReduce) {
  auto r = run(R"(
  func.func @f(%x: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<3x2xf32>, tensor<3x4xf32>, tensor<f32>, tensor<3x1xf32>) {
    %i = tg.constant dense<[-1, 0]> : tensor<2xi64>
    %0 = tg.gather %x, %i {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
    %1 = tg.slice %x {axes = array<i64: 1>, ends = array<i64: 0>, starts = array<i64: 3>, steps = array<i64: -2>} : tensor<3x4xf32> -> tensor<3x2xf32>
    %2 = tg.trilu %x {k = 1 : i64, upper} : tensor<3x4xf32>
    %3 = tg.reduce_max %x {axes = array<i64>} : tensor<3x4xf32> -> tensor<f32>
    %4 = tg.reduce_mean %x {axes = array<i64: 1>, keepdims} : tensor<3x4xf32> -> tensor<3x1xf32>
    return %0, %1, %2, %3, %4 : tensor<2x4xf32>, tensor<3x2xf32>, tensor<3x4xf32>, tensor<f32>, tensor<3x1xf32>
  })",
               {Tensor({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})});
  ASSERT_EQ(r.size(), 5u);
  expectNear(r[0], {2, 4}, {8, 9, 10, 11, 0, 1, 2, 3});
  expectNear(r[1], {3, 2}, {3, 1, 7, 5, 11, 9});
  expectNear(r[2], {3, 4}, {0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11});
  expectNear(r[3], {}, {11});
  expectNear(r[4], {3, 1}, {1.5, 5.5, 9.5});
}

TEST(Interpreter, DropoutIsSeededAndRepeatable) {
  std::string text = R"(
  func.func @f(%x: tensor<1000xf32>) -> (tensor<1000xf32>, tensor<1000xi1>, tensor<1000xf32>) {
    %0, %m = tg.dropout %x {ratio = 0.25 : f32, training} : tensor<1000xf32> -> tensor<1000xi1>
    %1 = tg.dropout_grad %x, %m {ratio = 0.25 : f32} : tensor<1000xf32>, tensor<1000xi1>
    return %0, %m, %1 : tensor<1000xf32>, tensor<1000xi1>, tensor<1000xf32>
  })";
  Tensor ones = Tensor::filled({1000}, 1.0);
  auto a = run(text, {ones}, {}, 7), b = run(text, {ones}, {}, 7), c = run(text, {ones}, {}, 8);
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(a[1].values, b[1].values) << "same seed, same mask";
  EXPECT_NE(a[1].values, c[1].values) << "another seed, another mask";
  double kept = 0;
  for (int i = 0; i < 1000; ++i) {
    kept += a[1].values[i];
    EXPECT_EQ(a[0].values[i], a[1].values[i] / 0.75);
    EXPECT_EQ(a[2].values[i], a[0].values[i]);
  }
  EXPECT_NEAR(kept / 1000, 0.75, 0.05);
}

TEST(Interpreter, Errors) {
  Context c;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
  tg.parameter @w : tensor<2xf32> {source = "w"}
  func.func @g() -> tensor<2xf32> {
    %w = tg.param @w : tensor<2xf32>
    return %w : tensor<2xf32>
  }
  func.func @f() -> tensor<2xf32> {
    %0 = func.call @g() : () -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
  func.func @h(%i: tensor<1xi64>) -> tensor<1xf32> {
    %c = tg.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %0 = tg.gather %c, %i {axis = 0 : i64} : (tensor<2xf32>, tensor<1xi64>) -> tensor<1xf32>
    return %0 : tensor<1xf32>
  })",
                                                             &c.context);
  ASSERT_TRUE(module) << c.diagnostics;
  hmcc::Interpreter interpreter;
  EXPECT_FALSE(interpreter.run(*module, "f", {}, {}));
  EXPECT_NE(interpreter.error().find("func.call"), std::string::npos) << interpreter.error();
  EXPECT_FALSE(interpreter.run(*module, "g", {}, {}));
  EXPECT_NE(interpreter.error().find("@w"), std::string::npos) << interpreter.error();
  EXPECT_FALSE(interpreter.run(*module, "g", {}, {{"w", Tensor({3}, {1, 2, 3})}}));
  EXPECT_NE(interpreter.error().find("shape"), std::string::npos) << interpreter.error();
  EXPECT_FALSE(interpreter.run(*module, "h", {Tensor({1}, {2})}, {}));
  EXPECT_NE(interpreter.error().find("out of range"), std::string::npos) << interpreter.error();
  EXPECT_FALSE(interpreter.run(*module, "h", {Tensor({2}, {0, 1})}, {}));
  EXPECT_FALSE(interpreter.run(*module, "missing", {}, {}));
}

//===----------------------------------------------------------------------===//
// Parameters from ONNX files
//===----------------------------------------------------------------------===//

const std::string kFixtures = HMCC_FIXTURES_DIR;

TEST(Interpreter, ExternalDataParameter) {
  // W = arange(12).reshape(4, 3) / 10 in weights.bin; with x all ones the
  // loss reduce_sum(x W) is 13.2.
  Context c;
  std::string path = kFixtures + "/import/external_ok/model.onnx", error;
  auto module = hmcc::importOnnxModel(c.context, path, {}, error);
  ASSERT_TRUE(module) << error;
  auto params = hmcc::loadParameters(*module, path, error);
  ASSERT_TRUE(params) << error;
  ASSERT_EQ(params->count("W"), 1u);
  const Tensor &w = params->at("W");
  ASSERT_EQ(w.shape, (std::vector<int64_t>{4, 3}));
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(w.values[i], static_cast<double>(static_cast<float>(i / 10.0)));
  // The directory works too: tg.source names the file.
  auto again = hmcc::loadParameters(*module, kFixtures + "/import/external_ok", error);
  ASSERT_TRUE(again) << error;
  EXPECT_EQ(again->at("W").values, w.values);

  hmcc::Interpreter interpreter;
  auto loss = interpreter.run(*module, "forward", {Tensor::filled({2, 4}, 1.0)}, *params);
  ASSERT_TRUE(loss) << interpreter.error();
  EXPECT_NEAR((*loss)[0].values[0], 13.2, 1e-6);
}

//===----------------------------------------------------------------------===//
// End to end against PyTorch
//===----------------------------------------------------------------------===//

/// Reads a NumPy 1.0/2.0 file of little-endian float32, float64, int64 or
/// int32 in C order.
std::optional<Tensor> readNpy(const std::string &path, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    error = path + ": not a .npy file";
    return std::nullopt;
  }
  int major = static_cast<unsigned char>(bytes[6]);
  size_t headerLength, offset;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(bytes[8]) |
                   static_cast<unsigned char>(bytes[9]) << 8;
    offset = 10;
  } else {
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength = headerLength << 8 | static_cast<unsigned char>(bytes[8 + i]);
    offset = 12;
  }
  std::string header = bytes.substr(offset, headerLength);
  auto field = [&](const std::string &key) {
    size_t at = header.find("'" + key + "':");
    return at == std::string::npos ? std::string() : header.substr(at + key.size() + 3);
  };
  std::string descr = field("descr"), fortran = field("fortran_order"), shapeText = field("shape");
  if (fortran.find("False") != 1 && fortran.find("False") != 0) {
    error = path + ": Fortran order is not supported";
    return std::nullopt;
  }
  std::string type = descr.substr(descr.find('\'') + 1, 3);
  Tensor t;
  std::string dims = shapeText.substr(shapeText.find('(') + 1);
  dims = dims.substr(0, dims.find(')'));
  std::istringstream dimStream(dims);
  std::string dim;
  while (std::getline(dimStream, dim, ','))
    if (dim.find_first_not_of(' ') != std::string::npos)
      t.shape.push_back(std::stoll(dim));
  int64_t n = Tensor::filled(t.shape).size();
  const char *data = bytes.data() + offset + headerLength;
  size_t width = type == "<f4" || type == "<i4" ? 4 : 8;
  if (!(type == "<f4" || type == "<f8" || type == "<i8" || type == "<i4") ||
      bytes.size() != offset + headerLength + n * width) {
    error = path + ": unsupported dtype '" + type + "' or wrong size";
    return std::nullopt;
  }
  t.values.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    const char *p = data + i * width;
    if (type == "<f4") {
      float v;
      std::memcpy(&v, p, 4);
      t.values[i] = v;
    } else if (type == "<f8") {
      std::memcpy(&t.values[i], p, 8);
    } else if (type == "<i8") {
      int64_t v;
      std::memcpy(&v, p, 8);
      t.values[i] = static_cast<double>(v);
    } else {
      int32_t v;
      std::memcpy(&v, p, 4);
      t.values[i] = v;
    }
  }
  return t;
}

/// max |a - b| / max(max |b|, tiny): the error relative to the reference's
/// scale, per tensor.
double relativeError(const std::vector<double> &a, const std::vector<double> &b) {
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return diff / std::max(scale, 1e-30);
}

constexpr double kFixtureTolerance = 1e-4;

void checkFixture(const std::string &name, const std::vector<std::string> &frozen = {}) {
  std::string dir = kFixtures + "/" + name, error;
  std::ifstream referenceFile(dir + "/reference.json");
  ASSERT_TRUE(referenceFile) << dir;
  nlohmann::json reference = nlohmann::json::parse(referenceFile);

  Context c;
  hmcc::ImportOptions options;
  options.frozen = frozen;
  auto module = hmcc::importOnnxModel(c.context, dir + "/model.onnx", options, error);
  ASSERT_TRUE(module) << error;
  auto params = hmcc::loadParameters(*module, dir + "/model.onnx", error);
  ASSERT_TRUE(params) << error;
  PassManager pm(&c.context);
  pm.addPass(hmcc::createTGAutodiff());
  ASSERT_TRUE(succeeded(pm.run(*module))) << c.diagnostics;

  auto func = module->lookupSymbol<func::FuncOp>("forward_backward");
  ASSERT_TRUE(func);
  std::vector<Tensor> args;
  for (unsigned k = 0; k < func.getNumArguments(); ++k) {
    auto input = func.getArgAttrOfType<StringAttr>(k, "tg.input");
    ASSERT_TRUE(input);
    auto t = readNpy(dir + "/inputs/" + input.str() + ".npy", error);
    ASSERT_TRUE(t) << error;
    args.push_back(*t);
  }
  hmcc::Interpreter interpreter;
  auto results = interpreter.run(func, args, *params);
  ASSERT_TRUE(results) << interpreter.error();

  double lossError = relativeError((*results)[0].values, {reference["loss"].get<double>()});
  EXPECT_LE(lossError, kFixtureTolerance) << "loss " << (*results)[0].values[0] << " vs "
                                          << reference["loss"].get<double>();
  double worst = lossError;
  std::string worstName = "loss";
  size_t compared = 0;
  for (unsigned k = 1; k < func.getNumResults(); ++k) {
    auto of = func.getResultAttrOfType<FlatSymbolRefAttr>(k, "tg.grad_of");
    ASSERT_TRUE(of) << "result " << k << " has no tg.grad_of";
    std::string param = of.getValue().str(), file = param;
    for (char &ch : file)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_' && ch != '-')
        ch = '_';
    ASSERT_TRUE(reference["gradients"].contains(param)) << param << " has no reference gradient";
    auto expected = readNpy(dir + "/grads/" + file + ".npy", error);
    ASSERT_TRUE(expected) << error;
    const Tensor &actual = (*results)[k];
    ASSERT_EQ(actual.shape, expected->shape) << param;
    double e = relativeError(actual.values, expected->values);
    EXPECT_LE(e, kFixtureTolerance) << "d loss / d " << param;
    if (e > worst) {
      worst = e;
      worstName = param;
    }
    ++compared;
  }
  EXPECT_EQ(compared, reference["gradients"].size()) << "every PyTorch gradient is compared";
  std::printf("[ fixture  ] %s: loss %.9g (PyTorch %.9g), %zu gradients, worst relative "
              "error %.3g (%s)\n",
              name.c_str(), (*results)[0].values[0], reference["loss"].get<double>(), compared,
              worst, worstName.c_str());
}

TEST(InterpreterVsPyTorch, Mlp) { checkFixture("mlp"); }
TEST(InterpreterVsPyTorch, Gpt2) { checkFixture("gpt2"); }
TEST(InterpreterVsPyTorch, Llama) { checkFixture("llama", {"rope_*"}); }

} // namespace
