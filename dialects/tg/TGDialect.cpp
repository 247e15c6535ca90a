//===- TGDialect.cpp - the training-graph dialect -------------------------===//
#include "tg/TGDialect.h"
#include "tg/TGOps.h"

using namespace mlir;
using namespace hmcc::tg;

#include "tg/TGDialect.cpp.inc"

void TGDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tg/TGOps.cpp.inc"
      >();
}

Operation *TGDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
