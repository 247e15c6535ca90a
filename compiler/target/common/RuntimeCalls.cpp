//===- RuntimeCalls.cpp - the runtime call of each tg op ------------------===//
#include "compiler/target/common/RuntimeCalls.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "hmrt/kernels.h"
#include "hmrt/tensor_ops.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <array>

using namespace mlir;
using namespace hmcc::tg;

namespace hmcc::rt {
namespace {

using K = Arg::Kind;

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

Arg make(K kind) {
  Arg a;
  a.kind = kind;
  return a;
}

/// The mask stream of a dropout: `number`, or the next in program order
/// when negative.
Arg stream(int64_t number) {
  Arg a = make(K::DropoutStream);
  a.number = number;
  return a;
}

Arg ofValue(K kind, Value v, StringRef ctype = "") {
  Arg a = make(kind);
  a.value = v;
  a.ctype = ctype.str();
  return a;
}
/// Pointers to a tensor's bytes (nullptr for an absent optional operand).
Arg data(Value v, StringRef ctype = "uint8_t") { return ofValue(K::Data, v, ctype); }
Arg f32Out(Value v) { return data(v, "float"); }
Arg f32In(Value v) { return data(v, "const float"); }
/// Whether an op computed in f32 writes `v` rounded to bf16 (tg-fold-rounding).
bool roundsToBf16(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType().isBF16();
}
/// Such a result: f32, or bf16 bit patterns.
Arg resultOut(Value v) { return data(v, roundsToBf16(v) ? "uint16_t" : "float"); }
/// A GEMM operand: f32, or bf16 bit patterns (tg-precision).
Arg factor(Value v, bool bf16) { return data(v, bf16 ? "const uint16_t" : "const float"); }
/// The kernel of a GEMM of factors `a` and `b`: of bf16 operands, of one of
/// each, of f32 ones with bf16 products (tg.math), or fp32.
std::string gemmKernel(StringRef name, Operation *op, Value a, Value b) {
  bool a16 = roundsToBf16(a), b16 = roundsToBf16(b);
  return (name + (a16 && b16    ? "_bf16"
                  : a16 || b16  ? "_mixed_bf16"
                  : hasBf16Math(op) ? "_f32_bf16"
                                    : "_f32"))
      .str();
}
Arg persistent(FlatSymbolRefAttr symbol, StringRef ctype) {
  Arg a = make(K::Persistent);
  a.symbol = symbol;
  a.ctype = ctype.str();
  return a;
}
Arg dataArray(ValueRange vs, StringRef ctype) {
  Arg a = make(K::DataArray);
  a.values.assign(vs.begin(), vs.end());
  a.ctype = ctype.str();
  return a;
}
Arg shape(Value v) { return ofValue(K::Shape, v); }
Arg count(Value v) { return ofValue(K::Count, v); }
Arg esize(Value v) { return ofValue(K::ElementSize, v); }
Arg dtype(Value v) { return ofValue(K::Dtype, v); }
Arg scalar(Value v, StringRef ctype) { return ofValue(K::Scalar, v, ctype); }
Arg ints(ArrayRef<int64_t> values, K kind = K::Ints) {
  Arg a = make(kind);
  a.ints.assign(values.begin(), values.end());
  return a;
}
Arg integer(int64_t v) {
  Arg a = make(K::Int);
  a.number = v;
  return a;
}
Arg flag(bool v) { return integer(v ? 1 : 0); }
/// A GEMM's first factor, and with one of each type which one is bf16.
SmallVector<Arg, 2> firstFactor(Value a, Value b) {
  bool a16 = roundsToBf16(a);
  if (a16 == roundsToBf16(b))
    return {factor(a, a16)};
  return {factor(a, a16), flag(a16)};
}
Arg real(double v, K kind = K::Float) {
  Arg a = make(kind);
  a.real = v;
  return a;
}
Arg f32(APFloat v) { return real(v.convertToFloat()); }
Arg f32(FloatAttr v) { return real(v.getValueAsDouble()); }
Arg text(StringRef t) {
  Arg a = make(K::Text);
  a.text = t.str();
  return a;
}

/// The 0/1 mask of the dimensions of `x` that `axes` reduce (all when
/// empty).
Arg reduceMask(Value x, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> mask;
  for (int64_t d = 0; d < typeOf(x).getRank(); ++d)
    mask.push_back(axes.empty() || llvm::is_contained(axes, d));
  if (mask.empty())
    mask.push_back(0);
  return ints(mask, K::Mask);
}

/// Per-dimension starts and steps of a slice of `in`.
void fullSlice(SmallVectorImpl<Arg> &args, RankedTensorType in, ArrayRef<int64_t> starts,
               ArrayRef<int64_t> axes, ArrayRef<int64_t> steps) {
  SmallVector<int64_t> st(in.getRank(), 0), sp(in.getRank(), 1);
  for (auto [k, axis] : llvm::enumerate(axes)) {
    st[axis] = starts[k];
    sp[axis] = steps[k];
  }
  args.push_back(ints(st));
  args.push_back(ints(sp));
}

Arg lossReduction(StringRef r) {
  return text(r == "mean" ? "HMRT_LOSS_MEAN" : r == "sum" ? "HMRT_LOSS_SUM" : "HMRT_LOSS_NONE");
}

/// hmrt_attention_forward/backward's arguments after q, k, v: the bias and
/// its dims (aligned to the scores'), `tensors`, then the sizes, scale,
/// flags and dropout.
template <class AttentionLike>
void attentionTail(SmallVectorImpl<Arg> &args, AttentionLike o, ArrayRef<Arg> tensors) {
  Value bias = o.getBias();
  bool causal = o.getCausal(), bthd = o.getBthd();
  args.push_back(bias ? f32In(bias) : text("nullptr"));
  if (bias) {
    auto b = typeOf(bias);
    SmallVector<int64_t> dims(4 - b.getRank(), 1);
    dims.append(b.getShape().begin(), b.getShape().end());
    args.push_back(ints(dims));
  } else {
    args.push_back(text("nullptr"));
  }
  args.append(tensors.begin(), tensors.end());
  AttentionDims d = attentionDims(o);
  for (int64_t n : {d.batch, d.heads, d.kvHeads, d.queries, d.keys, d.headDim})
    args.push_back(integer(n));
  args.push_back(f32(o.getScale()));
  args.push_back(integer((causal ? HMRT_ATTENTION_CAUSAL : 0) | (bthd ? HMRT_ATTENTION_BTHD : 0) |
                         (hasBf16Math(o) ? HMRT_ATTENTION_BF16 : 0) |
                         (o.getPacked() ? HMRT_ATTENTION_PACKED : 0)));
  // The mask stream of a tg.dropout (the same in the forward and the
  // backward, which draw the same mask).
  args.push_back(f32(o.getDropout()));
  args.push_back(text(std::to_string(o.getSeed() ? *o.getSeed() : 0) + "u"));
  args.push_back(stream(o.getStream() ? int64_t(*o.getStream()) : -1));
}

/// The q, k and v pointers of attention (or dq, dk, dv) for `values`: each
/// its own tensor, or with `packed` one tensor, k's heads after q's and
/// v's after k's.
template <class AttentionLike>
SmallVector<Arg> qkv(AttentionLike o, std::array<Value, 3> values, Arg (*pointer)(Value)) {
  SmallVector<Arg> args = {pointer(values[0]), pointer(values[1]), pointer(values[2])};
  if (o.getPacked()) {
    AttentionDims d = attentionDims(o);
    int64_t row = d.headDim * int64_t(sizeof(float));
    args[1].byteOffset = d.heads * row;
    args[2].byteOffset = (d.heads + d.kvHeads) * row;
  }
  return args;
}

/// The runtime's opcode (hmrt_fused_op) of an op of tg.fused.
int64_t fusedOpcode(StringRef name) {
  return llvm::StringSwitch<int64_t>(name)
      .Case("add", HMRT_FUSED_ADD)
      .Case("sub", HMRT_FUSED_SUB)
      .Case("mul", HMRT_FUSED_MUL)
      .Case("div", HMRT_FUSED_DIV)
      .Case("pow", HMRT_FUSED_POW)
      .Case("exp", HMRT_FUSED_EXP)
      .Case("log", HMRT_FUSED_LOG)
      .Case("sqrt", HMRT_FUSED_SQRT)
      .Case("neg", HMRT_FUSED_NEG)
      .Case("reciprocal", HMRT_FUSED_RECIPROCAL)
      .Case("tanh", HMRT_FUSED_TANH)
      .Case("sigmoid", HMRT_FUSED_SIGMOID)
      .Case("erf", HMRT_FUSED_ERF)
      .Case("relu", HMRT_FUSED_RELU)
      .Case("where", HMRT_FUSED_WHERE)
      .Case("relu_grad", HMRT_FUSED_RELU_GRAD)
      .Default(-1); // the verifier admits only the names above
}

} // namespace

SmallVector<int64_t> fusedCode(FusedOp op) {
  SmallVector<int64_t> code;
  for (auto [i, name] : llvm::enumerate(op.getOps().getAsValueRange<StringAttr>())) {
    code.push_back(fusedOpcode(name));
    code.append(op.getArgs().begin() + 3 * i, op.getArgs().begin() + 3 * i + 3);
  }
  return code;
}

namespace {

/// Bytes of one element of `type` (a ranked tensor).
int64_t elementBytesOf(Type type) {
  return elementBytes(cast<RankedTensorType>(type).getElementType());
}

/// Narrows the calls of an update to its chunk (hm.chunk = [lo, hi) of the
/// parameter's elements): pointers to the parameter, gradient and states
/// move to the chunk's first element (or absmax block), element counts
/// become hi - lo. Only elementwise updates run in chunks.
LogicalResult applyChunk(Operation *op, MutableArrayRef<Call> calls) {
  auto chunk = hm::chunkOf(op);
  if (!chunk)
    return success();
  if (!isa<AdamWUpdateOp, AdamW8bitUpdateOp, SgdUpdateOp>(op))
    return op->emitError("codegen: ") << op->getName() << " cannot run in chunks (hm.chunk)";
  auto [lo, hi] = *chunk;
  for (Call &c : calls)
    for (Arg &a : c.args) {
      if (a.kind == K::Count) {
        a = integer(hi - lo);
      } else if (a.kind == K::Data && a.value) {
        a.byteOffset = lo * elementBytesOf(a.value.getType());
      } else if (a.kind == K::Persistent) {
        Operation *decl = SymbolTable::lookupNearestSymbolFrom(op, a.symbol);
        if (auto state = dyn_cast_or_null<StateOp>(decl))
          a.byteOffset = hm::stateElements(state, lo, hi).first * elementBytesOf(state.getType());
        else if (auto param = dyn_cast_or_null<ParameterOp>(decl))
          a.byteOffset = lo * elementBytesOf(param.getType());
      }
    }
  return success();
}

LogicalResult callsOf(Operation *op, SmallVectorImpl<Call> &calls);

} // namespace

LogicalResult runtimeCalls(Operation *op, SmallVectorImpl<Call> &calls) {
  size_t first = calls.size();
  if (failed(callsOf(op, calls)))
    return failure();
  return applyChunk(op, MutableArrayRef<Call>(calls.data(), calls.size()).drop_front(first));
}

namespace {

LogicalResult callsOf(Operation *op, SmallVectorImpl<Call> &calls) {
  auto call = [&](StringRef callee, SmallVector<Arg> args) {
    calls.push_back(Call{callee.str(), std::move(args), Call::Kind::Kernel});
    return success();
  };
  auto copy = [&](Arg to, Arg from, int64_t bytes) {
    calls.push_back(Call{"", {to, from, integer(bytes)}, Call::Kind::Copy});
    return success();
  };
  auto unary = [&](Value x, Value y, StringRef kind) {
    return call("hmrt_unary_f32", {text(kind), f32In(x), f32Out(y), count(y)});
  };
  auto binary = [&](Value a, Value c, Value y, StringRef kind) -> LogicalResult {
    Type e = typeOf(a).getElementType();
    if (!(e.isF32() || e.isInteger(64)) || typeOf(c).getElementType() != e)
      return op->emitError("codegen: unsupported element types for ") << op->getName();
    std::string t = e.isF32() ? "float" : "int64_t";
    return call(e.isF32() ? "hmrt_binary_f32" : "hmrt_binary_i64",
                {text(kind), data(a, "const " + t), shape(a), data(c, "const " + t), shape(c),
                 data(y, t), shape(y)});
  };
  auto ignoreIndex = [](std::optional<int64_t> ignore, SmallVector<Arg> &args) {
    args.push_back(flag(ignore.has_value()));
    args.push_back(integer(ignore ? *ignore : 0));
  };

  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](SqrtOp o) { return unary(o.getX(), o.getResult(), "HMRT_UNARY_SQRT"); })
      .Case([&](ReciprocalOp o) { return unary(o.getX(), o.getResult(), "HMRT_UNARY_RECIPROCAL"); })
      .Case([&](ExpOp o) { return unary(o.getX(), o.getResult(), "HMRT_UNARY_EXP"); })
      .Case([&](LogOp o) { return unary(o.getX(), o.getResult(), "HMRT_UNARY_LOG"); })
      .Case([&](TanhOp o) { return unary(o.getX(), o.getResult(), "HMRT_UNARY_TANH"); })
      .Case([&](SigmoidOp o) { return unary(o.getX(), o.getResult(), "HMRT_UNARY_SIGMOID"); })
      .Case([&](AttentionOp o) {
        SmallVector<Arg> args = qkv(o, {o.getQ(), o.getK(), o.getV()}, f32In);
        attentionTail(args, o, {f32Out(o.getResult()), f32Out(o.getLse())});
        return call("hmrt_attention_forward", args);
      })
      .Case([&](AttentionGradOp o) {
        SmallVector<Arg> args = qkv(o, {o.getQ(), o.getK(), o.getV()}, f32In);
        SmallVector<Arg> tensors = {f32In(o.getOut()), f32In(o.getLse()), f32In(o.getGrad())};
        ValueRange grads = o.getGrads();
        Value dq = grads[0], dk = grads.size() == 3 ? grads[1] : dq,
              dv = grads.size() == 3 ? grads[2] : dq;
        tensors.append(qkv(o, {dq, dk, dv}, f32Out));
        attentionTail(args, o, tensors);
        return call("hmrt_attention_backward", args);
      })
      .Case([&](FusedOp o) {
        auto result = typeOf(o.getResult());
        SmallVector<int64_t> code = fusedCode(o), isBool, dims;
        for (Value v : o.getInputs()) {
          auto type = typeOf(v);
          isBool.push_back(type.getElementType().isInteger(1));
          dims.append(result.getRank() - type.getRank(), 1); // aligned on the trailing dims
          dims.append(type.getShape().begin(), type.getShape().end());
        }
        return call(roundsToBf16(o.getResult()) ? "hmrt_fused_f32_to_bf16" : "hmrt_fused_f32",
                    {integer(o.getOps().size()), ints(code), integer(o.getInputs().size()),
                     dataArray(o.getInputs(), "const void"), ints(isBool), ints(dims),
                     resultOut(o.getResult()), shape(o.getResult())});
      })
      .Case([&](ErfOp o) { return unary(o.getX(), o.getResult(), "HMRT_UNARY_ERF"); })
      .Case([&](ReluOp o) { return unary(o.getX(), o.getResult(), "HMRT_UNARY_RELU"); })
      .Case([&](NegOp o) -> LogicalResult {
        if (o.getType().getElementType().isF32())
          return unary(o.getX(), o.getResult(), "HMRT_UNARY_NEG");
        if (!o.getType().getElementType().isInteger(64))
          return o.emitError("codegen: neg supports f32 and i64");
        return call("hmrt_neg_i64", {data(o.getX(), "const int64_t"),
                                     data(o.getResult(), "int64_t"), count(o.getX())});
      })
      .Case<IdentityOp, ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>([&](Operation *o) {
        // A view placed in its operand's bytes is already there.
        if (hm::isAliasingView(o))
          return success();
        return copy(data(o->getResult(0)), data(o->getOperand(0)),
                    tensorBytes(o->getResult(0).getType()));
      })
      .Case([&](AddOp o) { return binary(o.getLhs(), o.getRhs(), o.getResult(), "HMRT_BINARY_ADD"); })
      .Case([&](SubOp o) { return binary(o.getLhs(), o.getRhs(), o.getResult(), "HMRT_BINARY_SUB"); })
      .Case([&](MulOp o) { return binary(o.getLhs(), o.getRhs(), o.getResult(), "HMRT_BINARY_MUL"); })
      .Case([&](DivOp o) { return binary(o.getLhs(), o.getRhs(), o.getResult(), "HMRT_BINARY_DIV"); })
      .Case([&](PowOp o) { return binary(o.getLhs(), o.getRhs(), o.getResult(), "HMRT_BINARY_POW"); })
      .Case([&](EqualOp o) {
        return call("hmrt_equal", {dtype(o.getLhs()), data(o.getLhs()), shape(o.getLhs()),
                                   data(o.getRhs()), shape(o.getRhs()), data(o.getResult()),
                                   shape(o.getResult())});
      })
      .Case([&](WhereOp o) {
        return call("hmrt_where", {data(o.getCondition(), "const uint8_t"), shape(o.getCondition()),
                                   data(o.getX()), shape(o.getX()), data(o.getY()), shape(o.getY()),
                                   data(o.getResult()), shape(o.getResult()), esize(o.getResult())});
      })
      .Case([&](CastOp o) {
        if (o.getNearestEven())
          return call("hmrt_round_bf16", {f32In(o.getX()), data(o.getResult(), "uint16_t"),
                                          count(o.getX())});
        return call("hmrt_cast", {dtype(o.getX()), data(o.getX()), dtype(o.getResult()),
                                  data(o.getResult()), count(o.getX())});
      })
      .Case([&](DropoutOp o) {
        float ratio = o.getRatio().convertToFloat();
        bool active = o.getTraining() && ratio > 0.0f;
        return call("hmrt_dropout_f32",
                    {f32In(o.getX()), f32Out(o.getResult()), data(o.getMask(), "uint8_t"),
                     count(o.getX()), real(active ? ratio : 0.0f),
                     text(std::to_string(o.getSeed() ? *o.getSeed() : 0) + "u"),
                     stream(o.getStream() ? int64_t(*o.getStream()) : -1)});
      })
      .Case([&](MatMulOp o) {
        SmallVector<Arg> args = firstFactor(o.getLhs(), o.getRhs());
        args.append({shape(o.getLhs()), flag(o.getTransA()),
                     factor(o.getRhs(), roundsToBf16(o.getRhs())), shape(o.getRhs()),
                     flag(o.getTransB()), f32Out(o.getResult()), shape(o.getResult())});
        return call(gemmKernel("hmrt_matmul", o, o.getLhs(), o.getRhs()), std::move(args));
      })
      .Case([&](GemmOp o) {
        auto ta = typeOf(o.getA());
        int64_t m = o.getType().getDimSize(0), n = o.getType().getDimSize(1);
        int64_t k = o.getTransA() ? ta.getDimSize(0) : ta.getDimSize(1);
        SmallVector<Arg> args = firstFactor(o.getA(), o.getB());
        args.push_back(factor(o.getB(), roundsToBf16(o.getB())));
        if (o.getC()) {
          args.push_back(f32In(o.getC()));
          args.push_back(shape(o.getC()));
        } else {
          args.append({text("nullptr"), integer(0), text("nullptr")});
        }
        args.append({integer(m), integer(n), integer(k), flag(o.getTransA()), flag(o.getTransB()),
                     f32(o.getAlpha()), f32(o.getBeta()), f32Out(o.getResult())});
        return call(gemmKernel("hmrt_gemm", o, o.getA(), o.getB()), std::move(args));
      })
      .Case([&](TransposeOp o) {
        return call("hmrt_transpose", {data(o.getX()), shape(o.getX()), ints(o.getPerm()),
                                       data(o.getResult()), esize(o.getX())});
      })
      .Case([&](ConcatOp o) {
        SmallVector<int64_t> extents;
        for (Value v : o.getInputs())
          extents.push_back(typeOf(v).getDimSize(o.getAxis()));
        return call("hmrt_concat", {integer(static_cast<int64_t>(o.getInputs().size())),
                                    dataArray(o.getInputs(), "const void"), ints(extents),
                                    shape(o.getResult()), integer(o.getAxis()),
                                    data(o.getResult()), esize(o.getResult())});
      })
      .Case([&](SplitOp o) {
        int64_t offset = 0, axis = o.getAxis();
        for (Value r : o.getResults()) {
          SmallVector<int64_t> st(typeOf(r).getRank(), 0), sp(typeOf(r).getRank(), 1);
          st[axis] = offset;
          offset += typeOf(r).getDimSize(axis);
          (void)call("hmrt_slice", {data(o.getX()), shape(o.getX()), ints(st), ints(sp),
                                    ints(typeOf(r).getShape()), data(r), esize(r)});
        }
        return success();
      })
      .Case([&](SliceOp o) {
        SmallVector<Arg> args = {data(o.getX()), shape(o.getX())};
        fullSlice(args, typeOf(o.getX()), o.getStarts(), o.getAxes(), o.getSteps());
        args.append({ints(o.getType().getShape()), data(o.getResult()), esize(o.getX())});
        return call("hmrt_slice", std::move(args));
      })
      .Case([&](GatherOp o) {
        return call("hmrt_gather", {data(o.getX()), shape(o.getX()), integer(o.getAxis()),
                                    dtype(o.getIndices()), data(o.getIndices()),
                                    count(o.getIndices()), data(o.getResult()), esize(o.getX())});
      })
      .Case([&](ExpandOp o) {
        return call("hmrt_expand", {data(o.getX()), shape(o.getX()), data(o.getResult()),
                                    shape(o.getResult()), esize(o.getX())});
      })
      .Case([&](TriluOp o) {
        return call("hmrt_trilu", {data(o.getX()), shape(o.getX()), integer(o.getK()),
                                   flag(o.getUpper()), data(o.getResult()), esize(o.getX())});
      })
      .Case([&](ConstantOp o) -> LogicalResult {
        // A constant in the arena: an f32 splat filled there, any other
        // copied from the program's static data (hm.constants = "arena",
        // hm-set-constants, for devices that cannot read host memory).
        auto attr = dyn_cast<SplatElementsAttr>(o.getValue());
        if (attr && attr.getElementType().isF32())
          return call("hmrt_fill", {data(o.getResult()), count(o.getResult()),
                                    real(attr.getSplatValue<float>(), K::FillValue),
                                    text("sizeof(float)")});
        return copy(data(o.getResult()), ofValue(K::ConstantValue, o.getResult(), "uint8_t"),
                    tg::tensorBytes(typeOf(o.getResult())));
      })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>([&](Operation *o) {
        auto axes = o->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
        StringRef kind = isa<ReduceSumOp>(o)    ? "HMRT_REDUCE_SUM"
                         : isa<ReduceMeanOp>(o) ? "HMRT_REDUCE_MEAN"
                                                : "HMRT_REDUCE_MAX";
        Value x = o->getOperand(0);
        return call("hmrt_reduce_f32", {text(kind), f32In(x), shape(x), reduceMask(x, axes),
                                        f32Out(o->getResult(0))});
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](Operation *o) {
        Value x = o->getOperand(0);
        return call("hmrt_softmax_axis_f32",
                    {f32In(x), shape(x), integer(o->getAttrOfType<IntegerAttr>("axis").getInt()),
                     flag(isa<LogSoftmaxOp>(o)), f32Out(o->getResult(0))});
      })
      .Case([&](LayerNormOp o) {
        bool stats = !o.getStats().empty();
        return call(roundsToBf16(o.getResult()) ? "hmrt_layer_norm_f32_to_bf16"
                                                : "hmrt_layer_norm_f32",
                    {f32In(o.getX()), shape(o.getX()), integer(o.getAxis()), f32In(o.getScale()),
                     f32In(o.getBias()), f32(o.getEpsilon()), resultOut(o.getResult()),
                     stats ? f32Out(o.getStats()[0]) : text("nullptr"),
                     stats ? f32Out(o.getStats()[1]) : text("nullptr")});
      })
      .Case([&](SoftmaxCrossEntropyLossOp o) {
        SmallVector<Arg> args = {f32In(o.getScores()), shape(o.getScores()),
                                 data(o.getLabels(), "const int64_t"), f32In(o.getWeights()),
                                 lossReduction(o.getReduction())};
        ignoreIndex(o.getIgnoreIndex(), args);
        args.append({f32Out(o.getResult()), f32Out(o.getLogProb())});
        return call("hmrt_sce_loss_f32", std::move(args));
      })
      // Gradient ops.
      .Case([&](SumToOp o) {
        return call("hmrt_reduce_to_f32", {f32In(o.getX()), shape(o.getX()),
                                           f32Out(o.getResult()), shape(o.getResult())});
      })
      .Case([&](ReluGradOp o) {
        return call("hmrt_relu_backward", {f32In(o.getX()), f32In(o.getGrad()),
                                           f32Out(o.getResult()), count(o.getX())});
      })
      .Case([&](DropoutGradOp o) {
        return call("hmrt_dropout_backward_f32",
                    {f32In(o.getGrad()), data(o.getMask(), "const uint8_t"), f32Out(o.getResult()),
                     count(o.getGrad()), f32(o.getRatio())});
      })
      .Case([&](SliceGradOp o) {
        SmallVector<Arg> args = {f32In(o.getGrad()), shape(o.getResult())};
        fullSlice(args, o.getType(), o.getStarts(), o.getAxes(), o.getSteps());
        args.append({ints(typeOf(o.getGrad()).getShape()), f32Out(o.getResult())});
        return call("hmrt_slice_backward_f32", std::move(args));
      })
      .Case([&](GatherGradOp o) {
        return call("hmrt_gather_backward_f32",
                    {f32In(o.getGrad()), shape(o.getResult()), integer(o.getAxis()),
                     dtype(o.getIndices()), data(o.getIndices()), count(o.getIndices()),
                     f32Out(o.getResult())});
      })
      .Case([&](ReduceMaxGradOp o) {
        return call("hmrt_reduce_max_backward_f32",
                    {f32In(o.getX()), f32In(o.getMax()), f32In(o.getGrad()), shape(o.getX()),
                     reduceMask(o.getX(), o.getAxes()), f32Out(o.getResult())});
      })
      .Case<SoftmaxGradOp, LogSoftmaxGradOp>([&](Operation *o) {
        Value y = o->getOperand(0), g = o->getOperand(1);
        return call("hmrt_softmax_axis_backward_f32",
                    {f32In(y), f32In(g), shape(y),
                     integer(o->getAttrOfType<IntegerAttr>("axis").getInt()),
                     flag(isa<LogSoftmaxGradOp>(o)), f32Out(o->getResult(0))});
      })
      .Case([&](LayerNormGradOp o) {
        return call("hmrt_layer_norm_backward_f32",
                    {f32In(o.getGrad()), f32In(o.getX()), shape(o.getX()), integer(o.getAxis()),
                     f32In(o.getScale()), f32In(o.getMean()), f32In(o.getInvStdDev()),
                     f32Out(o.getDx()), f32Out(o.getDscale()), f32Out(o.getDbias())});
      })
      .Case([&](SoftmaxCrossEntropyLossGradOp o) {
        SmallVector<Arg> args = {f32In(o.getScores()), shape(o.getScores()),
                                 data(o.getLabels(), "const int64_t"), f32In(o.getWeights()),
                                 lossReduction(o.getReduction())};
        ignoreIndex(o.getIgnoreIndex(), args);
        args.append({f32In(o.getGrad()), resultOut(o.getResult())});
        return call(roundsToBf16(o.getResult()) ? "hmrt_sce_loss_backward_f32_to_bf16"
                                                : "hmrt_sce_loss_backward_f32",
                    std::move(args));
      })
      // Optimizer.
      .Case([&](SumSquaresOp o) {
        return call("hmrt_add_sum_of_squares",
                    {f32In(o.getGrad()), count(o.getGrad()),
                     o.getAcc() ? data(o.getAcc(), "const double") : text("nullptr"),
                     data(o.getResult(), "double")});
      })
      .Case([&](NormOfSumOp o) {
        return call("hmrt_norm_of_sum", {data(o.getSum(), "const double"), f32Out(o.getResult())});
      })
      .Case([&](ClipCoefficientOp o) {
        return call("hmrt_clip_coefficient", {scalar(o.getNorm(), "const float"),
                                              f32(o.getMaxNorm()), f32Out(o.getResult())});
      })
      .Case([&](SgdUpdateOp o) {
        auto buf = o.getMomentumBufferAttr();
        return call("hmrt_sgd_step", {persistent(o.getParamAttr(), "float"), f32In(o.getGrad()),
                                      buf ? persistent(buf, "float") : text("nullptr"),
                                      count(o.getGrad()), make(K::Lr), f32(o.getMomentum()),
                                      f32(o.getDampening()), f32(o.getWeightDecay()),
                                      flag(o.getNesterov()), make(K::FirstStep)});
      })
      .Case([&](AdamWUpdateOp o) {
        return call("hmrt_adamw_step",
                    {persistent(o.getParamAttr(), "float"), f32In(o.getGrad()),
                     persistent(o.getExpAvgAttr(), "float"), persistent(o.getExpAvgSqAttr(), "float"),
                     count(o.getGrad()), make(K::Lr), f32(o.getBeta1()), f32(o.getBeta2()),
                     f32(o.getEps()), f32(o.getWeightDecay()), make(K::Step)});
      })
      .Case([&](AdamW8bitUpdateOp o) {
        return call("hmrt_adamw8bit_step",
                    {persistent(o.getParamAttr(), "float"), f32In(o.getGrad()),
                     persistent(o.getExpAvgAttr(), "uint8_t"),
                     persistent(o.getExpAvgAbsmaxAttr(), "float"),
                     persistent(o.getExpAvgSqAttr(), "uint8_t"),
                     persistent(o.getExpAvgSqAbsmaxAttr(), "float"), count(o.getGrad()),
                     make(K::Lr), f32(o.getBeta1()), f32(o.getBeta2()), f32(o.getEps()),
                     f32(o.getWeightDecay()), make(K::Step)});
      })
      .Case([&](OnnxOptimizerOp o) {
        // One runtime call per optimized tensor; R and T are read from
        // their scalar tensors at run time.
        unsigned n = o.getTensors().size() / (2 + o.getStatesPerTensor());
        StringRef kind = o.getKind();
        Arg r = scalar(o.getLr(), "const float"), t = scalar(o.getStep(), "const int64_t");
        for (unsigned i = 0; i < n; ++i) {
          auto in = [&](unsigned j) { return f32In(o.getTensors()[j * n + i]); };
          auto out = [&](unsigned j) { return f32Out(o.getResult(j * n + i)); };
          Arg size = count(o.getResult(i)), nc = f32(o.getNormCoefficientAttr());
          if (kind == "adagrad")
            (void)call("hmrt_onnx_adagrad", {in(0), in(1), in(2), out(0), out(1), size, r, t, nc,
                                             f32(o.getDecayFactorAttr()), f32(o.getEpsilonAttr())});
          else if (kind == "momentum")
            (void)call("hmrt_onnx_momentum", {in(0), in(1), in(2), out(0), out(1), size, r, t, nc,
                                              f32(o.getAlphaAttr()), f32(o.getBetaAttr()),
                                              flag(o.getNesterov())});
          else
            (void)call("hmrt_onnx_adam",
                       {in(0), in(1), in(2), in(3), out(0), out(1), out(2), size, r, t, nc,
                        f32(o.getNormCoefficientPostAttr()), f32(o.getAlphaAttr()),
                        f32(o.getBetaAttr()), f32(o.getEpsilonAttr())});
        }
        return success();
      })
      .Case([&](AssignOp o) {
        return copy(persistent(o.getParamAttr(), "uint8_t"), data(o.getValue()),
                    tensorBytes(o.getValue().getType()));
      })
      .Default([&](Operation *o) {
        return o->emitError("codegen: no runtime call for ") << o->getName();
      });
}

} // namespace

} // namespace hmcc::rt
