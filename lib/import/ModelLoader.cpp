//===- ModelLoader.cpp - reading an ONNX model for import -----------------===//
//
// Reads the model file, checks its opset imports, confines external data to
// the model's directory and runs ONNX's checker (ModelLoader.h).
//
//===----------------------------------------------------------------------===//

#include "lib/import/ModelLoader.h"
#include "lib/import/ImportError.h"
#include "lib/import/Validation.h"
#include "lib/support/Limits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/checker.h"
#include "onnx/defs/parser.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <climits>

using llvm::StringRef;
using onnx::NodeProto;
using onnx::TensorProto;

namespace hmcc::import {

Model::Model(StringRef path) : path(path.str()) {
  dir = llvm::sys::path::parent_path(path).str();
  if (dir.empty())
    dir = ".";
}

void Model::indexInitializers() {
  initializers.clear();
  for (const TensorProto &t : proto.graph().initializer())
    initializers[t.name()] = &t;
}

std::string Model::describe(const NodeProto &node) const {
  std::string domain = node.domain().empty() ? "ai.onnx" : node.domain();
  int64_t version = opset;
  for (const auto &entry : proto.opset_import())
    if (entry.domain() == node.domain() && !node.domain().empty())
      version = entry.version();
  std::string name = quote(node.name());
  if (node.name().empty())
    for (int k = 0; k < proto.graph().node_size(); ++k)
      if (&proto.graph().node(k) == &node)
        name = "#" + std::to_string(k);
  return "node " + name + " (op " + escapeText(node.op_type()) + ", domain " + quote(domain) +
         ", opset " + std::to_string(version) + ")";
}

void Model::fail(const NodeProto &node, const std::string &message) const {
  import::fail(describe(node) + ": " + message);
}

bool parseModel(StringRef bytes, bool text, onnx::ModelProto &model, std::string &textError) {
  if (text) {
    auto status = onnx::OnnxParser::Parse(model, bytes.data());
    if (!status.IsOK())
      textError = status.ErrorMessage();
    return status.IsOK();
  }
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  return model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

void loadModel(Model &model) {
  const std::string &path = model.path;
  bool isDir = false;
  if (!llvm::sys::fs::exists(path))
    fail("no such file");
  if (!llvm::sys::fs::is_directory(path, isDir) && isDir)
    fail("is a directory, not an ONNX file");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/true);
  if (!buffer)
    fail("cannot read: " + buffer.getError().message());
  StringRef bytes = (*buffer)->getBuffer();
  bool text = StringRef(path).ends_with(".onnxtxt");
  std::string message;
  if (!parseModel(bytes, text, model.proto, message)) {
    if (text) {
      std::replace(message.begin(), message.end(), '\n', ' ');
      fail("cannot parse the ONNX text: " + StringRef(message).trim().str());
    }
    size_t printable = 0;
    for (char c : bytes)
      printable += (c >= 32 && c < 127) || c == '\n' || c == '\t' || c == '\r';
    bool looksLikeText = !bytes.empty() && printable * 10 >= bytes.size() * 9;
    fail(std::string("not a valid ONNX model: the protobuf is ") +
         (looksLikeText ? "not there (this looks like a text file)"
                        : "malformed or truncated"));
  }
  const onnx::ModelProto &proto = model.proto;
  if (!proto.has_graph() || proto.ir_version() <= 0)
    fail("not an ONNX model (no graph or no IR version)");
  for (const auto &entry : proto.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      model.opset = entry.version();
  bool defaultNodes = llvm::any_of(proto.graph().node(), [](const NodeProto &n) {
    return n.domain().empty() || n.domain() == "ai.onnx";
  });
  if (model.opset == 0 && defaultNodes)
    fail("the model imports no version of the default ONNX opset");
  model.indexInitializers();
}

//===----------------------------------------------------------------------===//
// External data
//===----------------------------------------------------------------------===//

/// Parses a non-negative decimal integer, the whole of `text`.
static std::optional<int64_t> parseNonNegative(StringRef text) {
  int64_t v;
  if (text.empty() || !llvm::isDigit(text.front()) || text.getAsInteger(10, v) || v < 0)
    return std::nullopt;
  return v;
}

std::optional<ExternalRef> externalRef(const Model &model, const TensorProto &t) {
  if (t.data_location() != TensorProto::EXTERNAL)
    return std::nullopt;
  const std::string &modelDir = model.dir;
  std::string what = "external data of initializer " + quote(t.name());
  ExternalRef ref;
  std::string location;
  std::optional<int64_t> length;
  for (const auto &kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      std::optional<int64_t> v = parseNonNegative(kv.value());
      if (!v)
        fail(what + ": " + kv.key() + " " + quote(kv.value()) +
             " is not a non-negative integer");
      if (kv.key() == "offset")
        ref.offset = *v;
      else
        length = v;
    }
  }
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  std::optional<int64_t> bytes;
  if (int64_t element = elementBytes(t.data_type()))
    bytes = checkedTensorBytes(dims, element);
  if (!bytes)
    fail(what + ": its shape and element type give no valid byte size");
  if (length && *length != *bytes)
    fail(what + " is " + std::to_string(*length) + " bytes long, but its shape needs " +
         std::to_string(*bytes));
  ref.length = *bytes;
  if (location.empty())
    fail(what + " has no location");
  if (llvm::sys::path::is_absolute(location))
    fail(what + " uses the absolute path " + quote(location) +
         "; external data must lie inside the model's directory");
  llvm::SmallString<256> joined(modelDir);
  llvm::sys::path::append(joined, location);
  llvm::SmallString<256> realDir, realFile;
  llvm::sys::fs::real_path(modelDir, realDir);
  // Resolve '..' lexically first so that a missing file still gets the
  // right diagnosis, then through symlinks when it exists.
  llvm::SmallString<256> lexical(joined);
  llvm::sys::path::remove_dots(lexical, /*remove_dot_dot=*/true);
  llvm::SmallString<256> lexicalDir(modelDir);
  llvm::sys::path::remove_dots(lexicalDir, true);
  auto inside = [](StringRef dir, StringRef file) {
    return file.starts_with(dir) &&
           (file.size() > dir.size() && llvm::sys::path::is_separator(file[dir.size()]));
  };
  bool escapes = StringRef(location).contains("..") &&
                 !(lexicalDir == "." ? !StringRef(lexical).starts_with("..")
                                     : inside(lexicalDir, lexical));
  if (!escapes && !llvm::sys::fs::real_path(joined, realFile))
    escapes = !inside(realDir, realFile);
  if (escapes)
    fail(what + " at " + quote(location) +
         " escapes the model's directory; external data must lie inside it");
  if (auto message = checkFileSlice(joined, ref.offset, ref.length))
    fail(what + ": " + quote(location) + " " + *message);
  ref.file = std::string(joined);
  return ref;
}

std::optional<std::string> checkFileSlice(StringRef path, int64_t offset, int64_t length) {
  if (offset < 0 || length < 0)
    return std::string("is named with a negative offset or length");
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status, /*follow=*/true))
    return std::string("does not exist next to the model");
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return std::string("is not a regular file");
  uint64_t size = status.getSize();
  if (static_cast<uint64_t>(offset) > size || static_cast<uint64_t>(length) > size - offset)
    return "is " + std::to_string(size) + " bytes long; bytes " + std::to_string(offset) +
           " to " + std::to_string(static_cast<uint64_t>(offset) + length) +
           " lie beyond its end";
  return std::nullopt;
}

std::optional<std::string> readFileSlice(StringRef path, int64_t offset, int64_t length,
                                         std::string &bytes) {
  if (auto message = checkFileSlice(path, offset, length))
    return message;
  auto buffer = llvm::MemoryBuffer::getFileSlice(path, length, offset, /*IsVolatile=*/false);
  if (!buffer)
    return "cannot be read: " + buffer.getError().message();
  if (static_cast<int64_t>((*buffer)->getBufferSize()) != length)
    return std::string("changed while it was read");
  bytes = (*buffer)->getBuffer().str();
  return std::nullopt;
}

void validateExternalData(const Model &model) {
  for (const TensorProto &t : model.proto.graph().initializer())
    externalRef(model, t);
}

std::string readExternalData(const ExternalRef &ref, const std::string &name) {
  std::string bytes;
  if (auto message = readFileSlice(ref.file, ref.offset, ref.length, bytes))
    fail("the external data of initializer " + quote(name) + " " + *message);
  return bytes;
}

//===----------------------------------------------------------------------===//
// ONNX's checker
//===----------------------------------------------------------------------===//

/// ONNX's checker looks for external data relative to the working
/// directory; hmcc has already checked it relative to the model. The copy
/// given to the checker turns externally stored initializers into graph
/// inputs of the same type, which checks the same graph.
static onnx::ModelProto withoutExternalData(const onnx::ModelProto &model) {
  onnx::ModelProto copy = model;
  auto *graph = copy.mutable_graph();
  auto *inits = graph->mutable_initializer();
  for (int k = inits->size() - 1; k >= 0; --k) {
    const TensorProto &t = inits->Get(k);
    if (t.data_location() != TensorProto::EXTERNAL)
      continue;
    bool listed = llvm::any_of(graph->input(), [&](auto &in) { return in.name() == t.name(); });
    if (!listed) {
      auto *input = graph->add_input();
      input->set_name(t.name());
      auto *tensor = input->mutable_type()->mutable_tensor_type();
      tensor->set_elem_type(t.data_type());
      for (int64_t d : t.dims())
        tensor->mutable_shape()->add_dim()->set_dim_value(d);
    }
    inits->DeleteSubrange(k, 1);
  }
  return copy;
}

void checkModel(const Model &model) {
  try {
    onnx::checker::check_model(withoutExternalData(model.proto));
  } catch (const std::exception &e) {
    fail("the ONNX checker rejects the model: " + StringRef(e.what()).trim().str());
  }
}

} // namespace hmcc::import
