//===- AutodiffTest.cpp - every vjp rule against finite differences -------===//
//
// Each test writes a tiny module whose tg.parameters feed one op (or a short
// chain) and whose loss is reduce_sum(op(...) * W) for fixed random W, so
// that every output element matters with its own weight. tg-autodiff builds
// @forward_backward; the interpreter evaluates its gradients and, by central
// differences, the gradients of @forward; both in double precision.
//
// Tolerance: with h = 1e-6 the central difference has a truncation error of
// about h^2/6 * f''' ~ 1e-13 and a rounding error of about
// eps * |loss| / h ~ 1e-16 * 10 / 1e-6 = 1e-9, while the gradients here are
// of order 0.1 to 10. A relative error (max |ad - fd| / max |fd|, per
// parameter) of 1e-6 thus leaves a margin of about 100 over the FD noise, and
// any wrong rule (a missing term, a transposed operand, a dropped broadcast
// sum) is off by far more.
//
//===----------------------------------------------------------------------===//

#include "test/reference/Interpreter.h"
#include "tg/Transforms/Passes.h"
#include "tg/IR/TGDialect.h"
#include "tg/IR/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <sstream>

using namespace mlir;
using hmcc::Tensor;
using hmcc::TensorMap;

namespace {

constexpr double kStep = 1e-6;
constexpr double kTolerance = 1e-6;

/// Uniform in [0, 1), the same on every platform.
double uniform(std::mt19937_64 &gen) { return static_cast<double>(gen() >> 11) * 0x1.0p-53; }

/// Shape and element type of "tensor<2x3xf32>".
std::pair<std::vector<int64_t>, std::string> parseType(StringRef type) {
  StringRef inner = type.trim().drop_front(strlen("tensor<")).drop_back();
  SmallVector<StringRef> parts;
  inner.split(parts, 'x');
  std::vector<int64_t> shape;
  for (size_t i = 0; i + 1 < parts.size(); ++i)
    shape.push_back(std::stoll(parts[i].str()));
  return {shape, parts.back().str()};
}

/// A dense<...> literal of `values` in the nesting of `shape`.
std::string denseLiteral(const std::vector<int64_t> &shape, const std::vector<double> &values,
                         size_t dim, size_t &pos) {
  if (dim == shape.size()) {
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", values[pos++]);
    return buf;
  }
  std::string s = "[";
  for (int64_t i = 0; i < shape[dim]; ++i)
    s += (i ? ", " : "") + denseLiteral(shape, values, dim + 1, pos);
  return s + "]";
}

/// Replaces each line `LOSS %a : tensor<...>, %b : tensor<...>` by
/// loss = sum_k reduce_sum(%k * W_k) with fixed random W_k and a return.
std::string expandLoss(const std::string &text, std::mt19937_64 &gen) {
  std::istringstream in(text);
  std::string line, out;
  int counter = 0;
  while (std::getline(in, line)) {
    StringRef l = StringRef(line).trim();
    if (!l.consume_front("LOSS")) {
      out += line + "\n";
      continue;
    }
    SmallVector<StringRef> terms;
    l.split(terms, ", %");
    std::string total, element;
    for (StringRef term : terms) {
      auto [name, type] = term.trim().ltrim("%").split(':');
      auto [shape, elem] = parseType(type);
      element = elem;
      std::string t = type.trim().str(), s = "tensor<" + elem + ">", k = std::to_string(counter++);
      std::vector<double> w;
      for (int64_t i = 0, n = hmcc::Tensor::filled(shape).size(); i < n; ++i)
        w.push_back(2.0 * uniform(gen) - 1.0);
      size_t pos = 0;
      out += "    %lw" + k + " = tg.constant dense<" + denseLiteral(shape, w, 0, pos) +
             "> : " + t + "\n";
      out += "    %lp" + k + " = tg.mul %" + name.trim().str() + ", %lw" + k + " : (" + t +
             ", " + t + ") -> " + t + "\n";
      out += "    %ls" + k + " = tg.reduce_sum %lp" + k + " {axes = array<i64>} : " + t +
             " -> " + s + "\n";
      if (total.empty()) {
        total = "%ls" + k;
      } else {
        out += "    %lt" + k + " = tg.add " + total + ", %ls" + k + " : (" + s + ", " + s +
               ") -> " + s + "\n";
        total = "%lt" + k;
      }
    }
    out += "    return " + total + " : tensor<" + element + ">\n";
  }
  return out;
}

struct Options {
  /// Value ranges [lo, hi) per parameter; the default draws magnitudes in
  /// [0.2, 1) with a random sign (away from relu's kink at 0).
  std::map<std::string, std::pair<double, double>> ranges;
  /// Exact values for some parameters.
  TensorMap values;
  /// Arguments of @forward (data inputs, which get no gradient).
  std::vector<Tensor> args;
  /// Parameters whose gradient is expected to be zero everywhere.
  std::set<std::string> zero;
};

double maxAbs(const std::vector<double> &v) {
  double m = 0.0;
  for (double x : v)
    m = std::max(m, std::fabs(x));
  return m;
}

/// Builds @forward_backward for `body` and compares every gradient with
/// central differences of @forward. `body` holds the tg.parameter
/// declarations and @forward, with LOSS lines (see expandLoss).
void checkGradients(const std::string &body, const Options &options = {}) {
  std::mt19937_64 gen(12345);
  std::string text = "module {\n" + expandLoss(body, gen) + "}\n";

  MLIRContext context;
  context.loadDialect<hmcc::tg::TGDialect, func::FuncDialect>();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module) << diagnostics << "\n" << text;
  PassManager pm(&context);
  pm.addPass(hmcc::createTGAutodiff());
  ASSERT_TRUE(succeeded(pm.run(*module))) << diagnostics << "\n" << text;

  TensorMap params;
  std::vector<std::string> names;
  for (auto p : module->getOps<hmcc::tg::ParameterOp>()) {
    std::string name = p.getSymName().str();
    names.push_back(name);
    auto type = cast<RankedTensorType>(p.getType());
    Tensor t = Tensor::filled({type.getShape().begin(), type.getShape().end()});
    auto range = options.ranges.find(name);
    for (double &v : t.values) {
      if (range != options.ranges.end()) {
        v = range->second.first + (range->second.second - range->second.first) * uniform(gen);
      } else {
        double magnitude = 0.2 + 0.8 * uniform(gen);
        v = uniform(gen) < 0.5 ? -magnitude : magnitude;
      }
    }
    if (auto it = options.values.find(name); it != options.values.end())
      t = it->second;
    params[name] = t;
  }

  hmcc::Interpreter interpreter(/*dropoutSeed=*/42);
  auto fb = interpreter.run(*module, "forward_backward", options.args, params);
  ASSERT_TRUE(fb) << interpreter.error();
  ASSERT_EQ(fb->size(), names.size() + 1);
  auto forward = [&](const TensorMap &p) {
    auto r = interpreter.run(*module, "forward", options.args, p);
    EXPECT_TRUE(r) << interpreter.error();
    return r ? (*r)[0].values[0] : std::nan("");
  };
  double loss = forward(params);
  EXPECT_EQ((*fb)[0].values[0], loss) << "@forward_backward's loss differs from @forward's";

  for (size_t j = 0; j < names.size(); ++j) {
    const std::string &name = names[j];
    const Tensor &ad = (*fb)[j + 1];
    ASSERT_EQ(ad.shape, params[name].shape) << name;
    std::vector<double> fd(ad.size());
    TensorMap p = params;
    for (int64_t i = 0; i < ad.size(); ++i) {
      double x = params[name].values[i];
      p[name].values[i] = x + kStep;
      double plus = forward(p);
      p[name].values[i] = x - kStep;
      double minus = forward(p);
      p[name].values[i] = x;
      fd[i] = (plus - minus) / (2.0 * kStep);
    }
    double diff = 0.0;
    for (int64_t i = 0; i < ad.size(); ++i)
      diff = std::max(diff, std::fabs(ad.values[i] - fd[i]));
    double scale = maxAbs(fd);
    if (options.zero.count(name)) {
      EXPECT_EQ(maxAbs(ad.values), 0.0) << "gradient of @" << name << " should be zero";
      EXPECT_LT(scale, 1e-9) << "@" << name << " does matter to the loss";
      continue;
    }
    // A gradient that is zero everywhere would make the check vacuous.
    EXPECT_GT(scale, 1e-3) << "the loss barely depends on @" << name;
    double relative = diff / std::max(scale, 1e-300);
    std::string detail;
    if (relative > kTolerance) {
      llvm::raw_string_ostream os(detail);
      os << "\n  autodiff:";
      for (double v : ad.values)
        os << " " << v;
      os << "\n  central differences:";
      for (double v : fd)
        os << " " << v;
      os << "\n" << text;
    }
    EXPECT_LE(relative, kTolerance) << "d loss / d @" << name << detail;
  }
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST(AutodiffFD, AddSubWithBroadcast) {
  for (const char *op : {"add", "sub"})
    checkGradients(std::string(R"(
  tg.parameter @a : tensor<2x3xf32> {source = "a"}
  tg.parameter @b : tensor<3xf32> {source = "b"}
  tg.parameter @c : tensor<2x1xf32> {source = "c"}
  func.func @forward() -> tensor<f32> {
    %a = tg.param @a : tensor<2x3xf32>
    %b = tg.param @b : tensor<3xf32>
    %c = tg.param @c : tensor<2x1xf32>
    %0 = tg.)") + op + R"( %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %1 = tg.)" + op + R"( %c, %0 : (tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    LOSS %1 : tensor<2x3xf32>
  })");
}

TEST(AutodiffFD, MulWithBroadcastAndSquare) {
  checkGradients(R"(
  tg.parameter @a : tensor<2x3xf32> {source = "a"}
  tg.parameter @b : tensor<2x1xf32> {source = "b"}
  func.func @forward() -> tensor<f32> {
    %a = tg.param @a : tensor<2x3xf32>
    %b = tg.param @b : tensor<2x1xf32>
    %0 = tg.mul %a, %b : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
    %1 = tg.mul %0, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %2 = tg.mul %b, %b : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
    %3 = tg.add %1, %2 : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
    LOSS %3 : tensor<2x3xf32>
  })");
}

TEST(AutodiffFD, DivWithBroadcast) {
  Options o;
  o.ranges["b"] = {0.5, 2.0};
  checkGradients(R"(
  tg.parameter @a : tensor<2x3xf32> {source = "a"}
  tg.parameter @b : tensor<3xf32> {source = "b"}
  func.func @forward() -> tensor<f32> {
    %a = tg.param @a : tensor<2x3xf32>
    %b = tg.param @b : tensor<3xf32>
    %0 = tg.div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    LOSS %0 : tensor<2x3xf32>
  })", o);
}

TEST(AutodiffFD, Pow) {
  Options o;
  o.ranges["a"] = {0.5, 2.0};
  o.ranges["b"] = {-2.0, 3.0};
  checkGradients(R"(
  tg.parameter @a : tensor<2x3xf32> {source = "a"}
  tg.parameter @b : tensor<3xf32> {source = "b"}
  func.func @forward() -> tensor<f32> {
    %a = tg.param @a : tensor<2x3xf32>
    %b = tg.param @b : tensor<3xf32>
    %0 = tg.pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    LOSS %0 : tensor<2x3xf32>
  })", o);
  // An integer exponent (RMSNorm's x^2 exports with a float one; ONNX allows
  // either) and a constant float exponent.
  checkGradients(R"(
  tg.parameter @a : tensor<2x3xf32> {source = "a"}
  func.func @forward() -> tensor<f32> {
    %a = tg.param @a : tensor<2x3xf32>
    %c3 = tg.constant dense<3> : tensor<i64>
    %0 = tg.pow %a, %c3 : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
    %c2 = tg.constant dense<2.0> : tensor<f32>
    %1 = tg.pow %0, %c2 : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    LOSS %1 : tensor<2x3xf32>
  })");
}

/// One unary op on a parameter of shape 2x3.
std::string unaryCase(const std::string &op) {
  return R"(
  tg.parameter @x : tensor<2x3xf32> {source = "x"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x3xf32>
    %0 = tg.)" + op + R"( %x : tensor<2x3xf32>
    LOSS %0 : tensor<2x3xf32>
  })";
}

TEST(AutodiffFD, Sqrt) {
  Options o;
  o.ranges["x"] = {0.3, 2.0};
  checkGradients(unaryCase("sqrt"), o);
}

TEST(AutodiffFD, Reciprocal) { checkGradients(unaryCase("reciprocal")); }
TEST(AutodiffFD, Neg) { checkGradients(unaryCase("neg")); }
TEST(AutodiffFD, Exp) { checkGradients(unaryCase("exp")); }

TEST(AutodiffFD, Log) {
  Options o;
  o.ranges["x"] = {0.3, 2.0};
  checkGradients(unaryCase("log"), o);
}

TEST(AutodiffFD, Tanh) { checkGradients(unaryCase("tanh")); }
TEST(AutodiffFD, Sigmoid) { checkGradients(unaryCase("sigmoid")); }
TEST(AutodiffFD, Erf) { checkGradients(unaryCase("erf")); }
// Values have magnitudes of at least 0.2, so no element sits at relu's kink.
TEST(AutodiffFD, Relu) { checkGradients(unaryCase("relu")); }
TEST(AutodiffFD, Identity) { checkGradients(unaryCase("identity")); }

TEST(AutodiffFD, Cast) {
  // f32 -> f64 -> f32: the interpreter does not round, so both directions
  // are smooth.
  checkGradients(R"(
  tg.parameter @x : tensor<2x3xf32> {source = "x"}
  func.func @forward() -> tensor<f64> {
    %x = tg.param @x : tensor<2x3xf32>
    %0 = tg.cast %x : tensor<2x3xf32> to tensor<2x3xf64>
    %1 = tg.exp %0 : tensor<2x3xf64>
    LOSS %1 : tensor<2x3xf64>
  })");
  checkGradients(R"(
  tg.parameter @x : tensor<2x3xf64> {source = "x"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x3xf64>
    %0 = tg.cast %x : tensor<2x3xf64> to tensor<2x3xf32>
    %1 = tg.tanh %0 : tensor<2x3xf32>
    LOSS %1 : tensor<2x3xf32>
  })");
}

TEST(AutodiffFD, Dropout) {
  // Ratio 0 in training, and ratio 0.5 outside training: both the identity.
  checkGradients(R"(
  tg.parameter @x : tensor<4x5xf32> {source = "x"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<4x5xf32>
    %0, %m0 = tg.dropout %x {ratio = 0.0 : f32, training} : tensor<4x5xf32> -> tensor<4x5xi1>
    %1, %m1 = tg.dropout %0 {ratio = 0.5 : f32} : tensor<4x5xf32> -> tensor<4x5xi1>
    LOSS %1 : tensor<4x5xf32>
  })");
  // Ratio > 0 in training: the interpreter's seeded masks are the same in
  // every run, so the loss is a smooth function of x; one op with its own
  // seed, one drawing from the interpreter's stream.
  checkGradients(R"(
  tg.parameter @x : tensor<4x5xf32> {source = "x"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<4x5xf32>
    %0, %m0 = tg.dropout %x {ratio = 0.5 : f32, seed = 7 : i64, training} : tensor<4x5xf32> -> tensor<4x5xi1>
    %1, %m1 = tg.dropout %0 {ratio = 0.25 : f32, training} : tensor<4x5xf32> -> tensor<4x5xi1>
    LOSS %1 : tensor<4x5xf32>
  })");
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

/// loss = LOSS(matmul(a, b)) for the given shapes.
std::string matmulCase(const std::string &a, const std::string &b, const std::string &r) {
  return R"(
  tg.parameter @a : tensor<)" + a + R"(xf32> {source = "a"}
  tg.parameter @b : tensor<)" + b + R"(xf32> {source = "b"}
  func.func @forward() -> tensor<f32> {
    %a = tg.param @a : tensor<)" + a + R"(xf32>
    %b = tg.param @b : tensor<)" + b + R"(xf32>
    %0 = tg.matmul %a, %b : (tensor<)" + a + "xf32>, tensor<" + b + "xf32>) -> tensor<" + r +
         R"(f32>
    LOSS %0 : tensor<)" + r + R"(f32>
  })";
}

TEST(AutodiffFD, MatMul2D) { checkGradients(matmulCase("3x4", "4x5", "3x5x")); }
TEST(AutodiffFD, MatMulBatchedBroadcast) {
  checkGradients(matmulCase("2x1x3x4", "3x4x5", "2x3x3x5x"));
  checkGradients(matmulCase("2x3x4", "4x5", "2x3x5x"));
}
TEST(AutodiffFD, MatMul1DLhs) {
  checkGradients(matmulCase("4", "4x5", "5x"));
  checkGradients(matmulCase("4", "2x4x5", "2x5x"));
}
TEST(AutodiffFD, MatMul1DRhs) {
  checkGradients(matmulCase("3x4", "4", "3x"));
  checkGradients(matmulCase("2x3x4", "4", "2x3x"));
}
TEST(AutodiffFD, MatMulBoth1D) { checkGradients(matmulCase("4", "4", "")); }

TEST(AutodiffFD, MatMulWithDataInput) {
  // The data input gets no gradient; the parameter does.
  Options o;
  Tensor x = Tensor::filled({3, 4});
  for (int64_t i = 0; i < x.size(); ++i)
    x.values[i] = 0.1 * static_cast<double>(i) - 0.5;
  o.args = {x};
  checkGradients(R"(
  tg.parameter @w : tensor<4x2xf32> {source = "w"}
  func.func @forward(%x: tensor<3x4xf32>) -> tensor<f32> {
    %w = tg.param @w : tensor<4x2xf32>
    %0 = tg.matmul %x, %w : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
    %1 = tg.tanh %0 : tensor<3x2xf32>
    LOSS %1 : tensor<3x2xf32>
  })", o);
}

TEST(AutodiffFD, Gemm) {
  struct Variant {
    bool ta, tb;
  };
  for (Variant v : {Variant{false, false}, Variant{true, false}, Variant{false, true},
                    Variant{true, true}}) {
    std::string a = v.ta ? "4x3" : "3x4", b = v.tb ? "5x4" : "4x5";
    std::string trans = std::string(v.ta ? ", transA" : "") + (v.tb ? ", transB" : "");
    // Without c, alpha = 1 (the default).
    checkGradients(R"(
  tg.parameter @a : tensor<)" + a + R"(xf32> {source = "a"}
  tg.parameter @b : tensor<)" + b + R"(xf32> {source = "b"}
  func.func @forward() -> tensor<f32> {
    %a = tg.param @a : tensor<)" + a + R"(xf32>
    %b = tg.param @b : tensor<)" + b + R"(xf32>
    %0 = tg.gemm %a, %b {alpha = 1.0 : f32)" + trans + R"(} : (tensor<)" + a +
                   "xf32>, tensor<" + b + R"(xf32>) -> tensor<3x5xf32>
    LOSS %0 : tensor<3x5xf32>
  })");
    // With c of each broadcastable shape, alpha and beta != 1.
    for (std::string c : {"5", "3x1", "3x5", ""}) {
      std::string ct = "tensor<" + c + (c.empty() ? "" : "x") + "f32>";
      checkGradients(R"(
  tg.parameter @a : tensor<)" + a + R"(xf32> {source = "a"}
  tg.parameter @b : tensor<)" + b + R"(xf32> {source = "b"}
  tg.parameter @c : )" + ct + R"( {source = "c"}
  func.func @forward() -> tensor<f32> {
    %a = tg.param @a : tensor<)" + a + R"(xf32>
    %b = tg.param @b : tensor<)" + b + R"(xf32>
    %c = tg.param @c : )" + ct + R"(
    %0 = tg.gemm %a, %b, %c {alpha = 0.5 : f32, beta = 2.0 : f32)" + trans +
                     R"(} : (tensor<)" + a + "xf32>, tensor<" + b + "xf32>, " + ct +
                     R"() -> tensor<3x5xf32>
    LOSS %0 : tensor<3x5xf32>
  })");
    }
  }
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

TEST(AutodiffFD, Transpose) {
  checkGradients(R"(
  tg.parameter @x : tensor<2x3x4xf32> {source = "x"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x3x4xf32>
    %0 = tg.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
    LOSS %0 : tensor<4x2x3xf32>
  })");
}

TEST(AutodiffFD, ReshapeFlattenSqueezeUnsqueeze) {
  checkGradients(R"(
  tg.parameter @x : tensor<2x3x4xf32> {source = "x"}
  tg.parameter @y : tensor<2x1x3xf32> {source = "y"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x3x4xf32>
    %y = tg.param @y : tensor<2x1x3xf32>
    %0 = tg.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
    %1 = tg.flatten %x {axis = 1 : i64} : tensor<2x3x4xf32> -> tensor<2x12xf32>
    %2 = tg.flatten %x {axis = 0 : i64} : tensor<2x3x4xf32> -> tensor<1x24xf32>
    %3 = tg.squeeze %y {axes = array<i64: 1>} : tensor<2x1x3xf32> -> tensor<2x3xf32>
    %4 = tg.unsqueeze %3 {axes = array<i64: 0, 3>} : tensor<2x3xf32> -> tensor<1x2x3x1xf32>
    %5 = tg.exp %0 : tensor<6x4xf32>
    LOSS %5 : tensor<6x4xf32>, %1 : tensor<2x12xf32>, %2 : tensor<1x24xf32>, %4 : tensor<1x2x3x1xf32>
  })");
}

TEST(AutodiffFD, Expand) {
  checkGradients(R"(
  tg.parameter @x : tensor<3x1xf32> {source = "x"}
  tg.parameter @s : tensor<f32> {source = "s"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<3x1xf32>
    %s = tg.param @s : tensor<f32>
    %0 = tg.expand %x : tensor<3x1xf32> -> tensor<2x3x4xf32>
    %1 = tg.expand %s : tensor<f32> -> tensor<2x2xf32>
    LOSS %0 : tensor<2x3x4xf32>, %1 : tensor<2x2xf32>
  })");
}

TEST(AutodiffFD, Concat) {
  checkGradients(R"(
  tg.parameter @a : tensor<2x1xf32> {source = "a"}
  tg.parameter @c : tensor<2x3xf32> {source = "c"}
  func.func @forward() -> tensor<f32> {
    %a = tg.param @a : tensor<2x1xf32>
    %b = tg.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    %c = tg.param @c : tensor<2x3xf32>
    %0 = tg.concat %a, %b, %c, %a {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x7xf32>
    %1 = tg.concat %c, %c {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    LOSS %0 : tensor<2x7xf32>, %1 : tensor<4x3xf32>
  })");
}

TEST(AutodiffFD, SplitWithUnusedResult) {
  checkGradients(R"(
  tg.parameter @x : tensor<2x6xf32> {source = "x"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x6xf32>
    %0, %1, %2 = tg.split %x {axis = 1 : i64, sizes = array<i64: 1, 2, 3>} : tensor<2x6xf32> -> (tensor<2x1xf32>, tensor<2x2xf32>, tensor<2x3xf32>)
    LOSS %0 : tensor<2x1xf32>, %2 : tensor<2x3xf32>
  })");
}

TEST(AutodiffFD, Slice) {
  // Positive steps on two axes; a negative step (rows 3, 1) with a positive
  // one (columns 1, 3, 5); the same parameter sliced twice.
  checkGradients(R"(
  tg.parameter @x : tensor<4x6xf32> {source = "x"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<4x6xf32>
    %0 = tg.slice %x {axes = array<i64: 0, 1>, ends = array<i64: 3, 5>, starts = array<i64: 1, 0>, steps = array<i64: 1, 2>} : tensor<4x6xf32> -> tensor<2x3xf32>
    %1 = tg.slice %x {axes = array<i64: 0, 1>, ends = array<i64: -1, 6>, starts = array<i64: 3, 1>, steps = array<i64: -2, 2>} : tensor<4x6xf32> -> tensor<2x3xf32>
    %2 = tg.slice %x {axes = array<i64: 1>, ends = array<i64: -1>, starts = array<i64: 5>, steps = array<i64: -1>} : tensor<4x6xf32> -> tensor<4x6xf32>
    LOSS %0 : tensor<2x3xf32>, %1 : tensor<2x3xf32>, %2 : tensor<4x6xf32>
  })");
}

TEST(AutodiffFD, Gather) {
  // Axis 0 with a repeated and a negative index (an embedding), axis 1 with
  // a repeated index.
  checkGradients(R"(
  tg.parameter @x : tensor<4x3xf32> {source = "x"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<4x3xf32>
    %i = tg.constant dense<[[0, 2], [2, -1]]> : tensor<2x2xi64>
    %0 = tg.gather %x, %i {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
    %j = tg.constant dense<[1, 1, 0]> : tensor<3xi32>
    %1 = tg.gather %x, %j {axis = 1 : i64} : (tensor<4x3xf32>, tensor<3xi32>) -> tensor<4x3xf32>
    LOSS %0 : tensor<2x2x3xf32>, %1 : tensor<4x3xf32>
  })");
}

TEST(AutodiffFD, Where) {
  checkGradients(R"(
  tg.parameter @x : tensor<2x3xf32> {source = "x"}
  tg.parameter @y : tensor<3xf32> {source = "y"}
  tg.parameter @s : tensor<f32> {source = "s"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x3xf32>
    %y = tg.param @y : tensor<3xf32>
    %s = tg.param @s : tensor<f32>
    %c = tg.constant dense<[[true, false, true]]> : tensor<1x3xi1>
    %0 = tg.where %c, %x, %y : (tensor<1x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %d = tg.constant dense<[[true], [false]]> : tensor<2x1xi1>
    %1 = tg.where %d, %s, %x : (tensor<2x1xi1>, tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    LOSS %0 : tensor<2x3xf32>, %1 : tensor<2x3xf32>
  })");
}

TEST(AutodiffFD, Trilu) {
  checkGradients(R"(
  tg.parameter @x : tensor<2x3x4xf32> {source = "x"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x3x4xf32>
    %0 = tg.trilu %x {k = 0 : i64} : tensor<2x3x4xf32>
    %1 = tg.trilu %x {k = 1 : i64, upper} : tensor<2x3x4xf32>
    %2 = tg.trilu %x {k = -1 : i64} : tensor<2x3x4xf32>
    LOSS %0 : tensor<2x3x4xf32>, %1 : tensor<2x3x4xf32>, %2 : tensor<2x3x4xf32>
  })");
}

//===----------------------------------------------------------------------===//
// Reductions and normalisations
//===----------------------------------------------------------------------===//

TEST(AutodiffFD, ReduceSum) {
  checkGradients(R"(
  tg.parameter @x : tensor<2x3x4xf32> {source = "x"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x3x4xf32>
    %e = tg.exp %x : tensor<2x3x4xf32>
    %0 = tg.reduce_sum %e {axes = array<i64: 1>, keepdims} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
    %1 = tg.reduce_sum %x {axes = array<i64: 0, 2>} : tensor<2x3x4xf32> -> tensor<3xf32>
    %2 = tg.reduce_sum %e {axes = array<i64>, keepdims} : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
    LOSS %0 : tensor<2x1x4xf32>, %1 : tensor<3xf32>, %2 : tensor<1x1x1xf32>
  })");
}

TEST(AutodiffFD, ReduceMean) {
  checkGradients(R"(
  tg.parameter @x : tensor<2x3x4xf32> {source = "x"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x3x4xf32>
    %e = tg.exp %x : tensor<2x3x4xf32>
    %0 = tg.reduce_mean %e {axes = array<i64: 2>, keepdims} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
    %1 = tg.reduce_mean %x {axes = array<i64: 0, 1>} : tensor<2x3x4xf32> -> tensor<4xf32>
    %2 = tg.reduce_mean %e {axes = array<i64>} : tensor<2x3x4xf32> -> tensor<f32>
    LOSS %0 : tensor<2x3x1xf32>, %1 : tensor<4xf32>, %2 : tensor<f32>
  })");
}

TEST(AutodiffFD, ReduceMax) {
  // Random values: no ties, and the maxima lead by far more than the step.
  checkGradients(R"(
  tg.parameter @x : tensor<2x3x4xf32> {source = "x"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x3x4xf32>
    %0 = tg.reduce_max %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
    %1 = tg.reduce_max %x {axes = array<i64: 0, 2>, keepdims} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
    %2 = tg.reduce_max %x {axes = array<i64>} : tensor<2x3x4xf32> -> tensor<f32>
    LOSS %0 : tensor<2x4xf32>, %1 : tensor<1x3x1xf32>, %2 : tensor<f32>
  })");
}

TEST(AutodiffFD, SoftmaxEveryAxis) {
  for (const char *op : {"softmax", "log_softmax"})
    for (int axis = 0; axis < 3; ++axis)
      checkGradients(std::string(R"(
  tg.parameter @x : tensor<2x3x4xf32> {source = "x"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x3x4xf32>
    %0 = tg.)") + op + " %x {axis = " + std::to_string(axis) + R"( : i64} : tensor<2x3x4xf32>
    LOSS %0 : tensor<2x3x4xf32>
  })");
}

TEST(AutodiffFD, LayerNorm) {
  // Axis last and second-to-last, with and without bias.
  checkGradients(R"(
  tg.parameter @x : tensor<2x3x4xf32> {source = "x"}
  tg.parameter @g : tensor<4xf32> {source = "g"}
  tg.parameter @b : tensor<4xf32> {source = "b"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x3x4xf32>
    %g = tg.param @g : tensor<4xf32>
    %b = tg.param @b : tensor<4xf32>
    %0 = tg.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
    LOSS %0 : tensor<2x3x4xf32>
  })");
  checkGradients(R"(
  tg.parameter @x : tensor<2x3x4xf32> {source = "x"}
  tg.parameter @g : tensor<3x4xf32> {source = "g"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x3x4xf32>
    %g = tg.param @g : tensor<3x4xf32>
    %0 = tg.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-3 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
    LOSS %0 : tensor<2x3x4xf32>
  })");
  checkGradients(R"(
  tg.parameter @x : tensor<2x3x4xf32> {source = "x"}
  tg.parameter @g : tensor<3x4xf32> {source = "g"}
  tg.parameter @b : tensor<3x4xf32> {source = "b"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x3x4xf32>
    %g = tg.param @g : tensor<3x4xf32>
    %b = tg.param @b : tensor<3x4xf32>
    %0 = tg.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
    LOSS %0 : tensor<2x3x4xf32>
  })");
}

TEST(AutodiffFD, LayerNormStatsUsed) {
  // The mean and inverse standard deviation results feed the loss too.
  checkGradients(R"(
  tg.parameter @x : tensor<3x4xf32> {source = "x"}
  tg.parameter @g : tensor<4xf32> {source = "g"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<3x4xf32>
    %g = tg.param @g : tensor<4xf32>
    %0, %m, %r = tg.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<3x4xf32>, tensor<4xf32>) -> (tensor<3x4xf32>, tensor<3x1xf32>, tensor<3x1xf32>)
    LOSS %0 : tensor<3x4xf32>, %m : tensor<3x1xf32>, %r : tensor<3x1xf32>
  })");
  // Only a statistic is used.
  checkGradients(R"(
  tg.parameter @x : tensor<3x4xf32> {source = "x"}
  tg.parameter @g : tensor<4xf32> {source = "g"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<3x4xf32>
    %g = tg.param @g : tensor<4xf32>
    %0, %m, %r = tg.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<3x4xf32>, tensor<4xf32>) -> (tensor<3x4xf32>, tensor<3x1xf32>, tensor<3x1xf32>)
    LOSS %r : tensor<3x1xf32>
  })", [] {
    Options o;
    o.zero = {"g"};
    return o;
  }());
}

/// Cross-entropy on scores 3x4 against labels [1, -100, 3] (N x C), or on
/// scores 2x3x2 against labels 2x2 (N x C x d).
std::string crossEntropyCase(const std::string &reduction, bool weights, bool ignore,
                             bool spatial) {
  std::string scores = spatial ? "tensor<2x3x2xf32>" : "tensor<3x4xf32>";
  std::string labelsType = spatial ? "tensor<2x2xi64>" : "tensor<3xi64>";
  std::string labels = spatial ? "[[2, -100], [0, 1]]" : "[1, -100, 3]";
  std::string weightsType = spatial ? "tensor<3xf32>" : "tensor<4xf32>";
  std::string weightsValue = spatial ? "[0.5, 2.0, 1.5]" : "[0.5, 2.0, 1.0, 1.5]";
  std::string result = reduction != "none" ? "tensor<f32>" : spatial ? "tensor<2x2xf32>"
                                                                      : "tensor<3xf32>";
  if (!ignore)
    labels = spatial ? "[[2, 1], [0, 1]]" : "[1, 0, 3]";
  std::string attrs = "reduction = \"" + reduction + "\"";
  if (ignore)
    attrs += ", ignore_index = -100 : i64";
  return R"(
  tg.parameter @s : )" + scores + R"( {source = "s"}
  func.func @forward() -> tensor<f32> {
    %s = tg.param @s : )" + scores + R"(
    %t = tg.constant dense<)" + labels + "> : " + labelsType + R"(
    %w = tg.constant dense<)" + weightsValue + "> : " + weightsType + R"(
    %0 = tg.softmax_cross_entropy_loss %s, %t)" + (weights ? ", %w" : "") + " {" + attrs +
         "} : (" + scores + ", " + labelsType + (weights ? ", " + weightsType : "") + ") -> " +
         result + R"(
    LOSS %0 : )" + result + R"(
  })";
}

TEST(AutodiffFD, SoftmaxCrossEntropyLoss) {
  for (std::string reduction : {"mean", "sum", "none"})
    for (bool weights : {false, true})
      for (bool ignore : {false, true})
        for (bool spatial : {false, true}) {
          SCOPED_TRACE(reduction + (weights ? " weights" : "") + (ignore ? " ignore_index" : "") +
                       (spatial ? " NxCxd" : " NxC"));
          checkGradients(crossEntropyCase(reduction, weights, ignore, spatial));
        }
}

TEST(AutodiffFD, SoftmaxCrossEntropyLossLogProb) {
  // The log_prob result feeds the loss, alone or with the loss result.
  checkGradients(R"(
  tg.parameter @s : tensor<3x4xf32> {source = "s"}
  func.func @forward() -> tensor<f32> {
    %s = tg.param @s : tensor<3x4xf32>
    %t = tg.constant dense<[1, -100, 3]> : tensor<3xi64>
    %0, %lp = tg.softmax_cross_entropy_loss %s, %t {ignore_index = -100 : i64, reduction = "mean"} : (tensor<3x4xf32>, tensor<3xi64>) -> (tensor<f32>, tensor<3x4xf32>)
    LOSS %0 : tensor<f32>, %lp : tensor<3x4xf32>
  })");
  checkGradients(R"(
  tg.parameter @s : tensor<2x3x2xf32> {source = "s"}
  func.func @forward() -> tensor<f32> {
    %s = tg.param @s : tensor<2x3x2xf32>
    %t = tg.constant dense<[[2, 1], [0, 1]]> : tensor<2x2xi64>
    %0, %lp = tg.softmax_cross_entropy_loss %s, %t {reduction = "sum"} : (tensor<2x3x2xf32>, tensor<2x2xi64>) -> (tensor<f32>, tensor<2x3x2xf32>)
    LOSS %lp : tensor<2x3x2xf32>
  })");
}

//===----------------------------------------------------------------------===//
// Graph structure
//===----------------------------------------------------------------------===//

TEST(AutodiffFD, SharedAndUnusedParameters) {
  // @w is read twice (summed gradients); @u does not reach the loss (zeros).
  Options o;
  o.zero = {"u"};
  checkGradients(R"(
  tg.parameter @w : tensor<3x3xf32> {source = "w"}
  tg.parameter @u : tensor<3xf32> {source = "u"}
  func.func @forward() -> tensor<f32> {
    %w = tg.param @w : tensor<3x3xf32>
    %u = tg.param @u : tensor<3xf32>
    %w2 = tg.param @w : tensor<3x3xf32>
    %0 = tg.matmul %w, %w2 : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %1 = tg.tanh %0 : tensor<3x3xf32>
    %2 = tg.exp %u : tensor<3xf32>
    LOSS %1 : tensor<3x3xf32>
  })", o);
}

TEST(AutodiffFD, TransformerBlockChain) {
  // A short chain like a transformer's attention: the rules compose.
  checkGradients(R"(
  tg.parameter @x : tensor<2x4x6xf32> {source = "x"}
  tg.parameter @wqkv : tensor<6x18xf32> {source = "wqkv"}
  tg.parameter @g : tensor<6xf32> {source = "g"}
  func.func @forward() -> tensor<f32> {
    %x = tg.param @x : tensor<2x4x6xf32>
    %wqkv = tg.param @wqkv : tensor<6x18xf32>
    %g = tg.param @g : tensor<6xf32>
    %n = tg.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x4x6xf32>, tensor<6xf32>) -> tensor<2x4x6xf32>
    %qkv = tg.matmul %n, %wqkv : (tensor<2x4x6xf32>, tensor<6x18xf32>) -> tensor<2x4x18xf32>
    %q, %k, %v = tg.split %qkv {axis = 2 : i64, sizes = array<i64: 6, 6, 6>} : tensor<2x4x18xf32> -> (tensor<2x4x6xf32>, tensor<2x4x6xf32>, tensor<2x4x6xf32>)
    %kt = tg.transpose %k {perm = array<i64: 0, 2, 1>} : tensor<2x4x6xf32> -> tensor<2x6x4xf32>
    %s = tg.matmul %q, %kt : (tensor<2x4x6xf32>, tensor<2x6x4xf32>) -> tensor<2x4x4xf32>
    %ones = tg.constant dense<1.0> : tensor<4x4xf32>
    %tri = tg.trilu %ones {k = 0 : i64} : tensor<4x4xf32>
    %zero = tg.constant dense<0.0> : tensor<f32>
    %mask = tg.equal %tri, %zero : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xi1>
    %ninf = tg.constant dense<-1.0e9> : tensor<f32>
    %sm = tg.where %mask, %ninf, %s : (tensor<4x4xi1>, tensor<f32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %p = tg.softmax %sm {axis = 2 : i64} : tensor<2x4x4xf32>
    %o = tg.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
    %r = tg.add %o, %x : (tensor<2x4x6xf32>, tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
    LOSS %r : tensor<2x4x6xf32>
  })");
}

} // namespace

namespace {

TEST(Autodiff, OnePassInstanceOnSeveralModules) {
  // A pass manager (and its pass instance) may run on several modules in
  // turn; nothing of one run may leak into the next.
  const char *text = R"(
  tg.parameter @w : tensor<3xf32> {source = "w"}
  func.func @forward() -> tensor<f32> {
    %w = tg.param @w : tensor<3xf32>
    %0 = tg.mul %w, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %1 = tg.reduce_sum %0 {axes = array<i64>} : tensor<3xf32> -> tensor<f32>
    return %1 : tensor<f32>
  })";
  MLIRContext context;
  context.loadDialect<hmcc::tg::TGDialect, func::FuncDialect>();
  PassManager pm(&context);
  pm.addPass(hmcc::createTGAutodiff());
  TensorMap params = {{"w", Tensor({3}, {1, 2, 3})}};
  for (int round = 0; round < 3; ++round) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    ASSERT_TRUE(module);
    ASSERT_TRUE(succeeded(pm.run(*module)));
    hmcc::Interpreter interpreter;
    auto r = interpreter.run(*module, "forward_backward", {}, params);
    ASSERT_TRUE(r) << interpreter.error();
    EXPECT_EQ((*r)[1].values, (std::vector<double>{2, 4, 6})) << "round " << round;
  }
}

} // namespace
