//===- BufferAssignment.cpp - static arena offsets for every tensor -------===//
#include "compiler/Codegen.h"
#include "tg/TGOps.h"
#include "tg/TGShapes.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"

#include <map>

using namespace mlir;
using namespace hmcc::tg;

namespace hmcc {
namespace {

constexpr uint64_t kAlign = 64;
/// Constants are static arrays in the generated code, except splats of
/// more than this many elements (zero gradients, say), which are filled in
/// the arena instead.
constexpr int64_t kMaxStaticSplat = 4096;

uint64_t alignUp(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

uint64_t bytesOf(Type type) { return static_cast<uint64_t>(tg::tensorBytes(type)); }

/// Whether `v` needs arena memory of its own (params alias their
/// parameter; small constants are static arrays).
bool needsBuffer(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<ParamOp>(def))
    return false;
  if (auto c = dyn_cast<ConstantOp>(def))
    return isa<SplatElementsAttr>(c.getValue()) &&
           cast<RankedTensorType>(c.getType()).getNumElements() > kMaxStaticSplat;
  return true;
}

/// First-fit allocator over [base, ...) with a free list.
class Allocator {
public:
  explicit Allocator(uint64_t base) : top(base) {}
  uint64_t allocate(uint64_t size) {
    size = alignUp(std::max<uint64_t>(size, 1));
    for (auto it = free.begin(); it != free.end(); ++it) {
      if (it->second < size)
        continue;
      uint64_t offset = it->first, rest = it->second - size;
      free.erase(it);
      if (rest)
        free[offset + size] = rest;
      return offset;
    }
    uint64_t offset = top;
    top += size;
    return offset;
  }
  void release(uint64_t offset, uint64_t size) {
    size = alignUp(std::max<uint64_t>(size, 1));
    auto it = free.emplace(offset, size).first;
    auto next = std::next(it);
    if (next != free.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free.erase(next);
    }
    if (it != free.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free.erase(it);
      }
    }
  }
  uint64_t top;

private:
  std::map<uint64_t, uint64_t> free;
};

/// Assigns the values of one function; returns the high-water mark.
uint64_t assignFunction(func::FuncOp fn, uint64_t base) {
  Block &body = fn.getBody().front();
  DenseMap<Operation *, unsigned> index;
  unsigned i = 0;
  for (Operation &op : body)
    index[&op] = i++;
  unsigned end = i;
  // Last use of each value; results of the function live to the end.
  DenseMap<Value, unsigned> lastUse;
  for (Operation &op : body)
    for (Value r : op.getResults()) {
      unsigned last = index[&op];
      for (Operation *user : r.getUsers())
        last = std::max(last, isa<func::ReturnOp>(user) ? end : index[user]);
      lastUse[r] = last;
    }
  // Values to release after each op.
  std::vector<std::vector<Value>> dying(end + 1);
  for (auto &[v, last] : lastUse)
    if (needsBuffer(v) && last < end)
      dying[last].push_back(v);

  Allocator alloc(base);
  DenseMap<Value, uint64_t> offsets;
  OpBuilder b(fn.getContext());
  for (Operation &op : body) {
    SmallVector<int64_t> resultOffsets;
    bool any = false;
    for (Value r : op.getResults()) {
      if (!needsBuffer(r)) {
        resultOffsets.push_back(-1);
        continue;
      }
      uint64_t offset = alloc.allocate(bytesOf(r.getType()));
      offsets[r] = offset;
      resultOffsets.push_back(static_cast<int64_t>(offset));
      any = true;
    }
    if (any)
      op.setAttr("hm.offsets", b.getDenseI64ArrayAttr(resultOffsets));
    // Operands die after the op has run (results never share their memory).
    for (Value v : dying[index[&op]])
      alloc.release(offsets[v], bytesOf(v.getType()));
  }
  // Where the results end up: their own buffers, or a slot of their own for
  // results without one (a parameter or constant returned as it is).
  SmallVector<int64_t> outputs;
  for (Value v : body.getTerminator()->getOperands()) {
    auto it = offsets.find(v);
    outputs.push_back(static_cast<int64_t>(
        it != offsets.end() ? it->second : alloc.allocate(bytesOf(v.getType()))));
  }
  fn->setAttr("hm.output_offsets", b.getDenseI64ArrayAttr(outputs));
  return alloc.top;
}

} // namespace

LogicalResult assignBuffers(ModuleOp module, func::FuncOp train, func::FuncOp eval) {
  OpBuilder b(module.getContext());
  uint64_t top = 0;
  auto place = [&](Operation *op, Type type) {
    op->setAttr("hm.offset", b.getI64IntegerAttr(static_cast<int64_t>(top)));
    top += alignUp(bytesOf(type));
  };
  for (auto p : module.getOps<ParameterOp>())
    place(p, p.getType());
  for (auto s : module.getOps<StateOp>())
    place(s, s.getType());
  // Inputs: each function's data arguments, matched by ONNX name so that
  // train and eval read the same memory.
  llvm::StringMap<int64_t> inputOffsets;
  for (func::FuncOp fn : {train, eval}) {
    if (!fn)
      continue;
    for (unsigned k = 0; k < fn.getNumArguments(); ++k) {
      auto name = fn.getArgAttrOfType<StringAttr>(k, "tg.input");
      if (!name)
        continue; // step and lr are passed by value
      auto [it, inserted] = inputOffsets.try_emplace(name.getValue(), static_cast<int64_t>(top));
      if (inserted)
        top += alignUp(bytesOf(fn.getArgument(k).getType()));
      fn.setArgAttr(k, "hm.offset", b.getI64IntegerAttr(it->second));
    }
  }
  uint64_t persistent = top, arena = top;
  for (func::FuncOp fn : {train, eval})
    if (fn)
      arena = std::max(arena, assignFunction(fn, persistent));
  module->setAttr("hm.arena_bytes", b.getI64IntegerAttr(static_cast<int64_t>(alignUp(arena))));
  return success();
}

} // namespace hmcc
