//===- SpecialConverters.cpp - the hand-written op converters -------------===//
//
// The ops whose operands or attributes need more than the generic mapping of
// the op table (OpConverters.cpp): attributes with computed defaults,
// operands that are compile-time values turned into attributes, result types
// made up here, and the ai.onnx.preview.training ops. Each fills the
// NodeConverter's operation state; the table entry names it with .special().
//
//===----------------------------------------------------------------------===//

#include "lib/import/NodeConverter.h"
#include "lib/import/GraphBuilder.h"
#include "lib/import/ImportError.h"
#include "lib/import/OnnxAttributes.h"

using namespace mlir;
using onnx::NodeProto;
using onnx::TensorProto;

namespace hmcc::import {

void convertTranspose(NodeConverter &cx) {
  std::vector<int64_t> perm = attrInts(cx.node, "perm");
  if (perm.empty())
    for (int64_t d = cx.rank - 1; d >= 0; --d)
      perm.push_back(d);
  cx.operand(0);
  cx.result(0);
  cx.addAttr("perm", cx.builder.getDenseI64ArrayAttr(perm));
}

void convertFlatten(NodeConverter &cx) {
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
void convertSqueeze(NodeConverter &cx) { convertSqueezeLike(cx, false); }
void convertUnsqueeze(NodeConverter &cx) { convertSqueezeLike(cx, true); }

/// The sizes come from the inferred output types, so the `split` input
/// need not be read.
void convertSplit(NodeConverter &cx) {
  int64_t axis = cx.axisOf(attrInt(cx.node, "axis", 0), cx.rank);
  cx.operand(0);
  std::vector<int64_t> sizes;
  for (int k = 0; k < cx.node.output_size(); ++k) {
    cx.result(k);
    sizes.push_back(cx.lastResultOfInputRank().getDimSize(axis));
  }
  cx.addAttr("axis", cx.builder.getI64IntegerAttr(axis));
  cx.addAttr("sizes", cx.builder.getDenseI64ArrayAttr(sizes));
}

void convertSlice(NodeConverter &cx) {
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

void convertTrilu(NodeConverter &cx) {
  cx.operand(0);
  cx.result(0);
  int64_t k = cx.hasInput(1) ? cx.constantInput(1, "k").integer(0) : 0;
  cx.addAttr("k", cx.builder.getI64IntegerAttr(k));
  applyAttr(cx, {AttrMap::Flag, "upper", 1});
}

void convertConstantOfShape(NodeConverter &cx) {
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
void convertReduce(NodeConverter &cx) {
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
void convertSoftmax(NodeConverter &cx) { convertSoftmaxLike(cx, -1, false); }
/// Before opset 13 they flatten the input into 2-D at `axis` (default 1):
/// only the last axis means the same.
void convertSoftmaxBefore13(NodeConverter &cx) { convertSoftmaxLike(cx, 1, true); }

void convertLayerNorm(NodeConverter &cx) {
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
    llvm::SmallVector<int64_t> shape(cx.lastResultOfInputRank().getShape());
    for (int64_t d = axis; d < cx.rank; ++d)
      shape[d] = 1;
    cx.state.addTypes({RankedTensorType::get(shape, f32), RankedTensorType::get(shape, f32)});
  }
  applyAttr(cx, {AttrMap::Axis, "axis", -1});
  applyAttr(cx, {AttrMap::F32, "epsilon", 1e-5f});
}

void convertDropout(NodeConverter &cx) {
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
void convertAdagrad(NodeConverter &cx) {
  convertOptimizer(cx, "adagrad");
  applyAttr(cx, {AttrMap::F32, "decay_factor", 0.0});
  applyAttr(cx, {AttrMap::F32, "epsilon", 1e-6f});
}
void convertMomentum(NodeConverter &cx) {
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
void convertAdam(NodeConverter &cx) {
  convertOptimizer(cx, "adam");
  applyAttr(cx, {AttrMap::F32, "alpha", 0.9f});
  applyAttr(cx, {AttrMap::F32, "beta", 0.999f});
  applyAttr(cx, {AttrMap::F32, "epsilon", 1e-6f});
  applyAttr(cx, {AttrMap::F32, "norm_coefficient_post", 0.0});
}

/// ONNX Gradient: d y / d xs by name (attributes `y` and `xs`).
void convertGradient(NodeConverter &cx) {
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

} // namespace hmcc::import
