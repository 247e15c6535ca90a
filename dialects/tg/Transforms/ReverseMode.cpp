//===- ReverseMode.cpp - the reverse sweep shared by tg passes -----------===//
//
// One vector-Jacobian rule per tg op, applied backwards over a block: the
// engine of tg-autodiff and tg-expand-gradients. Most rules are written with
// forward tg ops, the rest with the gradient ops of TGGradOps.td. Only values
// that depend on a source receive gradients.
//
//===----------------------------------------------------------------------===//

#include "tg/Transforms/ReverseMode.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace hmcc::tg;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Builds the gradient ops; every helper returns the new value.
class GradBuilder {
public:
  GradBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value make(StringRef name, ValueRange operands, Type type,
             ArrayRef<NamedAttribute> attrs = {}) {
    OperationState state(loc, name);
    state.addOperands(operands);
    state.addTypes(type);
    state.addAttributes(attrs);
    return b.create(state)->getResult(0);
  }
  NamedAttribute attr(StringRef name, Attribute value) {
    return b.getNamedAttr(name, value);
  }

  Value scalar(double v, Type element) {
    auto type = RankedTensorType::get({}, element);
    return ConstantOp::create(b, loc, DenseElementsAttr::get(type, b.getFloatAttr(element, v)));
  }
  Value zeros(RankedTensorType type) {
    return ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), 0.0)));
  }

  Value binary(StringRef name, Value x, Value y) {
    auto shape = broadcastShapes(typeOf(x).getShape(), typeOf(y).getShape());
    return make(name, {x, y}, RankedTensorType::get(*shape, typeOf(x).getElementType()));
  }
  Value add(Value x, Value y) { return binary("tg.add", x, y); }
  Value sub(Value x, Value y) { return binary("tg.sub", x, y); }
  Value mul(Value x, Value y) { return binary("tg.mul", x, y); }
  Value div(Value x, Value y) { return binary("tg.div", x, y); }
  Value mul(Value x, double c) { return mul(x, scalar(c, typeOf(x).getElementType())); }
  Value unary(StringRef name, Value x) { return make(name, {x}, x.getType()); }
  Value neg(Value x) { return unary("tg.neg", x); }

  /// Sums `g` down to `type` (the gradient of broadcasting).
  Value sumTo(Value g, Type type) {
    if (g.getType() == type)
      return g;
    return make("tg.sum_to", {g}, type);
  }
  Value reshape(Value x, Type type) {
    return x.getType() == type ? x : make("tg.reshape", {x}, type);
  }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    return reshape(x, RankedTensorType::get(shape, typeOf(x).getElementType()));
  }
  Value matmul(Value a, Value bv, bool transA, bool transB) {
    Shape sa(typeOf(a).getShape()), sb(typeOf(bv).getShape());
    if (transA && sa.size() >= 2)
      std::swap(sa[sa.size() - 1], sa[sa.size() - 2]);
    if (transB && sb.size() >= 2)
      std::swap(sb[sb.size() - 1], sb[sb.size() - 2]);
    auto shape = matmulShape(sa, sb);
    SmallVector<NamedAttribute> attrs;
    if (transA)
      attrs.push_back(attr("transA", b.getUnitAttr()));
    if (transB)
      attrs.push_back(attr("transB", b.getUnitAttr()));
    return make("tg.matmul", {a, bv}, RankedTensorType::get(*shape, typeOf(a).getElementType()),
                attrs);
  }
  Value gemm(Value a, Value bv, bool transA, bool transB, float alpha) {
    auto ta = typeOf(a), tb = typeOf(bv);
    int64_t m = transA ? ta.getDimSize(1) : ta.getDimSize(0);
    int64_t n = transB ? tb.getDimSize(0) : tb.getDimSize(1);
    SmallVector<NamedAttribute> attrs = {attr("alpha", b.getF32FloatAttr(alpha)),
                                         attr("beta", b.getF32FloatAttr(1.0f))};
    if (transA)
      attrs.push_back(attr("transA", b.getUnitAttr()));
    if (transB)
      attrs.push_back(attr("transB", b.getUnitAttr()));
    return make("tg.gemm", {a, bv}, RankedTensorType::get({m, n}, ta.getElementType()), attrs);
  }

  OpBuilder &b;
  Location loc;
};

/// Reverse-mode differentiation inside one block: the adjoint of every
/// value between the sources and the differentiated value.
struct ReverseMode {
  DenseMap<Value, Value> adjoints;
  DenseSet<Value> active;

  void accumulate(GradBuilder &gb, Value v, Value g) {
    if (!g || !active.contains(v))
      return;
    if (g.getType() != v.getType())
      g = gb.sumTo(g, v.getType());
    auto [it, inserted] = adjoints.try_emplace(v, g);
    if (!inserted)
      it->second = gb.add(it->second, g);
  }

  /// Differentiates `y` (seeded with ones: for a scalar loss, d loss/d loss =
  /// 1; for a tensor, the gradient of its sum) through the ops of `body`
  /// before `end`, with respect to `sources` and everything that depends on
  /// them; the reverse sweep is inserted before `end`.
  LogicalResult sweep(OpBuilder &builder, Block &body, Operation *end,
                      ArrayRef<Value> sources, Value y) {
    adjoints.clear();
    active.clear();
    for (Value v : sources)
      if (isa<FloatType>(typeOf(v).getElementType()))
        active.insert(v);
    SmallVector<Operation *> ops;
    for (Operation &op : body) {
      if (&op == end)
        break;
      ops.push_back(&op);
      if (llvm::none_of(op.getOperands(), [&](Value v) { return active.contains(v); }))
        continue;
      for (Value r : op.getResults())
        if (isa<FloatType>(typeOf(r).getElementType()))
          active.insert(r);
    }
    builder.setInsertionPoint(end);
    GradBuilder gb(builder, end->getLoc());
    if (active.contains(y)) {
      auto type = typeOf(y);
      adjoints[y] = ConstantOp::create(
          builder, end->getLoc(),
          DenseElementsAttr::get(type, builder.getFloatAttr(type.getElementType(), 1.0)));
    }
    for (Operation *op : llvm::reverse(ops)) {
      if (llvm::none_of(op->getResults(), [&](Value r) { return adjoints.count(r); }))
        continue;
      gb.loc = op->getLoc();
      if (failed(differentiate(gb, op)))
        return op->emitError() << "tg-autodiff: no gradient rule for " << op->getName();
    }
    return success();
  }

  /// Adds the contributions of `op`'s result adjoints to its operands.
  LogicalResult differentiate(GradBuilder &gb, Operation *op) {
    auto adj = [&](unsigned k) -> Value {
      auto it = adjoints.find(op->getResult(k));
      return it == adjoints.end() ? Value() : it->second;
    };
    Value g = adj(0);
    auto give = [&](Value operand, Value grad) { accumulate(gb, operand, grad); };
    auto wants = [&](Value operand) { return active.contains(operand); };
    Type elem = op->getNumResults() ? typeOf(op->getResult(0)).getElementType() : Type();
    auto one = [&] { return gb.scalar(1.0, elem); };

    return TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](AddOp o) { give(o.getLhs(), g); give(o.getRhs(), g); return success(); })
        .Case([&](SubOp o) {
          give(o.getLhs(), g);
          if (wants(o.getRhs()))
            give(o.getRhs(), gb.neg(g));
          return success();
        })
        .Case([&](MulOp o) {
          if (wants(o.getLhs()))
            give(o.getLhs(), gb.mul(g, o.getRhs()));
          if (wants(o.getRhs()))
            give(o.getRhs(), gb.mul(g, o.getLhs()));
          return success();
        })
        .Case([&](DivOp o) {
          if (wants(o.getLhs()))
            give(o.getLhs(), gb.div(g, o.getRhs()));
          if (wants(o.getRhs()))
            give(o.getRhs(), gb.neg(gb.div(gb.mul(g, o.getResult()), o.getRhs())));
          return success();
        })
        .Case([&](PowOp o) {
          Value x = o.getLhs(), p = o.getRhs();
          if (!isa<FloatType>(typeOf(p).getElementType()))
            p = gb.make("tg.cast", {p}, RankedTensorType::get(typeOf(p).getShape(), elem));
          if (wants(o.getLhs()))
            give(x, gb.mul(g, gb.mul(p, gb.binary("tg.pow", x, gb.sub(p, one())))));
          if (wants(o.getRhs()))
            give(o.getRhs(), gb.mul(g, gb.mul(o.getResult(), gb.unary("tg.log", x))));
          return success();
        })
        .Case([&](SqrtOp o) { give(o.getX(), gb.div(gb.mul(g, 0.5), o.getResult())); return success(); })
        .Case([&](ReciprocalOp o) {
          give(o.getX(), gb.neg(gb.mul(g, gb.mul(o.getResult(), o.getResult()))));
          return success();
        })
        .Case([&](NegOp o) { give(o.getX(), gb.neg(g)); return success(); })
        .Case([&](ExpOp o) { give(o.getX(), gb.mul(g, o.getResult())); return success(); })
        .Case([&](LogOp o) { give(o.getX(), gb.div(g, o.getX())); return success(); })
        .Case([&](TanhOp o) {
          Value y = o.getResult();
          give(o.getX(), gb.mul(g, gb.sub(one(), gb.mul(y, y))));
          return success();
        })
        .Case([&](SigmoidOp o) {
          Value y = o.getResult();
          give(o.getX(), gb.mul(g, gb.mul(y, gb.sub(one(), y))));
          return success();
        })
        .Case([&](ErfOp o) {
          Value x = o.getX();
          Value dydx = gb.mul(gb.unary("tg.exp", gb.neg(gb.mul(x, x))), 2.0 / std::sqrt(M_PI));
          give(x, gb.mul(g, dydx));
          return success();
        })
        .Case([&](ReluOp o) {
          give(o.getX(), gb.make("tg.relu_grad", {o.getX(), g}, g.getType()));
          return success();
        })
        .Case([&](IdentityOp o) { give(o.getX(), g); return success(); })
        .Case([&](CastOp o) {
          if (wants(o.getX()))
            give(o.getX(), gb.make("tg.cast", {g}, o.getX().getType()));
          return success();
        })
        .Case([&](DropoutOp o) {
          if (!g)
            return success();
          if (o.getTraining() && o.getRatio().convertToFloat() > 0.0f)
            g = gb.make("tg.dropout_grad", {g, o.getMask()}, g.getType(),
                        {gb.attr("ratio", o.getRatioAttr())});
          give(o.getX(), g);
          return success();
        })
        .Case([&](MatMulOp o) { return differentiateMatMul(gb, o, g); })
        .Case([&](GemmOp o) {
          bool ta = o.getTransA(), tb = o.getTransB();
          float alpha = o.getAlpha().convertToFloat();
          if (wants(o.getA()))
            give(o.getA(), ta ? gb.gemm(o.getB(), g, tb, true, alpha)
                              : gb.gemm(g, o.getB(), false, !tb, alpha));
          if (wants(o.getB()))
            give(o.getB(), tb ? gb.gemm(g, o.getA(), true, ta, alpha)
                              : gb.gemm(o.getA(), g, !ta, false, alpha));
          if (o.getC() && wants(o.getC())) {
            float beta = o.getBeta().convertToFloat();
            give(o.getC(), beta == 1.0f ? g : gb.mul(g, beta));
          }
          return success();
        })
        .Case([&](TransposeOp o) {
          SmallVector<int64_t> inverse(o.getPerm().size());
          for (auto [i, p] : llvm::enumerate(o.getPerm()))
            inverse[p] = static_cast<int64_t>(i);
          give(o.getX(), gb.make("tg.transpose", {g}, o.getX().getType(),
                                 {gb.attr("perm", gb.b.getDenseI64ArrayAttr(inverse))}));
          return success();
        })
        .Case<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>([&](Operation *o) {
          give(o->getOperand(0), gb.reshape(g, o->getOperand(0).getType()));
          return success();
        })
        .Case([&](ExpandOp o) { give(o.getX(), g); return success(); })
        .Case([&](ConcatOp o) {
          int64_t axis = o.getAxis(), offset = 0;
          for (Value in : o.getInputs()) {
            int64_t size = typeOf(in).getDimSize(axis);
            if (wants(in))
              give(in, gb.make("tg.slice", {g}, in.getType(),
                               {gb.attr("starts", gb.b.getDenseI64ArrayAttr({offset})),
                                gb.attr("ends", gb.b.getDenseI64ArrayAttr({offset + size})),
                                gb.attr("axes", gb.b.getDenseI64ArrayAttr({axis})),
                                gb.attr("steps", gb.b.getDenseI64ArrayAttr({1}))}));
            offset += size;
          }
          return success();
        })
        .Case([&](SplitOp o) {
          SmallVector<Value> parts;
          for (unsigned k = 0; k < o.getNumResults(); ++k)
            parts.push_back(adj(k) ? adj(k) : gb.zeros(typeOf(o.getResult(k))));
          give(o.getX(), gb.make("tg.concat", parts, o.getX().getType(),
                                 {gb.attr("axis", o.getAxisAttr())}));
          return success();
        })
        .Case([&](SliceOp o) {
          give(o.getX(), gb.make("tg.slice_grad", {g}, o.getX().getType(),
                                 {gb.attr("starts", o.getStartsAttr()),
                                  gb.attr("ends", o.getEndsAttr()),
                                  gb.attr("axes", o.getAxesAttr()),
                                  gb.attr("steps", o.getStepsAttr())}));
          return success();
        })
        .Case([&](GatherOp o) {
          give(o.getX(), gb.make("tg.gather_grad", {g, o.getIndices()}, o.getX().getType(),
                                 {gb.attr("axis", o.getAxisAttr())}));
          return success();
        })
        .Case([&](WhereOp o) {
          Value zero = gb.scalar(0.0, elem);
          auto select = [&](Value a, Value b) {
            return gb.make("tg.where", {o.getCondition(), a, b}, g.getType());
          };
          if (wants(o.getX()))
            give(o.getX(), select(g, zero));
          if (wants(o.getY()))
            give(o.getY(), select(zero, g));
          return success();
        })
        .Case([&](TriluOp o) {
          give(o.getX(), gb.make("tg.trilu", {g}, g.getType(), o->getAttrs()));
          return success();
        })
        .Case<ReduceSumOp, ReduceMeanOp>([&](Operation *o) {
          auto in = typeOf(o->getOperand(0));
          auto axes = o->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
          Shape kept;
          int64_t count = 1;
          for (int64_t d = 0; d < in.getRank(); ++d) {
            bool reduced = axes.empty() || llvm::is_contained(axes, d);
            kept.push_back(reduced ? 1 : in.getDimSize(d));
            count *= reduced ? in.getDimSize(d) : 1;
          }
          Value grad = gb.reshape(g, kept);
          if (isa<ReduceMeanOp>(o))
            grad = gb.mul(grad, 1.0 / static_cast<double>(count));
          give(o->getOperand(0), gb.make("tg.expand", {grad}, in));
          return success();
        })
        .Case([&](ReduceMaxOp o) {
          SmallVector<NamedAttribute> attrs = {gb.attr("axes", o.getAxesAttr())};
          if (o.getKeepdims())
            attrs.push_back(gb.attr("keepdims", o.getKeepdimsAttr()));
          give(o.getX(), gb.make("tg.reduce_max_grad", {o.getX(), o.getResult(), g},
                                 o.getX().getType(), attrs));
          return success();
        })
        .Case([&](SoftmaxOp o) {
          give(o.getX(), gb.make("tg.softmax_grad", {o.getResult(), g}, g.getType(),
                                 {gb.attr("axis", o.getAxisAttr())}));
          return success();
        })
        .Case([&](LogSoftmaxOp o) {
          give(o.getX(), gb.make("tg.log_softmax_grad", {o.getResult(), g}, g.getType(),
                                 {gb.attr("axis", o.getAxisAttr())}));
          return success();
        })
        .Case([&](AttentionOp o) {
          if (o.getBias() && wants(o.getBias()))
            return failure(); // a learned bias has no rule (tg-fuse-attention takes constants)
          if (!g)
            return success();
          SmallVector<Value> operands = {o.getQ(), o.getK(), o.getV(), o.getResult(), o.getLse(), g};
          if (o.getBias())
            operands.push_back(o.getBias());
          OperationState state(gb.loc, "tg.attention_grad");
          state.addOperands(operands);
          // Packed, q, k and v are one value with one gradient.
          SmallVector<Value> inputs = {o.getQ()};
          if (!o.getPacked())
            inputs.append({o.getK(), o.getV()});
          for (Value x : inputs)
            state.addTypes(x.getType());
          state.addAttributes(o->getAttrs());
          Operation *ag = gb.b.create(state);
          for (auto [operand, grad] : llvm::zip(inputs, ag->getResults()))
            give(operand, grad);
          return success();
        })
        .Case([&](LayerNormOp o) { return differentiateLayerNorm(gb, o, g); })
        .Case([&](SoftmaxCrossEntropyLossOp o) {
          if (g) {
            SmallVector<Value> operands = {g, o.getScores(), o.getLabels()};
            if (o.getWeights())
              operands.push_back(o.getWeights());
            SmallVector<NamedAttribute> attrs = {gb.attr("reduction", o.getReductionAttr())};
            if (o.getIgnoreIndexAttr())
              attrs.push_back(gb.attr("ignore_index", o.getIgnoreIndexAttr()));
            give(o.getScores(), gb.make("tg.softmax_cross_entropy_loss_grad", operands,
                                        o.getScores().getType(), attrs));
          }
          // log_prob is log_softmax(scores) along the class dimension.
          if (o.getLogProb())
            if (Value glp = adj(1))
              give(o.getScores(), gb.make("tg.log_softmax_grad", {o.getLogProb(), glp},
                                          glp.getType(),
                                          {gb.attr("axis", gb.b.getI64IntegerAttr(1))}));
          return success();
        })
        .Case<ParamOp, ConstantOp, EqualOp, ShapeOp, ConstantOfShapeOp, RangeOp>(
            [&](Operation *) { return success(); })
        .Default([&](Operation *) { return failure(); });
  }

  LogicalResult differentiateMatMul(GradBuilder &gb, MatMulOp o, Value g) {
    Value a = o.getLhs(), b = o.getRhs();
    auto ta = typeOf(a), tb = typeOf(b);
    int64_t ra = ta.getRank(), rb = tb.getRank();
    if (o.getTransA() || (o.getTransB() && (rb != 2 || ra < 2)))
      return o.emitError("tg-autodiff: transposed matmul operands are differentiated only for "
                         "a matrix read transposed on the right");
    if (o.getTransB()) {
      // y = a · bᵀ, b [n, k]: a weight read transposed (tg-fold-transposes).
      if (active.contains(a))
        accumulate(gb, a, gb.matmul(g, b, false, false)); // g · b
      if (active.contains(b)) {
        // dB = gᵀ · a, the batch folded into the rows: one GEMM.
        int64_t k = ta.getDimSize(ra - 1), n = tb.getDimSize(0);
        int64_t rows = ta.getNumElements() / k;
        accumulate(gb, b, gb.matmul(gb.reshape(g, {rows, n}), gb.reshape(a, {rows, k}), true,
                                    false));
      }
      return success();
    }
    // View 1-D operands as matrices: a [K] as [1, K], b [K] as [K, 1]; the
    // result's dropped dimension comes back as size 1.
    Shape ga(typeOf(g).getShape());
    if (ra == 1)
      ga.insert(ga.end() - (rb == 1 ? 0 : 1), 1);
    if (rb == 1)
      ga.push_back(1);
    Value gm = gb.reshape(g, ga);
    Value am = ra == 1 ? gb.reshape(a, {1, ta.getDimSize(0)}) : a;
    Value bm = rb == 1 ? gb.reshape(b, {tb.getDimSize(0), 1}) : b;
    if (active.contains(a)) {
      Value da = gb.matmul(gm, bm, false, true); // g · bᵀ
      Type target = ra == 1 ? RankedTensorType::get({1, ta.getDimSize(0)}, ta.getElementType())
                            : Type(ta);
      accumulate(gb, a, gb.reshape(gb.sumTo(da, target), ta));
    }
    if (active.contains(b) && rb == 2 && ra > 2) {
      // A weight shared by a stack of rows: fold the batch into the rows,
      // so that dB = aᵀ · g is one GEMM with no batch to sum over.
      int64_t k = ta.getDimSize(ra - 1), n = tb.getDimSize(1);
      int64_t rows = ta.getNumElements() / k;
      accumulate(gb, b, gb.matmul(gb.reshape(a, {rows, k}), gb.reshape(gm, {rows, n}), true,
                                  false));
    } else if (active.contains(b)) {
      Value db = gb.matmul(am, gm, true, false); // aᵀ · g
      Type target = rb == 1 ? RankedTensorType::get({tb.getDimSize(0), 1}, tb.getElementType())
                            : Type(tb);
      accumulate(gb, b, gb.reshape(gb.sumTo(db, target), tb));
    }
    return success();
  }

  LogicalResult differentiateLayerNorm(GradBuilder &gb, LayerNormOp o, Value g) {
    if (!o.getStats().empty())
      differentiateLayerNormStats(gb, o);
    if (!g)
      return success();
    // The gradient needs the forward statistics: recreate the op with them.
    if (o.getStats().empty()) {
      OpBuilder::InsertionGuard guard(gb.b);
      gb.b.setInsertionPoint(o);
      auto x = typeOf(o.getX());
      Shape statShape(x.getShape());
      for (int64_t d = o.getAxis(); d < x.getRank(); ++d)
        statShape[d] = 1;
      auto statType = RankedTensorType::get(statShape, gb.b.getF32Type());
      OperationState state(o.getLoc(), o->getName());
      state.addOperands(o->getOperands());
      state.addTypes({o.getResult().getType(), statType, statType});
      state.addAttributes(o->getAttrs());
      auto withStats = cast<LayerNormOp>(gb.b.create(state));
      o.getResult().replaceAllUsesWith(withStats.getResult());
      o.erase();
      o = withStats;
    }
    SmallVector<Type> types = {o.getX().getType(), o.getScale().getType(),
                               o.getScale().getType()};
    OperationState state(gb.loc, "tg.layer_norm_grad");
    state.addOperands({g, o.getX(), o.getScale(), o.getStats()[0], o.getStats()[1]});
    state.addTypes(types);
    state.addAttribute("axis", o.getAxisAttr());
    Operation *lng = gb.b.create(state);
    accumulate(gb, o.getX(), lng->getResult(0));
    accumulate(gb, o.getScale(), lng->getResult(1));
    if (o.getBias())
      accumulate(gb, o.getBias(), lng->getResult(2));
    return success();
  }

  /// Where the graph reads the statistics: with n normalised elements,
  /// d mean / dx = 1/n and d inv_std_dev / dx = -inv_std_dev^3 (x - mean) / n.
  void differentiateLayerNormStats(GradBuilder &gb, LayerNormOp o) {
    auto adjointOf = [&](Value v) {
      auto it = adjoints.find(v);
      return it == adjoints.end() ? Value() : it->second;
    };
    Value gMean = adjointOf(o.getStats()[0]), gInv = adjointOf(o.getStats()[1]);
    Value x = o.getX();
    if ((!gMean && !gInv) || !active.contains(x))
      return;
    auto xType = typeOf(x);
    Type elem = xType.getElementType();
    // The statistics are f32 whatever x is.
    auto asX = [&](Value v) {
      return typeOf(v).getElementType() == elem
                 ? v
                 : gb.make("tg.cast", {v}, RankedTensorType::get(typeOf(v).getShape(), elem));
    };
    double n = 1.0;
    for (int64_t d = o.getAxis(); d < xType.getRank(); ++d)
      n *= static_cast<double>(xType.getDimSize(d));
    Value dx;
    if (gMean)
      dx = gb.make("tg.expand", {gb.mul(asX(gMean), 1.0 / n)}, xType);
    if (gInv) {
      Value inv = asX(o.getStats()[1]);
      Value cube = gb.mul(inv, gb.mul(inv, inv));
      Value term = gb.mul(gb.mul(gb.mul(asX(gInv), cube), -1.0 / n),
                          gb.sub(x, asX(o.getStats()[0])));
      dx = dx ? gb.add(dx, term) : term;
    }
    accumulate(gb, x, dx);
  }
};

} // namespace

FailureOr<SmallVector<Value>> hmcc::tg::reverseSweep(OpBuilder &builder, Block &body,
                                                     Operation *end, ArrayRef<Value> sources,
                                                     Value y) {
  ReverseMode rm;
  if (failed(rm.sweep(builder, body, end, sources, y)))
    return failure();
  SmallVector<Value> result;
  for (Value v : sources)
    result.push_back(rm.adjoints.lookup(v));
  return result;
}

Value hmcc::tg::addGradients(OpBuilder &builder, Location loc, Value a, Value b) {
  return GradBuilder(builder, loc).add(a, b);
}

Value hmcc::tg::zerosOf(OpBuilder &builder, Location loc, RankedTensorType type) {
  return GradBuilder(builder, loc).zeros(type);
}
