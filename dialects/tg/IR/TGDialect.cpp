//===- TGDialect.cpp - the training-graph dialect -------------------------===//
#include "tg/IR/TGDialect.h"
#include "tg/IR/TGOps.h"

using namespace mlir;
using namespace hmcc::tg;

#include "tg/IR/TGDialect.cpp.inc"

void TGDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tg/IR/TGOps.cpp.inc"
      >();
}

Operation *TGDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
