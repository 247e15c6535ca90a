//===- Interpreter.cpp - double-precision reference interpreter -----------===//
//
// One evaluation routine per tg op, written as plain index loops over
// row-major double arrays. Shapes are computed from the operands (not read
// from the IR) wherever the op defines them, and every result is then
// checked against its IR type, so a disagreement between a verifier and the
// interpreter is reported instead of silently reading out of bounds.
//
//===----------------------------------------------------------------------===//

#include "test/reference/Interpreter.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>

using namespace mlir;
using namespace hmcc::tg;

namespace hmcc {

using Shape = std::vector<int64_t>;

namespace {

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

//===----------------------------------------------------------------------===//
// Index helpers
//===----------------------------------------------------------------------===//

Shape shapeOf(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return Shape(type.getShape().begin(), type.getShape().end());
}

Type elementOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }

std::string str(const Shape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

/// Row-major strides.
Shape stridesOf(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The multi-index of flat position `k`.
Shape unravel(int64_t k, const Shape &shape) {
  Shape index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = k % shape[d];
    k /= shape[d];
  }
  return index;
}

int64_t ravel(const Shape &index, const Shape &shape) {
  int64_t k = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    k = k * shape[d] + index[d];
  return k;
}

int64_t product(const Shape &shape, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t d = from; d < to; ++d)
    n *= shape[d];
  return n;
}

/// Numpy broadcast of two shapes (the dialect's rule); nullopt if they do
/// not broadcast.
std::optional<Shape> broadcast(const Shape &a, const Shape &b) {
  auto shape = tg::broadcastShapes(a, b);
  if (!shape)
    return std::nullopt;
  return Shape(shape->begin(), shape->end());
}

/// For every element of `out`, the flat index of the element of `in` that
/// broadcasting `in` to `out` puts there. `in` must broadcast to `out`.
std::vector<int64_t> broadcastMap(const Shape &in, const Shape &out) {
  int64_t n = numElements(out);
  std::vector<int64_t> map(n);
  size_t rank = out.size(), offset = rank - in.size();
  Shape inStrides = stridesOf(in);
  Shape index(rank, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t flat = 0;
    for (size_t d = offset; d < rank; ++d)
      if (in[d - offset] != 1)
        flat += index[d] * inStrides[d - offset];
    map[k] = flat;
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++index[d] < out[d])
        break;
      index[d] = 0;
    }
  }
  return map;
}

/// `shape` with the reduced axes (all when `axes` is empty) set to 1.
Shape keptShape(const Shape &shape, ArrayRef<int64_t> axes) {
  Shape kept(shape);
  for (size_t d = 0; d < shape.size(); ++d)
    if (axes.empty() || llvm::is_contained(axes, static_cast<int64_t>(d)))
      kept[d] = 1;
  return kept;
}

/// For every element of `shape`, its flat index in `kept` (a reduction's
/// keepdims shape). Dropping the size-1 dimensions does not change flat
/// indices, so this also indexes a reduction without keepdims.
std::vector<int64_t> reductionMap(const Shape &shape, const Shape &kept) {
  std::vector<int64_t> map(numElements(shape));
  for (int64_t k = 0; k < static_cast<int64_t>(map.size()); ++k) {
    Shape index = unravel(k, shape);
    for (size_t d = 0; d < shape.size(); ++d)
      if (kept[d] == 1)
        index[d] = 0;
    map[k] = ravel(index, kept);
  }
  return map;
}

/// Shape with the size-1 dimensions of a reduction dropped unless keepdims.
Shape reducedShape(const Shape &shape, ArrayRef<int64_t> axes, bool keepdims) {
  Shape kept = keptShape(shape, axes), out;
  for (size_t d = 0; d < shape.size(); ++d) {
    bool reduced = axes.empty() || llvm::is_contained(axes, static_cast<int64_t>(d));
    if (!reduced)
      out.push_back(shape[d]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

double toDouble(const APFloat &v) {
  APFloat d = v;
  bool losesInfo = false;
  d.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return d.convertToDouble();
}

double toDouble(const APInt &v, Type element) {
  bool isUnsigned = element.isUnsignedInteger() || element.getIntOrFloatBitWidth() == 1;
  return isUnsigned ? static_cast<double>(v.getZExtValue())
                    : static_cast<double>(v.getSExtValue());
}

/// Converts `v` as ONNX Cast does to `element`: integer types truncate
/// toward zero, bool is `v != 0`. Floating-point types keep the double (the
/// interpreter does not round to f32).
double castTo(double v, Type element) {
  if (isa<FloatType>(element))
    return v;
  if (element.getIntOrFloatBitWidth() == 1)
    return v != 0.0 ? 1.0 : 0.0;
  return std::trunc(v);
}

double attrValue(Attribute attr) {
  if (auto f = dyn_cast<FloatAttr>(attr))
    return toDouble(f.getValue());
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return toDouble(i.getValue(), i.getType());
  return std::nan("");
}

/// Uniform in [0, 1) from 53 random bits (portable, unlike
/// std::uniform_real_distribution).
double uniform(std::mt19937_64 &gen) {
  return static_cast<double>(gen() >> 11) * 0x1.0p-53;
}

//===----------------------------------------------------------------------===//
// The evaluator
//===----------------------------------------------------------------------===//

class Evaluator {
public:
  Evaluator(uint64_t seed, const TensorMap &params, std::string &message)
      : stream(seed), params(params), message(message) {}

  LogicalResult bindArgument(BlockArgument arg, const Tensor &value) {
    if (value.shape != shapeOf(arg) ||
        static_cast<int64_t>(value.values.size()) != numElements(value.shape)) {
      message = "argument #" + std::to_string(arg.getArgNumber()) + " has shape " +
                str(value.shape) + " (" + std::to_string(value.values.size()) +
                " values), but the function takes " + str(shapeOf(arg));
      return failure();
    }
    env[arg] = value;
    return success();
  }

  const Tensor &get(Value v) { return env.find(v)->second; }

  LogicalResult evaluate(Operation *op);

private:
  llvm::DenseMap<Value, Tensor> env;
  std::mt19937_64 stream;
  const TensorMap &params;
  std::string &message;

  LogicalResult fail(Operation *op, const std::string &what) {
    message = "'" + op->getName().getStringRef().str() + "': " + what;
    return failure();
  }

  /// Stores the results and checks their shapes against the IR.
  LogicalResult set(Operation *op, std::vector<Tensor> results) {
    if (results.size() != op->getNumResults())
      return fail(op, "produced " + std::to_string(results.size()) + " results for " +
                          std::to_string(op->getNumResults()));
    for (auto [k, result] : llvm::enumerate(results)) {
      Shape expected = shapeOf(op->getResult(k));
      if (result.shape != expected ||
          static_cast<int64_t>(result.values.size()) != numElements(result.shape))
        return fail(op, "result #" + std::to_string(k) + " was computed with shape " +
                            str(result.shape) + ", but its type says " + str(expected));
      env[op->getResult(k)] = std::move(result);
    }
    return success();
  }
  LogicalResult set(Operation *op, Tensor result) {
    std::vector<Tensor> results;
    results.push_back(std::move(result));
    return set(op, std::move(results));
  }

  // Op families.
  LogicalResult constant(ConstantOp op);
  LogicalResult unary(Operation *op, const std::function<double(double)> &fn);
  LogicalResult binary(Operation *op, const std::function<double(double, double)> &fn);
  LogicalResult where(WhereOp op);
  LogicalResult dropout(DropoutOp op);
  LogicalResult matmul(MatMulOp op);
  LogicalResult gemm(GemmOp op);
  LogicalResult transpose(TransposeOp op);
  LogicalResult concat(ConcatOp op);
  LogicalResult split(SplitOp op);
  LogicalResult slice(Operation *op, bool isGrad);
  LogicalResult gather(Operation *op, bool isGrad);
  LogicalResult trilu(TriluOp op);
  LogicalResult reduce(Operation *op);
  LogicalResult softmax(Operation *op, bool log);
  LogicalResult layerNorm(LayerNormOp op);
  LogicalResult crossEntropy(SoftmaxCrossEntropyLossOp op);
  LogicalResult sumTo(SumToOp op);
  LogicalResult reduceMaxGrad(ReduceMaxGradOp op);
  LogicalResult softmaxGrad(Operation *op, bool log);
  LogicalResult layerNormGrad(LayerNormGradOp op);
  LogicalResult crossEntropyGrad(SoftmaxCrossEntropyLossGradOp op);
};

LogicalResult Evaluator::evaluate(Operation *op) {
  for (Value operand : op->getOperands())
    if (!env.count(operand))
      return fail(op, "an operand has no value (defined outside the function?)");

  auto same = [&](Value x, Shape shape) {
    Tensor t = get(x);
    t.shape = std::move(shape);
    return t;
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ParamOp p) {
        auto it = params.find(p.getName().str());
        if (it == params.end())
          return fail(op, "no value for parameter @" + p.getName().str());
        if (it->second.shape != shapeOf(p.getResult()))
          return fail(op, "parameter @" + p.getName().str() + " has shape " +
                              str(it->second.shape) + ", declared " +
                              str(shapeOf(p.getResult())));
        return set(op, it->second);
      })
      .Case([&](ConstantOp c) { return constant(c); })
      .Case([&](SqrtOp) { return unary(op, [](double x) { return std::sqrt(x); }); })
      .Case([&](ReciprocalOp) { return unary(op, [](double x) { return 1.0 / x; }); })
      .Case([&](NegOp) { return unary(op, [](double x) { return -x; }); })
      .Case([&](ExpOp) { return unary(op, [](double x) { return std::exp(x); }); })
      .Case([&](LogOp) { return unary(op, [](double x) { return std::log(x); }); })
      .Case([&](TanhOp) { return unary(op, [](double x) { return std::tanh(x); }); })
      .Case([&](SigmoidOp) {
        return unary(op, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
      })
      .Case([&](ErfOp) { return unary(op, [](double x) { return std::erf(x); }); })
      .Case([&](ReluOp) { return unary(op, [](double x) { return x > 0.0 ? x : 0.0; }); })
      .Case([&](IdentityOp) { return unary(op, [](double x) { return x; }); })
      .Case([&](CastOp c) {
        Type element = elementOf(c.getResult());
        return unary(op, [element](double x) { return castTo(x, element); });
      })
      .Case([&](AddOp) { return binary(op, [](double a, double b) { return a + b; }); })
      .Case([&](SubOp) { return binary(op, [](double a, double b) { return a - b; }); })
      .Case([&](MulOp) { return binary(op, [](double a, double b) { return a * b; }); })
      .Case([&](DivOp d) {
        if (isa<IntegerType>(elementOf(d.getResult())))
          return binary(op, [](double a, double b) { return std::trunc(a / b); });
        return binary(op, [](double a, double b) { return a / b; });
      })
      .Case([&](PowOp) { return binary(op, [](double a, double b) { return std::pow(a, b); }); })
      .Case([&](EqualOp) {
        return binary(op, [](double a, double b) { return a == b ? 1.0 : 0.0; });
      })
      .Case([&](WhereOp w) { return where(w); })
      .Case([&](DropoutOp d) { return dropout(d); })
      .Case([&](MatMulOp m) { return matmul(m); })
      .Case([&](GemmOp g) { return gemm(g); })
      .Case([&](TransposeOp t) { return transpose(t); })
      .Case<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>([&](Operation *) {
        if (numElements(shapeOf(op->getOperand(0))) != numElements(shapeOf(op->getResult(0))))
          return fail(op, "element counts differ");
        return set(op, same(op->getOperand(0), shapeOf(op->getResult(0))));
      })
      .Case([&](ExpandOp e) {
        Shape out = shapeOf(e.getResult());
        const Tensor &x = get(e.getX());
        auto shape = broadcast(x.shape, out);
        if (!shape || *shape != out)
          return fail(op, "cannot expand " + str(x.shape) + " to " + str(out));
        auto map = broadcastMap(x.shape, out);
        Tensor r = Tensor::filled(out);
        for (size_t k = 0; k < map.size(); ++k)
          r.values[k] = x.values[map[k]];
        return set(op, std::move(r));
      })
      .Case([&](ConcatOp c) { return concat(c); })
      .Case([&](SplitOp s) { return split(s); })
      .Case([&](SliceOp) { return slice(op, false); })
      .Case([&](SliceGradOp) { return slice(op, true); })
      .Case([&](GatherOp) { return gather(op, false); })
      .Case([&](GatherGradOp) { return gather(op, true); })
      .Case([&](TriluOp t) { return trilu(t); })
      .Case([&](ShapeOp s) {
        const Tensor &x = get(s.getX());
        int64_t start = static_cast<int64_t>(s.getStart()), end = static_cast<int64_t>(s.getEnd());
        if (start < 0 || start > end || end > x.rank())
          return fail(op, "bad start/end");
        std::vector<double> dims(x.shape.begin() + start, x.shape.begin() + end);
        return set(op, Tensor({end - start}, dims));
      })
      .Case([&](ConstantOfShapeOp c) {
        const Tensor &s = get(c.getShape());
        Shape out = shapeOf(c.getResult());
        for (int64_t d = 0; d < static_cast<int64_t>(out.size()); ++d)
          if (d >= s.size() || s.values[d] != static_cast<double>(out[d]))
            return fail(op, "the shape operand does not match the result type " + str(out));
        return set(op, Tensor::filled(out, attrValue(c.getValue())));
      })
      .Case([&](RangeOp r) {
        double start = get(r.getStart()).values[0], delta = get(r.getDelta()).values[0];
        double limit = get(r.getLimit()).values[0];
        if (delta == 0.0)
          return fail(op, "delta is zero");
        int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit - start) / delta)));
        Tensor t = Tensor::filled({n});
        for (int64_t k = 0; k < n; ++k)
          t.values[k] = start + static_cast<double>(k) * delta;
        return set(op, std::move(t));
      })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>([&](Operation *) { return reduce(op); })
      .Case([&](SoftmaxOp) { return softmax(op, false); })
      .Case([&](LogSoftmaxOp) { return softmax(op, true); })
      .Case([&](LayerNormOp l) { return layerNorm(l); })
      .Case([&](SoftmaxCrossEntropyLossOp l) { return crossEntropy(l); })
      .Case([&](SumToOp s) { return sumTo(s); })
      .Case([&](ReluGradOp r) {
        const Tensor &x = get(r.getX()), &g = get(r.getGrad());
        if (x.shape != g.shape)
          return fail(op, "x and grad differ in shape");
        Tensor t = Tensor::filled(x.shape);
        for (int64_t k = 0; k < x.size(); ++k)
          t.values[k] = x.values[k] > 0.0 ? g.values[k] : 0.0;
        return set(op, std::move(t));
      })
      .Case([&](DropoutGradOp d) {
        const Tensor &g = get(d.getGrad()), &mask = get(d.getMask());
        if (g.shape != mask.shape)
          return fail(op, "grad and mask differ in shape");
        double scale = 1.0 / (1.0 - toDouble(d.getRatio()));
        Tensor t = Tensor::filled(g.shape);
        for (int64_t k = 0; k < g.size(); ++k)
          t.values[k] = mask.values[k] != 0.0 ? g.values[k] * scale : 0.0;
        return set(op, std::move(t));
      })
      .Case([&](ReduceMaxGradOp r) { return reduceMaxGrad(r); })
      .Case([&](SoftmaxGradOp) { return softmaxGrad(op, false); })
      .Case([&](LogSoftmaxGradOp) { return softmaxGrad(op, true); })
      .Case([&](LayerNormGradOp l) { return layerNormGrad(l); })
      .Case([&](SoftmaxCrossEntropyLossGradOp l) { return crossEntropyGrad(l); })
      .Default([&](Operation *) {
        message = "the interpreter does not support op '" +
                  op->getName().getStringRef().str() + "'";
        return failure();
      });
}

LogicalResult Evaluator::constant(ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return fail(op, "only dense constants are supported");
  Type element = dense.getElementType();
  Tensor t;
  t.shape = shapeOf(op.getResult());
  if (isa<FloatType>(element)) {
    for (const APFloat &v : dense.getValues<APFloat>())
      t.values.push_back(toDouble(v));
  } else if (isa<IntegerType>(element)) {
    for (const APInt &v : dense.getValues<APInt>())
      t.values.push_back(toDouble(v, element));
  } else {
    return fail(op, "unsupported element type");
  }
  return set(op, std::move(t));
}

LogicalResult Evaluator::unary(Operation *op, const std::function<double(double)> &fn) {
  Tensor t = get(op->getOperand(0));
  for (double &v : t.values)
    v = fn(v);
  return set(op, std::move(t));
}

LogicalResult Evaluator::binary(Operation *op,
                                const std::function<double(double, double)> &fn) {
  const Tensor &a = get(op->getOperand(0)), &b = get(op->getOperand(1));
  auto shape = broadcast(a.shape, b.shape);
  if (!shape)
    return fail(op, "shapes " + str(a.shape) + " and " + str(b.shape) + " do not broadcast");
  auto ma = broadcastMap(a.shape, *shape), mb = broadcastMap(b.shape, *shape);
  Tensor t = Tensor::filled(*shape);
  for (int64_t k = 0; k < t.size(); ++k)
    t.values[k] = fn(a.values[ma[k]], b.values[mb[k]]);
  return set(op, std::move(t));
}

LogicalResult Evaluator::where(WhereOp op) {
  const Tensor &c = get(op.getCondition()), &x = get(op.getX()), &y = get(op.getY());
  auto xy = broadcast(x.shape, y.shape);
  auto shape = xy ? broadcast(c.shape, *xy) : xy;
  if (!shape)
    return fail(op, "shapes do not broadcast");
  auto mc = broadcastMap(c.shape, *shape), mx = broadcastMap(x.shape, *shape),
       my = broadcastMap(y.shape, *shape);
  Tensor t = Tensor::filled(*shape);
  for (int64_t k = 0; k < t.size(); ++k)
    t.values[k] = c.values[mc[k]] != 0.0 ? x.values[mx[k]] : y.values[my[k]];
  return set(op, std::move(t));
}

LogicalResult Evaluator::dropout(DropoutOp op) {
  const Tensor &x = get(op.getX());
  double ratio = toDouble(op.getRatio());
  Tensor result = x, mask = Tensor::filled(x.shape, 1.0);
  if (op.getTraining() && ratio > 0.0) {
    std::mt19937_64 own(op.getSeed() ? *op.getSeed() : 0);
    std::mt19937_64 &gen = op.getSeed() ? own : stream;
    double scale = 1.0 / (1.0 - ratio);
    for (int64_t k = 0; k < x.size(); ++k) {
      bool keep = uniform(gen) >= ratio;
      mask.values[k] = keep ? 1.0 : 0.0;
      result.values[k] = keep ? x.values[k] * scale : 0.0;
    }
  }
  std::vector<Tensor> results;
  results.push_back(std::move(result));
  results.push_back(std::move(mask));
  return set(op, std::move(results));
}

LogicalResult Evaluator::matmul(MatMulOp op) {
  const Tensor &a = get(op.getLhs()), &b = get(op.getRhs());
  if (a.rank() == 0 || b.rank() == 0)
    return fail(op, "operands must not be scalars");
  bool vecA = a.rank() == 1, vecB = b.rank() == 1;
  // View 1-D operands as a row [1, K] (lhs) or a column [K, 1] (rhs).
  Shape sa = vecA ? Shape{1, a.shape[0]} : a.shape;
  Shape sb = vecB ? Shape{b.shape[0], 1} : b.shape;
  bool ta = op.getTransA() && !vecA, tb = op.getTransB() && !vecB;
  int64_t rowsA = sa[sa.size() - 2], colsA = sa.back();
  int64_t rowsB = sb[sb.size() - 2], colsB = sb.back();
  int64_t m = ta ? colsA : rowsA, k = ta ? rowsA : colsA;
  int64_t kb = tb ? colsB : rowsB, n = tb ? rowsB : colsB;
  if (k != kb)
    return fail(op, "contracted dimensions differ: " + std::to_string(k) + " and " +
                        std::to_string(kb));
  Shape batchA(sa.begin(), sa.end() - 2), batchB(sb.begin(), sb.end() - 2);
  auto batch = broadcast(batchA, batchB);
  if (!batch)
    return fail(op, "batch dimensions do not broadcast");
  auto mapA = broadcastMap(batchA, *batch), mapB = broadcastMap(batchB, *batch);
  Shape out = *batch;
  if (!vecA)
    out.push_back(m);
  if (!vecB)
    out.push_back(n);
  Tensor t = Tensor::filled(out);
  for (size_t p = 0; p < mapA.size(); ++p) {
    const double *pa = a.values.data() + mapA[p] * rowsA * colsA;
    const double *pb = b.values.data() + mapB[p] * rowsB * colsB;
    double *pc = t.values.data() + p * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t l = 0; l < k; ++l)
          sum += pa[ta ? l * colsA + i : i * colsA + l] * pb[tb ? j * colsB + l : l * colsB + j];
        pc[i * n + j] = sum;
      }
  }
  return set(op, std::move(t));
}

LogicalResult Evaluator::gemm(GemmOp op) {
  const Tensor &a = get(op.getA()), &b = get(op.getB());
  if (a.rank() != 2 || b.rank() != 2)
    return fail(op, "a and b must be matrices");
  bool ta = op.getTransA(), tb = op.getTransB();
  int64_t colsA = a.shape[1], colsB = b.shape[1];
  int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
  int64_t kb = tb ? b.shape[1] : b.shape[0], n = tb ? b.shape[0] : b.shape[1];
  if (k != kb)
    return fail(op, "contracted dimensions differ");
  double alpha = toDouble(op.getAlpha()), beta = toDouble(op.getBeta());
  Tensor t = Tensor::filled({m, n});
  std::vector<int64_t> mapC;
  const Tensor *c = op.getC() ? &get(op.getC()) : nullptr;
  if (c) {
    auto shape = broadcast(c->shape, {m, n});
    if (!shape || *shape != Shape{m, n})
      return fail(op, "c does not broadcast to the result");
    mapC = broadcastMap(c->shape, {m, n});
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t l = 0; l < k; ++l)
        sum += a.values[ta ? l * colsA + i : i * colsA + l] *
               b.values[tb ? j * colsB + l : l * colsB + j];
      double v = alpha * sum;
      if (c)
        v += beta * c->values[mapC[i * n + j]];
      t.values[i * n + j] = v;
    }
  return set(op, std::move(t));
}

LogicalResult Evaluator::transpose(TransposeOp op) {
  const Tensor &x = get(op.getX());
  ArrayRef<int64_t> perm = op.getPerm();
  if (static_cast<int64_t>(perm.size()) != x.rank())
    return fail(op, "perm does not match the rank");
  Shape out, inStrides = stridesOf(x.shape);
  for (int64_t p : perm)
    out.push_back(x.shape[p]);
  Tensor t = Tensor::filled(out);
  for (int64_t k = 0; k < t.size(); ++k) {
    Shape index = unravel(k, out);
    int64_t flat = 0;
    for (size_t i = 0; i < perm.size(); ++i)
      flat += index[i] * inStrides[perm[i]];
    t.values[k] = x.values[flat];
  }
  return set(op, std::move(t));
}

LogicalResult Evaluator::concat(ConcatOp op) {
  auto axis = static_cast<size_t>(op.getAxis());
  Shape out = get(op.getInputs().front()).shape;
  if (axis >= out.size())
    return fail(op, "axis out of range");
  out[axis] = 0;
  for (Value in : op.getInputs()) {
    const Tensor &t = get(in);
    if (t.rank() != static_cast<int64_t>(out.size()))
      return fail(op, "inputs differ in rank");
    for (size_t d = 0; d < out.size(); ++d)
      if (d != axis && t.shape[d] != out[d])
        return fail(op, "inputs differ in dimension " + std::to_string(d));
    out[axis] += t.shape[axis];
  }
  int64_t outer = product(out, 0, axis), inner = product(out, axis + 1, out.size());
  Tensor r = Tensor::filled(out);
  int64_t offset = 0;
  for (Value in : op.getInputs()) {
    const Tensor &t = get(in);
    int64_t size = t.shape[axis];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < size; ++c)
        for (int64_t i = 0; i < inner; ++i)
          r.values[(o * out[axis] + offset + c) * inner + i] = t.values[(o * size + c) * inner + i];
    offset += size;
  }
  return set(op, std::move(r));
}

LogicalResult Evaluator::split(SplitOp op) {
  const Tensor &x = get(op.getX());
  auto axis = static_cast<size_t>(op.getAxis());
  if (axis >= x.shape.size())
    return fail(op, "axis out of range");
  int64_t outer = product(x.shape, 0, axis), inner = product(x.shape, axis + 1, x.shape.size());
  int64_t total = 0;
  for (int64_t size : op.getSizes())
    total += size;
  if (total != x.shape[axis])
    return fail(op, "sizes do not add up to the dimension");
  std::vector<Tensor> results;
  int64_t offset = 0;
  for (int64_t size : op.getSizes()) {
    Shape shape = x.shape;
    shape[axis] = size;
    Tensor t = Tensor::filled(shape);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < size; ++c)
        for (int64_t i = 0; i < inner; ++i)
          t.values[(o * size + c) * inner + i] =
              x.values[(o * x.shape[axis] + offset + c) * inner + i];
    offset += size;
    results.push_back(std::move(t));
  }
  return set(op, std::move(results));
}

/// tg.slice (gather the sliced positions) and tg.slice_grad (scatter the
/// gradient into zeros of the sliced operand's shape).
LogicalResult Evaluator::slice(Operation *op, bool isGrad) {
  auto attr = [&](StringRef name) {
    return op->getAttrOfType<DenseI64ArrayAttr>(name).asArrayRef();
  };
  ArrayRef<int64_t> starts = attr("starts"), ends = attr("ends"), axes = attr("axes"),
                    steps = attr("steps");
  const Tensor &in = get(op->getOperand(0));
  Shape full = isGrad ? shapeOf(op->getResult(0)) : in.shape;
  Shape first(full.size(), 0), step(full.size(), 1), sliced = full;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i];
    if (axis < 0 || axis >= static_cast<int64_t>(full.size()) || steps[i] == 0)
      return fail(op, "bad axis or step");
    first[axis] = starts[i];
    step[axis] = steps[i];
    int64_t s = starts[i], e = ends[i], st = steps[i];
    sliced[axis] = st > 0 ? (e > s ? (e - s + st - 1) / st : 0)
                          : (s > e ? (s - e - st - 1) / -st : 0);
  }
  if (isGrad && in.shape != sliced)
    return fail(op, "grad has shape " + str(in.shape) + ", the slice " + str(sliced));
  Tensor t = Tensor::filled(isGrad ? full : sliced);
  for (int64_t k = 0; k < numElements(sliced); ++k) {
    Shape index = unravel(k, sliced);
    for (size_t d = 0; d < full.size(); ++d) {
      index[d] = first[d] + index[d] * step[d];
      if (index[d] < 0 || index[d] >= full[d])
        return fail(op, "slice position out of range");
    }
    int64_t flat = ravel(index, full);
    if (isGrad)
      t.values[flat] += in.values[k];
    else
      t.values[k] = in.values[flat];
  }
  return set(op, std::move(t));
}

/// tg.gather and tg.gather_grad (scatter-add into zeros of the gathered
/// tensor's shape). Negative indices count from the end.
LogicalResult Evaluator::gather(Operation *op, bool isGrad) {
  const Tensor &src = get(op->getOperand(0)), &indices = get(op->getOperand(1));
  auto axis = static_cast<size_t>(op->getAttrOfType<IntegerAttr>("axis").getInt());
  Shape data = isGrad ? shapeOf(op->getResult(0)) : src.shape;
  if (axis >= data.size())
    return fail(op, "axis out of range");
  Shape gathered(data.begin(), data.begin() + axis);
  gathered.insert(gathered.end(), indices.shape.begin(), indices.shape.end());
  gathered.insert(gathered.end(), data.begin() + axis + 1, data.end());
  if (isGrad && src.shape != gathered)
    return fail(op, "grad has shape " + str(src.shape) + ", expected " + str(gathered));
  int64_t outer = product(data, 0, axis), n = data[axis],
          inner = product(data, axis + 1, data.size()), count = indices.size();
  Tensor t = Tensor::filled(isGrad ? data : gathered);
  for (int64_t j = 0; j < count; ++j) {
    auto index = static_cast<int64_t>(indices.values[j]);
    if (index < 0)
      index += n;
    if (index < 0 || index >= n)
      return fail(op, "index " + std::to_string(static_cast<int64_t>(indices.values[j])) +
                          " is out of range for dimension " + std::to_string(n));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t g = (o * count + j) * inner + i, d = (o * n + index) * inner + i;
        if (isGrad)
          t.values[d] += src.values[g];
        else
          t.values[g] = src.values[d];
      }
  }
  return set(op, std::move(t));
}

LogicalResult Evaluator::trilu(TriluOp op) {
  Tensor t = get(op.getX());
  if (t.rank() < 2)
    return fail(op, "needs rank 2 or more");
  int64_t rows = t.shape[t.rank() - 2], cols = t.shape.back(), k = op.getK();
  bool upper = op.getUpper();
  for (int64_t e = 0; e < t.size(); ++e) {
    int64_t j = e % cols, i = (e / cols) % rows;
    bool keep = upper ? j - i >= k : j - i <= k;
    if (!keep)
      t.values[e] = 0.0;
  }
  return set(op, std::move(t));
}

LogicalResult Evaluator::reduce(Operation *op) {
  const Tensor &x = get(op->getOperand(0));
  ArrayRef<int64_t> axes = op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
  for (int64_t a : axes)
    if (a < 0 || a >= x.rank())
      return fail(op, "axis out of range");
  bool keepdims = op->hasAttr("keepdims");
  Shape kept = keptShape(x.shape, axes);
  auto map = reductionMap(x.shape, kept);
  bool isMax = isa<ReduceMaxOp>(op);
  Tensor t = Tensor::filled(kept, isMax ? -std::numeric_limits<double>::infinity() : 0.0);
  for (int64_t k = 0; k < x.size(); ++k) {
    double &r = t.values[map[k]];
    r = isMax ? std::max(r, x.values[k]) : r + x.values[k];
  }
  if (isa<ReduceMeanOp>(op)) {
    double count = static_cast<double>(x.size()) / static_cast<double>(t.size());
    for (double &v : t.values)
      v /= count;
  }
  t.shape = reducedShape(x.shape, axes, keepdims);
  return set(op, std::move(t));
}

LogicalResult Evaluator::softmax(Operation *op, bool log) {
  Tensor t = get(op->getOperand(0));
  auto axis = static_cast<size_t>(op->getAttrOfType<IntegerAttr>("axis").getInt());
  if (axis >= t.shape.size())
    return fail(op, "axis out of range");
  int64_t outer = product(t.shape, 0, axis), n = t.shape[axis],
          inner = product(t.shape, axis + 1, t.shape.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t c) -> double & { return t.values[(o * n + c) * inner + i]; };
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < n; ++c)
        max = std::max(max, at(c));
      double sum = 0.0;
      for (int64_t c = 0; c < n; ++c)
        sum += std::exp(at(c) - max);
      for (int64_t c = 0; c < n; ++c)
        at(c) = log ? at(c) - max - std::log(sum) : std::exp(at(c) - max) / sum;
    }
  return set(op, std::move(t));
}

LogicalResult Evaluator::layerNorm(LayerNormOp op) {
  const Tensor &x = get(op.getX()), &scale = get(op.getScale());
  const Tensor *bias = op.getBias() ? &get(op.getBias()) : nullptr;
  auto axis = static_cast<size_t>(op.getAxis());
  if (axis >= x.shape.size())
    return fail(op, "axis out of range");
  int64_t outer = product(x.shape, 0, axis), n = product(x.shape, axis, x.shape.size());
  if (scale.size() != n || (bias && bias->size() != n))
    return fail(op, "scale or bias does not have the normalised shape");
  double epsilon = toDouble(op.getEpsilon());
  Shape statShape(x.shape);
  for (size_t d = axis; d < statShape.size(); ++d)
    statShape[d] = 1;
  Tensor y = Tensor::filled(x.shape), mean = Tensor::filled(statShape),
         invStd = Tensor::filled(statShape);
  for (int64_t o = 0; o < outer; ++o) {
    const double *row = x.values.data() + o * n;
    double mu = 0.0, var = 0.0;
    for (int64_t i = 0; i < n; ++i)
      mu += row[i];
    mu /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i)
      var += (row[i] - mu) * (row[i] - mu);
    var /= static_cast<double>(n);
    double inv = 1.0 / std::sqrt(var + epsilon);
    for (int64_t i = 0; i < n; ++i)
      y.values[o * n + i] =
          (row[i] - mu) * inv * scale.values[i] + (bias ? bias->values[i] : 0.0);
    mean.values[o] = mu;
    invStd.values[o] = inv;
  }
  std::vector<Tensor> results;
  results.push_back(std::move(y));
  if (!op.getStats().empty()) {
    results.push_back(std::move(mean));
    results.push_back(std::move(invStd));
  }
  return set(op, std::move(results));
}

/// Layout of softmax_cross_entropy_loss operands: scores N x C x D (D the
/// product of the trailing dimensions), labels N x D.
struct CrossEntropyLayout {
  int64_t n, c, d;
  int64_t score(int64_t i, int64_t k, int64_t j) const { return (i * c + k) * d + j; }
  int64_t label(int64_t i, int64_t j) const { return i * d + j; }
};

/// Per-element weights (0 for ignored labels) and the labels as classes;
/// fails on a label outside [0, C) that is not ignore_index.
static LogicalResult crossEntropyWeights(Operation *op, const Tensor &scores,
                                         const Tensor &labels, const Tensor *weights,
                                         std::optional<int64_t> ignoreIndex,
                                         CrossEntropyLayout &layout,
                                         std::vector<int64_t> &classes,
                                         std::vector<double> &w, std::string &message) {
  if (scores.rank() < 2) {
    message = "'" + op->getName().getStringRef().str() + "': scores must have rank >= 2";
    return failure();
  }
  layout = {scores.shape[0], scores.shape[1], product(scores.shape, 2, scores.shape.size())};
  classes.assign(labels.size(), 0);
  w.assign(labels.size(), 0.0);
  for (int64_t e = 0; e < labels.size(); ++e) {
    auto label = static_cast<int64_t>(labels.values[e]);
    if (ignoreIndex && label == *ignoreIndex)
      continue;
    if (label < 0 || label >= layout.c) {
      message = "'" + op->getName().getStringRef().str() + "': label " +
                std::to_string(label) + " is out of range for " + std::to_string(layout.c) +
                " classes";
      return failure();
    }
    classes[e] = label;
    w[e] = weights ? weights->values[label] : 1.0;
  }
  return success();
}

static std::optional<int64_t> ignoreIndexOf(Operation *op) {
  if (auto attr = op->getAttrOfType<IntegerAttr>("ignore_index"))
    return attr.getInt();
  return std::nullopt;
}

static std::string reductionOf(Operation *op) {
  auto attr = op->getAttrOfType<StringAttr>("reduction");
  return attr ? attr.str() : "mean";
}

LogicalResult Evaluator::crossEntropy(SoftmaxCrossEntropyLossOp op) {
  const Tensor &scores = get(op.getScores()), &labels = get(op.getLabels());
  const Tensor *weights = op.getWeights() ? &get(op.getWeights()) : nullptr;
  CrossEntropyLayout l;
  std::vector<int64_t> classes;
  std::vector<double> w;
  if (failed(crossEntropyWeights(op, scores, labels, weights, ignoreIndexOf(op), l, classes,
                                 w, message)))
    return failure();
  Tensor logProb = Tensor::filled(scores.shape);
  for (int64_t i = 0; i < l.n; ++i)
    for (int64_t j = 0; j < l.d; ++j) {
      double max = -std::numeric_limits<double>::infinity(), sum = 0.0;
      for (int64_t k = 0; k < l.c; ++k)
        max = std::max(max, scores.values[l.score(i, k, j)]);
      for (int64_t k = 0; k < l.c; ++k)
        sum += std::exp(scores.values[l.score(i, k, j)] - max);
      for (int64_t k = 0; k < l.c; ++k)
        logProb.values[l.score(i, k, j)] = scores.values[l.score(i, k, j)] - max - std::log(sum);
    }
  Tensor losses = Tensor::filled(labels.shape);
  double total = 0.0, weightSum = 0.0;
  for (int64_t i = 0; i < l.n; ++i)
    for (int64_t j = 0; j < l.d; ++j) {
      int64_t e = l.label(i, j);
      if (w[e] == 0.0)
        continue;
      losses.values[e] = -w[e] * logProb.values[l.score(i, classes[e], j)];
      total += losses.values[e];
      weightSum += w[e];
    }
  std::string reduction = reductionOf(op);
  std::vector<Tensor> results;
  if (reduction == "none")
    results.push_back(std::move(losses));
  else if (reduction == "sum")
    results.push_back(Tensor::scalar(total));
  else if (reduction == "mean")
    results.push_back(Tensor::scalar(total / weightSum));
  else
    return fail(op, "unknown reduction '" + reduction + "'");
  if (op.getLogProb())
    results.push_back(std::move(logProb));
  return set(op, std::move(results));
}

LogicalResult Evaluator::sumTo(SumToOp op) {
  const Tensor &x = get(op.getX());
  Shape out = shapeOf(op.getResult());
  auto shape = broadcast(out, x.shape);
  if (!shape || *shape != x.shape)
    return fail(op, str(out) + " does not broadcast to " + str(x.shape));
  auto map = broadcastMap(out, x.shape);
  Tensor t = Tensor::filled(out);
  for (int64_t k = 0; k < x.size(); ++k)
    t.values[map[k]] += x.values[k];
  return set(op, std::move(t));
}

LogicalResult Evaluator::reduceMaxGrad(ReduceMaxGradOp op) {
  const Tensor &x = get(op.getX()), &max = get(op.getMax()), &g = get(op.getGrad());
  Shape kept = keptShape(x.shape, op.getAxes());
  if (max.size() != numElements(kept) || g.size() != numElements(kept))
    return fail(op, "max or grad does not have the reduction's shape");
  auto map = reductionMap(x.shape, kept);
  Tensor t = Tensor::filled(x.shape);
  for (int64_t k = 0; k < x.size(); ++k)
    t.values[k] = x.values[k] == max.values[map[k]] ? g.values[map[k]] : 0.0;
  return set(op, std::move(t));
}

/// softmax_grad: dx = y * (g - sum(g * y)); log_softmax_grad: dx = g - exp(y) * sum(g).
LogicalResult Evaluator::softmaxGrad(Operation *op, bool log) {
  const Tensor &y = get(op->getOperand(0)), &g = get(op->getOperand(1));
  if (y.shape != g.shape)
    return fail(op, "y and grad differ in shape");
  auto axis = static_cast<size_t>(op->getAttrOfType<IntegerAttr>("axis").getInt());
  if (axis >= y.shape.size())
    return fail(op, "axis out of range");
  int64_t outer = product(y.shape, 0, axis), n = y.shape[axis],
          inner = product(y.shape, axis + 1, y.shape.size());
  Tensor t = Tensor::filled(y.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t c) { return (o * n + c) * inner + i; };
      double sum = 0.0;
      for (int64_t c = 0; c < n; ++c)
        sum += log ? g.values[at(c)] : g.values[at(c)] * y.values[at(c)];
      for (int64_t c = 0; c < n; ++c)
        t.values[at(c)] = log ? g.values[at(c)] - std::exp(y.values[at(c)]) * sum
                              : y.values[at(c)] * (g.values[at(c)] - sum);
    }
  return set(op, std::move(t));
}

LogicalResult Evaluator::layerNormGrad(LayerNormGradOp op) {
  const Tensor &g = get(op.getGrad()), &x = get(op.getX()), &scale = get(op.getScale());
  const Tensor &mean = get(op.getMean()), &invStd = get(op.getInvStdDev());
  auto axis = static_cast<size_t>(op.getAxis());
  if (axis >= x.shape.size() || g.shape != x.shape)
    return fail(op, "bad axis or grad shape");
  int64_t outer = product(x.shape, 0, axis), n = product(x.shape, axis, x.shape.size());
  if (scale.size() != n || mean.size() != outer || invStd.size() != outer)
    return fail(op, "scale or stats do not match x");
  Shape normalized(x.shape.begin() + axis, x.shape.end());
  Tensor dx = Tensor::filled(x.shape), dscale = Tensor::filled(normalized),
         dbias = Tensor::filled(normalized);
  std::vector<double> xhat(n), dxhat(n);
  for (int64_t o = 0; o < outer; ++o) {
    double inv = invStd.values[o], sumD = 0.0, sumDX = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      int64_t e = o * n + i;
      xhat[i] = (x.values[e] - mean.values[o]) * inv;
      dxhat[i] = g.values[e] * scale.values[i];
      dbias.values[i] += g.values[e];
      dscale.values[i] += g.values[e] * xhat[i];
      sumD += dxhat[i];
      sumDX += dxhat[i] * xhat[i];
    }
    double nd = static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i)
      dx.values[o * n + i] = inv * (dxhat[i] - sumD / nd - xhat[i] * sumDX / nd);
  }
  std::vector<Tensor> results;
  results.push_back(std::move(dx));
  results.push_back(std::move(dscale));
  results.push_back(std::move(dbias));
  return set(op, std::move(results));
}

LogicalResult Evaluator::crossEntropyGrad(SoftmaxCrossEntropyLossGradOp op) {
  const Tensor &g = get(op.getGrad()), &scores = get(op.getScores()),
               &labels = get(op.getLabels());
  const Tensor *weights = op.getWeights() ? &get(op.getWeights()) : nullptr;
  CrossEntropyLayout l;
  std::vector<int64_t> classes;
  std::vector<double> w;
  if (failed(crossEntropyWeights(op, scores, labels, weights, ignoreIndexOf(op), l, classes,
                                 w, message)))
    return failure();
  std::string reduction = reductionOf(op);
  bool none = reduction == "none";
  if (g.size() != (none ? labels.size() : 1))
    return fail(op, "grad has the wrong size for reduction '" + reduction + "'");
  double denominator = 1.0;
  if (reduction == "mean") {
    denominator = 0.0;
    for (double v : w)
      denominator += v;
  }
  Tensor t = Tensor::filled(scores.shape);
  for (int64_t i = 0; i < l.n; ++i)
    for (int64_t j = 0; j < l.d; ++j) {
      int64_t e = l.label(i, j);
      if (w[e] == 0.0)
        continue;
      double coef = (none ? g.values[e] : g.values[0]) * w[e] / denominator;
      double max = -std::numeric_limits<double>::infinity(), sum = 0.0;
      for (int64_t k = 0; k < l.c; ++k)
        max = std::max(max, scores.values[l.score(i, k, j)]);
      for (int64_t k = 0; k < l.c; ++k)
        sum += std::exp(scores.values[l.score(i, k, j)] - max);
      for (int64_t k = 0; k < l.c; ++k) {
        double p = std::exp(scores.values[l.score(i, k, j)] - max) / sum;
        t.values[l.score(i, k, j)] = coef * (p - (k == classes[e] ? 1.0 : 0.0));
      }
    }
  return set(op, std::move(t));
}

} // namespace

//===----------------------------------------------------------------------===//
// Interpreter
//===----------------------------------------------------------------------===//

std::optional<std::vector<Tensor>> Interpreter::run(func::FuncOp func,
                                                    const std::vector<Tensor> &args,
                                                    const TensorMap &params) {
  message.clear();
  if (func.isExternal() || !func.getBody().hasOneBlock()) {
    message = "@" + func.getSymName().str() + " must have a body of one block";
    return std::nullopt;
  }
  Block &body = func.getBody().front();
  if (args.size() != body.getNumArguments()) {
    message = "@" + func.getSymName().str() + " takes " +
              std::to_string(body.getNumArguments()) + " arguments, given " +
              std::to_string(args.size());
    return std::nullopt;
  }
  Evaluator evaluator(dropoutSeed, params, message);
  for (auto [arg, value] : llvm::zip(body.getArguments(), args))
    if (failed(evaluator.bindArgument(arg, value)))
      return std::nullopt;
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      std::vector<Tensor> results;
      for (Value v : ret.getOperands())
        results.push_back(evaluator.get(v));
      return results;
    }
    if (failed(evaluator.evaluate(&op)))
      return std::nullopt;
  }
  message = "@" + func.getSymName().str() + " has no func.return";
  return std::nullopt;
}

std::optional<std::vector<Tensor>> Interpreter::run(ModuleOp module, StringRef name,
                                                    const std::vector<Tensor> &args,
                                                    const TensorMap &params) {
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (!func) {
    message = "no function @" + name.str();
    return std::nullopt;
  }
  return run(func, args, params);
}

} // namespace hmcc
