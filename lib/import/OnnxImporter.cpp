//===- OnnxImporter.cpp - ONNX ModelProto to the tg dialect ---------------===//
//
// The import, step by step; each step lives in its own file:
//  1. ModelLoader: read the file (binary protobuf or ONNX text), check the
//     opset imports; Validation: check every tensor, type and opset in it;
//  2. TrainingInfo: merge a training_info's algorithm into the graph and
//     evaluate its initialization;
//  3. ShapeBinding: give data inputs values (--input-value); then, after the
//     external data is checked (without reading it), bind symbolic input
//     dimensions (--batch, --seq, --input-shape);
//  4. OpConverters and ModelLoader: reject unsupported operators, run ONNX's
//     checker; ShapeBinding: shape inference with data propagation;
//  5. ParameterRule: classify initializers as parameters or constants;
//  6. ShapeBinding and Folding: fold what is known at compile time, to a
//     fixpoint with shape inference;
//  7. GraphBuilder and OpConverters: build the module, converting the
//     remaining nodes into tg ops whose result types are the inferred ONNX
//     types, each verified against its ONNX node.
// The order is part of the interface: it decides which error a model with
// several gets.
//
//===----------------------------------------------------------------------===//

#include "lib/import/OnnxImporter.h"
#include "lib/import/Folding.h"
#include "lib/import/GraphBuilder.h"
#include "lib/import/ImportError.h"
#include "lib/import/ModelLoader.h"
#include "lib/import/OpConverters.h"
#include "lib/import/ParameterRule.h"
#include "lib/import/ShapeBinding.h"
#include "lib/import/TrainingInfo.h"
#include "lib/import/Validation.h"
#include "tg/IR/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace hmcc {

static OwningOpRef<ModuleOp> importModel(MLIRContext &context, StringRef path,
                                         const ImportOptions &options) {
  using namespace import;
  Model model(path);
  loadModel(model);
  validateModel(model);
  TrainingInfo training = mergeTrainingInfo(model);
  std::set<std::string> boundInputs = bindInputValues(model, options);
  validateExternalData(model);
  bindDimensions(model, options);
  checkOperators(model);
  checkModel(model);
  inferShapes(model);
  collectTypes(model);
  std::set<std::string> parameters =
      classifyInitializers(model, options, training, boundInputs);
  ConstantTable constants(model, parameters);
  foldToFixpoint(model, constants);
  return GraphBuilder(context, model, training, parameters, constants).build();
}

OwningOpRef<ModuleOp> importOnnxModel(MLIRContext &context, StringRef path,
                                      const ImportOptions &options, std::string &error) {
  context.loadDialect<tg::TGDialect, func::FuncDialect>();
  try {
    return importModel(context, path, options);
  } catch (const import::ImportError &e) {
    error = path.str() + ": " + e.message;
  } catch (const std::exception &e) {
    error = path.str() + ": " + e.what();
  }
  return nullptr;
}

} // namespace hmcc
