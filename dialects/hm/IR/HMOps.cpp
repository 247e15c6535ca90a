//===- HMOps.cpp - the memory/schedule dialect ----------------------------===//
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace hmcc::hm;

#include "hm/IR/HMDialect.cpp.inc"

void HMDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "hm/IR/HMOps.cpp.inc"
      >();
}

int64_t hmcc::hm::alignedSize(int64_t bytes) {
  return (std::max<int64_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
}

namespace {

LogicalResult verifyOffset(NamedAttribute attr, function_ref<InFlightDiagnostic()> emitError) {
  if (attr.getName() != kOffsetAttr)
    return emitError() << "unknown attribute '" << attr.getName().getValue()
                       << "' of the hm dialect";
  auto offset = dyn_cast<IntegerAttr>(attr.getValue());
  if (!offset || offset.getInt() < 0 || offset.getInt() % kAlignment)
    return emitError() << kOffsetAttr << " must be a non-negative multiple of " << kAlignment
                       << " bytes";
  return success();
}

} // namespace

LogicalResult HMDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() == kConstantsAttr) {
    auto where = dyn_cast<StringAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !where ||
        (where.getValue() != "static" && where.getValue() != "arena"))
      return op->emitOpError() << kConstantsAttr
                               << " must be \"static\" or \"arena\" on the module";
    return success();
  }
  if (attr.getName() == kHomeAttr) {
    auto home = dyn_cast<StringAttr>(attr.getValue());
    if (!home ||
        (home.getValue() != "host" && home.getValue() != "device" && home.getValue() != "storage"))
      return op->emitOpError() << kHomeAttr << " must be \"host\", \"storage\" or \"device\"";
    return success();
  }
  if (attr.getName() == kWholeAttr) {
    StringRef kind = op->getName().getStringRef();
    auto whole = dyn_cast<StringAttr>(attr.getValue());
    if (!whole || whole.getValue().empty() || (kind != "tg.parameter" && kind != "tg.state"))
      return op->emitOpError() << kWholeAttr
                               << " must name the whole tensor of a tg.parameter or tg.state";
    return success();
  }
  if (attr.getName() == kRecomputeAttr) {
    if (!isa<ModuleOp>(op) || !isa<DictionaryAttr>(attr.getValue()))
      return op->emitOpError() << kRecomputeAttr << " must be a dictionary on the module";
    return success();
  }
  if (attr.getName() == kHoldAttr || attr.getName() == kSoftHoldAttr) {
    auto hold = dyn_cast<IntegerAttr>(attr.getValue());
    if (!hold || hold.getInt() < 0)
      return op->emitOpError() << attr.getName().getValue() << " must be an integer >= 0";
    return success();
  }
  if (attr.getName() == kEventAttr) {
    auto event = dyn_cast<IntegerAttr>(attr.getValue());
    if (!event || event.getInt() < 0)
      return op->emitOpError() << kEventAttr << " must be an integer >= 0";
    return success();
  }
  if (attr.getName() == kStagedAttr) {
    auto staged = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!staged || llvm::any_of(staged, [](NamedAttribute a) {
          auto offset = dyn_cast<IntegerAttr>(a.getValue());
          return !offset || offset.getInt() < 0 || offset.getInt() % kAlignment;
        }))
      return op->emitOpError() << kStagedAttr << " must map state names to arena offsets, "
                               << "multiples of " << kAlignment;
    return success();
  }
  if (attr.getName() == kDeviceStagingAttr) {
    auto bytes = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !bytes || bytes.getInt() < 0)
      return op->emitOpError() << kDeviceStagingAttr << " must be an integer >= 0 on the module";
    return success();
  }
  if (attr.getName() == kChunkAttr) {
    auto chunk = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!chunk || chunk.size() != 2 || chunk[0] < 0 || chunk[1] <= chunk[0] ||
        chunk[0] % kChunkElements)
      return op->emitOpError() << kChunkAttr << " must be array<i64: lo, hi> with 0 <= lo < hi "
                               << "and lo a multiple of " << kChunkElements;
    return success();
  }
  if (attr.getName() == kWaitAttr) {
    auto waits = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!waits || llvm::any_of(waits.asArrayRef(), [](int64_t e) { return e < 0; }))
      return op->emitOpError() << kWaitAttr << " must be an array<i64> of events >= 0";
    return success();
  }
  return verifyOffset(attr, [&] { return op->emitOpError(); });
}

LogicalResult HMDialect::verifyRegionArgAttribute(Operation *op, unsigned, unsigned,
                                                  NamedAttribute attr) {
  return verifyOffset(attr, [&] { return op->emitOpError(); });
}

ArenaOp hmcc::hm::arenaOfTier(ModuleOp module, StringRef tier) {
  for (auto arena : module.getOps<ArenaOp>())
    if (arena.getTier() == tier)
      return arena;
  return ArenaOp();
}

bool hmcc::hm::isHostRounding(Operation *op) {
  return isa_and_nonnull<tg::CastOp>(op) && isHostHomed(op) &&
         op->getOperand(0).getDefiningOp<tg::ParamOp>();
}

bool hmcc::hm::isHostHomed(Operation *op) {
  auto home = op->getAttrOfType<StringAttr>(kHomeAttr);
  return home && home.getValue() == "host";
}

bool hmcc::hm::isStorageHomed(Operation *op) {
  auto home = op->getAttrOfType<StringAttr>(kHomeAttr);
  return home && home.getValue() == "storage";
}

std::optional<std::pair<int64_t, int64_t>> hmcc::hm::chunkOf(Operation *op) {
  auto chunk = op->getAttrOfType<DenseI64ArrayAttr>(kChunkAttr);
  if (!chunk || chunk.size() != 2)
    return std::nullopt;
  return std::make_pair(chunk[0], chunk[1]);
}

RankedTensorType hmcc::hm::storedType(Operation *tensor) {
  if (auto state = dyn_cast<hmcc::tg::StateOp>(tensor))
    return cast<RankedTensorType>(state.getType());
  return cast<RankedTensorType>(cast<hmcc::tg::ParameterOp>(tensor).getType());
}

namespace {
/// Parameter elements per element of `tensor`: 1, or the 8-bit block size
/// for a block-wise absmax state ("..._absmax").
int64_t perStoredElement(Operation *tensor) {
  auto state = dyn_cast<hmcc::tg::StateOp>(tensor);
  return state && state.getKind().ends_with("_absmax") ? hmcc::tg::k8bitBlock : 1;
}
int64_t elementBytesOf(Operation *tensor) {
  return hmcc::tg::elementBytes(storedType(tensor).getElementType());
}
} // namespace

int64_t hmcc::hm::chunkGranularity(Operation *tensor) {
  return kStorageAlignment / elementBytesOf(tensor) * perStoredElement(tensor);
}

std::pair<int64_t, int64_t> hmcc::hm::stateElements(Operation *tensor, int64_t lo, int64_t hi) {
  int64_t n = storedType(tensor).getNumElements();
  int64_t per = perStoredElement(tensor);
  return {std::min(n, lo / per), std::min(n, (hi + per - 1) / per)};
}

hmcc::hm::Slice hmcc::hm::stagedSlice(Operation *op, Operation *state) {
  return stateSlice(state, chunkOf(op), isStorageHomed(state));
}

hmcc::hm::Slice hmcc::hm::stagedSlice(StageOp stage) {
  return stagedSlice(stage, SymbolTable::lookupNearestSymbolFrom(stage, stage.getStateAttr()));
}

hmcc::hm::Slice hmcc::hm::stateSlice(Operation *tensor,
                                     std::optional<std::pair<int64_t, int64_t>> chunk,
                                     bool wholeBlocks) {
  RankedTensorType type = storedType(tensor);
  auto blocks = [&](int64_t bytes) { return wholeBlocks ? storageBlocks(bytes) : bytes; };
  int64_t whole = blocks(hmcc::tg::tensorBytes(type));
  if (!chunk)
    return {0, whole};
  auto [e0, e1] = stateElements(tensor, chunk->first, chunk->second);
  int64_t bytes = elementBytesOf(tensor);
  int64_t end = e1 == type.getNumElements() ? whole : blocks(e1 * bytes);
  return {e0 * bytes, std::max<int64_t>(0, end - e0 * bytes)};
}

int hmcc::hm::homeTier(Operation *op) { return isHostHomed(op) ? 1 : isStorageHomed(op) ? 2 : 0; }

int64_t hmcc::hm::arenaBytes(Type type) { return alignedSize(hmcc::tg::tensorBytes(type)); }

/// The hm.place that stores `v`, if any.
static PlaceOp placeOf(Value v) {
  for (Operation *user : v.getUsers())
    if (auto place = dyn_cast<PlaceOp>(user))
      return place;
  return {};
}

std::optional<int64_t> hmcc::hm::placedOffset(Value v) {
  if (PlaceOp place = placeOf(v))
    return place.getByteOffset();
  return std::nullopt;
}

bool hmcc::hm::isAliasingView(Operation *op) {
  if (!hmcc::tg::isView(op))
    return false;
  auto r = placedOffset(op->getResult(0)), x = placedOffset(op->getOperand(0));
  return r && x && *r == *x;
}

std::optional<unsigned> hmcc::hm::inPlaceOperand(Operation *op) {
  // hmrt_sce_loss_backward_f32: "in place OK (dscores == scores)".
  auto grad = dyn_cast<tg::SoftmaxCrossEntropyLossGradOp>(op);
  if (!grad || !grad.getResult().getType().getElementType().isF32() ||
      grad.getScores().getType() != grad.getResult().getType())
    return std::nullopt;
  return grad.getScoresMutable().getOperandNumber();
}

Value hmcc::hm::bytesTakenFrom(Operation *op) {
  if (isAliasingView(op))
    return op->getOperand(0);
  std::optional<unsigned> k = inPlaceOperand(op);
  if (!k)
    return {};
  PlaceOp r = placeOf(op->getResult(0)), x = placeOf(op->getOperand(*k));
  return r && x && r.getArena() == x.getArena() && r.getByteOffset() == x.getByteOffset()
             ? op->getOperand(*k)
             : Value();
}

LogicalResult ArenaOp::verify() {
  if (getTier() != "device" && getTier() != "host" && getTier() != "storage")
    return emitOpError() << "tier must be \"device\", \"host\" or \"storage\", not \""
                         << getTier() << "\"";
  int64_t size = getSizeAttr().getInt();
  if (size < 0 || size % kAlignment)
    return emitOpError() << "size must be a non-negative multiple of " << kAlignment;
  return success();
}

LogicalResult PlaceOp::verify() {
  int64_t offset = getOffsetAttr().getInt();
  if (offset < 0 || offset % kAlignment)
    return emitOpError() << "offset must be a non-negative multiple of " << kAlignment;
  Operation *def = getValue().getDefiningOp();
  if (!def || def->getBlock() != (*this)->getBlock() || !def->isBeforeInBlock(*this))
    return emitOpError("places a value that is not defined before it in the same block");
  return success();
}

LogicalResult PlaceOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto arena = symbols.lookupNearestSymbolFrom<ArenaOp>(*this, getArenaAttr());
  if (!arena)
    return emitOpError() << getArenaAttr() << " is not a declared hm.arena";
  int64_t offset = getOffsetAttr().getInt(), size = arena.getSizeAttr().getInt();
  int64_t end = offset + hmcc::tg::tensorBytes(getValue().getType());
  if (end > size)
    return emitOpError() << "bytes [" << offset << ", " << end << ") lie beyond the " << size
                         << " bytes of " << getArenaAttr();
  return success();
}

LogicalResult StageOp::verify() {
  if (getDirection() != "in" && getDirection() != "out")
    return emitOpError() << "direction must be \"in\" or \"out\", not \"" << getDirection()
                         << "\"";
  int64_t offset = getOffsetAttr().getInt();
  if (offset < 0 || offset % kAlignment)
    return emitOpError() << "offset must be a non-negative multiple of " << kAlignment;
  return success();
}

bool hmcc::hm::isStoredTensor(Operation *decl) {
  return decl && isa<hmcc::tg::StateOp, hmcc::tg::ParameterOp>(decl) && isStorageHomed(decl);
}

LogicalResult StageOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Operation *decl = symbols.lookupNearestSymbolFrom(*this, getStateAttr());
  if (!decl || !isa<hmcc::tg::StateOp, hmcc::tg::ParameterOp>(decl))
    return emitOpError() << getStateAttr() << " is not a tg.state or a tg.parameter";
  if (homeTier(decl) == 0)
    return emitOpError() << getStateAttr() << " is not homed on the host or in storage";
  if (isStorageHomed(decl) && getOffsetAttr().getInt() % kStorageAlignment)
    return emitOpError() << "offset of a copy from storage must be a multiple of "
                         << kStorageAlignment;
  if (storedType(decl) != getType())
    return emitOpError() << "type " << getType() << " is not " << getStateAttr() << "'s "
                         << storedType(decl);
  if (auto chunk = chunkOf(*this); chunk && chunk->first % chunkGranularity(decl))
    return emitOpError() << "chunk [" << chunk->first << ", " << chunk->second << ") does not "
                         << "start on a " << kStorageAlignment << "-byte block of "
                         << getStateAttr() << " (a multiple of " << chunkGranularity(decl)
                         << " elements)";
  return success();
}

#define GET_OP_CLASSES
#include "hm/IR/HMOps.cpp.inc"
