//===- TGOps.cpp - verifiers and folders of the tg ops --------------------===//
//
// Every verifier recomputes the result type from the operands and attributes
// and reports the first disagreement, naming the operand or attribute.
//
//===----------------------------------------------------------------------===//

#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace hmcc::tg;

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Checks that `value` has exactly the given shape and element type.
LogicalResult expectType(Operation *op, Value value, ArrayRef<int64_t> shape,
                         Type elementType, StringRef what = "result") {
  RankedTensorType actual = tensorType(value);
  auto expected = RankedTensorType::get(shape, elementType);
  if (actual != expected)
    return op->emitOpError() << what << " type " << actual
                             << " does not match the expected " << expected;
  return success();
}

/// The element type of a result computed in f32 from `in`'s: `in`'s, or
/// bf16 where the op writes the f32 value rounded (tg-fold-rounding).
Type roundedResultType(Operation *op, RankedTensorType in) {
  Type result = tensorType(op->getResult(0)).getElementType();
  return in.getElementType().isF32() && result.isBF16() ? result : in.getElementType();
}

LogicalResult checkAxis(Operation *op, int64_t axis, int64_t rank,
                        StringRef name = "axis") {
  if (axis < 0 || axis >= rank)
    return op->emitOpError() << name << " " << axis << " is out of range for rank "
                             << rank;
  return success();
}

/// Axes must be listed in increasing order without repeats, each in [0, rank).
LogicalResult checkAxisList(Operation *op, ArrayRef<int64_t> axes, int64_t rank,
                            StringRef name = "axes") {
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (failed(checkAxis(op, axis, rank, name)))
      return failure();
    if (i > 0 && axes[i - 1] >= axis)
      return op->emitOpError() << name << " must be sorted and unique";
  }
  return success();
}

LogicalResult sameElementType(Operation *op, Value a, Value b, StringRef what) {
  if (tensorType(a).getElementType() != tensorType(b).getElementType())
    return op->emitOpError() << what << " must have the same element type, got "
                             << tensorType(a).getElementType() << " and "
                             << tensorType(b).getElementType();
  return success();
}

LogicalResult verifyBroadcastBinary(Operation *op, Value lhs, Value rhs,
                                    Value result, Type resultElement) {
  auto shape = broadcastShapes(tensorType(lhs).getShape(), tensorType(rhs).getShape());
  if (!shape)
    return op->emitOpError() << "operand shapes " << tensorType(lhs) << " and "
                             << tensorType(rhs) << " do not broadcast";
  return expectType(op, result, *shape, resultElement);
}

} // namespace

//===----------------------------------------------------------------------===//
// Leaves
//===----------------------------------------------------------------------===//

LogicalResult ParameterOp::verify() {
  if ((getOffset() || getLength()) && !getLocation())
    return emitOpError("offset and length need a location");
  if (getLength()) {
    int64_t bytes = tensorBytes(getType());
    if (static_cast<int64_t>(*getLength()) != bytes)
      return emitOpError() << "length " << *getLength() << " does not match the "
                           << bytes << " bytes of " << getType();
  }
  if (auto value = getInitialValueAttr(); value && value.getType() != getType())
    return emitOpError() << "initial_value has type " << value.getType() << ", expected "
                         << getType();
  return success();
}

LogicalResult ParamOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto decl = symbols.lookupNearestSymbolFrom<ParameterOp>(*this, getNameAttr());
  if (!decl)
    return emitOpError() << "'" << getName() << "' is not a declared tg.parameter";
  if (decl.getType() != getType())
    return emitOpError() << "type " << getType() << " differs from the declared "
                         << decl.getType();
  return success();
}

// Parameters print as %<name>, e.g. %h.0.attn.c_attn.weight.
void ParamOp::getAsmResultNames(OpAsmSetValueNameFn setName) {
  setName(getResult(), getName());
}

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getValue().getType());
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

#define TG_BROADCAST_VERIFIER(OP, ELEMENT)                                     \
  LogicalResult OP::verify() {                                                 \
    if (failed(sameElementType(*this, getLhs(), getRhs(), "operands")))        \
      return failure();                                                        \
    return verifyBroadcastBinary(*this, getLhs(), getRhs(), getResult(),       \
                                 ELEMENT);                                     \
  }
TG_BROADCAST_VERIFIER(AddOp, getLhs().getType().getElementType())
TG_BROADCAST_VERIFIER(SubOp, getLhs().getType().getElementType())
TG_BROADCAST_VERIFIER(MulOp, getLhs().getType().getElementType())
TG_BROADCAST_VERIFIER(DivOp, getLhs().getType().getElementType())
TG_BROADCAST_VERIFIER(EqualOp, IntegerType::get(getContext(), 1))
#undef TG_BROADCAST_VERIFIER

// ONNX Pow allows an exponent of another numeric type than the base.
LogicalResult PowOp::verify() {
  return verifyBroadcastBinary(*this, getLhs(), getRhs(), getResult(),
                               getLhs().getType().getElementType());
}

LogicalResult WhereOp::verify() {
  if (failed(sameElementType(*this, getX(), getY(), "x and y")))
    return failure();
  auto xy = broadcastShapes(getX().getType().getShape(), getY().getType().getShape());
  auto all = xy ? broadcastShapes(getCondition().getType().getShape(), *xy) : xy;
  if (!all)
    return emitOpError("operand shapes do not broadcast");
  return expectType(*this, getResult(), *all, getX().getType().getElementType());
}

int hmcc::tg::fusedArity(StringRef name) {
  return llvm::StringSwitch<int>(name)
      .Cases({"add", "sub", "mul", "div", "pow", "relu_grad"}, 2)
      .Cases({"exp", "log", "sqrt", "neg", "reciprocal", "tanh", "sigmoid", "erf", "relu"}, 1)
      .Case("where", 3)
      .Default(0);
}

LogicalResult FusedOp::verify() {
  auto result = getResult().getType();
  if (!result.getElementType().isF32() && !result.getElementType().isBF16())
    return emitOpError("result must be f32 or bf16");
  ArrayRef<int64_t> args = getArgs();
  int64_t nIn = getInputs().size(), nCode = getOps().size();
  if (nCode == 0)
    return emitOpError("has no ops");
  if (int64_t(args.size()) != 3 * nCode)
    return emitOpError() << "has " << args.size() << " args for " << nCode
                         << " ops: it needs 3 per op";
  for (auto [j, v] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(v.getType());
    Type e = type.getElementType();
    if (!e.isF32() && !e.isInteger(1))
      return emitOpError() << "input " << j << " must be f32 or i1, not " << e;
    auto shape = broadcastShapes(type.getShape(), result.getShape());
    if (!shape || ArrayRef<int64_t>(*shape) != result.getShape())
      return emitOpError() << "input " << j << " of type " << type
                           << " does not broadcast to the result";
  }
  for (int64_t i = 0; i < nCode; ++i) {
    StringRef name = cast<StringAttr>(getOps()[i]).getValue();
    int arity = fusedArity(name);
    if (arity == 0)
      return emitOpError() << "op " << i << " '" << name << "' is not an elementwise op it knows";
    for (int k = 0; k < 3; ++k) {
      int64_t a = args[3 * i + k];
      if (k >= arity) {
        if (a != -1)
          return emitOpError() << "op " << i << " (" << name << ") takes " << arity
                               << " operands but arg " << k << " is " << a << ", not -1";
        continue;
      }
      if (a < 0 || a >= nIn + i)
        return emitOpError() << "op " << i << " (" << name << ") arg " << k << " is " << a
                             << ": it must name an input or an earlier op";
      bool isBool = a < nIn && cast<RankedTensorType>(getInputs()[a].getType())
                                   .getElementType()
                                   .isInteger(1);
      if (isBool != (name == "where" && k == 0))
        return emitOpError() << "op " << i << " (" << name << ") arg " << k
                             << (isBool ? " is a bool input" : " must be a bool input")
                             << (isBool ? ": only where's condition may be" : "");
    }
  }
  return success();
}

AttentionDims hmcc::tg::attentionDims(RankedTensorType q, RankedTensorType k, bool bthd) {
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape();
  int seq = bthd ? 1 : 2, head = bthd ? 2 : 1;
  return {qs[0], qs[head], ks[head], qs[seq], ks[seq], qs[3]};
}

/// Packed: q is B x T x (H + 2 Hk) x D and `out` (the result) B x T x H x D.
static AttentionDims packedDims(RankedTensorType q, RankedTensorType out) {
  ArrayRef<int64_t> qs = q.getShape();
  int64_t heads = out.getDimSize(2);
  return {qs[0], heads, (qs[2] - heads) / 2, qs[1], qs[1], qs[3]};
}

AttentionDims hmcc::tg::attentionDims(AttentionOp op) {
  return op.getPacked() ? packedDims(op.getQ().getType(), op.getResult().getType())
                        : attentionDims(op.getQ().getType(), op.getK().getType(), op.getBthd());
}

AttentionDims hmcc::tg::attentionDims(AttentionGradOp op) {
  return op.getPacked() ? packedDims(op.getQ().getType(), op.getOut().getType())
                        : attentionDims(op.getQ().getType(), op.getK().getType(), op.getBthd());
}

/// The shape rules of tg.attention and tg.attention_grad; `out` is the
/// forward's result (its type), `outName` what the op calls it.
static LogicalResult verifyAttention(Operation *op, Value q, Value k, Value v, Value bias,
                                     Type out, StringRef outName, bool causal, bool bthd,
                                     bool packed, float dropout, std::optional<uint64_t> stream) {
  if (!(dropout >= 0.0f && dropout < 1.0f))
    return op->emitOpError() << "dropout " << dropout << " must be in [0, 1)";
  if (dropout > 0.0f && !stream)
    return op->emitOpError("dropout needs a mask stream (the backward draws the mask again)");
  auto qt = cast<RankedTensorType>(q.getType()), kt = cast<RankedTensorType>(k.getType());
  if (qt.getRank() != 4 || kt.getRank() != 4 || v.getType() != kt)
    return op->emitOpError("needs q of rank 4 and k, v of one rank-4 type, not ")
           << qt << ", " << kt << ", " << v.getType();
  if (!qt.getElementType().isF32() || !kt.getElementType().isF32())
    return op->emitOpError("q, k and v must be f32");
  AttentionDims d;
  if (packed) {
    auto ot = cast<RankedTensorType>(out);
    if (!bthd || q != k || q != v)
      return op->emitOpError("packed needs bthd and q, k and v one value");
    if (ot.getRank() != 4 || ot.getDimSize(0) != qt.getDimSize(0) ||
        ot.getDimSize(1) != qt.getDimSize(1) || ot.getDimSize(3) != qt.getDimSize(3))
      return op->emitOpError() << outName << " " << ot << " does not fit the packed " << qt
                               << ": same batch, sequence and head_dim";
    d = packedDims(qt, ot);
    if (d.heads < 1 || d.kvHeads < 1 || d.heads + 2 * d.kvHeads != qt.getDimSize(2))
      return op->emitOpError() << "packed " << qt << " must hold " << d.heads
                               << " query heads and two equal groups of kv heads";
  } else {
    d = attentionDims(qt, kt, bthd);
  }
  if (kt.getDimSize(0) != d.batch || kt.getDimSize(3) != d.headDim || d.kvHeads == 0 ||
      d.heads % d.kvHeads != 0)
    return op->emitOpError() << "k " << kt << " does not fit q " << qt
                             << ": same batch and head_dim, heads a multiple of kv heads";
  if (causal && d.queries != d.keys)
    return op->emitOpError() << "causal needs as many queries as keys, not " << d.queries
                             << " and " << d.keys;
  if (bias) {
    auto bt = cast<RankedTensorType>(bias.getType());
    SmallVector<int64_t> full = {d.batch, d.heads, d.queries, d.keys};
    auto shape = broadcastShapes(bt.getShape(), full);
    if (!shape || ArrayRef<int64_t>(*shape) != ArrayRef<int64_t>(full))
      return op->emitOpError() << "bias " << bt << " does not broadcast to the scores "
                               << RankedTensorType::get(full, qt.getElementType());
  }
  return success();
}

LogicalResult AttentionOp::verify() {
  if (failed(verifyAttention(*this, getQ(), getK(), getV(), getBias(), getResult().getType(),
                             "result", getCausal(), getBthd(), getPacked(),
                             getDropout().convertToFloat(), getStream())))
    return failure();
  auto q = getQ().getType();
  AttentionDims d = attentionDims(*this);
  SmallVector<int64_t> result(q.getShape());
  if (getPacked())
    result = {d.batch, d.queries, d.heads, d.headDim};
  if (failed(expectType(*this, getResult(), result, q.getElementType())))
    return failure();
  // lse: batch x heads x queries.
  return expectType(*this, getLse(), {d.batch, d.heads, d.queries}, q.getElementType(), "lse");
}

LogicalResult AttentionGradOp::verify() {
  if (failed(verifyAttention(*this, getQ(), getK(), getV(), getBias(), getOut().getType(), "out",
                             getCausal(), getBthd(), getPacked(), getDropout().convertToFloat(),
                             getStream())))
    return failure();
  auto q = getQ().getType();
  if (!getPacked() && getOut().getType() != q)
    return emitOpError("out and grad must have q's type");
  if (getGrad().getType() != getOut().getType())
    return emitOpError("grad must have out's type");
  AttentionDims d = attentionDims(*this);
  auto lse = RankedTensorType::get({d.batch, d.heads, d.queries}, q.getElementType());
  if (getLse().getType() != lse)
    return emitOpError() << "lse must be " << lse;
  if (getPacked()) {
    if (getGrads().size() != 1 || getGrads()[0].getType() != q)
      return emitOpError("packed: one result, the gradient of q, k and v, of their type");
  } else if (getGrads().size() != 3 || getGrads()[0].getType() != q ||
             getGrads()[1].getType() != getK().getType() ||
             getGrads()[2].getType() != getV().getType()) {
    return emitOpError("dq, dk and dv must have the types of q, k and v");
  }
  return success();
}

LogicalResult CastOp::verify() {
  if (getNearestEven() && !(getX().getType().getElementType().isF32() &&
                            getResult().getType().getElementType().isBF16()))
    return emitOpError("nearest_even rounds f32 to bf16 only");
  return expectType(*this, getResult(), getX().getType().getShape(),
                    getResult().getType().getElementType());
}

LogicalResult DropoutOp::verify() {
  float ratio = getRatio().convertToFloat();
  if (!(ratio >= 0.0f && ratio < 1.0f))
    return emitOpError() << "ratio " << ratio << " must be in [0, 1)";
  if (failed(expectType(*this, getResult(), getX().getType().getShape(),
                        getX().getType().getElementType())))
    return failure();
  return expectType(*this, getMask(), getX().getType().getShape(),
                    getMask().getType().getElementType(), "mask");
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

/// The element type a GEMM's result must have: its operands', or f32 for
/// bf16 operands summed in f32 (tg-precision).
static Type productType(Value operand, Value result) {
  Type t = tensorType(operand).getElementType(), r = tensorType(result).getElementType();
  return t.isBF16() && r.isF32() ? r : t;
}

/// A GEMM's factors: of one element type, or under bf16 products
/// (tg.math) one bf16 and one f32, which the kernel rounds.
static LogicalResult verifyFactors(Operation *op, Value a, Value b, StringRef what) {
  Type ta = tensorType(a).getElementType(), tb = tensorType(b).getElementType();
  if (hasBf16Math(op) && ta != tb && (ta.isBF16() || tb.isBF16()) && (ta.isF32() || tb.isF32()))
    return success();
  return sameElementType(op, a, b, what);
}

LogicalResult MatMulOp::verify() {
  if (failed(verifyFactors(*this, getLhs(), getRhs(), "operands")))
    return failure();
  auto transposed = [](ArrayRef<int64_t> shape, bool trans) {
    Shape s(shape);
    if (trans && s.size() >= 2)
      std::swap(s[s.size() - 1], s[s.size() - 2]);
    return s;
  };
  auto shape = matmulShape(transposed(getLhs().getType().getShape(), getTransA()),
                           transposed(getRhs().getType().getShape(), getTransB()));
  if (!shape)
    return emitOpError() << "cannot multiply " << getLhs().getType() << " by "
                         << getRhs().getType();
  return expectType(*this, getResult(), *shape, productType(getLhs(), getResult()));
}

LogicalResult GemmOp::verify() {
  auto a = getA().getType(), b = getB().getType();
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOpError("operands a and b must be matrices");
  if (failed(verifyFactors(*this, getA(), getB(), "a and b")))
    return failure();
  int64_t m = getTransA() ? a.getDimSize(1) : a.getDimSize(0);
  int64_t k = getTransA() ? a.getDimSize(0) : a.getDimSize(1);
  int64_t kb = getTransB() ? b.getDimSize(1) : b.getDimSize(0);
  int64_t n = getTransB() ? b.getDimSize(0) : b.getDimSize(1);
  if (k != kb)
    return emitOpError() << "contracted dimensions differ: " << k << " and " << kb;
  if (Value c = getC()) {
    auto shape = broadcastShapes(tensorType(c).getShape(), {m, n});
    if (!shape || *shape != Shape{m, n})
      return emitOpError() << "c of type " << tensorType(c)
                           << " does not broadcast to " << m << "x" << n;
  }
  Type element = productType(getA(), getResult());
  if (Value c = getC(); c && tensorType(c).getElementType() != element)
    return emitOpError() << "c must have the result's element type " << element;
  return expectType(*this, getResult(), {m, n}, element);
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  auto in = getX().getType();
  ArrayRef<int64_t> perm = getPerm();
  if (static_cast<int64_t>(perm.size()) != in.getRank())
    return emitOpError() << "perm has " << perm.size() << " entries for rank "
                         << in.getRank();
  Shape shape;
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t p : perm) {
    if (failed(checkAxis(*this, p, in.getRank(), "perm entry")))
      return failure();
    if (!seen.insert(p).second)
      return emitOpError("perm is not a permutation");
    shape.push_back(in.getDimSize(p));
  }
  return expectType(*this, getResult(), shape, in.getElementType());
}

LogicalResult ReshapeOp::verify() {
  if (failed(sameElementType(*this, getX(), getResult(), "operand and result")))
    return failure();
  if (getX().getType().getNumElements() != getResult().getType().getNumElements())
    return emitOpError() << "cannot reshape " << getX().getType() << " to "
                         << getResult().getType() << ": element counts differ";
  return success();
}

LogicalResult FlattenOp::verify() {
  auto in = getX().getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis > in.getRank())
    return emitOpError() << "axis " << axis << " is out of range for rank "
                         << in.getRank();
  int64_t rows = numElements(in.getShape().take_front(axis));
  int64_t cols = numElements(in.getShape().drop_front(axis));
  return expectType(*this, getResult(), {rows, cols}, in.getElementType());
}

LogicalResult SqueezeOp::verify() {
  auto in = getX().getType();
  if (failed(checkAxisList(*this, getAxes(), in.getRank())))
    return failure();
  Shape shape;
  for (int64_t i = 0; i < in.getRank(); ++i) {
    if (!llvm::is_contained(getAxes(), i)) {
      shape.push_back(in.getDimSize(i));
    } else if (in.getDimSize(i) != 1) {
      return emitOpError() << "cannot squeeze dimension " << i << " of size "
                           << in.getDimSize(i);
    }
  }
  return expectType(*this, getResult(), shape, in.getElementType());
}

LogicalResult UnsqueezeOp::verify() {
  auto in = getX().getType();
  int64_t rank = in.getRank() + static_cast<int64_t>(getAxes().size());
  if (failed(checkAxisList(*this, getAxes(), rank)))
    return failure();
  Shape shape;
  auto dims = in.getShape().begin();
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(llvm::is_contained(getAxes(), i) ? 1 : *dims++);
  return expectType(*this, getResult(), shape, in.getElementType());
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  auto first = tensorType(getInputs().front());
  if (failed(checkAxis(*this, getAxis(), first.getRank())))
    return failure();
  Shape shape(first.getShape());
  for (Value v : getInputs().drop_front()) {
    auto t = tensorType(v);
    if (t.getRank() != first.getRank() || t.getElementType() != first.getElementType())
      return emitOpError() << "input " << t << " does not match " << first;
    for (int64_t i = 0; i < t.getRank(); ++i) {
      if (i == static_cast<int64_t>(getAxis()))
        shape[i] += t.getDimSize(i);
      else if (t.getDimSize(i) != shape[i])
        return emitOpError() << "inputs differ in dimension " << i;
    }
  }
  return expectType(*this, getResult(), shape, first.getElementType());
}

LogicalResult SplitOp::verify() {
  auto in = getX().getType();
  if (failed(checkAxis(*this, getAxis(), in.getRank())))
    return failure();
  ArrayRef<int64_t> sizes = getSizes();
  if (sizes.size() != getNumResults())
    return emitOpError() << sizes.size() << " sizes for " << getNumResults()
                         << " results";
  int64_t total = 0;
  for (auto [size, result] : llvm::zip(sizes, getResults())) {
    if (size < 0)
      return emitOpError("sizes must not be negative");
    Shape shape(in.getShape());
    shape[getAxis()] = size;
    total += size;
    if (failed(expectType(*this, result, shape, in.getElementType())))
      return failure();
  }
  if (total != in.getDimSize(getAxis()))
    return emitOpError() << "sizes add up to " << total << ", not to dimension "
                         << in.getDimSize(getAxis());
  return success();
}

/// Checks slice attributes against the sliced type `in` and that `sliced`
/// has the slice's type.
static LogicalResult verifySlice(Operation *op, RankedTensorType in, ArrayRef<int64_t> starts,
                                 ArrayRef<int64_t> ends, ArrayRef<int64_t> axes,
                                 ArrayRef<int64_t> steps, Value sliced, StringRef what) {
  size_t n = axes.size();
  if (starts.size() != n || ends.size() != n || steps.size() != n)
    return op->emitOpError("starts, ends, axes and steps must have the same length");
  Shape shape(in.getShape());
  llvm::SmallSet<int64_t, 8> seen;
  for (size_t i = 0; i < n; ++i) {
    int64_t axis = axes[i], start = starts[i], end = ends[i], step = steps[i];
    if (failed(checkAxis(op, axis, in.getRank())))
      return failure();
    if (!seen.insert(axis).second)
      return op->emitOpError() << "axis " << axis << " is sliced twice";
    if (step == 0)
      return op->emitOpError("steps must be non-zero");
    int64_t dim = in.getDimSize(axis);
    bool inRange = step > 0 ? (start >= 0 && start <= dim && end >= 0 && end <= dim)
                            : (start >= 0 && start < dim && end >= -1 && end < dim);
    if (!inRange)
      return op->emitOpError() << "bounds [" << start << ", " << end << ") step "
                               << step << " are not clamped to dimension " << dim;
    shape[axis] = sliceExtent(start, end, step);
  }
  return expectType(op, sliced, shape, in.getElementType(), what);
}

LogicalResult SliceOp::verify() {
  return verifySlice(*this, getX().getType(), getStarts(), getEnds(), getAxes(),
                     getSteps(), getResult(), "result");
}

/// Checks that `gathered` has the type of gathering `in` with `indices`.
static LogicalResult verifyGather(Operation *op, RankedTensorType in, Value indices,
                                  int64_t axis, Value gathered, StringRef what) {
  if (failed(checkAxis(op, axis, in.getRank())))
    return failure();
  Shape shape(in.getShape().take_front(axis));
  llvm::append_range(shape, tensorType(indices).getShape());
  llvm::append_range(shape, in.getShape().drop_front(axis + 1));
  return expectType(op, gathered, shape, in.getElementType(), what);
}

LogicalResult GatherOp::verify() {
  return verifyGather(*this, getX().getType(), getIndices(), getAxis(), getResult(), "result");
}

LogicalResult ExpandOp::verify() {
  auto out = getResult().getType();
  auto shape = broadcastShapes(getX().getType().getShape(), out.getShape());
  if (!shape || llvm::ArrayRef<int64_t>(*shape) != out.getShape())
    return emitOpError() << "cannot expand " << getX().getType() << " to " << out;
  return expectType(*this, getResult(), out.getShape(), getX().getType().getElementType());
}

LogicalResult TriluOp::verify() {
  if (getX().getType().getRank() < 2)
    return emitOpError("needs a tensor of rank 2 or more");
  return expectType(*this, getResult(), getX().getType().getShape(),
                    getX().getType().getElementType());
}

LogicalResult ShapeOp::verify() {
  int64_t rank = getX().getType().getRank();
  auto start = static_cast<int64_t>(getStart()), end = static_cast<int64_t>(getEnd());
  if (start < 0 || start > end || end > rank)
    return emitOpError() << "start " << start << " and end " << end
                         << " must satisfy 0 <= start <= end <= " << rank;
  return expectType(*this, getResult(), {end - start},
                    IntegerType::get(getContext(), 64));
}

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto dims = getX().getType().getShape().slice(getStart(), getEnd() - getStart());
  return DenseIntElementsAttr::get(getResult().getType(), dims);
}

LogicalResult ConstantOfShapeOp::verify() {
  auto shapeType = getShape().getType();
  auto out = getResult().getType();
  if (shapeType.getRank() != 1 || shapeType.getDimSize(0) != out.getRank())
    return emitOpError() << "shape operand " << shapeType << " does not describe "
                         << out;
  if (getValue().getType() != out.getElementType())
    return emitOpError() << "value of type " << getValue().getType()
                         << " does not match the element type " << out.getElementType();
  return success();
}

LogicalResult RangeOp::verify() {
  for (Value v : {getStart(), getLimit(), getDelta()})
    if (tensorType(v).getRank() != 0)
      return emitOpError("start, limit and delta must be scalars");
  if (failed(sameElementType(*this, getStart(), getLimit(), "start and limit")) ||
      failed(sameElementType(*this, getStart(), getDelta(), "start and delta")) ||
      failed(sameElementType(*this, getStart(), getResult(), "start and result")))
    return failure();
  if (getResult().getType().getRank() != 1)
    return emitOpError("result must be 1-D");
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and normalisations
//===----------------------------------------------------------------------===//

/// Checks that `reduced` has the type of reducing `in` over `axes`.
static LogicalResult verifyReduction(Operation *op, RankedTensorType in, ArrayRef<int64_t> axes,
                                     bool keepdims, Value reduced, StringRef what) {
  if (failed(checkAxisList(op, axes, in.getRank())))
    return failure();
  Shape shape;
  for (int64_t i = 0; i < in.getRank(); ++i) {
    bool isReduced = axes.empty() || llvm::is_contained(axes, i);
    if (!isReduced)
      shape.push_back(in.getDimSize(i));
    else if (keepdims)
      shape.push_back(1);
  }
  return expectType(op, reduced, shape, in.getElementType(), what);
}

template <typename ReduceOp>
static LogicalResult verifyReduce(ReduceOp op) {
  return verifyReduction(op, op.getX().getType(), op.getAxes(), op.getKeepdims(),
                         op.getResult(), "result");
}

LogicalResult ReduceMeanOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }

LogicalResult SoftmaxOp::verify() {
  return checkAxis(*this, getAxis(), getX().getType().getRank());
}
LogicalResult LogSoftmaxOp::verify() {
  return checkAxis(*this, getAxis(), getX().getType().getRank());
}

/// The shape of layer_norm's mean and inverse standard deviation: the
/// input's, with the normalised dimensions set to 1.
static Shape layerNormStatsShape(RankedTensorType x, int64_t axis) {
  Shape shape(x.getShape());
  for (int64_t d = axis; d < x.getRank(); ++d)
    shape[d] = 1;
  return shape;
}

LogicalResult LayerNormOp::verify() {
  auto in = getX().getType();
  if (failed(checkAxis(*this, getAxis(), in.getRank())))
    return failure();
  ArrayRef<int64_t> normalized = in.getShape().drop_front(getAxis());
  if (failed(expectType(*this, getScale(), normalized, in.getElementType(), "scale")))
    return failure();
  if (getBias() &&
      failed(expectType(*this, getBias(), normalized, in.getElementType(), "bias")))
    return failure();
  Shape statShape = layerNormStatsShape(in, getAxis());
  Type f32 = Float32Type::get(getContext());
  if (!getStats().empty()) {
    if (getStats().size() != 2)
      return emitOpError("stats must be empty or hold the mean and inv_std_dev");
    if (failed(expectType(*this, getStats()[0], statShape, f32, "mean")) ||
        failed(expectType(*this, getStats()[1], statShape, f32, "inv_std_dev")))
      return failure();
  }
  return expectType(*this, getResult(), in.getShape(), roundedResultType(*this, in));
}

LogicalResult SoftmaxCrossEntropyLossOp::verify() {
  auto scores = getScores().getType();
  if (scores.getRank() < 2)
    return emitOpError("scores must have rank 2 or more (N x C x ...)");
  Shape labelShape(scores.getShape());
  labelShape.erase(labelShape.begin() + 1);
  if (getLabels().getType().getShape() != ArrayRef<int64_t>(labelShape))
    return emitOpError() << "labels " << getLabels().getType()
                         << " do not match scores " << scores;
  if (getWeights() && failed(expectType(*this, getWeights(), {scores.getDimSize(1)},
                                        scores.getElementType(), "weights")))
    return failure();
  if (getLogProb() &&
      failed(expectType(*this, getLogProb(), scores.getShape(), scores.getElementType(),
                        "log_prob")))
    return failure();
  StringRef reduction = getReduction();
  if (reduction == "none")
    return expectType(*this, getResult(), labelShape, scores.getElementType());
  if (reduction != "mean" && reduction != "sum")
    return emitOpError() << "reduction must be \"mean\", \"sum\" or \"none\", not \""
                         << reduction << "\"";
  return expectType(*this, getResult(), {}, scores.getElementType());
}

//===----------------------------------------------------------------------===//
// Gradient ops
//===----------------------------------------------------------------------===//

LogicalResult SumToOp::verify() {
  auto in = getX().getType(), out = getResult().getType();
  auto shape = broadcastShapes(out.getShape(), in.getShape());
  if (!shape || ArrayRef<int64_t>(*shape) != in.getShape() ||
      in.getElementType() != out.getElementType())
    return emitOpError() << out << " does not broadcast to " << in;
  return success();
}

LogicalResult DropoutGradOp::verify() {
  float ratio = getRatio().convertToFloat();
  if (!(ratio >= 0.0f && ratio < 1.0f))
    return emitOpError() << "ratio " << ratio << " must be in [0, 1)";
  return expectType(*this, getMask(), getGrad().getType().getShape(),
                    getMask().getType().getElementType(), "mask");
}

LogicalResult SliceGradOp::verify() {
  return verifySlice(*this, getResult().getType(), getStarts(), getEnds(), getAxes(),
                     getSteps(), getGrad(), "grad");
}

LogicalResult GatherGradOp::verify() {
  return verifyGather(*this, getResult().getType(), getIndices(), getAxis(), getGrad(), "grad");
}

LogicalResult ReduceMaxGradOp::verify() {
  auto in = getX().getType();
  if (failed(verifyReduction(*this, in, getAxes(), getKeepdims(), getMax(), "max")) ||
      failed(verifyReduction(*this, in, getAxes(), getKeepdims(), getGrad(), "grad")))
    return failure();
  return expectType(*this, getResult(), in.getShape(), in.getElementType());
}

LogicalResult GradientOp::verify() {
  if (getXs().size() != getNumResults())
    return emitOpError() << getXs().size() << " xs but " << getNumResults() << " results";
  for (auto [i, x] : llvm::enumerate(getXs()))
    if (x.getType() != getResult(i).getType())
      return emitOpError() << "result " << i << " must have the type of xs[" << i << "]";
  return success();
}

LogicalResult SoftmaxGradOp::verify() {
  return checkAxis(*this, getAxis(), getY().getType().getRank());
}
LogicalResult LogSoftmaxGradOp::verify() {
  return checkAxis(*this, getAxis(), getY().getType().getRank());
}

LogicalResult LayerNormGradOp::verify() {
  auto in = getX().getType();
  if (failed(checkAxis(*this, getAxis(), in.getRank())))
    return failure();
  ArrayRef<int64_t> normalized = in.getShape().drop_front(getAxis());
  Shape statShape = layerNormStatsShape(in, getAxis());
  Type f32 = Float32Type::get(getContext());
  if (failed(expectType(*this, getGrad(), in.getShape(), in.getElementType(), "grad")) ||
      failed(expectType(*this, getScale(), normalized, in.getElementType(), "scale")) ||
      failed(expectType(*this, getMean(), statShape, f32, "mean")) ||
      failed(expectType(*this, getInvStdDev(), statShape, f32, "inv_std_dev")) ||
      failed(expectType(*this, getDx(), in.getShape(), in.getElementType(), "dx")) ||
      failed(expectType(*this, getDscale(), normalized, in.getElementType(), "dscale")))
    return failure();
  return expectType(*this, getDbias(), normalized, in.getElementType(), "dbias");
}

LogicalResult SoftmaxCrossEntropyLossGradOp::verify() {
  auto scores = getScores().getType();
  if (scores.getRank() < 2)
    return emitOpError("scores must have rank 2 or more (N x C x ...)");
  Shape labelShape(scores.getShape());
  labelShape.erase(labelShape.begin() + 1);
  if (getLabels().getType().getShape() != ArrayRef<int64_t>(labelShape))
    return emitOpError() << "labels " << getLabels().getType()
                         << " do not match scores " << scores;
  StringRef reduction = getReduction();
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return emitOpError() << "reduction must be \"mean\", \"sum\" or \"none\", not \""
                         << reduction << "\"";
  Shape gradShape = reduction == "none" ? labelShape : Shape{};
  if (failed(expectType(*this, getGrad(), gradShape, scores.getElementType(), "grad")))
    return failure();
  return expectType(*this, getResult(), scores.getShape(), roundedResultType(*this, scores));
}


//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

namespace {

/// Looks up `ref`; it must be a tg.parameter (isParam) or a tg.state of the
/// given type.
LogicalResult checkTensorSymbol(Operation *op, SymbolTableCollection &symbols,
                                FlatSymbolRefAttr ref, Type type, bool isParam,
                                StringRef what) {
  Operation *decl = symbols.lookupNearestSymbolFrom(op, ref);
  Type declared;
  if (auto p = dyn_cast_or_null<ParameterOp>(decl); p && isParam)
    declared = p.getType();
  else if (auto s = dyn_cast_or_null<StateOp>(decl); s && !isParam)
    declared = s.getType();
  else
    return op->emitOpError() << what << " " << ref << " is not a declared "
                             << (isParam ? "tg.parameter" : "tg.state");
  if (declared != type)
    return op->emitOpError() << what << " " << ref << " has type " << declared
                             << ", expected " << type;
  return success();
}

Type withElement(Type type, Type element) {
  return RankedTensorType::get(cast<RankedTensorType>(type).getShape(), element);
}

Type absmaxType(Type type) {
  auto t = cast<RankedTensorType>(type);
  int64_t blocks = (t.getNumElements() + k8bitBlock - 1) / k8bitBlock;
  return RankedTensorType::get({blocks}, Float32Type::get(type.getContext()));
}

} // namespace

LogicalResult OnnxOptimizerOp::verify() {
  StringRef kind = getKind();
  if (kind != "adagrad" && kind != "momentum" && kind != "adam")
    return emitOpError() << "kind must be adagrad, momentum or adam, not '" << kind << "'";
  unsigned per = 2 + getStatesPerTensor(); // X, G and the states
  unsigned count = getTensors().size();
  if (count == 0 || count % per)
    return emitOpError() << count << " tensor operands do not split into " << per
                         << " per optimized tensor";
  unsigned n = count / per;
  if (getNumResults() != n * (1 + getStatesPerTensor()))
    return emitOpError() << "expected " << n * (1 + getStatesPerTensor()) << " results, got "
                         << getNumResults();
  for (unsigned i = 0; i < n; ++i) {
    Type x = getTensors()[i].getType();
    for (unsigned j = 1; j < per; ++j)
      if (getTensors()[j * n + i].getType() != x)
        return emitOpError() << "operand " << j * n + i + 2 << " must have the type of X" << i;
    for (unsigned j = 0; j <= getStatesPerTensor(); ++j)
      if (getResult(j * n + i).getType() != x)
        return emitOpError() << "result " << j * n + i << " must have the type of X" << i;
  }
  return success();
}

LogicalResult SgdUpdateOp::verify() { return success(); }
LogicalResult AdamWUpdateOp::verify() { return success(); }
LogicalResult AdamW8bitUpdateOp::verify() {
  if (getGrad().getType().getNumElements() < 4096)
    return emitOpError("tensors under 4096 elements keep fp32 states (use tg.adamw_update)");
  return success();
}

LogicalResult SgdUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Type type = getGrad().getType();
  if (failed(checkTensorSymbol(*this, symbols, getParamAttr(), type, true, "param")))
    return failure();
  if (getMomentum().convertToFloat() != 0.0f && !getMomentumBufferAttr())
    return emitOpError("momentum needs a momentum_buffer state");
  if (auto buf = getMomentumBufferAttr())
    return checkTensorSymbol(*this, symbols, buf, type, false, "momentum_buffer");
  return success();
}

LogicalResult AdamWUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Type type = getGrad().getType();
  if (failed(checkTensorSymbol(*this, symbols, getParamAttr(), type, true, "param")) ||
      failed(checkTensorSymbol(*this, symbols, getExpAvgAttr(), type, false, "exp_avg")))
    return failure();
  return checkTensorSymbol(*this, symbols, getExpAvgSqAttr(), type, false, "exp_avg_sq");
}

LogicalResult AdamW8bitUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Type type = getGrad().getType();
  Type codes = withElement(type, IntegerType::get(getContext(), 8, IntegerType::Unsigned));
  Type absmax = absmaxType(type);
  if (failed(checkTensorSymbol(*this, symbols, getParamAttr(), type, true, "param")) ||
      failed(checkTensorSymbol(*this, symbols, getExpAvgAttr(), codes, false, "exp_avg")) ||
      failed(checkTensorSymbol(*this, symbols, getExpAvgAbsmaxAttr(), absmax, false,
                               "exp_avg_absmax")) ||
      failed(checkTensorSymbol(*this, symbols, getExpAvgSqAttr(), codes, false, "exp_avg_sq")))
    return failure();
  return checkTensorSymbol(*this, symbols, getExpAvgSqAbsmaxAttr(), absmax, false,
                           "exp_avg_sq_absmax");
}

LogicalResult AssignOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return checkTensorSymbol(*this, symbols, getParamAttr(), getValue().getType(), true, "param");
}

bool hmcc::tg::isView(Operation *op) {
  return isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp, IdentityOp>(op);
}

#define GET_OP_CLASSES
#include "tg/IR/TGOps.cpp.inc"

void hmcc::tg::numberDropoutStreams(ModuleOp module) {
  int64_t next = 0;
  module.walk([&](Operation *op) {
    std::optional<uint64_t> s;
    if (auto d = dyn_cast<DropoutOp>(op))
      s = d.getStream();
    else if (auto a = dyn_cast<AttentionOp>(op))
      s = a.getStream();
    if (s)
      next = std::max(next, int64_t(*s) + 1);
  });
  Builder b(module.getContext());
  module.walk([&](DropoutOp op) {
    if (!op.getStream())
      op.setStreamAttr(b.getI64IntegerAttr(next++));
  });
}

std::pair<FlatSymbolRefAttr, OpOperand *> hmcc::tg::optimizerUpdate(Operation *op) {
  if (auto u = dyn_cast<SgdUpdateOp>(op))
    return {u.getParamAttr(), &u.getGradMutable()};
  if (auto u = dyn_cast<AdamWUpdateOp>(op))
    return {u.getParamAttr(), &u.getGradMutable()};
  if (auto u = dyn_cast<AdamW8bitUpdateOp>(op))
    return {u.getParamAttr(), &u.getGradMutable()};
  return {FlatSymbolRefAttr(), nullptr};
}

Value hmcc::tg::gradientNorm(OpBuilder &b, Location loc, ValueRange grads) {
  // In the order the gradients are made: block arguments first, then by
  // their defining ops (a gradient listed twice is summed twice).
  SmallVector<Value> made(grads.begin(), grads.end());
  llvm::stable_sort(made, [](Value x, Value y) {
    Operation *a = x.getDefiningOp(), *c = y.getDefiningOp();
    if (!a || !c)
      return !a && c;
    return a != c && a->isBeforeInBlock(c);
  });
  Value acc;
  Operation *last = nullptr; // the last sum placed
  OpBuilder at(b.getContext());
  for (Value g : made) {
    Operation *after = g.getDefiningOp();
    if (last && (!after || after->isBeforeInBlock(last)))
      after = last; // a gradient made by the same op as the one before
    if (after)
      at.setInsertionPointAfter(after);
    else
      at.setInsertionPointToStart(cast<BlockArgument>(g).getOwner());
    auto sum = SumSquaresOp::create(at, loc, g, acc);
    acc = sum.getResult();
    last = sum;
  }
  auto f32 = RankedTensorType::get({}, b.getF32Type());
  if (!acc)
    return ConstantOp::create(b, loc, DenseElementsAttr::get(f32, 0.0f));
  return NormOfSumOp::create(b, loc, acc);
}

RankedTensorType hmcc::tg::adamw8bitCodesType(RankedTensorType param) {
  return RankedTensorType::get(param.getShape(),
                               IntegerType::get(param.getContext(), 8, IntegerType::Unsigned));
}

RankedTensorType hmcc::tg::adamw8bitAbsmaxType(RankedTensorType param) {
  return RankedTensorType::get({(param.getNumElements() + k8bitBlock - 1) / k8bitBlock},
                               Float32Type::get(param.getContext()));
}

CastOp hmcc::tg::roundToBf16(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  auto c = CastOp::create(b, loc, type.clone(b.getBF16Type()), v);
  c.setNearestEven(true);
  return c;
}

bool hmcc::tg::readsRoundedToBf16(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto c = dyn_cast<CastOp>(user))
    return c.getNearestEven() && c.getType().getElementType().isBF16();
  return isa<MatMulOp, GemmOp>(user) && hasBf16Math(user) && use.getOperandNumber() < 2;
}

SmallVector<Operation *, 2> hmcc::tg::readWidenedFactors(Operation *gemm) {
  SmallVector<Operation *, 2> unused;
  for (unsigned i : {0u, 1u}) {
    OpOperand &use = gemm->getOpOperand(i);
    auto widened = use.get().getDefiningOp<CastOp>();
    if (!widened || widened.getNearestEven() ||
        !cast<RankedTensorType>(widened.getX().getType()).getElementType().isBF16() ||
        !cast<RankedTensorType>(widened.getResult().getType()).getElementType().isF32())
      continue;
    use.set(widened.getX());
    if (widened->use_empty())
      unused.push_back(widened);
  }
  return unused;
}
