//===- Folding.cpp - values known at import time --------------------------===//
//
// Constant initializers, Constant nodes and nodes evaluated on constant
// inputs (Folding.h); the evaluation itself is HostTensor.cpp's.
//
//===----------------------------------------------------------------------===//

#include "lib/import/Folding.h"
#include "lib/import/ImportError.h"
#include "lib/import/ModelLoader.h"
#include "lib/import/OnnxAttributes.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using onnx::NodeProto;
using onnx::TensorProto;

namespace hmcc::import {

bool ConstantTable::isConstant(const std::string &name) {
  if (name.empty())
    return true;
  if (constants.count(name))
    return true;
  if (model.initializers.count(name) && !parameters.count(name)) {
    initializerValue(name);
    return true;
  }
  return false;
}

const HostTensor *ConstantTable::find(const std::string &name) const {
  auto it = constants.find(name);
  return it == constants.end() ? nullptr : &it->second;
}

const HostTensor *ConstantTable::value(const std::string &name) {
  if (const HostTensor *t = find(name))
    return t;
  if (model.initializers.count(name) && !parameters.count(name))
    return &initializerValue(name);
  return nullptr;
}

const HostTensor &ConstantTable::initializerValue(const std::string &name) {
  auto found = constants.find(name);
  if (found != constants.end())
    return found->second;
  const TensorProto &t = *model.initializers.at(name);
  std::string bytes;
  std::optional<ExternalRef> ext = externalRef(model, t);
  if (ext)
    bytes = readExternalData(*ext, name);
  HostTensor value;
  if (auto message = decodeTensor(t, ext ? &bytes : nullptr, value))
    fail("initializer " + quote(name) + " " + *message);
  return constants[name] = std::move(value);
}

std::optional<std::vector<int64_t>> ConstantTable::staticShape(const std::string &name) const {
  if (auto c = constants.find(name); c != constants.end())
    return c->second.shape;
  if (auto i = model.initializers.find(name); i != model.initializers.end())
    return std::vector<int64_t>(i->second->dims().begin(), i->second->dims().end());
  auto it = model.types.find(name);
  if (it == model.types.end() || !it->second.has_tensor_type() ||
      !it->second.tensor_type().has_shape())
    return std::nullopt;
  std::vector<int64_t> shape;
  for (const auto &dim : it->second.tensor_type().shape().dim()) {
    if (!dim.has_dim_value())
      return std::nullopt;
    shape.push_back(dim.dim_value());
  }
  return shape;
}

bool ConstantTable::tryFold(const NodeProto &node) {
  const std::string &op = node.op_type();
  if (op == "Constant") {
    constants[node.output(0)] = constantNodeValue(model, node);
    return true;
  }
  if (op == "Shape") {
    auto shape = staticShape(node.input(0));
    if (!shape)
      return false;
    int64_t rank = static_cast<int64_t>(shape->size());
    int64_t start = attrInt(node, "start", 0), end = attrInt(node, "end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    HostTensor dims{TensorProto::INT64, {std::max<int64_t>(end - start, 0)}, {}, {}};
    for (int64_t d = start; d < end; ++d)
      dims.i.push_back((*shape)[d]);
    constants[node.output(0)] = std::move(dims);
    return true;
  }
  if (op == "Dropout" || node.input_size() == 0 ||
      !llvm::all_of(node.input(), [&](const std::string &in) { return isConstant(in); }))
    return false;
  std::vector<const HostTensor *> inputs;
  for (const auto &in : node.input())
    inputs.push_back(in.empty() ? nullptr : &constants.at(in));
  std::vector<HostTensor> outputs;
  std::string error;
  bool folded = evaluateNode(node, inputs, outputs, error);
  if (!error.empty())
    model.fail(node, error);
  if (!folded || outputs.size() != static_cast<size_t>(node.output_size()))
    return false;
  int64_t elements = 0;
  for (const HostTensor &t : outputs)
    elements += t.size(); // each at most kMaxFoldedElements
  if (foldedElements + elements > kMaxFoldedTotal)
    return false;
  foldedElements += elements;
  for (size_t k = 0; k < outputs.size(); ++k)
    constants[node.output(k)] = std::move(outputs[k]);
  return true;
}

HostTensor constantNodeValue(const Model &model, const NodeProto &node) {
  HostTensor value;
  if (const auto *a = findAttr(node, "value")) {
    if (auto message = decodeTensor(a->t(), nullptr, value))
      model.fail(node, "its value " + *message);
  } else if (const auto *a = findAttr(node, "value_float")) {
    value = {TensorProto::FLOAT, {}, {a->f()}, {}};
  } else if (const auto *a = findAttr(node, "value_floats")) {
    value = {TensorProto::FLOAT, {a->floats_size()}, {a->floats().begin(), a->floats().end()}, {}};
  } else if (const auto *a = findAttr(node, "value_int")) {
    value = {TensorProto::INT64, {}, {}, {a->i()}};
  } else if (const auto *a = findAttr(node, "value_ints")) {
    value = {TensorProto::INT64, {a->ints_size()}, {}, {a->ints().begin(), a->ints().end()}};
  } else {
    model.fail(node, "only tensor, float and int constants are supported");
  }
  return value;
}

void encodeTensor(const std::string &name, const HostTensor &t, TensorProto &out) {
  out.set_name(name);
  out.set_data_type(t.dtype);
  for (int64_t d : t.shape)
    out.add_dims(d);
  for (int64_t k = 0; k < t.size(); ++k) {
    switch (t.dtype) {
    case TensorProto::FLOAT: out.add_float_data(static_cast<float>(t.f[k])); break;
    case TensorProto::DOUBLE: out.add_double_data(t.f[k]); break;
    case TensorProto::INT64: out.add_int64_data(t.i[k]); break;
    default: out.add_int32_data(static_cast<int32_t>(t.i[k])); break;
    }
  }
}

} // namespace hmcc::import
