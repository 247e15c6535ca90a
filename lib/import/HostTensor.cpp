//===- HostTensor.cpp - small tensors evaluated at import -----------------===//
#include "lib/import/HostTensor.h"
#include "lib/import/OnnxAttributes.h"
#include "lib/support/Limits.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>

namespace hmcc::import {

using onnx::TensorProto;

bool HostTensor::isFloatType(int32_t dtype) {
  return dtype == TensorProto::FLOAT || dtype == TensorProto::DOUBLE ||
         dtype == TensorProto::FLOAT16 || dtype == TensorProto::BFLOAT16;
}

int64_t HostTensor::size() const {
  // Shapes are checked where they are made (decodeTensor, the evaluator).
  return checkedElementCount(shape).value_or(0);
}

void HostTensor::allocate() {
  if (isFloat())
    f.assign(size(), 0.0);
  else
    i.assign(size(), 0);
}

void HostTensor::setReal(int64_t k, double v) {
  switch (dtype) {
  case TensorProto::FLOAT:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    f[k] = static_cast<float>(v);
    break;
  case TensorProto::DOUBLE:
    f[k] = v;
    break;
  case TensorProto::BOOL:
    i[k] = v != 0.0;
    break;
  default:
    // Truncation, as ONNX Cast does; NaN and values out of range, which
    // ONNX leaves undefined, saturate.
    if (std::isnan(v))
      i[k] = 0;
    else if (v >= 9.2233720368547758e18)
      i[k] = std::numeric_limits<int64_t>::max();
    else if (v <= -9.2233720368547758e18)
      i[k] = std::numeric_limits<int64_t>::min();
    else
      i[k] = static_cast<int64_t>(v);
  }
}

void HostTensor::setInteger(int64_t k, int64_t v) {
  if (isFloat())
    setReal(k, static_cast<double>(v));
  else
    i[k] = dtype == TensorProto::BOOL ? (v != 0) : v;
}

//===----------------------------------------------------------------------===//
// Decoding TensorProto
//===----------------------------------------------------------------------===//

template <typename T>
static void readRaw(const std::string &raw, int64_t n, std::vector<T> &out) {
  out.resize(n);
  if (n > 0)
    std::memcpy(out.data(), raw.data(), n * sizeof(T));
}

/// Integer types ONNX stores in int32_data when not raw.
template <typename T>
static void readSmallInts(const TensorProto &proto, const std::string *raw, int64_t n,
                          std::vector<int64_t> &out) {
  std::vector<T> v;
  if (raw)
    readRaw(*raw, n, v);
  else
    v.assign(proto.int32_data().begin(), proto.int32_data().end());
  out.assign(v.begin(), v.end());
}

std::optional<std::string> decodeTensor(const TensorProto &proto,
                                        const std::string *bytes, HostTensor &out) {
  out.dtype = proto.data_type();
  out.shape.assign(proto.dims().begin(), proto.dims().end());
  std::optional<int64_t> count = checkedElementCount(out.shape);
  if (!count)
    return std::string("has a negative dimension or more elements than hmcc's limit");
  int64_t n = *count;
  const std::string *raw = bytes ? bytes : (proto.has_raw_data() ? &proto.raw_data() : nullptr);
  auto sizeError = [&](int64_t elementBytes) -> std::optional<std::string> {
    // n is at most 2^48 (checked above): the product cannot overflow.
    if (raw && static_cast<int64_t>(raw->size()) != n * elementBytes)
      return "holds " + std::to_string(raw->size()) + " bytes, but its shape needs " +
             std::to_string(n * elementBytes);
    return std::nullopt;
  };
  switch (out.dtype) {
  case TensorProto::FLOAT: {
    if (auto e = sizeError(4))
      return e;
    if (raw) { // straight into doubles: no float copy beside them
      out.f.resize(n);
      const char *p = raw->data();
      for (int64_t k = 0; k < n; ++k) {
        float x;
        std::memcpy(&x, p + 4 * k, 4);
        out.f[k] = x;
      }
    } else {
      out.f.assign(proto.float_data().begin(), proto.float_data().end());
    }
    break;
  }
  case TensorProto::DOUBLE:
    if (auto e = sizeError(8))
      return e;
    if (raw)
      readRaw(*raw, n, out.f);
    else
      out.f.assign(proto.double_data().begin(), proto.double_data().end());
    break;
  case TensorProto::INT64:
    if (auto e = sizeError(8))
      return e;
    if (raw)
      readRaw(*raw, n, out.i);
    else
      out.i.assign(proto.int64_data().begin(), proto.int64_data().end());
    break;
  case TensorProto::INT32: {
    if (auto e = sizeError(4))
      return e;
    std::vector<int32_t> v;
    if (raw)
      readRaw(*raw, n, v);
    else
      v.assign(proto.int32_data().begin(), proto.int32_data().end());
    out.i.assign(v.begin(), v.end());
    break;
  }
  case TensorProto::BOOL:
  case TensorProto::UINT8:
    if (auto e = sizeError(1))
      return e;
    readSmallInts<uint8_t>(proto, raw, n, out.i);
    break;
  case TensorProto::INT8:
    if (auto e = sizeError(1))
      return e;
    readSmallInts<int8_t>(proto, raw, n, out.i);
    break;
  case TensorProto::INT16:
    if (auto e = sizeError(2))
      return e;
    readSmallInts<int16_t>(proto, raw, n, out.i);
    break;
  case TensorProto::UINT16:
    if (auto e = sizeError(2))
      return e;
    readSmallInts<uint16_t>(proto, raw, n, out.i);
    break;
  case TensorProto::UINT32: {
    if (auto e = sizeError(4))
      return e;
    std::vector<uint32_t> v;
    if (raw)
      readRaw(*raw, n, v);
    else
      v.assign(proto.uint64_data().begin(), proto.uint64_data().end());
    out.i.assign(v.begin(), v.end());
    break;
  }
  case TensorProto::UINT64: {
    if (auto e = sizeError(8))
      return e;
    std::vector<uint64_t> v;
    if (raw)
      readRaw(*raw, n, v);
    else
      v.assign(proto.uint64_data().begin(), proto.uint64_data().end());
    out.i.assign(v.begin(), v.end()); // values above 2^63 wrap, as in C
    break;
  }
  default:
    return "has element type " +
           std::string(TensorProto::DataType_Name(
               static_cast<TensorProto::DataType>(out.dtype))) +
           ", which hmcc does not support";
  }
  if (out.size() != static_cast<int64_t>(out.isFloat() ? out.f.size() : out.i.size()))
    return "holds " + std::to_string(out.isFloat() ? out.f.size() : out.i.size()) +
           " elements, but its shape needs " + std::to_string(n);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

namespace {

using Shape = std::vector<int64_t>;

/// Thrown inside evaluation: the node is invalid (Invalid) or its result
/// would be larger than kMaxFoldedElements (TooLarge: it is not folded, and
/// the op computes it at run time instead).
struct Invalid {
  std::string message;
};
struct TooLarge {};

/// `shape`, checked: no negative dimension, at most kMaxFoldedElements.
const Shape &checkedShape(const Shape &shape) {
  for (int64_t d : shape)
    if (d < 0)
      throw Invalid{"the result would have the negative dimension " + std::to_string(d)};
  if (!checkedElementCount(shape, kMaxFoldedElements))
    throw TooLarge{};
  return shape;
}

/// `axis` of a tensor of rank `rank`, in [0, rank) (`inclusive`: [0, rank]).
int64_t normalizeAxis(int64_t axis, int64_t rank, bool inclusive = false) {
  int64_t bound = inclusive ? rank + 1 : rank;
  if (axis < -rank || axis >= bound)
    throw Invalid{"axis " + std::to_string(axis) + " is out of range for rank " +
                  std::to_string(rank)};
  return axis < 0 ? axis + rank : axis;
}

/// Distinct axes of a tensor of rank `rank`, each in [0, rank).
std::vector<int64_t> normalizeAxes(std::vector<int64_t> axes, int64_t rank) {
  for (int64_t &a : axes)
    a = normalizeAxis(a, rank);
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw Invalid{"an axis is listed twice"};
  return axes;
}

/// Element 0 of `t`, which must have one.
const HostTensor &scalar(const HostTensor *t, const char *what) {
  if (!t || t->size() < 1)
    throw Invalid{std::string("the ") + what + " input is empty"};
  return *t;
}

/// Integer arithmetic wraps around, as two's complement hardware does.
int64_t wrap(uint64_t v) { return static_cast<int64_t>(v); }

std::vector<int64_t> stridesOf(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

bool broadcast(const Shape &a, const Shape &b, Shape &out) {
  size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 1);
  for (size_t k = 0; k < rank; ++k) {
    int64_t da = k < a.size() ? a[a.size() - 1 - k] : 1;
    int64_t db = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (da != db && da != 1 && db != 1)
      return false;
    out[rank - 1 - k] = da == 1 ? db : da;
  }
  return true;
}

/// Offset into a tensor of shape `in` broadcast to `out` for the flat output
/// index `flat`.
int64_t broadcastOffset(const Shape &in, const Shape &out, int64_t flat) {
  int64_t offset = 0, stride = 1;
  for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
    int64_t idx = flat % out[d];
    flat /= out[d];
    int64_t k = d - static_cast<int64_t>(out.size() - in.size());
    if (k >= 0) {
      if (in[k] != 1)
        offset += idx * stride;
      stride *= in[k];
    }
  }
  return offset;
}

std::vector<int64_t> intsOf(const HostTensor *t) {
  std::vector<int64_t> v;
  for (int64_t k = 0; k < t->size(); ++k)
    v.push_back(t->integer(k));
  return v;
}

HostTensor like(const HostTensor &x, Shape shape, int32_t dtype = 0) {
  HostTensor t;
  t.dtype = dtype ? dtype : x.dtype;
  t.shape = std::move(checkedShape(shape));
  t.allocate();
  return t;
}

/// Copies elements in row-major order into a tensor of a new shape.
HostTensor reshaped(const HostTensor &x, Shape shape) {
  checkedShape(shape);
  HostTensor t = x;
  t.shape = std::move(shape);
  if (t.size() != x.size())
    throw Invalid{"cannot reshape " + std::to_string(x.size()) + " elements to " +
                  std::to_string(t.size())};
  return t;
}

void copyElement(const HostTensor &from, int64_t src, HostTensor &to, int64_t dst) {
  if (from.isFloat())
    to.setReal(dst, from.f[src]);
  else
    to.setInteger(dst, from.i[src]);
}

double erfOf(double x) { return std::erf(x); }

bool evaluate(const onnx::NodeProto &node, const std::vector<const HostTensor *> &in,
              std::vector<HostTensor> &out, std::string &error);

} // namespace

bool evaluateNode(const onnx::NodeProto &node, const std::vector<const HostTensor *> &in,
                  std::vector<HostTensor> &out, std::string &error) {
  try {
    return evaluate(node, in, out, error);
  } catch (const Invalid &e) {
    error = e.message;
  } catch (const TooLarge &) {
  }
  out.clear();
  return false;
}

namespace {

bool evaluate(const onnx::NodeProto &node, const std::vector<const HostTensor *> &in,
              std::vector<HostTensor> &out, std::string &error) {
  const std::string &op = node.op_type();
  auto input = [&](size_t k) -> const HostTensor * {
    return k < in.size() ? in[k] : nullptr;
  };
  if (!input(0) && op != "Constant")
    return false;
  const HostTensor &x = *in[0];
  auto fail = [&](const std::string &message) {
    error = message;
    return false;
  };

  // Elementwise unary ops.
  static const std::vector<std::pair<const char *, std::function<double(double)>>> unary = {
      {"Neg", [](double v) { return -v; }},
      {"Sqrt", [](double v) { return std::sqrt(v); }},
      {"Reciprocal", [](double v) { return 1.0 / v; }},
      {"Exp", [](double v) { return std::exp(v); }},
      {"Log", [](double v) { return std::log(v); }},
      {"Tanh", [](double v) { return std::tanh(v); }},
      {"Sigmoid", [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
      {"Erf", erfOf},
      {"Relu", [](double v) { return v > 0 ? v : 0.0; }},
  };
  for (auto &[name, fn] : unary) {
    if (op != name)
      continue;
    HostTensor r = like(x, x.shape);
    for (int64_t k = 0; k < x.size(); ++k) {
      if (x.isFloat())
        r.setReal(k, fn(x.f[k]));
      else
        r.setInteger(k, static_cast<int64_t>(fn(static_cast<double>(x.i[k]))));
    }
    out.push_back(std::move(r));
    return true;
  }

  // Elementwise binary ops with broadcasting.
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" ||
      op == "Equal") {
    if (!input(1))
      return false;
    const HostTensor &y = *in[1];
    if (op != "Pow" && x.dtype != y.dtype)
      return fail("its operands have different element types");
    Shape shape;
    if (!broadcast(x.shape, y.shape, shape))
      return fail("operand shapes do not broadcast");
    HostTensor r = like(x, shape, op == "Equal" ? TensorProto::BOOL : x.dtype);
    for (int64_t k = 0; k < r.size(); ++k) {
      int64_t a = broadcastOffset(x.shape, shape, k), b = broadcastOffset(y.shape, shape, k);
      if (op == "Equal") {
        r.i[k] = x.real(a) == y.real(b);
      } else if (x.isFloat() || op == "Pow") {
        double u = x.real(a), v = y.real(b);
        double w = op == "Add"   ? u + v
                   : op == "Sub" ? u - v
                   : op == "Mul" ? u * v
                   : op == "Div" ? u / v
                                 : std::pow(u, v);
        r.setReal(k, w);
      } else {
        int64_t u = x.i[a], v = y.i[b];
        if (op == "Div" && v == 0)
          return fail("integer division by zero");
        uint64_t uu = static_cast<uint64_t>(u), vv = static_cast<uint64_t>(v);
        int64_t w = op == "Add"   ? wrap(uu + vv)
                    : op == "Sub" ? wrap(uu - vv)
                    : op == "Mul" ? wrap(uu * vv)
                    : v == -1     ? wrap(0 - uu)
                                  : u / v;
        r.setInteger(k, w);
      }
    }
    out.push_back(std::move(r));
    return true;
  }

  if (op == "Identity") {
    out.push_back(x);
    return true;
  }

  if (op == "Cast") {
    HostTensor r = like(x, x.shape, static_cast<int32_t>(attrInt(node, "to", 0)));
    if (!HostTensor::isFloatType(r.dtype) && r.dtype != TensorProto::INT64 &&
        r.dtype != TensorProto::INT32 && r.dtype != TensorProto::BOOL)
      return false;
    for (int64_t k = 0; k < x.size(); ++k)
      copyElement(x, k, r, k);
    out.push_back(std::move(r));
    return true;
  }

  if (op == "Where") {
    if (!input(1) || !input(2))
      return false;
    const HostTensor &a = *in[1], &b = *in[2];
    Shape ab, shape;
    if (!broadcast(a.shape, b.shape, ab) || !broadcast(x.shape, ab, shape))
      return fail("operand shapes do not broadcast");
    HostTensor r = like(a, shape);
    for (int64_t k = 0; k < r.size(); ++k) {
      bool c = x.integer(broadcastOffset(x.shape, shape, k)) != 0;
      const HostTensor &src = c ? a : b;
      copyElement(src, broadcastOffset(src.shape, shape, k), r, k);
    }
    out.push_back(std::move(r));
    return true;
  }

  if (op == "Unsqueeze" || op == "Squeeze") {
    std::vector<int64_t> axes =
        input(1) ? intsOf(input(1)) : attrInts(node, "axes");
    int64_t rank = static_cast<int64_t>(x.shape.size()) +
                   (op == "Unsqueeze" ? static_cast<int64_t>(axes.size()) : 0);
    axes = normalizeAxes(axes, rank);
    Shape shape;
    if (op == "Unsqueeze") {
      size_t next = 0;
      for (int64_t d = 0; d < rank; ++d)
        shape.push_back(std::count(axes.begin(), axes.end(), d) ? 1 : x.shape[next++]);
    } else {
      for (int64_t d = 0; d < rank; ++d) {
        bool listed = std::count(axes.begin(), axes.end(), d) > 0;
        if (listed && x.shape[d] != 1)
          return fail("cannot squeeze a dimension of size " + std::to_string(x.shape[d]));
        if (!(listed || (axes.empty() && x.shape[d] == 1)))
          shape.push_back(x.shape[d]);
      }
    }
    out.push_back(reshaped(x, shape));
    return true;
  }

  if (op == "Reshape") {
    if (!input(1))
      return false;
    Shape shape = intsOf(input(1));
    int64_t known = 1, inferred = -1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 0 && !attrInt(node, "allowzero", 0))
        shape[d] = d < x.shape.size() ? x.shape[d] : 0;
      if (shape[d] < -1 || (shape[d] == -1 && inferred >= 0))
        return fail("the shape input " + std::string(shape[d] < -1 ? "has a negative "
                                                                     "dimension"
                                                                   : "has -1 twice"));
      if (shape[d] == -1) {
        inferred = static_cast<int64_t>(d);
      } else {
        auto product = checkedMul(known, shape[d]);
        if (!product || *product > x.size())
          known = x.size() + 1; // more than x holds: reshaped() refuses it
        else
          known = *product;
      }
    }
    if (inferred >= 0)
      shape[inferred] = known ? x.size() / known : 0;
    out.push_back(reshaped(x, shape));
    return true;
  }

  if (op == "Flatten") {
    int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = normalizeAxis(attrInt(node, "axis", 1), rank, /*inclusive=*/true);
    int64_t rows = 1;
    for (int64_t d = 0; d < axis; ++d)
      rows *= x.shape[d];
    out.push_back(reshaped(x, {rows, rows ? x.size() / rows : 0}));
    return true;
  }

  if (op == "Concat") {
    int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = normalizeAxis(attrInt(node, "axis", 0), rank);
    Shape shape = x.shape;
    shape[axis] = 0;
    for (const HostTensor *t : in) {
      if (!t)
        return false;
      if (t->shape.size() != x.shape.size())
        return fail("inputs have different ranks");
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && t->shape[d] != x.shape[d])
          return fail("inputs differ in dimension " + std::to_string(d));
      shape[axis] += t->shape[axis];
    }
    HostTensor r = like(x, shape);
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= shape[d];
    int64_t dst = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (const HostTensor *t : in) {
        int64_t chunk = outer ? t->size() / outer : 0;
        for (int64_t k = 0; k < chunk; ++k)
          copyElement(*t, o * chunk + k, r, dst++);
      }
    out.push_back(std::move(r));
    return true;
  }

  if (op == "Gather") {
    if (!input(1))
      return false;
    const HostTensor &idx = *in[1];
    int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = normalizeAxis(attrInt(node, "axis", 0), rank);
    Shape shape(x.shape.begin(), x.shape.begin() + axis);
    shape.insert(shape.end(), idx.shape.begin(), idx.shape.end());
    shape.insert(shape.end(), x.shape.begin() + axis + 1, x.shape.end());
    HostTensor r = like(x, shape);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= x.shape[d];
    for (int64_t d = axis + 1; d < rank; ++d)
      inner *= x.shape[d];
    int64_t dst = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < idx.size(); ++j) {
        int64_t pos = idx.integer(j);
        if (pos < 0)
          pos += x.shape[axis];
        if (pos < 0 || pos >= x.shape[axis])
          return fail("index " + std::to_string(idx.integer(j)) + " is out of range");
        for (int64_t k = 0; k < inner; ++k)
          copyElement(x, (o * x.shape[axis] + pos) * inner + k, r, dst++);
      }
    out.push_back(std::move(r));
    return true;
  }

  if (op == "Slice") {
    if (!input(1) || !input(2))
      return false;
    int64_t rank = static_cast<int64_t>(x.shape.size());
    std::vector<int64_t> starts = intsOf(input(1)), ends = intsOf(input(2));
    std::vector<int64_t> axes, steps(starts.size(), 1);
    if (input(3))
      axes = intsOf(input(3));
    else
      for (size_t k = 0; k < starts.size(); ++k)
        axes.push_back(static_cast<int64_t>(k));
    if (input(4))
      steps = intsOf(input(4));
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size())
      return fail("starts, ends, axes and steps differ in length");
    if (llvm::is_contained(steps, 0))
      return fail("a step is zero");
    axes = normalizeAxes(axes, rank);
    Shape begin(rank, 0), step(rank, 1), shape = x.shape;
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t a = axes[k];
      int64_t s, e;
      clampSlice(starts[k], ends[k], steps[k], x.shape[a], s, e);
      begin[a] = s;
      step[a] = steps[k];
      // |step| may be huge: (distance - 1) / |step| + 1 elements when distance > 0.
      int64_t distance = steps[k] > 0 ? e - s : s - e;
      uint64_t stride = steps[k] > 0 ? static_cast<uint64_t>(steps[k])
                                     : 0 - static_cast<uint64_t>(steps[k]);
      shape[a] = distance > 0
                     ? static_cast<int64_t>(static_cast<uint64_t>(distance - 1) / stride + 1)
                     : 0;
    }
    HostTensor r = like(x, shape);
    std::vector<int64_t> strides = stridesOf(x.shape);
    for (int64_t k = 0; k < r.size(); ++k) {
      int64_t flat = k, src = 0;
      for (int64_t d = rank - 1; d >= 0; --d) {
        int64_t idx = flat % shape[d];
        flat /= shape[d];
        src += (begin[d] + idx * step[d]) * strides[d];
      }
      copyElement(x, src, r, k);
    }
    out.push_back(std::move(r));
    return true;
  }

  if (op == "Expand") {
    if (!input(1))
      return false;
    Shape shape;
    if (!broadcast(x.shape, intsOf(input(1)), shape))
      return fail("cannot expand to the requested shape");
    HostTensor r = like(x, shape);
    for (int64_t k = 0; k < r.size(); ++k)
      copyElement(x, broadcastOffset(x.shape, shape, k), r, k);
    out.push_back(std::move(r));
    return true;
  }

  if (op == "Transpose") {
    int64_t rank = static_cast<int64_t>(x.shape.size());
    std::vector<int64_t> perm = attrInts(node, "perm");
    if (perm.empty())
      for (int64_t d = rank - 1; d >= 0; --d)
        perm.push_back(d);
    std::vector<int64_t> axes(rank);
    std::iota(axes.begin(), axes.end(), 0);
    if (!std::is_permutation(perm.begin(), perm.end(), axes.begin(), axes.end()))
      return fail("perm is not a permutation of the " + std::to_string(rank) + " axes");
    Shape shape;
    for (int64_t p : perm)
      shape.push_back(x.shape[p]);
    HostTensor r = like(x, shape);
    std::vector<int64_t> strides = stridesOf(x.shape);
    for (int64_t k = 0; k < r.size(); ++k) {
      int64_t flat = k, src = 0;
      for (int64_t d = rank - 1; d >= 0; --d) {
        src += (flat % shape[d]) * strides[perm[d]];
        flat /= shape[d];
      }
      copyElement(x, src, r, k);
    }
    out.push_back(std::move(r));
    return true;
  }

  if (op == "Trilu") {
    if (x.shape.size() < 2)
      return fail("Trilu needs rank 2 or more");
    int64_t diag = input(1) ? scalar(input(1), "k").integer(0) : 0;
    bool upper = attrInt(node, "upper", 1) != 0;
    int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
    HostTensor r = x;
    for (int64_t k = 0; k < x.size(); ++k) {
      int64_t col = k % cols, row = (k / cols) % rows;
      bool keep = upper ? col - row >= diag : col - row <= diag;
      if (!keep)
        r.setInteger(k, 0);
    }
    out.push_back(std::move(r));
    return true;
  }

  if (op == "ConstantOfShape") {
    HostTensor fill;
    fill.dtype = TensorProto::FLOAT;
    fill.f = {0.0};
    if (const onnx::AttributeProto *value = findAttr(node, "value")) {
      if (auto message = decodeTensor(value->t(), nullptr, fill))
        return fail("its value " + *message);
    }
    HostTensor r = like(fill, intsOf(&x));
    for (int64_t k = 0; k < r.size(); ++k)
      copyElement(fill, 0, r, k);
    out.push_back(std::move(r));
    return true;
  }

  if (op == "Range") {
    if (!input(1) || !input(2))
      return false;
    double start = scalar(&x, "start").real(0), limit = scalar(input(1), "limit").real(0),
           delta = scalar(input(2), "delta").real(0);
    if (delta == 0)
      return fail("Range delta is zero");
    double count = std::ceil((limit - start) / delta);
    if (!(count <= static_cast<double>(kMaxFoldedElements)))
      throw TooLarge{}; // also NaN
    int64_t n = count > 0 ? static_cast<int64_t>(count) : 0; // also -inf
    HostTensor r = like(x, {n});
    for (int64_t k = 0; k < n; ++k) {
      if (x.isFloat())
        r.setReal(k, start + k * delta);
      else
        r.setInteger(k, wrap(static_cast<uint64_t>(x.i[0]) +
                             static_cast<uint64_t>(k) * static_cast<uint64_t>(input(2)->i[0])));
    }
    out.push_back(std::move(r));
    return true;
  }

  return false;
}

} // namespace

} // namespace hmcc::import
