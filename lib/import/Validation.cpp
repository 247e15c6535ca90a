//===- Validation.cpp - the model checked before anything uses it ---------===//
#include "lib/import/Validation.h"
#include "lib/import/ImportError.h"
#include "lib/import/ModelLoader.h"
#include "lib/support/Limits.h"

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

#include "llvm/ADT/STLExtras.h"

#include <map>
#include <string>
#include <vector>

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::NodeProto;
using onnx::TensorProto;

namespace hmcc::import {

int64_t elementBytes(int64_t dtype) {
  switch (dtype) {
  case TensorProto::BOOL:
  case TensorProto::INT8:
  case TensorProto::UINT8:
    return 1;
  case TensorProto::INT16:
  case TensorProto::UINT16:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    return 2;
  case TensorProto::INT32:
  case TensorProto::UINT32:
  case TensorProto::FLOAT:
    return 4;
  case TensorProto::INT64:
  case TensorProto::UINT64:
  case TensorProto::DOUBLE:
  case TensorProto::COMPLEX64:
    return 8;
  case TensorProto::COMPLEX128:
    return 16;
  default:
    return 0;
  }
}

namespace {

bool isElementType(int64_t dtype) {
  return dtype != TensorProto::UNDEFINED && dtype >= INT32_MIN && dtype <= INT32_MAX &&
         onnx::TensorProto_DataType_IsValid(static_cast<int>(dtype));
}

/// The number of values a TensorProto's typed field holds for it.
int64_t typedValues(const TensorProto &t) {
  switch (t.data_type()) {
  case TensorProto::FLOAT:
    return t.float_data_size();
  case TensorProto::COMPLEX64:
    return t.float_data_size() / 2;
  case TensorProto::DOUBLE:
    return t.double_data_size();
  case TensorProto::COMPLEX128:
    return t.double_data_size() / 2;
  case TensorProto::INT64:
    return t.int64_data_size();
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    return t.uint64_data_size();
  case TensorProto::STRING:
    return t.string_data_size();
  default:
    return t.int32_data_size();
  }
}

class Validator {
public:
  explicit Validator(const Model &model) : model(model) {}

  void opsets() {
    for (const auto &entry : model.proto.opset_import()) {
      int64_t v = entry.version();
      if ((entry.domain().empty() || entry.domain() == "ai.onnx") &&
          (v < kMinOpset || v > kMaxOpset))
        fail("the model imports opset " + std::to_string(v) +
             " of the default ONNX domain; hmcc implements opsets " +
             std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset));
      if (entry.domain() == "ai.onnx.preview.training" && v != 1)
        fail("the model imports version " + std::to_string(v) +
             " of ai.onnx.preview.training; hmcc implements version 1");
    }
  }

  void tensor(const TensorProto &t, const std::string &what, bool mayBeExternal) {
    if (!isElementType(t.data_type()))
      fail(what + " has element type " + std::to_string(t.data_type()) +
           ", which is not an ONNX element type");
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    for (int64_t d : dims)
      if (d < 0)
        fail(what + " has the negative dimension " + std::to_string(d) + " in its shape " +
             formatShape(dims));
    int64_t element = elementBytes(t.data_type());
    std::optional<int64_t> count = checkedElementCount(dims);
    std::optional<int64_t> bytes = checkedTensorBytes(dims, element ? element : 1);
    if (!count || !bytes)
      fail(what + " has shape " + formatShape(dims) + ", more than hmcc's limit of 2^48 bytes");
    if (t.data_location() == TensorProto::EXTERNAL) {
      if (!mayBeExternal)
        fail(what + " is stored as external data, which hmcc reads for initializers only");
      return; // externalRef checks the entries against the file
    }
    if (t.has_raw_data()) {
      if (!element)
        fail(what + " has raw data, which its element type cannot have");
      if (static_cast<int64_t>(t.raw_data().size()) != *bytes)
        fail(what + " holds " + std::to_string(t.raw_data().size()) +
             " bytes, but its shape needs " + std::to_string(*bytes));
      return;
    }
    int64_t values = typedValues(t);
    if (values != *count)
      fail(what + " holds " + std::to_string(values) + " values, but its shape " +
           formatShape(dims) + " needs " + std::to_string(*count));
  }

  void valueType(const onnx::ValueInfoProto &vi) {
    if (!vi.type().has_tensor_type())
      return;
    const auto &tt = vi.type().tensor_type();
    if (tt.has_shape())
      declaredRanks[vi.name()] = tt.shape().dim_size();
    std::string what = "value " + quote(vi.name());
    if (tt.elem_type() != TensorProto::UNDEFINED && !isElementType(tt.elem_type()))
      fail(what + " has element type " + std::to_string(tt.elem_type()) +
           ", which is not an ONNX element type");
    std::vector<int64_t> dims;
    for (const auto &dim : tt.shape().dim()) {
      if (!dim.has_dim_value())
        continue;
      if (dim.dim_value() < 0)
        fail(what + " has the negative dimension " + std::to_string(dim.dim_value()));
      dims.push_back(dim.dim_value());
    }
    int64_t element = elementBytes(tt.elem_type());
    if (!checkedTensorBytes(dims, element ? element : 1))
      fail(what + " has shape " + formatShape(dims) + ", more than hmcc's limit of 2^48 bytes");
  }

  /// The node's attributes against its operator's schema: known names, the
  /// types the schema gives, required ones present.
  void schema(const NodeProto &n) {
    bool standard = n.domain().empty() || n.domain() == "ai.onnx" ||
                    n.domain() == "ai.onnx.preview.training";
    if (!standard)
      return; // refused as an unsupported domain later
    int64_t version = model.opset;
    for (const auto &entry : model.proto.opset_import())
      if (!n.domain().empty() && entry.domain() == n.domain())
        version = entry.version();
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(version), n.domain());
    if (!schema)
      return; // refused as an unsupported operator later
    const auto &declared = schema->attributes();
    for (const AttributeProto &a : n.attribute()) {
      auto it = declared.find(a.name());
      std::string what = "attribute " + quote(a.name()) + " of " + model.describe(n);
      if (it == declared.end())
        fail(what + " is not one " + escapeText(n.op_type()) + " has");
      if (a.type() != it->second.type)
        fail(what + " has type " + AttributeProto::AttributeType_Name(a.type()) +
             "; the operator's schema says " +
             AttributeProto::AttributeType_Name(it->second.type));
    }
    for (const auto &[name, attr] : declared)
      if (attr.required && llvm::none_of(n.attribute(), [&](const AttributeProto &a) {
            return a.name() == name;
          }))
        fail(model.describe(n) + " lacks its required attribute " + quote(name));
  }

  /// Axis attributes against the rank of the node's first input, where the
  /// file declares it: ONNX's own shape inference indexes with some of them
  /// unchecked (LayerNormalization's), so they are checked before it runs.
  void axes(const NodeProto &n) {
    if (n.input_size() == 0)
      return;
    auto rank = declaredRanks.find(n.input(0));
    if (rank == declaredRanks.end())
      return;
    for (const AttributeProto &a : n.attribute()) {
      if (a.name() != "axis" && a.name() != "axes")
        continue;
      std::vector<int64_t> values(a.ints().begin(), a.ints().end());
      if (a.type() == AttributeProto::INT)
        values.push_back(a.i());
      // Ops whose axes count in their result, which has more dimensions.
      int64_t r = rank->second + (n.op_type() == "Unsqueeze" ? a.ints_size()
                                  : n.op_type() == "OneHot"  ? 1
                                                             : 0);
      for (int64_t v : values)
        if (v < -r || v > r)
          fail("attribute " + quote(a.name()) + " of " + model.describe(n) + " is " +
               std::to_string(v) + ", out of range for its input " + quote(n.input(0)) +
               " of rank " + std::to_string(r));
    }
  }

  void node(const NodeProto &n) {
    schema(n);
    axes(n);
    for (const AttributeProto &a : n.attribute()) {
      std::string what = "attribute " + quote(a.name()) + " of " + model.describe(n);
      if ((a.name() == "to" || a.name() == "dtype") && a.type() == AttributeProto::INT &&
          !isElementType(a.i()))
        fail(what + " is " + std::to_string(a.i()) + ", which is not an ONNX element type");
      if (a.has_t())
        tensor(a.t(), "the tensor of " + what, false);
      for (const TensorProto &t : a.tensors())
        tensor(t, "a tensor of " + what, false);
      if (a.has_sparse_tensor()) {
        tensor(a.sparse_tensor().values(), "the sparse tensor of " + what, false);
        tensor(a.sparse_tensor().indices(), "the sparse tensor of " + what, false);
      }
      if (a.has_g())
        graph(a.g());
      for (const GraphProto &g : a.graphs())
        graph(g);
    }
  }

  void graph(const GraphProto &g) {
    for (const TensorProto &t : g.initializer()) {
      tensor(t, "initializer " + quote(t.name()), true);
      declaredRanks[t.name()] = t.dims_size();
    }
    for (const auto &s : g.sparse_initializer()) {
      tensor(s.values(), "sparse initializer " + quote(s.values().name()), false);
      tensor(s.indices(), "sparse initializer " + quote(s.values().name()), false);
    }
    for (const auto *list : {&g.input(), &g.output(), &g.value_info()})
      for (const auto &vi : *list)
        valueType(vi);
    for (const NodeProto &n : g.node())
      node(n);
  }

private:
  const Model &model;
  /// Ranks the file declares (graph inputs, outputs, value_info,
  /// initializers), by value name.
  std::map<std::string, int64_t> declaredRanks;
};

} // namespace

void validateModel(const Model &model) {
  Validator v(model);
  v.opsets();
  v.graph(model.proto.graph());
  for (const auto &info : model.proto.training_info()) {
    v.graph(info.initialization());
    v.graph(info.algorithm());
  }
  for (const auto &function : model.proto.functions())
    for (const NodeProto &n : function.node())
      v.node(n);
}

} // namespace hmcc::import
