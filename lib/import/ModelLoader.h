//===- ModelLoader.h - reading an ONNX model for import ---------*- C++ -*-===//
//
// The first step of the import: reads the file (binary protobuf, or ONNX's
// text syntax for .onnxtxt), checks the opset imports, and confines external
// data to the model's directory. External bytes are read lazily, only for the
// initializers the importer evaluates; parameters keep a reference to them.
// Also runs ONNX's checker on a copy that does not need the external files.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_IMPORT_MODELLOADER_H
#define HMCC_IMPORT_MODELLOADER_H

#include "llvm/ADT/StringRef.h"

#include "onnx/onnx_pb.h"

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

namespace hmcc::import {

/// The ONNX model being imported, as the import steps leave it.
struct Model {
  explicit Model(llvm::StringRef path);
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  std::string path; ///< the file as given
  std::string dir;  ///< its directory ("." when none): external data lies inside
  onnx::ModelProto proto;
  int64_t opset = 0; ///< the version of the default ONNX domain it imports
  /// The graph's initializers by name (indexInitializers() rebuilds it).
  std::unordered_map<std::string, const onnx::TensorProto *> initializers;
  /// Value types as ONNX's shape inference left them (collectTypes fills it).
  std::unordered_map<std::string, onnx::TypeProto> types;

  void indexInitializers();

  /// "node 'name' (op T, domain 'd', opset N)"; unnamed nodes go by their
  /// position in the graph ("node #3").
  std::string describe(const onnx::NodeProto &node) const;
  [[noreturn]] void fail(const onnx::NodeProto &node, const std::string &message) const;
};

/// Parses a model from `bytes`, as ONNX text when `text` is set; on failure
/// returns false and, for text, sets `textError` to the parser's message.
bool parseModel(llvm::StringRef bytes, bool text, onnx::ModelProto &model,
                std::string &textError);

/// Reads `model.path` into `model` and checks that it imports the default
/// opset where it uses it.
void loadModel(Model &model);

/// Where an initializer's external data lies: `file` (inside the model's
/// directory), `offset` and `length` (the tensor's bytes, which a `length`
/// entry must equal).
struct ExternalRef {
  std::string file;
  int64_t offset = 0, length = 0;
};

/// The external data of `t`, checked to lie inside the model's directory
/// and within its file; nullopt when `t` holds its values itself.
std::optional<ExternalRef> externalRef(const Model &model, const onnx::TensorProto &t);

/// Why bytes [offset, offset + length) of `path` cannot be read as external
/// data (not a regular file, a FIFO say, or too short), or nullopt.
std::optional<std::string> checkFileSlice(llvm::StringRef path, int64_t offset,
                                          int64_t length);

/// Reads bytes [offset, offset + length) of `path` (checkFileSlice first);
/// returns why it could not.
std::optional<std::string> readFileSlice(llvm::StringRef path, int64_t offset, int64_t length,
                                         std::string &bytes);

/// Checks the external data of every initializer without reading it.
void validateExternalData(const Model &model);

/// The bytes of initializer `name`'s external data.
std::string readExternalData(const ExternalRef &ref, const std::string &name);

/// Runs ONNX's checker (external data is checked by validateExternalData).
void checkModel(const Model &model);

} // namespace hmcc::import

#endif // HMCC_IMPORT_MODELLOADER_H
