//===- OpConverters.cpp - the table of supported ONNX operators -----------===//
//
// The op table (OpConverters.h), the queries that read it, the generic
// table-driven conversion, and the hand-written converters of the ops whose
// operands or attributes need more than the generic mapping.
//
//===----------------------------------------------------------------------===//

#include "lib/import/OpConverters.h"
#include "lib/import/Folding.h"
#include "lib/import/GraphBuilder.h"
#include "lib/import/ImportError.h"
#include "lib/import/ModelLoader.h"
#include "lib/import/OnnxAttributes.h"
#include "lib/import/OnnxImporter.h"

#include "mlir/IR/OperationSupport.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using onnx::NodeProto;
using onnx::TensorProto;

namespace hmcc::import {

const char *const kPreviewTrainingDomain = "ai.onnx.preview.training";

//===----------------------------------------------------------------------===//
// What a converter works with
//===----------------------------------------------------------------------===//

/// One node being converted: the entry, the node, and the state of the tg
/// op it becomes (operands, result types, attributes).
class NodeConverter {
public:
  NodeConverter(GraphBuilder &graph, const OpDef *def, const NodeProto &node, Location loc)
      : graph(graph), def(def), node(node), builder(graph.getBuilder()),
        state(loc, "tg." + (def ? def->mnemonic : std::string())) {}

  GraphBuilder &graph;
  const OpDef *def;
  const NodeProto &node;
  OpBuilder &builder;
  OperationState state;
  int64_t rank = 0; ///< of input 0 (default-domain ops)

  [[noreturn]] void fail(const std::string &message) { graph.getModel().fail(node, message); }

  bool hasInput(int k) const { return k < node.input_size() && !node.input(k).empty(); }
  bool hasOutput(int k) const { return k < node.output_size() && !node.output(k).empty(); }

  /// Passes input `k` as the next operand.
  void operand(int k) { state.addOperands(graph.valueOf(node.input(k), node)); }
  /// Types the next result as ONNX inferred output `k`.
  void result(int k) {
    state.addTypes(graph.inferredType(node.output(k),
                                      " (output of " + graph.getModel().describe(node) + ")"));
  }
  RankedTensorType lastResultType() const { return cast<RankedTensorType>(state.types.back()); }
  void addAttr(StringRef name, Attribute value) { state.addAttribute(name, value); }

  RankedTensorType typeOfInput(int k) {
    const std::string &name = node.input(k);
    if (const HostTensor *t = graph.getConstants().value(name))
      return graph.tensorType(t->dtype, t->shape, quote(name));
    return cast<RankedTensorType>(graph.valueOf(name, node).getType());
  }

  /// The value of input `k`, which must be known at compile time.
  const HostTensor &constantInput(int k, const char *what) {
    if (k >= node.input_size() || node.input(k).empty())
      fail(std::string("the ") + what + " input is missing");
    assert(def && def->compileTime.count(k) && "operand missing from the table");
    ConstantTable &constants = graph.getConstants();
    if (!constants.isConstant(node.input(k)))
      fail(std::string("its ") + what + " input (" + quote(node.input(k)) +
           ") must be known at compile time; hmcc compiles static graphs "
           "(give a graph input a value with --input-value NAME=FILE.pb)");
    return *constants.find(node.input(k));
  }

  static std::vector<int64_t> ints(const HostTensor &t) {
    std::vector<int64_t> v;
    for (int64_t k = 0; k < t.size(); ++k)
      v.push_back(t.integer(k));
    return v;
  }

  /// Normalises, sorts and checks a list of axes.
  std::vector<int64_t> axesOf(std::vector<int64_t> axes, int64_t rank) {
    for (int64_t &a : axes) {
      if (a < -rank || a >= rank)
        fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
      if (a < 0)
        a += rank;
    }
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    return axes;
  }
  int64_t axisOf(int64_t axis, int64_t rank) { return axesOf({axis}, rank).front(); }

  /// The axes of Squeeze, Unsqueeze and the reductions: input 1 since
  /// opset 13 (18 for some reductions), the `axes` attribute before.
  std::vector<int64_t> axesInputOrAttr() {
    return hasInput(1) ? ints(constantInput(1, "axes")) : attrInts(node, "axes");
  }
};

//===----------------------------------------------------------------------===//
// The generic path
//===----------------------------------------------------------------------===//

static void applyAttr(NodeConverter &cx, const AttrMap &a) {
  OpBuilder &b = cx.builder;
  const NodeProto &node = cx.node;
  switch (a.kind) {
  case AttrMap::F32:
    cx.addAttr(a.name, b.getF32FloatAttr(attrFloat(node, a.name, static_cast<float>(a.number))));
    break;
  case AttrMap::Flag:
    if (attrInt(node, a.name, static_cast<int64_t>(a.number)))
      cx.addAttr(a.name, b.getUnitAttr());
    break;
  case AttrMap::String:
    cx.addAttr(a.name, b.getStringAttr(attrString(node, a.name, a.text)));
    break;
  case AttrMap::IntIfPresent:
    if (findAttr(node, a.name))
      cx.addAttr(a.name, b.getI64IntegerAttr(attrInt(node, a.name, 0)));
    break;
  case AttrMap::Axis:
    cx.addAttr(a.name, b.getI64IntegerAttr(cx.axisOf(
                           attrInt(node, a.name, static_cast<int64_t>(a.number)), cx.rank)));
    break;
  }
}

/// Operands, then result types, then attributes, as the entry lists them.
static void convertGeneric(NodeConverter &cx) {
  const OpDef &def = *cx.def;
  if (def.allInputs) {
    for (int k = 0; k < cx.node.input_size(); ++k)
      cx.operand(k);
  } else {
    for (const Slot &s : def.operands)
      if (!s.ifPresent || cx.hasInput(s.index))
        cx.operand(s.index);
  }
  for (const Slot &s : def.results)
    if (!s.ifPresent || cx.hasOutput(s.index))
      cx.result(s.index);
  for (const AttrMap &a : def.attrs)
    applyAttr(cx, a);
}

//===----------------------------------------------------------------------===//
// Hand-written converters
//===----------------------------------------------------------------------===//

static void convertTranspose(NodeConverter &cx) {
  std::vector<int64_t> perm = attrInts(cx.node, "perm");
  if (perm.empty())
    for (int64_t d = cx.rank - 1; d >= 0; --d)
      perm.push_back(d);
  cx.operand(0);
  cx.result(0);
  cx.addAttr("perm", cx.builder.getDenseI64ArrayAttr(perm));
}

static void convertFlatten(NodeConverter &cx) {
  int64_t axis = attrInt(cx.node, "axis", 1), rank = cx.rank;
  if (axis < -rank || axis > rank)
    cx.fail("axis " + std::to_string(axis) + " is out of range");
  cx.operand(0);
  cx.result(0);
  cx.addAttr("axis", cx.builder.getI64IntegerAttr(axis < 0 ? axis + rank : axis));
}

/// Squeeze and Unsqueeze: axes of the output (Unsqueeze) or the input.
static void convertSqueezeLike(NodeConverter &cx, bool unsqueeze) {
  std::vector<int64_t> axes = cx.axesInputOrAttr();
  int64_t outRank = unsqueeze ? cx.rank + static_cast<int64_t>(axes.size()) : cx.rank;
  if (!unsqueeze && axes.empty()) {
    auto type = cx.typeOfInput(0);
    for (int64_t d = 0; d < cx.rank; ++d)
      if (type.getDimSize(d) == 1)
        axes.push_back(d);
  }
  cx.operand(0);
  cx.result(0);
  cx.addAttr("axes", cx.builder.getDenseI64ArrayAttr(cx.axesOf(axes, outRank)));
}
static void convertSqueeze(NodeConverter &cx) { convertSqueezeLike(cx, false); }
static void convertUnsqueeze(NodeConverter &cx) { convertSqueezeLike(cx, true); }

/// The sizes come from the inferred output types, so the `split` input
/// need not be read.
static void convertSplit(NodeConverter &cx) {
  int64_t axis = cx.axisOf(attrInt(cx.node, "axis", 0), cx.rank);
  cx.operand(0);
  std::vector<int64_t> sizes;
  for (int k = 0; k < cx.node.output_size(); ++k) {
    cx.result(k);
    sizes.push_back(cx.lastResultType().getDimSize(axis));
  }
  cx.addAttr("axis", cx.builder.getI64IntegerAttr(axis));
  cx.addAttr("sizes", cx.builder.getDenseI64ArrayAttr(sizes));
}

static void convertSlice(NodeConverter &cx) {
  auto type = cx.typeOfInput(0);
  std::vector<int64_t> starts = cx.ints(cx.constantInput(1, "starts"));
  std::vector<int64_t> ends = cx.ints(cx.constantInput(2, "ends"));
  std::vector<int64_t> axes, steps(starts.size(), 1);
  if (cx.hasInput(3))
    axes = cx.ints(cx.constantInput(3, "axes"));
  else
    for (size_t k = 0; k < starts.size(); ++k)
      axes.push_back(static_cast<int64_t>(k));
  if (cx.hasInput(4))
    steps = cx.ints(cx.constantInput(4, "steps"));
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    cx.fail("starts, ends, axes and steps differ in length");
  for (size_t k = 0; k < axes.size(); ++k) {
    axes[k] = cx.axisOf(axes[k], cx.rank);
    if (steps[k] == 0)
      cx.fail("a step is zero");
    clampSlice(starts[k], ends[k], steps[k], type.getDimSize(axes[k]), starts[k], ends[k]);
  }
  cx.operand(0);
  cx.result(0);
  cx.addAttr("starts", cx.builder.getDenseI64ArrayAttr(starts));
  cx.addAttr("ends", cx.builder.getDenseI64ArrayAttr(ends));
  cx.addAttr("axes", cx.builder.getDenseI64ArrayAttr(axes));
  cx.addAttr("steps", cx.builder.getDenseI64ArrayAttr(steps));
}

static void convertTrilu(NodeConverter &cx) {
  cx.operand(0);
  cx.result(0);
  int64_t k = cx.hasInput(1) ? cx.constantInput(1, "k").integer(0) : 0;
  cx.addAttr("k", cx.builder.getI64IntegerAttr(k));
  applyAttr(cx, {AttrMap::Flag, "upper", 1});
}

static void convertConstantOfShape(NodeConverter &cx) {
  cx.operand(0);
  cx.result(0);
  HostTensor fill{TensorProto::FLOAT, {}, {0.0}, {}};
  if (const auto *a = findAttr(cx.node, "value"))
    if (auto message = decodeTensor(a->t(), nullptr, fill))
      cx.fail("its value " + *message);
  Type element = cx.lastResultType().getElementType();
  cx.addAttr("value", isa<FloatType>(element)
                          ? TypedAttr(cx.builder.getFloatAttr(element, fill.real(0)))
                          : TypedAttr(cx.builder.getIntegerAttr(element, fill.integer(0))));
}

/// ReduceMean, ReduceSum, ReduceMax; no axes with noop_with_empty_axes is
/// the identity.
static void convertReduce(NodeConverter &cx) {
  std::vector<int64_t> axes = cx.axesInputOrAttr();
  cx.operand(0);
  cx.result(0);
  if (axes.empty() && attrInt(cx.node, "noop_with_empty_axes", 0))
    cx.state.name = OperationName("tg.identity", cx.builder.getContext());
  else
    cx.addAttr("axes", cx.builder.getDenseI64ArrayAttr(cx.axesOf(axes, cx.rank)));
  if (attrInt(cx.node, "keepdims", 1) && cx.state.name.getStringRef() != "tg.identity")
    cx.addAttr("keepdims", cx.builder.getUnitAttr());
}

/// Softmax and LogSoftmax along `axis` (default `defaultAxis`).
static void convertSoftmaxLike(NodeConverter &cx, int64_t defaultAxis, bool lastAxisOnly) {
  int64_t axis = cx.axisOf(attrInt(cx.node, "axis", defaultAxis), cx.rank);
  if (lastAxisOnly && axis != cx.rank - 1)
    cx.fail("before opset 13 Softmax flattens its input; only the last axis is supported");
  cx.operand(0);
  cx.result(0);
  cx.addAttr("axis", cx.builder.getI64IntegerAttr(axis));
}
static void convertSoftmax(NodeConverter &cx) { convertSoftmaxLike(cx, -1, false); }
/// Before opset 13 they flatten the input into 2-D at `axis` (default 1):
/// only the last axis means the same.
static void convertSoftmaxBefore13(NodeConverter &cx) { convertSoftmaxLike(cx, 1, true); }

static void convertLayerNorm(NodeConverter &cx) {
  cx.operand(0);
  cx.operand(1);
  if (cx.hasInput(2))
    cx.operand(2);
  cx.result(0);
  // Mean and inverse standard deviation come together or not at all.
  bool stats = false;
  for (int k = 1; k < cx.node.output_size(); ++k)
    stats |= !cx.node.output(k).empty();
  if (stats) {
    auto f32 = cx.builder.getF32Type();
    int64_t axis = cx.axisOf(attrInt(cx.node, "axis", -1), cx.rank);
    llvm::SmallVector<int64_t> shape(cx.lastResultType().getShape());
    for (int64_t d = axis; d < cx.rank; ++d)
      shape[d] = 1;
    cx.state.addTypes({RankedTensorType::get(shape, f32), RankedTensorType::get(shape, f32)});
  }
  applyAttr(cx, {AttrMap::Axis, "axis", -1});
  applyAttr(cx, {AttrMap::F32, "epsilon", 1e-5f});
}

static void convertDropout(NodeConverter &cx) {
  float ratio = cx.hasInput(1) ? static_cast<float>(cx.constantInput(1, "ratio").real(0))
                               : attrFloat(cx.node, "ratio", 0.5f);
  bool training = cx.hasInput(2) && cx.constantInput(2, "training_mode").integer(0);
  cx.operand(0);
  cx.result(0);
  cx.state.addTypes(
      RankedTensorType::get(cx.lastResultType().getShape(), cx.builder.getI1Type()));
  cx.addAttr("ratio", cx.builder.getF32FloatAttr(ratio));
  if (training)
    cx.addAttr("training", cx.builder.getUnitAttr());
  applyAttr(cx, {AttrMap::IntIfPresent, "seed"});
}

/// Adagrad / Momentum / Adam of ai.onnx.preview.training become
/// tg.onnx_optimizer of their kind, with ONNX's attribute defaults; this
/// part is common to the three.
static void convertOptimizer(NodeConverter &cx, const char *kind) {
  for (const std::string &in : cx.node.input())
    cx.state.addOperands(cx.graph.valueOf(in, cx.node));
  for (int k = 0; k < cx.node.output_size(); ++k) {
    if (cx.node.output(k).empty())
      cx.fail("every output must be named");
    cx.result(k);
  }
  cx.addAttr("kind", cx.builder.getStringAttr(kind));
  applyAttr(cx, {AttrMap::F32, "norm_coefficient", 0.0});
}
static void convertAdagrad(NodeConverter &cx) {
  convertOptimizer(cx, "adagrad");
  applyAttr(cx, {AttrMap::F32, "decay_factor", 0.0});
  applyAttr(cx, {AttrMap::F32, "epsilon", 1e-6f});
}
static void convertMomentum(NodeConverter &cx) {
  convertOptimizer(cx, "momentum");
  if (!findAttr(cx.node, "alpha") || !findAttr(cx.node, "beta") || !findAttr(cx.node, "mode"))
    cx.fail("Momentum needs its alpha, beta and mode attributes");
  applyAttr(cx, {AttrMap::F32, "alpha", 0.0});
  applyAttr(cx, {AttrMap::F32, "beta", 0.0});
  std::string mode = attrString(cx.node, "mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    cx.fail("mode must be standard or nesterov, not " + quote(mode));
  if (mode == "nesterov")
    cx.addAttr("nesterov", cx.builder.getUnitAttr());
}
static void convertAdam(NodeConverter &cx) {
  convertOptimizer(cx, "adam");
  applyAttr(cx, {AttrMap::F32, "alpha", 0.9f});
  applyAttr(cx, {AttrMap::F32, "beta", 0.999f});
  applyAttr(cx, {AttrMap::F32, "epsilon", 1e-6f});
  applyAttr(cx, {AttrMap::F32, "norm_coefficient_post", 0.0});
}

/// ONNX Gradient: d y / d xs by name (attributes `y` and `xs`).
static void convertGradient(NodeConverter &cx) {
  const NodeProto &node = cx.node;
  const auto *xs = findAttr(node, "xs");
  const auto *y = findAttr(node, "y");
  if (!xs || !y)
    cx.fail("Gradient needs its xs and y attributes");
  if (findAttr(node, "zs") && findAttr(node, "zs")->strings_size())
    cx.fail("Gradient's zs attribute is not supported");
  if (xs->strings_size() != node.output_size())
    cx.fail("Gradient has " + std::to_string(xs->strings_size()) + " xs but " +
            std::to_string(node.output_size()) + " outputs");
  cx.state.addOperands(cx.graph.valueOf(y->s(), node));
  for (const std::string &x : xs->strings()) {
    Value v = cx.graph.valueOf(x, node);
    cx.state.addOperands(v);
    cx.state.addTypes(v.getType());
  }
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

static OpDef op(const char *opType, const char *mnemonic) {
  OpDef def;
  def.opType = opType;
  def.mnemonic = mnemonic;
  return def;
}
/// One input, one output, no attributes.
static OpDef unary(const char *opType, const char *mnemonic) { return op(opType, mnemonic); }
/// Two inputs (broadcast), one output.
static OpDef binary(const char *opType, const char *mnemonic) {
  return op(opType, mnemonic).in({0, 1});
}
/// An op always evaluated at compile time: it never reaches the graph.
static OpDef foldedOnly(const char *opType) { return op(opType, "").noGradient(); }
static OpDef previewTraining(const char *opType, const char *mnemonic, ConvertFn convert) {
  OpDef def = op(opType, mnemonic).special(convert).resultsBy(ResultMap::Every);
  def.domain = kPreviewTrainingDomain;
  return def;
}
static AttrMap f32(const char *name, float fallback) { return {AttrMap::F32, name, fallback}; }
static AttrMap flag(const char *name, int64_t fallback) {
  return {AttrMap::Flag, name, static_cast<double>(fallback)};
}
static AttrMap str(const char *name, const char *fallback) {
  return {AttrMap::String, name, 0, fallback};
}
static AttrMap intIfPresent(const char *name) { return {AttrMap::IntIfPresent, name}; }
static AttrMap axis(const char *name, int64_t fallback) {
  return {AttrMap::Axis, name, static_cast<double>(fallback)};
}

const std::vector<OpDef> &opTable() {
  static const std::vector<OpDef> table = {
      // Elementwise.
      unary("Sqrt", "sqrt"),
      unary("Reciprocal", "reciprocal"),
      unary("Neg", "neg"),
      unary("Exp", "exp"),
      unary("Log", "log"),
      unary("Tanh", "tanh"),
      unary("Sigmoid", "sigmoid"),
      unary("Erf", "erf"),
      unary("Relu", "relu"),
      unary("Identity", "identity"),
      binary("Add", "add"),
      binary("Sub", "sub"),
      binary("Mul", "mul"),
      binary("Div", "div"),
      binary("Pow", "pow"),
      binary("Equal", "equal").noGradient(),
      op("Where", "where").in({0, 1, 2}).noGradientAt({0}),
      op("Cast", "cast"),
      // Linear algebra.
      op("MatMul", "matmul").in({0, 1}),
      op("Gemm", "gemm")
          .in({ifPresent(0), ifPresent(1), ifPresent(2)})
          .attr(f32("alpha", 1.0f))
          .attr(f32("beta", 1.0f))
          .attr(flag("transA", 0))
          .attr(flag("transB", 0)),
      // Shapes and data movement.
      op("Transpose", "transpose").special(convertTranspose),
      op("Reshape", "reshape").constInputs({1}),
      op("Flatten", "flatten").special(convertFlatten),
      op("Squeeze", "squeeze").special(convertSqueeze).constInputs({1}),
      op("Unsqueeze", "unsqueeze").special(convertUnsqueeze).constInputs({1}),
      op("Concat", "concat").inAll().attr(axis("axis", 0)),
      op("Split", "split").special(convertSplit).constInputs({1}),
      op("Slice", "slice").special(convertSlice).constInputs({1, 2, 3, 4}),
      op("Gather", "gather").in({0, 1}).attr(axis("axis", 0)).noGradientAt({1}),
      op("Expand", "expand").constInputs({1}),
      op("Trilu", "trilu").special(convertTrilu).constInputs({1}),
      // Values made from shapes.
      foldedOnly("Constant"),
      foldedOnly("Shape"),
      op("ConstantOfShape", "constant_of_shape")
          .special(convertConstantOfShape)
          .constInputs({0})
          .noGradient(),
      op("Range", "range").in({0, 1, 2}).constInputs({0, 1, 2}).noGradient(),
      // Reductions and normalisation.
      op("ReduceMean", "reduce_mean").special(convertReduce).constInputs({1}),
      op("ReduceSum", "reduce_sum").special(convertReduce).constInputs({1}),
      op("ReduceMax", "reduce_max").special(convertReduce).constInputs({1}),
      op("Softmax", "softmax").until(12).special(convertSoftmaxBefore13),
      op("Softmax", "softmax").since(13).special(convertSoftmax),
      op("LogSoftmax", "log_softmax").until(12).special(convertSoftmaxBefore13),
      op("LogSoftmax", "log_softmax").since(13).special(convertSoftmax),
      op("LayerNormalization", "layer_norm")
          .special(convertLayerNorm)
          .resultsBy(ResultMap::Positional),
      op("SoftmaxCrossEntropyLoss", "softmax_cross_entropy_loss")
          .in({0, 1, ifPresent(2)})
          .out({0, ifPresent(1)})
          .attr(str("reduction", "mean"))
          .attr(intIfPresent("ignore_index"))
          .noGradientAt({1, 2}),
      op("Dropout", "dropout")
          .special(convertDropout)
          .constInputs({1, 2})
          .resultsBy(ResultMap::Positional),
      // ai.onnx.preview.training.
      previewTraining("Adagrad", "onnx_optimizer", convertAdagrad),
      previewTraining("Momentum", "onnx_optimizer", convertMomentum),
      previewTraining("Adam", "onnx_optimizer", convertAdam),
      previewTraining("Gradient", "gradient", convertGradient),
  };
  return table;
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

const OpDef *findOp(const Model &model, const NodeProto &node) {
  bool isDefault = node.domain().empty() || node.domain() == "ai.onnx";
  int64_t version = model.opset;
  if (!isDefault)
    for (const auto &entry : model.proto.opset_import())
      if (entry.domain() == node.domain())
        version = entry.version();
  for (const OpDef &def : opTable()) {
    bool sameDomain = isDefault ? def.domain.empty() : def.domain == node.domain();
    if (sameDomain && def.opType == node.op_type() && def.minOpset <= version &&
        version <= def.maxOpset)
      return &def;
  }
  return nullptr;
}

void checkOperators(const Model &model) {
  for (const NodeProto &node : model.proto.graph().node()) {
    const OpDef *def = findOp(model, node);
    if (def && !def->domain.empty())
      continue;
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      model.fail(node, "unsupported operator domain; hmcc supports the default ONNX domain and "
                       "Adagrad, Momentum and Adam of ai.onnx.preview.training (see hmcc "
                       "--list-ops)");
    if (!def)
      model.fail(node, "unsupported operator (hmcc --list-ops lists the supported ones)");
  }
}

Operation *convertNode(GraphBuilder &graph, const NodeProto &node, Location loc) {
  const OpDef *def = findOp(graph.getModel(), node);
  NodeConverter cx(graph, def, node, loc);
  if (def && !def->domain.empty()) {
    def->convert(cx);
  } else {
    cx.rank = node.input_size() > 0 ? cx.typeOfInput(0).getRank() : 0;
    if (!def || def->mnemonic.empty())
      cx.fail("unsupported operator (hmcc --list-ops lists the supported ones)");
    if (def->convert)
      def->convert(cx);
    else
      convertGeneric(cx);
  }

  Operation *created = cx.builder.create(cx.state);
  if (def->resultMap == ResultMap::Every) {
    for (int k = 0; k < node.output_size(); ++k)
      graph.define(node.output(k), created->getResult(k));
    return created;
  }
  bool positional = def->resultMap == ResultMap::Positional;
  unsigned next = 0;
  for (int k = 0; k < node.output_size(); ++k) {
    if (node.output(k).empty() && !positional)
      continue;
    if (next < created->getNumResults() && !node.output(k).empty())
      graph.define(node.output(k), created->getResult(next));
    ++next;
  }
  return created;
}

} // namespace hmcc::import

//===----------------------------------------------------------------------===//
// The lists OnnxImporter.h offers, read from the table
//===----------------------------------------------------------------------===//

namespace hmcc {

bool needsCompileTimeValue(llvm::StringRef opType, int operand) {
  return llvm::any_of(import::opTable(), [&](const import::OpDef &def) {
    return def.opType == opType && def.compileTime.count(operand);
  });
}

const std::vector<std::string> &supportedOnnxOps() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (const import::OpDef &def : import::opTable())
      if (def.domain.empty() && !llvm::is_contained(v, def.opType))
        v.push_back(def.opType);
    std::sort(v.begin(), v.end());
    return v;
  }();
  return ops;
}

const std::vector<std::string> &supportedPreviewTrainingOps() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (const import::OpDef &def : import::opTable())
      if (!def.domain.empty())
        v.push_back(def.domain + "." + def.opType);
    std::sort(v.begin(), v.end());
    return v;
  }();
  return ops;
}

} // namespace hmcc
