//===- FuseElementwise.cpp - chains of elementwise ops as one op ----------===//
//
// tg-fuse-elementwise (see Passes.td). Runs on the training graph, after
// autodiff: the forward and the backward chains of an activation (bias +
// GELU, its derivative, mask + scale, SiLU x gate, residual adds) fuse
// alike, and a cheap forward op that the backward reads is computed again
// inside the backward's fused op instead of kept as a tensor.
//
// Deciding, last op first: an elementwise op is *inlined* (computed inside
// the fused ops of its users instead of stored) when every user is an
// elementwise op of the same shape, it ends up computed in at most
// kMaxCopies fused ops, and computing it later keeps no more memory alive:
// its expression reads at most one tensor of its own size, or all its users
// follow it with no other op in between. Every op that is not inlined and
// has inlined operands roots a tg.fused; ops left without users go.
//
//===----------------------------------------------------------------------===//

#include "tg/IR/TGOps.h"
#include "tg/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace hmcc {
#define GEN_PASS_DEF_TGFUSEELEMENTWISE
#include "tg/Transforms/Passes.h.inc"
} // namespace hmcc

using namespace mlir;
using namespace hmcc::tg;

namespace {

/// Fused ops an inlined op may be computed in.
constexpr size_t kMaxCopies = 4;
/// Instructions and inputs of one fused op (the runtime takes up to 256
/// and 64).
constexpr int64_t kMaxOps = 64;
constexpr int64_t kMaxInputs = 64;

bool isF32(Value v) { return cast<RankedTensorType>(v.getType()).getElementType().isF32(); }

/// The tg.fused name of `op` when it is an f32 elementwise op that fuses.
StringRef fusedName(Operation *op) {
  if (op->getNumResults() != 1 || !isF32(op->getResult(0)))
    return "";
  StringRef name = TypeSwitch<Operation *, StringRef>(op)
                       .Case([](AddOp) { return "add"; })
                       .Case([](SubOp) { return "sub"; })
                       .Case([](MulOp) { return "mul"; })
                       .Case([](DivOp) { return "div"; })
                       .Case([](PowOp) { return "pow"; })
                       .Case([](ExpOp) { return "exp"; })
                       .Case([](LogOp) { return "log"; })
                       .Case([](SqrtOp) { return "sqrt"; })
                       .Case([](NegOp) { return "neg"; })
                       .Case([](ReciprocalOp) { return "reciprocal"; })
                       .Case([](TanhOp) { return "tanh"; })
                       .Case([](SigmoidOp) { return "sigmoid"; })
                       .Case([](ErfOp) { return "erf"; })
                       .Case([](ReluOp) { return "relu"; })
                       .Case([](WhereOp) { return "where"; })
                       .Case([](ReluGradOp) { return "relu_grad"; })
                       .Default([](Operation *) { return ""; });
  if (name.empty())
    return "";
  // Every value operand is f32 (pow's exponent may be another type).
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (!(name == "where" && i == 0) && !isF32(v))
      return "";
  return name;
}

struct Fuser {
  Block &block;
  DenseMap<Operation *, unsigned> barriersBefore; // ops that break "near"
  DenseMap<Operation *, bool> inlined;
  /// The fused ops (their roots) an inlined op is computed in.
  DenseMap<Operation *, SmallVector<Operation *, kMaxCopies + 1>> copiesIn;
  /// Up to two distinct tensors of the op's own shape that its expression,
  /// all fusible producers inlined, reads.
  DenseMap<Operation *, SmallVector<Value, 2>> bigLeaves;

  explicit Fuser(Block &b) : block(b) {}

  Operation *fusibleProducer(Value v, Type shape) {
    Operation *p = v.getDefiningOp();
    if (!p || p->getBlock() != &block || fusedName(p).empty() || v.getType() != shape)
      return nullptr;
    return p;
  }

  void analyse() {
    unsigned barriers = 0;
    for (Operation &op : block) {
      barriersBefore[&op] = barriers;
      bool fusible = !fusedName(&op).empty();
      if (!fusible && !isa<ConstantOp>(op) && op.getNumResults())
        ++barriers;
      if (!fusible)
        continue;
      SmallVector<Value, 2> &leaves = bigLeaves[&op];
      Type shape = op.getResult(0).getType();
      auto add = [&](Value v) {
        if (leaves.size() < 2 && !llvm::is_contained(leaves, v))
          leaves.push_back(v);
      };
      for (Value v : op.getOperands()) {
        if (Operation *p = fusibleProducer(v, shape))
          llvm::for_each(bigLeaves[p], add);
        else if (v.getType() == shape)
          add(v);
      }
    }
    for (Operation &op : llvm::reverse(block))
      if (!fusedName(&op).empty())
        decide(&op);
  }

  void decide(Operation *op) {
    Value result = op->getResult(0);
    SmallVector<Operation *, kMaxCopies + 1> copies;
    bool near = true;
    for (Operation *user : result.getUsers()) {
      if (user->getBlock() != &block || fusedName(user).empty() ||
          user->getResult(0).getType() != result.getType())
        return;
      near = near && barriersBefore[user] == barriersBefore[op];
      for (Operation *root : inlined.lookup(user) ? copiesIn[user]
                                                   : SmallVector<Operation *, kMaxCopies + 1>{user})
        if (!llvm::is_contained(copies, root))
          copies.push_back(root);
    }
    if (copies.empty() || copies.size() > kMaxCopies || (bigLeaves[op].size() > 1 && !near))
      return;
    inlined[op] = true;
    copiesIn[op] = std::move(copies);
  }

  /// Replaces `root` by a tg.fused of its expression when that holds more
  /// than one op.
  void fuse(Operation *root) {
    llvm::SetVector<Value> inputs;
    SmallVector<Operation *> code;
    DenseMap<Operation *, int64_t> index; // op -> position in code
    Type shape = root->getResult(0).getType();
    // Post-order walk of the expression; producers past the size cap stay
    // tensors (inputs). `reserved` counts the ops taken, those still on
    // the walk's stack included.
    int64_t reserved = 1;
    std::function<void(Operation *)> visit = [&](Operation *op) {
      for (Value v : op->getOperands()) {
        Operation *p = fusibleProducer(v, shape);
        if (p && inlined.lookup(p) && !index.count(p) && reserved < kMaxOps) {
          ++reserved;
          visit(p);
        }
      }
      index[op] = code.size();
      code.push_back(op);
    };
    visit(root);
    if (code.size() < 2)
      return;
    DenseMap<Value, int64_t> inputIndex;
    for (Operation *op : code)
      for (Value v : op->getOperands()) {
        Operation *p = v.getDefiningOp();
        if ((!p || !index.count(p)) && inputs.insert(v))
          inputIndex[v] = inputs.size() - 1;
      }
    int64_t nIn = inputs.size();
    if (nIn > kMaxInputs)
      return; // the ops stay as they are
    SmallVector<StringRef> ops;
    SmallVector<int64_t> args;
    for (Operation *op : code) {
      ops.push_back(fusedName(op));
      for (unsigned k = 0; k < 3; ++k) {
        Value v = k < op->getNumOperands() ? op->getOperand(k) : Value();
        Operation *p = v ? v.getDefiningOp() : nullptr;
        args.push_back(!v ? -1 : p && index.count(p) ? nIn + index[p] : inputIndex[v]);
      }
    }
    OpBuilder b(root);
    auto fused = FusedOp::create(b, root->getLoc(), shape, inputs.getArrayRef(),
                                   b.getStrArrayAttr(ops), b.getDenseI64ArrayAttr(args));
    root->getResult(0).replaceAllUsesWith(fused.getResult());
  }

  void run() {
    analyse();
    SmallVector<Operation *> roots;
    for (Operation &op : block)
      if (!fusedName(&op).empty() && !inlined.lookup(&op))
        roots.push_back(&op);
    for (Operation *root : roots)
      fuse(root);
    // Ops left without users: the roots replaced and what only they read.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (!fusedName(&op).empty() && op.use_empty())
        op.erase();
  }
};

struct FuseElementwisePass : hmcc::impl::TGFuseElementwiseBase<FuseElementwisePass> {
  using TGFuseElementwiseBase::TGFuseElementwiseBase;
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp f) {
      for (Block &b : f.getBody())
        Fuser(b).run();
    });
  }
};

} // namespace
