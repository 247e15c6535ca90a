//===- FuseAttention.cpp - attention as one op ----------------------------===//
//
// tg-fuse-attention (see Passes.td): on the forward graph, before autodiff,
// scaled-dot-product attention as torch.onnx exports it becomes one
// tg.attention, which tg-autodiff differentiates with one tg.attention_grad.
//
// The chain, read backwards from the matmul with V:
//   [dropout] <- softmax(last axis)
//   <- [where(mask, -inf, s) | where(mask, s, -inf) | add(s, bias)]
//   <- [mul(s, c) | div(s, c)] <- matmul(q, transpose(k))
// with every intermediate read only by the next op, the mask and bias
// constants, and the scale a scalar constant. A mask that is exactly the
// causal one becomes `causal`; any other becomes an additive f32 bias
// (0 or -inf) computed here. A dropout that drops in training moves into
// the op with its mask stream (every dropout is numbered first, in program
// order, as plan-recompute numbers them). Grouped K/V heads exported through
// unsqueeze-expand-reshape are read from their kv heads. q, k and v split
// from one projection are read from it (`packed`). Anything else stays as it
// is.
//
//===----------------------------------------------------------------------===//

#include "tg/IR/TGOps.h"
#include "tg/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <array>
#include <cmath>
#include <limits>

namespace hmcc {
#define GEN_PASS_DEF_TGFUSEATTENTION
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc::tg;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

bool singleUse(Value v) { return v.hasOneUse(); }

DenseElementsAttr constantOf(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  return c ? dyn_cast<DenseElementsAttr>(c.getValue()) : DenseElementsAttr();
}

/// The value of a one-element f32 constant.
std::optional<double> scalarOf(Value v) {
  DenseElementsAttr a = constantOf(v);
  if (!a || a.getNumElements() != 1 || !a.getElementType().isF32())
    return std::nullopt;
  return (*a.getValues<APFloat>().begin()).convertToDouble();
}

bool isNegInf(Value v) {
  std::optional<double> x = scalarOf(v);
  return x && std::isinf(*x) && *x < 0;
}

/// A constant mask as (dims aligned to rank 4, masked[i]) and its element
/// count; masked is true where the score is -inf.
struct Mask {
  SmallVector<int64_t, 4> dims;
  SmallVector<bool> masked;
  SmallVector<float> bias; // the additive form
};

bool alignDims(RankedTensorType t, SmallVector<int64_t, 4> &dims) {
  if (t.getRank() > 4)
    return false;
  dims.assign(4 - t.getRank(), 1);
  dims.append(t.getShape().begin(), t.getShape().end());
  return true;
}

/// Whether `m` masks exactly the keys after each query (j > i) and
/// nothing else, the same for every batch and head.
bool isCausal(const Mask &m, int64_t T, int64_t S) {
  if (T != S || m.dims[2] != T || m.dims[3] != S)
    return false;
  const int64_t size = int64_t(m.masked.size());
  for (int64_t n = 0; n < size;) // each (T, S) matrix of the mask
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < S; ++j, ++n)
        if (m.masked[n] != (j > i) || (!m.bias.empty() && !m.masked[n] && m.bias[n] != 0.0f))
          return false;
  return true;
}

struct Match {
  Value q, k, v, scores;      // scores: q k^T as the matmul made it
  double scale = 1.0;
  DropoutOp dropout;          // one that drops in training, else null
  std::optional<Mask> mask;
  SmallVector<Operation *> chain; // to erase, users first
};

/// The masked entries of each boolean mask constant already read (every
/// layer's attention shares one), indexed by whether true masks.
using MaskCache = std::array<llvm::DenseMap<Attribute, SmallVector<bool>>, 2>;

/// Reads the chain backwards from `pv`; fails on anything else.
std::optional<Match> match(MatMulOp pv, MaskCache &masks) {
  Match m;
  if (pv.getTransA() || pv.getTransB() || typeOf(pv.getLhs()).getRank() != 4)
    return std::nullopt;
  m.chain.push_back(pv);
  m.v = pv.getRhs();
  Value p = pv.getLhs();
  if (auto d = p.getDefiningOp<DropoutOp>()) {
    if (!d.getMask().use_empty() || !singleUse(d.getResult()))
      return std::nullopt;
    if (d.getTraining() && d.getRatio().convertToFloat() > 0.0f)
      m.dropout = d;
    m.chain.push_back(d);
    p = d.getX();
  }
  auto sm = p.getDefiningOp<SoftmaxOp>();
  if (!sm || !singleUse(p) || (int64_t(sm.getAxis()) != 3 && int64_t(sm.getAxis()) != -1))
    return std::nullopt;
  m.chain.push_back(sm);
  Value s = sm.getX();
  auto takeMask = [&](Value c, bool maskedWhenTrue) {
    DenseElementsAttr a = constantOf(c);
    Mask mk;
    if (!a || !a.getElementType().isInteger(1) || !alignDims(typeOf(c), mk.dims))
      return false;
    auto [known, added] = masks[maskedWhenTrue].try_emplace(a);
    if (added)
      for (bool b : a.getValues<bool>())
        known->second.push_back(b == maskedWhenTrue);
    mk.masked = known->second;
    m.mask = std::move(mk);
    return true;
  };
  if (auto w = s.getDefiningOp<WhereOp>()) {
    if (!singleUse(s))
      return std::nullopt;
    if (isNegInf(w.getX()) && singleUse(w.getY()) && takeMask(w.getCondition(), true))
      s = w.getY();
    else if (isNegInf(w.getY()) && singleUse(w.getX()) && takeMask(w.getCondition(), false))
      s = w.getX();
    else
      return std::nullopt;
    m.chain.push_back(w);
  } else if (auto add = s.getDefiningOp<AddOp>()) {
    Value other = constantOf(add.getRhs()) ? add.getRhs() : add.getLhs();
    Value chainSide = other == add.getRhs() ? add.getLhs() : add.getRhs();
    DenseElementsAttr a = constantOf(other);
    Mask mk;
    if (!singleUse(s) || !a || !a.getElementType().isF32() || !singleUse(chainSide) ||
        !alignDims(typeOf(other), mk.dims) || add.getResult().getType() != chainSide.getType())
      return std::nullopt;
    for (APFloat f : a.getValues<APFloat>()) {
      float x = f.convertToFloat();
      mk.bias.push_back(x);
      mk.masked.push_back(std::isinf(x) && x < 0);
    }
    m.mask = std::move(mk);
    m.chain.push_back(add);
    s = chainSide;
  }
  if (auto mul = s.getDefiningOp<MulOp>()) {
    std::optional<double> c = scalarOf(mul.getRhs());
    if (!c || !singleUse(s))
      return std::nullopt;
    m.scale = *c;
    m.chain.push_back(mul);
    s = mul.getLhs();
  } else if (auto div = s.getDefiningOp<DivOp>()) {
    std::optional<double> c = scalarOf(div.getRhs());
    if (!c || *c == 0.0 || !singleUse(s))
      return std::nullopt;
    m.scale = 1.0 / *c;
    m.chain.push_back(div);
    s = div.getLhs();
  }
  auto qk = s.getDefiningOp<MatMulOp>();
  if (!qk || !singleUse(s) || qk.getTransA() || qk.getTransB())
    return std::nullopt;
  m.chain.push_back(qk);
  m.q = qk.getLhs();
  m.scores = s;
  m.k = qk.getRhs(); // transposed: (B, H, D, S); undone by the caller
  return m;
}

/// K (B, H, S, D) from K^T: the operand of the transposes that made K^T
/// (K^T's transpose and those before it, composed: K = x transposed by the
/// permutation, the identity when K is x itself), else K^T itself and
/// [0, 1, 3, 2].  nanoGPT's `k.transpose(1, 2)` then `.transpose(-2, -1)`
/// and torch's single folded transpose both reach (B, S, H, D).
std::pair<Value, SmallVector<int64_t>> untranspose(Value kt) {
  auto t = kt.getDefiningOp<TransposeOp>();
  if (!t || typeOf(t.getX()).getRank() != 4)
    return {kt, {0, 1, 3, 2}};
  SmallVector<int64_t> perm(t.getPerm().begin(), t.getPerm().end());
  std::swap(perm[2], perm[3]);
  Value x = t.getX();
  while (auto before = x.getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> p = before.getPerm();
    for (int64_t &d : perm)
      d = p[d];
    x = before.getX();
  }
  return {x, perm};
}

/// Grouped K/V heads as exported: reshape(expand(unsqueeze(x, 2))) from
/// (B, Hk, S, D) to (B, Hk * G, S, D); returns x, else `v` itself.
Value kvHeads(Value v) {
  auto r = v.getDefiningOp<ReshapeOp>();
  auto e = r ? r.getX().getDefiningOp<ExpandOp>() : ExpandOp();
  auto u = e ? e.getX().getDefiningOp<UnsqueezeOp>() : UnsqueezeOp();
  if (!u)
    return v;
  auto x = typeOf(u.getX()), ex = typeOf(e.getResult()), out = typeOf(v);
  // x (B, Hk, S, D) -> (B, Hk, 1, S, D) -> (B, Hk, G, S, D) -> (B, Hk*G, S, D)
  if (x.getRank() != 4 || ex.getRank() != 5 || typeOf(u.getResult()).getDimSize(2) != 1 ||
      ex.getDimSize(0) != x.getDimSize(0) || ex.getDimSize(1) != x.getDimSize(1) ||
      ex.getDimSize(3) != x.getDimSize(2) || ex.getDimSize(4) != x.getDimSize(3) ||
      out.getDimSize(1) != ex.getDimSize(1) * ex.getDimSize(2))
    return v;
  return u.getX();
}

/// Replaces the chain by a tg.attention when the shapes fit (adding the
/// ops it erases to `erased`); returns whether it did.
bool fuse(MatMulOp pv, Match &m, SmallPtrSetImpl<Operation *> &erased) {
  auto [src, perm] = untranspose(m.k);
  auto st = typeOf(src), qt = typeOf(m.q);
  SmallVector<int64_t> kShape;
  for (int64_t p : perm)
    kShape.push_back(st.getDimSize(p));
  if (kShape.size() != 4 || qt.getDimSize(3) != kShape[3] ||
      typeOf(m.v).getShape() != ArrayRef<int64_t>(kShape) || qt.getDimSize(0) != kShape[0] ||
      qt.getDimSize(1) != kShape[1] || !qt.getElementType().isF32())
    return false;
  int64_t T = qt.getDimSize(2), S = kShape[2];
  bool causal = false;
  if (m.mask) {
    SmallVector<int64_t> full = {qt.getDimSize(0), qt.getDimSize(1), T, S};
    for (int d = 0; d < 4; ++d)
      if (m.mask->dims[d] != 1 && m.mask->dims[d] != full[d])
        return false;
    causal = isCausal(*m.mask, T, S);
  }

  OpBuilder b(pv);
  // (batch, seq, heads, head_dim) as the projections make them: q, k, v
  // each a [0, 2, 1, 3] transpose of one, and the result read only through
  // that transpose back. Then no transpose is left on either side.
  const SmallVector<int64_t> swap = {0, 2, 1, 3};
  auto swapped = [&](Value x) -> Value {
    auto t = x.getDefiningOp<TransposeOp>();
    return t && t.getPerm() == ArrayRef<int64_t>(swap) ? t.getX() : Value();
  };
  TransposeOp back;
  if (pv.getResult().hasOneUse())
    back = dyn_cast<TransposeOp>(*pv.getResult().getUsers().begin());
  Value q0 = swapped(m.q), v0 = swapped(m.v);
  bool bthd = q0 && v0 && perm == swap && back && back.getPerm() == ArrayRef<int64_t>(swap);
  Value q = m.q, k = src, v = m.v;
  if (bthd) {
    q = q0;
    v = v0;
  } else {
    if (perm != SmallVector<int64_t>{0, 1, 2, 3})
      k = TransposeOp::create(b, m.k.getLoc(), RankedTensorType::get(kShape, st.getElementType()),
                                src, b.getDenseI64ArrayAttr(perm));
    // Grouped heads: read K and V from their kv heads when both are
    // expanded alike.
    Value k0 = kvHeads(k), vk = kvHeads(v);
    if (k0 != k && vk != v && typeOf(k0).getShape() == typeOf(vk).getShape()) {
      k = k0;
      v = vk;
    }
  }
  Value bias;
  if (m.mask && !causal) {
    SmallVector<float> values = m.mask->bias;
    if (values.empty())
      for (bool x : m.mask->masked)
        values.push_back(x ? -std::numeric_limits<float>::infinity() : 0.0f);
    auto type = RankedTensorType::get(m.mask->dims, b.getF32Type());
    bias = ConstantOp::create(b, pv.getLoc(), type,
                                DenseElementsAttr::get(type, ArrayRef<float>(values)));
  }
  auto lseType = RankedTensorType::get({qt.getDimSize(0), qt.getDimSize(1), T},
                                       qt.getElementType());
  Value result = bthd ? back.getResult() : pv.getResult();
  auto attn = AttentionOp::create(b, pv.getLoc(), TypeRange{result.getType(), lseType}, q, k, v,
                                    bias, b.getF32FloatAttr(float(m.scale)),
                                    causal ? b.getUnitAttr() : UnitAttr(),
                                    bthd ? b.getUnitAttr() : UnitAttr(), UnitAttr(),
                                    b.getF32FloatAttr(0.0f), IntegerAttr(), IntegerAttr());
  if (DropoutOp d = m.dropout) {
    attn.setDropoutAttr(d.getRatioAttr());
    attn.setStreamAttr(d.getStreamAttr()); // numbered by the pass first
    if (d.getSeedAttr())
      attn.setSeedAttr(d.getSeedAttr());
  }
  result.replaceAllUsesWith(attn.getResult());
  if (bthd)
    back.erase();
  // The chain, users first, then what only it read (the K^T transpose, the
  // mask and scale constants, the expand of grouped heads).
  SmallVector<Operation *> dead(m.chain.begin(), m.chain.end());
  for (size_t i = 0; i < dead.size(); ++i) {
    Operation *op = dead[i];
    SmallVector<Value> operands(op->getOperands());
    op->erase();
    for (Value v : operands)
      if (Operation *d = v.getDefiningOp())
        if (d->use_empty() && isPure(d) && !llvm::is_contained(dead, d))
          dead.push_back(d);
  }
  erased.insert(dead.begin(), dead.end());
  return true;
}

/// q, k and v as one projection makes them: each a reshape (B x T x n D ->
/// B x T x n x D) of a result of one split of a B x T x (H + 2 Hk) D value
/// along its last axis, q's first, and read by nothing else. Then the
/// attention reads that value (`packed`), and the split and its copies go.
void pack(AttentionOp attn) {
  if (!attn.getBthd() || attn.getPacked())
    return;
  Value qkv[] = {attn.getQ(), attn.getK(), attn.getV()};
  SplitOp split;
  for (auto [i, x] : llvm::enumerate(qkv)) {
    auto r = x.getDefiningOp<ReshapeOp>();
    auto s = r ? r.getX().getDefiningOp<SplitOp>() : SplitOp();
    if (!s || (split && s != split) || s.getNumResults() != 3 ||
        r.getX() != s.getResult(i) || !x.hasOneUse() || !r.getX().hasOneUse())
      return;
    split = s;
  }
  auto in = typeOf(split.getX());
  auto q = typeOf(attn.getQ()), k = typeOf(attn.getK());
  const int64_t D = q.getDimSize(3);
  if (in.getRank() != 3 || split.getAxis() != 2 || in.getDimSize(0) != q.getDimSize(0) ||
      in.getDimSize(1) != q.getDimSize(1) || k.getDimSize(1) != q.getDimSize(1))
    return;
  // Reshapes that each keep their row: (B, T, n * D) -> (B, T, n, D).
  for (Value x : qkv)
    if (typeOf(x.getDefiningOp<ReshapeOp>().getX()).getDimSize(2) != typeOf(x).getDimSize(2) * D)
      return;
  int64_t heads = q.getDimSize(2) + 2 * k.getDimSize(2);
  OpBuilder b(attn);
  Value packed = ReshapeOp::create(
      b, attn.getLoc(),
      RankedTensorType::get({in.getDimSize(0), in.getDimSize(1), heads, D}, in.getElementType()),
      split.getX());
  attn->setOperands(0, 3, {packed, packed, packed});
  attn.setPacked(true);
  for (Value x : qkv)
    x.getDefiningOp()->erase();
  split.erase();
}

struct FuseAttentionPass : hmcc::impl::TGFuseAttentionBase<FuseAttentionPass> {
  using TGFuseAttentionBase::TGFuseAttentionBase;
  void runOnOperation() override {
    // Numbered first, so a dropout that moves into tg.attention keeps the
    // stream it would have had unfused.
    numberDropoutStreams(getOperation());
    SmallVector<MatMulOp> candidates;
    getOperation().walk([&](MatMulOp pv) { candidates.push_back(pv); });
    // Erasing a chain erases matmuls later in this list only when they are
    // its q k^T, which is never a P V of its own: walk from the last.
    SmallPtrSet<Operation *, 16> erased;
    MaskCache masks;
    for (MatMulOp pv : llvm::reverse(candidates)) {
      if (erased.contains(pv))
        continue;
      std::optional<Match> m = match(pv, masks);
      if (!m)
        continue;
      fuse(pv, *m, erased);
    }
    if (packQkv)
      getOperation().walk([](AttentionOp attn) { pack(attn); });
  }
};

} // namespace
