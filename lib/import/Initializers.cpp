//===- Initializers.cpp - parameter values from the ONNX model ------------===//
#include "lib/import/Initializers.h"
#include "lib/import/HostTensor.h"
#include "lib/import/ModelLoader.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/onnx_pb.h"

#include <unordered_map>

using namespace mlir;

namespace hmcc {

namespace {

bool readModel(const std::string &path, onnx::ModelProto &model, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/true);
  if (!buffer) {
    error = path + ": cannot read: " + buffer.getError().message();
    return false;
  }
  bool text = StringRef(path).ends_with(".onnxtxt");
  std::string textError;
  if (!import::parseModel((*buffer)->getBuffer(), text, model, textError)) {
    error = path + (text ? ": cannot parse the ONNX text" : ": not a valid ONNX model");
    return false;
  }
  return true;
}

} // namespace

std::unique_ptr<ParameterReader> ParameterReader::open(ModuleOp module, StringRef modelPath,
                                                      std::string &error) {
  std::string path = modelPath.str();
  if (llvm::sys::fs::is_directory(path)) {
    auto source = module->getAttrOfType<StringAttr>("tg.source");
    if (!source) {
      error = "the module has no tg.source attribute naming the model file in " + path;
      return nullptr;
    }
    llvm::SmallString<256> joined(path);
    llvm::sys::path::append(joined, source.getValue());
    path = std::string(joined);
  }
  std::unique_ptr<ParameterReader> reader(new ParameterReader());
  reader->path = path;
  reader->dir = llvm::sys::path::parent_path(path).str();
  if (reader->dir.empty())
    reader->dir = ".";
  if (!readModel(path, reader->model, error))
    return nullptr;
  for (const onnx::TensorProto &t : reader->model.graph().initializer())
    reader->initializers[t.name()] = &t;
  for (const onnx::TrainingInfoProto &info : reader->model.training_info())
    for (const onnx::TensorProto &t : info.algorithm().initializer())
      reader->initializers.emplace(t.name(), &t);
  return reader;
}

ParameterReader::~ParameterReader() = default;

std::optional<Tensor> ParameterReader::read(tg::ParameterOp param, std::string &error) const {
  std::string what = path + ": parameter @" + param.getSymName().str();
  if (auto initial = param.getInitialValueAttr()) {
    auto type = cast<RankedTensorType>(param.getType());
    Tensor tensor;
    tensor.shape.assign(type.getShape().begin(), type.getShape().end());
    if (auto floats = dyn_cast<DenseFPElementsAttr>(initial))
      for (const APFloat &v : floats.getValues<APFloat>())
        tensor.values.push_back(v.convertToDouble());
    else if (auto ints = dyn_cast<DenseIntElementsAttr>(initial))
      for (const APInt &v : ints.getValues<APInt>())
        tensor.values.push_back(static_cast<double>(
            type.getElementType().isUnsignedInteger() ? v.getZExtValue() : v.getSExtValue()));
    else {
      error = what + ": initial_value is not a dense attribute";
      return std::nullopt;
    }
    return tensor;
  }
  auto it = initializers.find(param.getSource().str());
  if (it == initializers.end()) {
    error = what + ": the model has no initializer '" + param.getSource().str() + "'";
    return std::nullopt;
  }
  const onnx::TensorProto &proto = *it->second;
  std::string bytes;
  bool external = false;
  if (auto location = param.getLocation()) {
    // The importer checked the location; a hand-written module may not have.
    if (llvm::sys::path::is_absolute(*location) || location->contains("..")) {
      error = what + ": external data location '" + location->str() +
              "' must lie inside the model's directory";
      return std::nullopt;
    }
    llvm::SmallString<256> file(dir);
    llvm::sys::path::append(file, *location);
    auto type = cast<RankedTensorType>(param.getType());
    int64_t length =
        param.getLength() ? static_cast<int64_t>(*param.getLength()) : tg::tensorBytes(type);
    int64_t offset = param.getOffset() ? static_cast<int64_t>(*param.getOffset()) : 0;
    if (auto message = import::readFileSlice(file, offset, length, bytes)) {
      error = what + ": its external data '" + location->str() + "' " + *message;
      return std::nullopt;
    }
    external = true;
  } else if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    error = what + ": the initializer is stored externally but the parameter has no location";
    return std::nullopt;
  }
  import::HostTensor host;
  if (auto message = import::decodeTensor(proto, external ? &bytes : nullptr, host)) {
    error = what + ": " + *message;
    return std::nullopt;
  }
  bytes = std::string(); // the decoded copy is all that is needed now
  auto type = cast<RankedTensorType>(param.getType());
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  if (host.shape != shape) {
    error = what + ": the initializer's shape differs from the declared type";
    return std::nullopt;
  }
  Tensor tensor;
  tensor.shape = shape;
  if (host.isFloat()) {
    tensor.values = std::move(host.f);
  } else {
    tensor.values.resize(host.size());
    for (int64_t k = 0; k < host.size(); ++k)
      tensor.values[k] = host.real(k);
  }
  return tensor;
}

std::optional<TensorMap> loadParameters(ModuleOp module, StringRef modelPath,
                                        std::string &error) {
  auto reader = ParameterReader::open(module, modelPath, error);
  if (!reader)
    return std::nullopt;
  TensorMap values;
  for (auto param : module.getOps<tg::ParameterOp>()) {
    auto tensor = reader->read(param, error);
    if (!tensor)
      return std::nullopt;
    values[param.getSymName().str()] = std::move(*tensor);
  }
  return values;
}

} // namespace hmcc
