//===- ShapeBinding.h - static shapes for every value -----------*- C++ -*-===//
//
// hmcc compiles static graphs. This step makes every shape static: it gives
// data inputs values (--input-value) and dimensions (--batch, --seq,
// --input-shape; a symbol bound anywhere is bound wherever it appears), runs
// ONNX's shape inference with data propagation, and folds what is known at
// compile time, repeating inference while folding reveals more shapes.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_IMPORT_SHAPEBINDING_H
#define HMCC_IMPORT_SHAPEBINDING_H

#include "lib/import/OnnxImporter.h"

#include <set>
#include <string>

namespace hmcc::import {

struct Model;
class ConstantTable;

/// Turns the data inputs named by --input-value into initializers; returns
/// their names.
std::set<std::string> bindInputValues(Model &model, const ImportOptions &options);

/// Binds symbolic input dimensions and checks that every data input then
/// has a static shape.
void bindDimensions(Model &model, const ImportOptions &options);

/// ONNX's shape inference (strict, with data propagation), into the graph.
void inferShapes(Model &model);

/// Records the type of every value the graph describes in `model.types`.
void collectTypes(Model &model);

/// Folds what can be folded, hands the results to ONNX's shape inference
/// as initializers, and repeats while that reveals more static shapes
/// (shape arithmetic over symbolic dimensions needs several rounds).
void foldToFixpoint(Model &model, ConstantTable &constants);

} // namespace hmcc::import

#endif // HMCC_IMPORT_SHAPEBINDING_H
