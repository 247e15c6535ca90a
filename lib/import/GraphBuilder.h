//===- GraphBuilder.h - the tg module from the prepared graph ---*- C++ -*-===//
//
// The last step of the import: once every shape is static and constants are
// folded, builds the module: one tg.parameter per trainable parameter, and
// @forward (plus @algorithm with training_info) whose body converts the
// remaining nodes in order (OpConverters.cpp), with the result types ONNX
// inferred. Each op is verified at once so that a disagreement is reported
// against its ONNX node.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_IMPORT_GRAPHBUILDER_H
#define HMCC_IMPORT_GRAPHBUILDER_H

#include "lib/import/HostTensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OwningOpRef.h"

#include "onnx/onnx_pb.h"

#include <set>
#include <string>
#include <unordered_map>
#include <utility>

namespace hmcc::import {

struct Model;
struct TrainingInfo;
class ConstantTable;

class GraphBuilder {
public:
  GraphBuilder(mlir::MLIRContext &context, const Model &model, const TrainingInfo &training,
               const std::set<std::string> &parameters, ConstantTable &constants);

  mlir::OwningOpRef<mlir::ModuleOp> build();

  // What the op converters use.
  mlir::OpBuilder &getBuilder() { return builder; }
  const Model &getModel() const { return model; }
  ConstantTable &getConstants() { return constants; }
  /// The SSA value for an ONNX value name, materialising constants on use.
  mlir::Value valueOf(const std::string &name, const onnx::NodeProto &user);
  /// Records that `value` stands for ONNX value `name`.
  void define(const std::string &name, mlir::Value value) { values[name] = value; }
  /// The static type ONNX inferred for value `name`; `producer` says where
  /// it comes from in messages.
  mlir::RankedTensorType inferredType(const std::string &name, const std::string &producer);
  /// The type of a tensor of ONNX element type `dtype`; `what` names it in
  /// messages.
  mlir::RankedTensorType tensorType(int32_t dtype, llvm::ArrayRef<int64_t> shape,
                                    const std::string &what);

private:
  mlir::ElementsAttr elementsOf(const HostTensor &t, const std::string &name);
  std::string modelName();
  void buildFunction(mlir::ModuleOp module, llvm::StringRef name,
                     llvm::function_ref<bool(const std::string &)> takesInput,
                     llvm::function_ref<bool(const onnx::NodeProto &)> takesNode,
                     const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &outputs,
                     llvm::ArrayRef<std::pair<std::string, std::string>> assigns);
  void importNode(const onnx::NodeProto &node, int index);

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  const Model &model;
  const TrainingInfo &training;
  const std::set<std::string> &parameters;
  ConstantTable &constants;
  std::unordered_map<std::string, mlir::Value> values;
  std::unordered_map<std::string, mlir::Value> materialized;
};

} // namespace hmcc::import

#endif // HMCC_IMPORT_GRAPHBUILDER_H
