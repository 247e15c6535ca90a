//===- HostTensorTest.cpp - the import-time evaluator on hostile nodes ----===//
//
// evaluateNode (lib/import/HostTensor.h) folds nodes whose inputs are known
// at compile time. On a malformed node it must report an error, on a result
// above kMaxFoldedElements decline to fold (no error, nothing allocated), and
// it must never read out of range or overflow; the expected values here are
// worked out by hand from ONNX's operator definitions.
//
//===----------------------------------------------------------------------===//

#include "lib/import/HostTensor.h"

#include "onnx/defs/attr_proto_util.h"
#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

using hmcc::import::evaluateNode;
using hmcc::import::HostTensor;
using onnx::TensorProto;

HostTensor ints(std::vector<int64_t> shape, std::vector<int64_t> values) {
  return {TensorProto::INT64, std::move(shape), {}, std::move(values)};
}
HostTensor floats(std::vector<int64_t> shape, std::vector<double> values) {
  return {TensorProto::FLOAT, std::move(shape), std::move(values), {}};
}

onnx::NodeProto node(const std::string &op) {
  onnx::NodeProto n;
  n.set_op_type(op);
  return n;
}

struct Result {
  bool folded;
  std::string error;
  std::vector<HostTensor> outputs;
};

Result eval(const onnx::NodeProto &n, std::vector<const HostTensor *> in) {
  Result r;
  r.folded = evaluateNode(n, in, r.outputs, r.error);
  return r;
}

TEST(HostTensor, TransposeRejectsAPermOfTheWrongLength) {
  // A rank-0 value has no axis 5 (this once read past the shape).
  onnx::NodeProto n = node("Transpose");
  *n.add_attribute() = onnx::MakeAttribute("perm", std::vector<int64_t>{5});
  HostTensor x = ints({}, {7});
  Result r = eval(n, {&x});
  EXPECT_FALSE(r.folded);
  EXPECT_EQ(r.error, "perm is not a permutation of the 0 axes");
}

TEST(HostTensor, TransposeRejectsARepeatedAxis) {
  onnx::NodeProto n = node("Transpose");
  *n.add_attribute() = onnx::MakeAttribute("perm", std::vector<int64_t>{0, 0});
  HostTensor x = ints({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(eval(n, {&x}).error, "perm is not a permutation of the 2 axes");
}

TEST(HostTensor, RangeTooLargeIsNotFoldedAndNotAnError) {
  HostTensor start = ints({}, {0}), limit = ints({}, {int64_t(1) << 40}), delta = ints({}, {1});
  Result r = eval(node("Range"), {&start, &limit, &delta});
  EXPECT_FALSE(r.folded);
  EXPECT_EQ(r.error, "");
  EXPECT_TRUE(r.outputs.empty());
}

TEST(HostTensor, RangeOfNegativeInfiniteLengthIsEmpty) {
  // (limit - start) / delta = -inf: zero elements, not a cast of -inf.
  HostTensor start = floats({}, {0.0}), limit = floats({}, {-INFINITY}),
             delta = floats({}, {1.0});
  Result r = eval(node("Range"), {&start, &limit, &delta});
  ASSERT_TRUE(r.folded) << r.error;
  EXPECT_EQ(r.outputs[0].shape, std::vector<int64_t>{0});
}

TEST(HostTensor, ConstantOfShapeTooLargeIsNotFolded) {
  HostTensor shape = ints({2}, {1 << 16, 1 << 16});
  Result r = eval(node("ConstantOfShape"), {&shape});
  EXPECT_FALSE(r.folded);
  EXPECT_EQ(r.error, "");
}

TEST(HostTensor, ConcatAxisOutOfRangeIsAnError) {
  onnx::NodeProto n = node("Concat");
  *n.add_attribute() = onnx::MakeAttribute("axis", int64_t(1) << 32);
  HostTensor a = ints({1, 3}, {1, 2, 3}), b = ints({1, 3}, {4, 5, 6});
  EXPECT_EQ(eval(n, {&a, &b}).error, "axis 4294967296 is out of range for rank 2");
}

TEST(HostTensor, SliceWithAZeroStepIsAnError) {
  HostTensor x = ints({3}, {1, 2, 3}), starts = ints({1}, {0}), ends = ints({1}, {3}),
             axes = ints({1}, {0}), steps = ints({1}, {0});
  EXPECT_EQ(eval(node("Slice"), {&x, &starts, &ends, &axes, &steps}).error, "a step is zero");
}

TEST(HostTensor, ReshapeWithTwoInferredDimensionsIsAnError) {
  HostTensor x = ints({4}, {1, 2, 3, 4}), shape = ints({2}, {-1, -1});
  EXPECT_EQ(eval(node("Reshape"), {&x, &shape}).error, "the shape input has -1 twice");
}

TEST(HostTensor, IntegerArithmeticWraps) {
  HostTensor a = ints({1}, {std::numeric_limits<int64_t>::max()}), b = ints({1}, {1});
  Result r = eval(node("Add"), {&a, &b});
  ASSERT_TRUE(r.folded) << r.error;
  EXPECT_EQ(r.outputs[0].i[0], std::numeric_limits<int64_t>::min());
}

TEST(HostTensor, OperandsOfDifferentTypesAreAnError) {
  HostTensor a = ints({1}, {2}), b = floats({1}, {0.5});
  EXPECT_EQ(eval(node("Mul"), {&a, &b}).error, "its operands have different element types");
}

TEST(HostTensor, CastOfNaNToAnIntegerSaturatesToZero) {
  onnx::NodeProto n = node("Cast");
  *n.add_attribute() = onnx::MakeAttribute("to", int64_t(TensorProto::INT64));
  HostTensor x = floats({2}, {NAN, 1e30});
  Result r = eval(n, {&x});
  ASSERT_TRUE(r.folded) << r.error;
  EXPECT_EQ(r.outputs[0].i, (std::vector<int64_t>{0, std::numeric_limits<int64_t>::max()}));
}

} // namespace
