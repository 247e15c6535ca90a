//===- import_structured_fuzz.cpp - the importer on mutated ModelProtos ---===//
//
// A structure-aware target: inputs are binary ModelProtos (the fixtures'
// models as seeds) and the custom mutator changes them as a hostile or broken
// exporter would, one to three edits at a time, each reserialized:
//  - shapes: dims huge, negative, zero, symbolic, added or dropped, in graph
//    inputs, outputs, value_info and initializers;
//  - attributes: ints and floats out of range, wrong types, wrong payloads,
//    added and removed; tensors inside attributes like initializers;
//  - element types of tensors and values, opset imports and IR versions,
//    op types and domains;
//  - edges: node inputs and outputs renamed, swapped, emptied, added or
//    dropped, nodes removed, duplicated or reordered, graph inputs and
//    outputs changed;
//  - initializers: raw data truncated or extended, typed data added, moved
//    to external data; external data entries (location, offset, length)
//    pointing inside, beyond or outside the model's folder (ImportHarness.h
//    lists what lies there);
//  - training_info bindings and the hmcc.frozen metadata entry.
// Bytes that do not parse as a ModelProto get libFuzzer's own mutations. The
// imports themselves run as in import_fuzz (ImportHarness).
//
//===----------------------------------------------------------------------===//
#include "ImportHarness.h"

#include "lib/import/OnnxImporter.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;
using onnx::TypeProto;
using onnx::ValueInfoProto;

template <typename T, size_t N> size_t count(const T (&)[N]) { return N; }

const char *const kLocations[] = {
    "weights.bin", "empty.bin", "sub/w.bin", "./weights.bin", "sub/../weights.bin",
    "../outside.bin", "link.bin", "linkdir/outside.bin", "linkdir/model/weights.bin",
    "/etc/passwd", "", ".", "sub", "sub/", "model.onnx", "missing.bin", "weights.bin/",
    "..", "sub/../../outside.bin", "linkdir", "//weights.bin", "weights.bin\n",
    "~/weights.bin", "sub/./w.bin"};
const char *const kNumbers[] = {
    "0", "1", "4", "8", "16", "32", "47", "48", "63", "64", "65", "-1", "-4",
    "9223372036854775807", "9223372036854775806", "-9223372036854775808",
    "9223372036854775800", "18446744073709551615", "99999999999999999999", "4294967296",
    "2147483648", "abc", "", " 8", "8 ", "0x10", "1e3", "+4", "0004", "4.5"};
const char *const kDomains[] = {"", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training",
                                "com.microsoft", "custom", "ai.onnx.training"};
const char *const kAttrNames[] = {
    "axis", "axes", "perm", "keepdims", "to", "epsilon", "alpha", "beta", "transA",
    "transB", "mode", "value", "split", "num_outputs", "ratio", "seed", "dtype", "shape",
    "starts", "ends", "stash_type", "allowzero", "select_last_index", "noop_with_empty_axes",
    "approximate", "reduction", "ignore_index", "training_mode", "momentum", "norm_coefficient",
    "decay_factor", "value_float", "value_int", "value_ints", "value_floats", "batch_dims",
    "exclusive", "reverse", "largest", "sorted", "k", "upper", "direction", "group",
    "kernel_shape", "pads", "strides", "dilations", "interleaved", "rotary_embedding_dim"};
const char *const kStrings[] = {"", "constant", "reflect", "edge", "NOTSET", "SAME_UPPER",
                                "tanh", "none", "mean", "sum", "linear", "nearest",
                                "LEFT", "RIGHT", "x", "\xff\xfe", "NaN"};
const char *const kFrozen[] = {"*", "", "[", "[a-", "**", "w*", "\\", "a,b", "*,*", "?",
                               "[!a]*", "{a,b}", ",,", "*[", "fc1.weight"};
const char *const kExtraOps[] = {"Loop", "If", "Scan", "Foo", "", "Adam", "Momentum",
                                 "Adagrad", "Gradient", "ConstantOfShape", "Constant",
                                 "Shape", "Reshape", "Range", "Expand", "Tile", "Einsum"};

class Mutator {
public:
  Mutator(ModelProto &model, unsigned seed) : m(model), rng(seed) {}

  /// One edit; returns whether it changed anything it could find.
  bool mutateOnce() {
    // Again each time: an edit may have removed a node and its subgraphs.
    graphs.clear();
    collectGraphs(m.mutable_graph());
    for (auto &info : *m.mutable_training_info()) {
      if (info.has_initialization())
        collectGraphs(info.mutable_initialization());
      if (info.has_algorithm())
        collectGraphs(info.mutable_algorithm());
    }
    GraphProto &g = pickGraph();
    switch (below(22)) {
    case 0:
    case 1:
      return mutateValueInfo(g);
    case 2:
      return withInitializer(g, [&](TensorProto &t) { mutateDims(*t.mutable_dims()); });
    case 3:
    case 4:
      return mutateAttribute(g);
    case 5:
      return addAttribute(g);
    case 6:
      return withInitializer(g, [&](TensorProto &t) { t.set_data_type(dataType()); });
    case 7:
      return mutateOpsets();
    case 8:
    case 9:
      return renameEdge(g);
    case 10:
      return swapEdges(g);
    case 11:
      return addOrDropEdge(g);
    case 12:
    case 13:
      return withInitializer(g, [&](TensorProto &t) { mutateData(t); });
    case 14:
    case 15:
      return withInitializer(g, [&](TensorProto &t) { mutateExternal(t); });
    case 16:
      return mutateOpType(g);
    case 17:
      return mutateNodes(g);
    case 18:
      return mutateGraphInputsOutputs(g);
    case 19:
      return mutateTrainingInfo();
    case 20:
      return mutateMetadata();
    default:
      return mutateDomainOrVersion(g);
    }
  }

private:
  ModelProto &m;
  std::mt19937_64 rng;
  std::vector<GraphProto *> graphs;

  uint64_t below(uint64_t n) { return n ? rng() % n : 0; }
  bool coin(uint64_t n = 2) { return below(n) == 0; }
  template <typename T, size_t N> const T &pick(const T (&a)[N]) { return a[below(N)]; }

  void collectGraphs(GraphProto *g) {
    graphs.push_back(g);
    for (auto &node : *g->mutable_node())
      for (auto &attr : *node.mutable_attribute()) {
        if (attr.has_g())
          collectGraphs(attr.mutable_g());
        for (auto &sub : *attr.mutable_graphs())
          collectGraphs(&sub);
      }
  }

  GraphProto &pickGraph() { return coin(2) ? *graphs.front() : *graphs[below(graphs.size())]; }

  int64_t interesting() {
    static const int64_t values[] = {0,
                                     1,
                                     -1,
                                     2,
                                     -2,
                                     3,
                                     4,
                                     8,
                                     16,
                                     1024,
                                     65536,
                                     1 << 20,
                                     std::numeric_limits<int32_t>::max(),
                                     std::numeric_limits<int32_t>::min(),
                                     int64_t(1) << 31,
                                     int64_t(1) << 32,
                                     (int64_t(1) << 32) - 1,
                                     int64_t(1) << 40,
                                     int64_t(1) << 62,
                                     std::numeric_limits<int64_t>::max(),
                                     std::numeric_limits<int64_t>::min(),
                                     std::numeric_limits<int64_t>::min() + 1,
                                     std::numeric_limits<int64_t>::max() - 1};
    switch (below(4)) {
    case 0:
      return static_cast<int64_t>(below(17)) - 8;
    case 1:
      return static_cast<int64_t>(rng());
    default:
      return pick(values);
    }
  }

  float interestingFloat() {
    static const float values[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-45f, 1e30f, -1e30f,
                                   3.4e38f, std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::quiet_NaN(), 1e-8f, 2.0f};
    if (coin(4)) {
      uint32_t bits = static_cast<uint32_t>(rng());
      float f;
      memcpy(&f, &bits, sizeof f);
      return f;
    }
    return pick(values);
  }

  int32_t dataType() {
    static const int32_t odd[] = {-1, 0, 26, 27, 100, std::numeric_limits<int32_t>::max(),
                                  std::numeric_limits<int32_t>::min()};
    return coin(5) ? pick(odd) : static_cast<int32_t>(1 + below(25));
  }

  /// A name of the graph: an existing value's (mostly) or a new one.
  std::string valueName(GraphProto &g) {
    std::vector<const std::string *> names;
    for (const auto &v : g.input())
      names.push_back(&v.name());
    for (const auto &v : g.output())
      names.push_back(&v.name());
    for (const auto &t : g.initializer())
      names.push_back(&t.name());
    for (const auto &n : g.node())
      for (const auto &o : n.output())
        names.push_back(&o);
    if (names.empty() || coin(8)) {
      static const char *const fresh[] = {"", "x", "new_value", "idx", "targets", "loss",
                                          " ", "a/b", "\xc3\xa9"};
      return pick(fresh);
    }
    return *names[below(names.size())];
  }

  void mutateDims(google::protobuf::RepeatedField<int64_t> &dims) {
    switch (below(5)) {
    case 0:
      dims.Add(interesting());
      break;
    case 1:
      if (!dims.empty())
        dims.RemoveLast();
      break;
    case 2:
      dims.Clear();
      break;
    default:
      if (dims.empty())
        dims.Add(interesting());
      else
        dims.Set(below(dims.size()), interesting());
    }
  }

  void mutateShape(TypeProto &type) {
    if (coin(10)) {
      // Not a tensor at all, or a tensor without shape.
      if (coin())
        type.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
      else
        type.mutable_tensor_type()->clear_shape();
      return;
    }
    auto *tensor = type.mutable_tensor_type();
    if (coin(4)) {
      tensor->set_elem_type(dataType());
      return;
    }
    auto *shape = tensor->mutable_shape();
    int n = shape->dim_size();
    switch (below(6)) {
    case 0:
      shape->add_dim()->set_dim_value(interesting());
      return;
    case 1:
      if (n)
        shape->mutable_dim()->RemoveLast();
      return;
    case 2:
      if (n) {
        static const char *const params[] = {"N", "T", "", "batch", "seq", "B", "unk__0", "-1"};
        shape->mutable_dim(below(n))->set_dim_param(pick(params));
      }
      return;
    case 3:
      if (n)
        shape->mutable_dim(below(n))->clear_value();
      return;
    default:
      if (n)
        shape->mutable_dim(below(n))->set_dim_value(interesting());
      else
        shape->add_dim()->set_dim_value(interesting());
    }
  }

  bool mutateValueInfo(GraphProto &g) {
    std::vector<ValueInfoProto *> infos;
    for (auto &v : *g.mutable_input())
      infos.push_back(&v);
    for (auto &v : *g.mutable_output())
      infos.push_back(&v);
    for (auto &v : *g.mutable_value_info())
      infos.push_back(&v);
    if (infos.empty())
      return false;
    mutateShape(*infos[below(infos.size())]->mutable_type());
    return true;
  }

  template <typename F> bool withInitializer(GraphProto &g, F &&f) {
    // Initializers, or a tensor inside an attribute (Constant's value).
    std::vector<TensorProto *> tensors;
    for (auto &t : *g.mutable_initializer())
      tensors.push_back(&t);
    for (auto &node : *g.mutable_node())
      for (auto &attr : *node.mutable_attribute()) {
        if (attr.has_t())
          tensors.push_back(attr.mutable_t());
        for (auto &t : *attr.mutable_tensors())
          tensors.push_back(&t);
      }
    if (tensors.empty())
      return false;
    f(*tensors[below(tensors.size())]);
    return true;
  }

  NodeProto *pickNode(GraphProto &g) {
    return g.node_size() ? g.mutable_node(below(g.node_size())) : nullptr;
  }

  void mutateTensor(TensorProto &t) {
    switch (below(4)) {
    case 0:
      mutateDims(*t.mutable_dims());
      break;
    case 1:
      t.set_data_type(dataType());
      break;
    case 2:
      mutateData(t);
      break;
    default:
      mutateExternal(t);
    }
  }

  bool mutateAttribute(GraphProto &g) {
    NodeProto *node = pickNode(g);
    if (!node || node->attribute_size() == 0)
      return false;
    AttributeProto &a = *node->mutable_attribute(below(node->attribute_size()));
    if (coin(6)) {
      // The declared type no longer matches the payload, or the payload moves.
      if (coin())
        a.set_type(static_cast<AttributeProto::AttributeType>(below(16)));
      else
        a.set_i(interesting());
      return true;
    }
    switch (a.type()) {
    case AttributeProto::INT:
      a.set_i(interesting());
      break;
    case AttributeProto::INTS:
      if (a.ints_size() == 0 || coin(4))
        a.add_ints(interesting());
      else if (coin(4))
        a.mutable_ints()->RemoveLast();
      else
        a.set_ints(below(a.ints_size()), interesting());
      break;
    case AttributeProto::FLOAT:
      a.set_f(interestingFloat());
      break;
    case AttributeProto::FLOATS:
      if (a.floats_size() == 0 || coin(4))
        a.add_floats(interestingFloat());
      else if (coin(4))
        a.mutable_floats()->RemoveLast();
      else
        a.set_floats(below(a.floats_size()), interestingFloat());
      break;
    case AttributeProto::STRING:
      a.set_s(pick(kStrings));
      break;
    case AttributeProto::STRINGS:
      a.add_strings(pick(kStrings));
      break;
    case AttributeProto::TENSOR:
      mutateTensor(*a.mutable_t());
      break;
    default:
      a.set_type(static_cast<AttributeProto::AttributeType>(below(16)));
    }
    return true;
  }

  bool addAttribute(GraphProto &g) {
    NodeProto *node = pickNode(g);
    if (!node)
      return false;
    if (node->attribute_size() && coin(3)) {
      node->mutable_attribute()->DeleteSubrange(below(node->attribute_size()), 1);
      return true;
    }
    AttributeProto *a = node->add_attribute();
    a->set_name(pick(kAttrNames));
    switch (below(6)) {
    case 0:
      a->set_type(AttributeProto::INT);
      a->set_i(interesting());
      break;
    case 1:
      a->set_type(AttributeProto::INTS);
      for (uint64_t k = below(5); k > 0; --k)
        a->add_ints(interesting());
      break;
    case 2:
      a->set_type(AttributeProto::FLOAT);
      a->set_f(interestingFloat());
      break;
    case 3:
      a->set_type(AttributeProto::STRING);
      a->set_s(pick(kStrings));
      break;
    case 4: {
      a->set_type(AttributeProto::TENSOR);
      TensorProto *t = a->mutable_t();
      t->set_data_type(dataType());
      for (uint64_t k = below(3); k > 0; --k)
        t->add_dims(coin(3) ? interesting() : static_cast<int64_t>(below(4)));
      mutateData(*t);
      break;
    }
    default:
      // A name twice, or a type without its payload.
      a->set_type(static_cast<AttributeProto::AttributeType>(below(16)));
    }
    return true;
  }

  void mutateData(TensorProto &t) {
    std::string *raw = t.mutable_raw_data();
    switch (below(8)) {
    case 0:
      if (!raw->empty())
        raw->resize(below(raw->size()));
      break;
    case 1:
    case 2: {
      size_t extra = 1 + below(coin(4) ? 4096 : 16);
      for (size_t k = 0; k < extra; ++k)
        raw->push_back(static_cast<char>(rng()));
      break;
    }
    case 3:
      t.clear_raw_data();
      break;
    case 4:
      // Typed data beside (or instead of) raw data.
      for (uint64_t k = 1 + below(4); k > 0; --k) {
        switch (below(5)) {
        case 0:
          t.add_float_data(interestingFloat());
          break;
        case 1:
          t.add_int32_data(static_cast<int32_t>(interesting()));
          break;
        case 2:
          t.add_int64_data(interesting());
          break;
        case 3:
          t.add_double_data(interestingFloat());
          break;
        default:
          t.add_string_data(pick(kStrings));
        }
      }
      break;
    case 5:
      if (!raw->empty())
        (*raw)[below(raw->size())] = static_cast<char>(rng());
      break;
    case 6:
      t.mutable_segment()->set_begin(interesting());
      t.mutable_segment()->set_end(interesting());
      break;
    default:
      t.set_data_location(coin() ? TensorProto::DEFAULT
                                 : static_cast<TensorProto::DataLocation>(below(4)));
    }
  }

  void mutateExternal(TensorProto &t) {
    if (t.data_location() != TensorProto::EXTERNAL || coin(8)) {
      t.set_data_location(TensorProto::EXTERNAL);
      if (coin(4) == false)
        t.clear_raw_data();
    }
    auto *entries = t.mutable_external_data();
    auto setEntry = [&](const std::string &key, const std::string &value) {
      for (auto &e : *entries)
        if (e.key() == key && !coin(8)) {
          e.set_value(value);
          return;
        }
      auto *e = entries->Add();
      e->set_key(key);
      e->set_value(value);
    };
    switch (below(6)) {
    case 0:
    case 1:
      setEntry("location", pick(kLocations));
      break;
    case 2:
      setEntry("offset", pick(kNumbers));
      break;
    case 3:
      setEntry("length", pick(kNumbers));
      break;
    case 4:
      if (!entries->empty())
        entries->DeleteSubrange(below(entries->size()), 1);
      break;
    default: {
      static const char *const keys[] = {"checksum", "", "LOCATION", "basepath"};
      setEntry(pick(keys), pick(kNumbers));
    }
    }
    if (coin(3) && !entries->empty()) {
      bool hasLocation = false;
      for (auto &e : *entries)
        hasLocation |= e.key() == "location";
      if (!hasLocation)
        setEntry("location", "weights.bin");
    }
  }

  bool mutateOpsets() {
    auto *opsets = m.mutable_opset_import();
    switch (below(5)) {
    case 0: {
      auto *o = opsets->Add();
      o->set_domain(pick(kDomains));
      o->set_version(interesting());
      return true;
    }
    case 1:
      if (opsets->empty())
        return false;
      opsets->DeleteSubrange(below(opsets->size()), 1);
      return true;
    case 2:
      if (opsets->empty())
        return false;
      (*opsets)[below(opsets->size())].set_domain(pick(kDomains));
      return true;
    case 3:
      m.set_ir_version(coin() ? interesting() : static_cast<int64_t>(below(12)));
      return true;
    default:
      if (opsets->empty())
        return false;
      (*opsets)[below(opsets->size())].set_version(coin() ? static_cast<int64_t>(1 + below(24))
                                                          : interesting());
      return true;
    }
  }

  bool renameEdge(GraphProto &g) {
    NodeProto *node = pickNode(g);
    if (!node)
      return false;
    bool input = node->output_size() == 0 || (node->input_size() && coin());
    auto *edges = input ? node->mutable_input() : node->mutable_output();
    if (edges->empty())
      return false;
    *edges->Mutable(below(edges->size())) = valueName(g);
    return true;
  }

  bool swapEdges(GraphProto &g) {
    NodeProto *node = pickNode(g);
    if (!node || node->input_size() < 2) {
      // Two nodes trade an output.
      NodeProto *a = pickNode(g), *b = pickNode(g);
      if (!a || !b || a->output_size() == 0 || b->output_size() == 0)
        return false;
      std::swap(*a->mutable_output(below(a->output_size())),
                *b->mutable_output(below(b->output_size())));
      return true;
    }
    std::swap(*node->mutable_input(below(node->input_size())),
              *node->mutable_input(below(node->input_size())));
    return true;
  }

  bool addOrDropEdge(GraphProto &g) {
    NodeProto *node = pickNode(g);
    if (!node)
      return false;
    bool input = coin(4) == false;
    auto *edges = input ? node->mutable_input() : node->mutable_output();
    switch (below(3)) {
    case 0:
      *edges->Add() = coin(4) ? std::string() : valueName(g);
      break;
    case 1:
      if (edges->empty())
        return false;
      edges->DeleteSubrange(below(edges->size()), 1);
      break;
    default:
      if (edges->empty())
        return false;
      edges->Mutable(below(edges->size()))->clear(); // an omitted optional one
    }
    return true;
  }

  bool mutateOpType(GraphProto &g) {
    NodeProto *node = pickNode(g);
    if (!node)
      return false;
    const auto &ops = hmcc::supportedOnnxOps();
    if (coin(4) || ops.empty())
      node->set_op_type(pick(kExtraOps));
    else
      node->set_op_type(ops[below(ops.size())]);
    return true;
  }

  bool mutateNodes(GraphProto &g) {
    int n = g.node_size();
    if (n == 0)
      return false;
    switch (below(4)) {
    case 0:
      g.mutable_node()->DeleteSubrange(below(n), 1);
      break;
    case 1:
      *g.add_node() = g.node(below(n));
      break;
    case 2:
      g.mutable_node()->SwapElements(below(n), below(n));
      break;
    default: {
      // A cycle: a node reads its own output or a later node's.
      NodeProto &a = *g.mutable_node(below(n));
      const NodeProto &b = g.node(below(n));
      if (a.input_size() == 0 || b.output_size() == 0)
        return false;
      *a.mutable_input(below(a.input_size())) = b.output(below(b.output_size()));
    }
    }
    return true;
  }

  bool mutateGraphInputsOutputs(GraphProto &g) {
    switch (below(6)) {
    case 0:
      if (g.input_size() == 0)
        return false;
      g.mutable_input()->DeleteSubrange(below(g.input_size()), 1);
      return true;
    case 1:
      if (g.input_size() == 0)
        return false;
      *g.add_input() = g.input(below(g.input_size()));
      return true;
    case 2: {
      // An initializer that is also a graph input (a default value).
      if (g.initializer_size() == 0)
        return false;
      const TensorProto &t = g.initializer(below(g.initializer_size()));
      ValueInfoProto *v = g.add_input();
      v->set_name(t.name());
      auto *tt = v->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(coin(4) ? dataType() : t.data_type());
      for (int64_t d : t.dims())
        tt->mutable_shape()->add_dim()->set_dim_value(coin(8) ? interesting() : d);
      return true;
    }
    case 3:
      if (g.output_size() == 0)
        return false;
      if (coin())
        g.mutable_output()->DeleteSubrange(below(g.output_size()), 1);
      else
        g.mutable_output(below(g.output_size()))->set_name(valueName(g));
      return true;
    case 4:
      if (g.initializer_size() == 0)
        return false;
      if (coin())
        g.mutable_initializer()->DeleteSubrange(below(g.initializer_size()), 1);
      else
        g.mutable_initializer(below(g.initializer_size()))->set_name(valueName(g));
      return true;
    default:
      if (g.initializer_size() == 0)
        return false;
      *g.add_initializer() = g.initializer(below(g.initializer_size()));
      return true;
    }
  }

  bool mutateTrainingInfo() {
    if (m.training_info_size() == 0) {
      if (!coin(4))
        return false;
      auto *info = m.add_training_info();
      auto *b = info->add_update_binding();
      b->set_key(valueName(*graphs.front()));
      b->set_value(valueName(*graphs.front()));
      return true;
    }
    auto &info = *m.mutable_training_info(below(m.training_info_size()));
    auto &bindings = coin() ? *info.mutable_update_binding() : *info.mutable_initialization_binding();
    GraphProto &g = coin() ? *graphs.front() : pickGraph();
    switch (below(4)) {
    case 0: {
      auto *b = bindings.Add();
      b->set_key(valueName(g));
      b->set_value(valueName(g));
      return true;
    }
    case 1:
      if (bindings.empty())
        return false;
      bindings.DeleteSubrange(below(bindings.size()), 1);
      return true;
    case 2:
      if (bindings.empty())
        return false;
      bindings[below(bindings.size())].set_key(valueName(g));
      return true;
    default:
      if (bindings.empty())
        return false;
      bindings[below(bindings.size())].set_value(valueName(g));
      return true;
    }
  }

  bool mutateMetadata() {
    for (auto &p : *m.mutable_metadata_props())
      if (p.key() == "hmcc.frozen" && coin()) {
        p.set_value(coin() ? std::string(pick(kFrozen)) : valueName(*graphs.front()));
        return true;
      }
    auto *p = m.add_metadata_props();
    p->set_key("hmcc.frozen");
    p->set_value(pick(kFrozen));
    return true;
  }

  bool mutateDomainOrVersion(GraphProto &g) {
    NodeProto *node = pickNode(g);
    if (!node)
      return false;
    node->set_domain(pick(kDomains));
    return true;
  }
};

/// A node, initializer, input or opset import of `from` copied into `into`.
void crossOver(ModelProto &into, const ModelProto &from, std::mt19937_64 &rng) {
  const GraphProto &src = from.graph();
  GraphProto &dst = *into.mutable_graph();
  switch (rng() % 4) {
  case 0:
    if (src.node_size()) {
      *dst.add_node() = src.node(rng() % src.node_size());
      if (dst.node_size() > 1)
        dst.mutable_node()->SwapElements(dst.node_size() - 1, rng() % dst.node_size());
    }
    break;
  case 1:
    if (src.initializer_size())
      *dst.add_initializer() = src.initializer(rng() % src.initializer_size());
    break;
  case 2:
    if (src.input_size())
      *dst.add_input() = src.input(rng() % src.input_size());
    break;
  default:
    if (from.opset_import_size())
      *into.add_opset_import() = from.opset_import(rng() % from.opset_import_size());
  }
}

size_t store(const ModelProto &model, uint8_t *data, size_t maxSize) {
  std::string bytes;
  if (!model.SerializeToString(&bytes) || bytes.size() > maxSize)
    return 0;
  memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)))
    return LLVMFuzzerMutate(data, size, maxSize);
  Mutator mutator(model, seed);
  for (int edits = 1 + seed % 3, tries = 0; edits > 0 && tries < 16; ++tries)
    edits -= mutator.mutateOnce();
  size_t stored = store(model, data, maxSize);
  return stored ? stored : LLVMFuzzerMutate(data, size, maxSize);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1,
                                            const uint8_t *data2, size_t size2, uint8_t *out,
                                            size_t maxOutSize, unsigned int seed) {
  ModelProto a, b;
  if (!a.ParseFromArray(data1, static_cast<int>(size1)) ||
      !b.ParseFromArray(data2, static_cast<int>(size2)))
    return 0;
  std::mt19937_64 rng(seed);
  crossOver(a, b, rng);
  return store(a, out, maxOutSize);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hmcc::fuzz::importBytes(data, size);
  return 0;
}
