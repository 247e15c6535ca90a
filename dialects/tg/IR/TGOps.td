//===- TGOps.td - operations of the training-graph dialect --*- tablegen -*-===//
//
// One op per ONNX operator that hmcc supports, with ONNX semantics on
// statically shaped tensors. Inputs that ONNX passes as tensors but that only
// carry shape information (Reshape's shape, Slice's starts, Unsqueeze's axes,
// ...) are folded into attributes at import, so every op here is a plain
// function of its tensor operands. Each op's verifier recomputes its result
// type from the operands and attributes (see TGShapes.h).
//
//===----------------------------------------------------------------------===//

#ifndef HMCC_TG_OPS
#define HMCC_TG_OPS

include "TGDialect.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def TG_Tensor : StaticShapeTensorOf<[AnyFloat, AnySignlessInteger, AnyUnsignedInteger]>;
def TG_FloatTensor : StaticShapeTensorOf<[AnyFloat]>;
def TG_BoolTensor : StaticShapeTensorOf<[I1]>;
def TG_IndexTensor : StaticShapeTensorOf<[I32, I64]>;

//===----------------------------------------------------------------------===//
// Leaves: parameters, constants. (Data inputs are function arguments.)
//===----------------------------------------------------------------------===//

def TG_ParameterOp : TG_Op<"parameter", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "declares a trainable parameter of the model";
  let description = [{
    Declares one trainable tensor of the model at module level. `source` names
    the ONNX initializer it comes from; where the initializer is stored as ONNX
    external data, `location`, `offset` and `length` say where its bytes are
    (the path is relative to the model's directory and is read lazily, only
    when the weights are needed). `initial_value`, where present, is the
    value training starts from instead of the initializer's (ONNX
    `training_info` computes it in its initialization graph). The graph reads
    the parameter with `tg.param`.

    ```mlir
    tg.parameter @"fc1.weight" : tensor<32x16xf32> {source = "fc1.weight"}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<TG_Tensor>:$type,
                       StrAttr:$source,
                       OptionalAttr<StrAttr>:$location,
                       OptionalAttr<I64Attr>:$offset,
                       OptionalAttr<I64Attr>:$length,
                       OptionalAttr<ElementsAttr>:$initial_value);
  let assemblyFormat = "$sym_name `:` $type attr-dict";
  let hasVerifier = 1;
}

def TG_ParamOp : TG_Op<"param", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "reads the current value of a parameter";
  let description = [{
    Yields the value of the parameter declared by the `tg.parameter` named
    `name`; the result type must be the declared type.

    ```mlir
    %w = tg.param @"fc1.weight" : tensor<32x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def TG_ConstantOp : TG_Op<"constant", [Pure, ConstantLike, InferTypeOpAdaptor]> {
  let summary = "a tensor fixed at compile time";
  let description = [{
    A constant tensor: buffers of the model (causal masks, rotary tables),
    frozen initializers and the results of shape arithmetic folded at import.

    ```mlir
    %c = tg.constant dense<[2, 16, 32]> : tensor<3xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class TG_UnaryOp<string mnemonic, string doc, Type type = TG_FloatTensor>
    : TG_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise " # doc;
  let description = "Computes " # doc # [{ of every element of `x`; the result
    has the type of `x`.

    ```mlir
    %y = tg.}] # mnemonic # [{ %x : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins type:$x);
  let results = (outs type:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def TG_SqrtOp : TG_UnaryOp<"sqrt", "square root">;
def TG_ReciprocalOp : TG_UnaryOp<"reciprocal", "reciprocal 1/x">;
def TG_NegOp : TG_UnaryOp<"neg", "negation", TG_Tensor>;
def TG_ExpOp : TG_UnaryOp<"exp", "exponential">;
def TG_LogOp : TG_UnaryOp<"log", "natural logarithm">;
def TG_TanhOp : TG_UnaryOp<"tanh", "hyperbolic tangent">;
def TG_SigmoidOp : TG_UnaryOp<"sigmoid", "logistic sigmoid 1/(1+exp(-x))">;
def TG_ErfOp : TG_UnaryOp<"erf", "Gauss error function">;
def TG_ReluOp : TG_UnaryOp<"relu", "rectified linear unit max(x, 0)">;
def TG_IdentityOp : TG_UnaryOp<"identity", "the identity (a copy)", TG_Tensor>;

class TG_BinaryOp<string mnemonic, string doc, Type operandType = TG_Tensor,
                  Type resultType = TG_Tensor>
    : TG_Op<mnemonic, [Pure]> {
  let summary = "elementwise " # doc # " with broadcasting";
  let description = "Computes " # doc # [{ elementwise with numpy-style
    (multidirectional) broadcasting. Both operands have the same element type.

    ```mlir
    %z = tg.}] # mnemonic # [{ %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs resultType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def TG_AddOp : TG_BinaryOp<"add", "sum lhs + rhs">;
def TG_SubOp : TG_BinaryOp<"sub", "difference lhs - rhs">;
def TG_MulOp : TG_BinaryOp<"mul", "product lhs * rhs">;
def TG_DivOp : TG_BinaryOp<"div", "quotient lhs / rhs">;
def TG_PowOp : TG_BinaryOp<"pow", "power lhs ^ rhs (the exponent may have another element type)">;
def TG_EqualOp : TG_BinaryOp<"equal", "comparison lhs == rhs", TG_Tensor, TG_BoolTensor>;

def TG_WhereOp : TG_Op<"where", [Pure]> {
  let summary = "elementwise selection with broadcasting";
  let description = [{
    Picks `x` where `condition` is true and `y` elsewhere, with all three
    operands broadcast together.

    ```mlir
    %r = tg.where %m, %x, %y : (tensor<1x1x4x4xi1>, tensor<2x4x4x4xf32>, tensor<f32>) -> tensor<2x4x4x4xf32>
    ```
  }];
  let arguments = (ins TG_BoolTensor:$condition, TG_Tensor:$x, TG_Tensor:$y);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$condition `,` $x `,` $y attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def TG_FusedOp : TG_Op<"fused", [Pure]> {
  let summary = "a chain of elementwise ops computed in one pass";
  let description = [{
    A small program over `inputs`, evaluated element by element over the
    result's shape; tg-fuse-elementwise forms it from chains of elementwise
    ops so that their intermediates never become tensors. Instruction `i` is
    `ops[i]` applied to its operands `args[3i]`, `args[3i+1]`, `args[3i+2]`:
    an index below the number of inputs names an input, index
    `#inputs + k` names instruction k's value (k < i), and -1 fills the
    places an op does not take. The result is the last instruction's value.

    Ops: `add`, `sub`, `mul`, `div`, `pow` (binary); `exp`, `log`, `sqrt`,
    `neg`, `reciprocal`, `tanh`, `sigmoid`, `erf`, `relu` (unary);
    `where` (condition, x, y) and `relu_grad` (x, grad), as the tg ops of
    those names. Every value is f32; an input is f32 or a bool (i1)
    condition of `where`, and broadcasts to the result's shape (each dim 1
    or the result's, aligned on the trailing dims). A bf16 result is the
    last value rounded to nearest even (tg-fold-rounding).

    ```mlir
    // x * 0.5, then erf
    %y = tg.fused %x, %half {ops = ["mul", "erf"], args = array<i64: 0, 1, -1, 2, -1, -1>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Variadic<TG_Tensor>:$inputs, StrArrayAttr:$ops, DenseI64ArrayAttr:$args);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

def TG_CastOp : TG_Op<"cast", [Pure]> {
  let summary = "converts the element type";
  let description = [{
    Converts every element to the result's element type (ONNX Cast); the shape
    is unchanged.  f32 to bf16 truncates, as ONNX's backend tests expect,
    unless `nearest_even` is set: then it rounds to nearest, ties to even
    (tg-precision's GEMM operands, as a GPU rounds them).

    ```mlir
    %f = tg.cast %i : tensor<4xi64> to tensor<4xf32>
    %h = tg.cast %x {nearest_even} : tensor<4xf32> to tensor<4xbf16>
    ```
  }];
  let arguments = (ins TG_Tensor:$x, UnitAttr:$nearest_even);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `to` type($result)";
  let hasVerifier = 1;
}

def TG_DropoutOp : TG_Op<"dropout", [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "inverted dropout";
  let description = [{
    In training (`training` set and `ratio` > 0) zeroes each element with
    probability `ratio` and scales the others by 1/(1-ratio); `mask` tells
    which elements were kept. Otherwise `result` is `x` and `mask` is all true.
    The mask is drawn from a counter-based generator keyed by the run's seed,
    the step and `stream` (plan-recompute numbers the dropouts of a program
    before it copies any, so a recomputed dropout draws the same mask; code
    generation numbers those without one in program order).

    ```mlir
    %y, %mask = tg.dropout %x {ratio = 1.000000e-01 : f32, training} : tensor<8x32xf32> -> tensor<8x32xi1>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$x, F32Attr:$ratio, UnitAttr:$training,
                       OptionalAttr<I64Attr>:$seed, OptionalAttr<I64Attr>:$stream);
  let results = (outs TG_FloatTensor:$result, TG_BoolTensor:$mask);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($mask)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def TG_MatMulOp : TG_Op<"matmul", [Pure]> {
  let summary = "numpy-style matrix product";
  let description = [{
    Matrix product of the last two dimensions with broadcasting over the
    leading (batch) dimensions; a 1-D operand is treated as a row (lhs) or a
    column (rhs) vector whose extra dimension is dropped from the result.
    `transA` / `transB` swap the last two dimensions of an operand of rank 2
    or more first (the import never sets them; autodiff does).  Both
    operands have one element type, the result's, except that bf16 operands
    may give an f32 result: bf16 products summed in fp32 (tg-precision).

    ```mlir
    %y = tg.matmul %x, %w : (tensor<2x16x32xf32>, tensor<32x96xf32>) -> tensor<2x16x96xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$lhs, TG_FloatTensor:$rhs, UnitAttr:$transA,
                       UnitAttr:$transB);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def TG_GemmOp : TG_Op<"gemm", [Pure]> {
  let summary = "general matrix multiply alpha*op(A)*op(B) + beta*C";
  let description = [{
    ONNX Gemm on 2-D operands: `op(X)` is `X` transposed when `transA` /
    `transB` is set; the optional `c` is broadcast to the result.  As for
    tg.matmul, bf16 `a` and `b` may give an f32 result (with an f32 `c`).

    ```mlir
    %y = tg.gemm %x, %w, %b {transB} : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<8x32xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$a, TG_FloatTensor:$b,
                       Optional<TG_FloatTensor>:$c,
                       DefaultValuedAttr<F32Attr, "1.0f">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0f">:$beta,
                       UnitAttr:$transA, UnitAttr:$transB);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

def TG_TransposeOp : TG_Op<"transpose", [Pure]> {
  let summary = "permutes dimensions";
  let description = [{
    Result dimension `i` is operand dimension `perm[i]`.

    ```mlir
    %t = tg.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x8xf32> -> tensor<2x4x16x8xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$x, DenseI64ArrayAttr:$perm);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def TG_ReshapeOp : TG_Op<"reshape", [Pure]> {
  let summary = "reinterprets the shape";
  let description = [{
    Same elements in row-major order, new shape (the result type). ONNX's
    shape operand, including its 0 and -1 entries, is resolved at import.

    ```mlir
    %r = tg.reshape %x : tensor<2x16x32xf32> -> tensor<32x32xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$x);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def TG_FlattenOp : TG_Op<"flatten", [Pure]> {
  let summary = "flattens into a matrix";
  let description = [{
    Dimensions before `axis` become the rows, the rest the columns.

    ```mlir
    %f = tg.flatten %x {axis = 1 : i64} : tensor<2x3x4xf32> -> tensor<2x12xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$x, I64Attr:$axis);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def TG_SqueezeOp : TG_Op<"squeeze", [Pure]> {
  let summary = "removes dimensions of size 1";
  let description = [{
    Removes the listed dimensions (each of size 1, sorted and non-negative
    after import).

    ```mlir
    %s = tg.squeeze %x {axes = array<i64: 1>} : tensor<4x1x8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$x, DenseI64ArrayAttr:$axes);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def TG_UnsqueezeOp : TG_Op<"unsqueeze", [Pure]> {
  let summary = "inserts dimensions of size 1";
  let description = [{
    Inserts size-1 dimensions at the listed positions of the result.

    ```mlir
    %u = tg.unsqueeze %x {axes = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<1x1x4x8xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$x, DenseI64ArrayAttr:$axes);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def TG_ConcatOp : TG_Op<"concat", [Pure]> {
  let summary = "joins tensors along an axis";
  let description = [{
    All operands have the result's element type and agree on every dimension
    but `axis`.

    ```mlir
    %c = tg.concat %a, %b {axis = 2 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x16xf32>
    ```
  }];
  let arguments = (ins Variadic<TG_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

def TG_SplitOp : TG_Op<"split", [Pure]> {
  let summary = "splits a tensor along an axis";
  let description = [{
    Result `i` holds `sizes[i]` consecutive slices of `x` along `axis`.

    ```mlir
    %q, %k, %v = tg.split %x {axis = 2 : i64, sizes = array<i64: 32, 32, 32>} : tensor<2x16x96xf32> -> (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>)
    ```
  }];
  let arguments = (ins TG_Tensor:$x, I64Attr:$axis, DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<TG_Tensor>:$results);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` `(` type($results) `)`";
  let hasVerifier = 1;
}

def TG_SliceOp : TG_Op<"slice", [Pure]> {
  let summary = "strided slice";
  let description = [{
    For each listed axis takes `starts[i]`, `starts[i]+steps[i]`, ... up to
    (not including) `ends[i]`. Import clamps the bounds ONNX-style, so
    `0 <= start <= dim` and the result extent is exact; steps are non-zero.

    ```mlir
    %s = tg.slice %x {axes = array<i64: 2>, ends = array<i64: 16>, starts = array<i64: 0>, steps = array<i64: 1>} : tensor<1x1x32x32xi1> -> tensor<1x1x16x32xi1>
    ```
  }];
  let arguments = (ins TG_Tensor:$x, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$axes,
                       DenseI64ArrayAttr:$steps);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def TG_GatherOp : TG_Op<"gather", [Pure]> {
  let summary = "gathers slices along an axis by index";
  let description = [{
    ONNX Gather: the result's shape is `x.shape[:axis] + indices.shape +
    x.shape[axis+1:]`. An embedding lookup is a gather on axis 0.

    ```mlir
    %e = tg.gather %wte, %idx {axis = 0 : i64} : (tensor<64x32xf32>, tensor<2x16xi64>) -> tensor<2x16x32xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$x, TG_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$x `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def TG_ExpandOp : TG_Op<"expand", [Pure]> {
  let summary = "broadcasts to a larger shape";
  let description = [{
    Broadcasts `x` to the result shape (ONNX Expand with its shape operand
    resolved at import).

    ```mlir
    %e = tg.expand %x : tensor<1x16xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$x);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def TG_TriluOp : TG_Op<"trilu", [Pure, SameOperandsAndResultType]> {
  let summary = "keeps the upper or lower triangle";
  let description = [{
    Zeroes the elements of the last two dimensions outside the triangle: with
    `upper`, keeps `j - i >= k`; otherwise keeps `j - i <= k`.

    ```mlir
    %l = tg.trilu %x {k = 0 : i64} : tensor<16x16xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$x, DefaultValuedAttr<I64Attr, "0">:$k,
                       UnitAttr:$upper);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasVerifier = 1;
}

def TG_ShapeOp : TG_Op<"shape", [Pure]> {
  let summary = "the shape of a tensor as a 1-D i64 tensor";
  let description = [{
    Dimensions `start` to `end` (exclusive, normalised at import) of `x`.
    Always folds to a constant, since shapes are static.

    ```mlir
    %s = tg.shape %x {end = 3 : i64, start = 0 : i64} : tensor<2x16x32xf32> -> tensor<3xi64>
    ```
  }];
  let arguments = (ins TG_Tensor:$x, I64Attr:$start, I64Attr:$end);
  let results = (outs StaticShapeTensorOf<[I64]>:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TG_ConstantOfShapeOp : TG_Op<"constant_of_shape", [Pure]> {
  let summary = "a tensor filled with one value, shaped by an operand";
  let description = [{
    The result (whose type is its shape) filled with `value`. The operand is
    the 1-D i64 shape; the verifier checks it has one entry per result
    dimension. Folds to a constant.

    ```mlir
    %z = tg.constant_of_shape %s {value = 0.000000e+00 : f32} : tensor<2xi64> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[I64]>:$shape, TypedAttrInterface:$value);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$shape attr-dict `:` type($shape) `->` type($result)";
  let hasVerifier = 1;
}

def TG_RangeOp : TG_Op<"range", [Pure]> {
  let summary = "an arithmetic sequence";
  let description = [{
    `start, start+delta, ...` up to (not including) `limit`, from three
    scalars of one element type; the result length is
    `max(ceil((limit-start)/delta), 0)`.

    ```mlir
    %r = tg.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<16xi64>
    ```
  }];
  let arguments = (ins TG_Tensor:$start, TG_Tensor:$limit, TG_Tensor:$delta);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$start `,` $limit `,` $delta attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and normalisations
//===----------------------------------------------------------------------===//

class TG_ReduceOp<string mnemonic, string doc> : TG_Op<mnemonic, [Pure]> {
  let summary = doc # " over axes";
  let description = "The " # doc # [{ over the listed axes (sorted,
    non-negative); an empty list reduces over every axis. With `keepdims` the
    reduced axes stay with size 1.

    ```mlir
    %m = tg.}] # mnemonic # [{ %x {axes = array<i64: 2>, keepdims} : tensor<2x16x32xf32> -> tensor<2x16x1xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$x, DenseI64ArrayAttr:$axes, UnitAttr:$keepdims);
  let results = (outs TG_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def TG_ReduceMeanOp : TG_ReduceOp<"reduce_mean", "mean">;
def TG_ReduceSumOp : TG_ReduceOp<"reduce_sum", "sum">;
def TG_ReduceMaxOp : TG_ReduceOp<"reduce_max", "maximum">;

class TG_SoftmaxLikeOp<string mnemonic, string doc> : TG_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = doc # " along an axis";
  let description = "The " # doc # [{ of `x` along `axis` (non-negative).

    ```mlir
    %p = tg.}] # mnemonic # [{ %x {axis = 3 : i64} : tensor<2x4x16x16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$x, I64Attr:$axis);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasVerifier = 1;
}

def TG_SoftmaxOp : TG_SoftmaxLikeOp<"softmax", "softmax">;
def TG_LogSoftmaxOp : TG_SoftmaxLikeOp<"log_softmax", "logarithm of the softmax">;

def TG_LayerNormOp : TG_Op<"layer_norm", [Pure]> {
  let summary = "layer normalisation";
  let description = [{
    Normalises over the dimensions from `axis` to the last:
    `(x - mean) / sqrt(var + epsilon) * scale + bias`, where `scale` and the
    optional `bias` have the normalised dimensions' shape. `stats` is empty
    or holds ONNX's outputs 1 and 2, the mean and the inverse standard
    deviation (f32, the input's shape with the normalised dimensions set to 1).
    With an f32 `x`, a bf16 result is the f32 one rounded to nearest even
    (tg-fold-rounding).

    ```mlir
    %y = tg.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$x, TG_FloatTensor:$scale,
                       Optional<TG_FloatTensor>:$bias, I64Attr:$axis,
                       F32Attr:$epsilon);
  let results = (outs TG_FloatTensor:$result, Variadic<TG_FloatTensor>:$stats);
  let assemblyFormat = "$x `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def TG_AttentionOp : TG_Op<"attention", [Pure]> {
  let summary = "scaled-dot-product attention, the probabilities never stored";
  let description = [{
    `softmax(scale * q k^T + bias, masked) v` per head: `q` is
    `B x H x T x D`, `k` and `v` are `B x Hk x S x D` with `H` a multiple
    of `Hk` (query head h reads kv head `h / (H / Hk)`), `bias` an optional
    additive f32 mask that broadcasts to `B x H x T x S` (each dim 1 or
    full; -inf masks), `causal` masks key j > query i (T == S). `lse`
    (`B x H x T`) is each row's log-sum-exp, which tg.attention_grad reads
    to recompute the probabilities. With `bthd`, q and the result are laid
    out `B x T x H x D` and k, v `B x S x Hk x D`, as the projections make
    them (no transposes around the op). With `packed` (and `bthd`) q, k
    and v are one value, `B x T x (H + 2 Hk) x D` as one projection makes
    them: heads `[0, H)` are the queries, the next `Hk` the keys, the last
    `Hk` the values, and the result (`B x T x H x D`) gives `H`; no split
    copies them apart. `dropout` > 0 drops the
    probabilities in training as a tg.dropout of that ratio, `seed` and
    mask `stream` would (tg.attention_grad, with the same attributes, draws
    the same mask). tg-fuse-attention forms it from the ops PyTorch
    exports.

    ```mlir
    %o, %lse = tg.attention %q, %k, %v {causal, scale = 0.176776692 : f32} : (tensor<8x6x64x32xf32>, tensor<8x6x64x32xf32>, tensor<8x6x64x32xf32>) -> (tensor<8x6x64x32xf32>, tensor<8x6x64xf32>)
    ```
  }];
  let arguments = (ins TG_FloatTensor:$q, TG_FloatTensor:$k, TG_FloatTensor:$v,
                       Optional<TG_FloatTensor>:$bias, F32Attr:$scale, UnitAttr:$causal,
                       UnitAttr:$bthd, UnitAttr:$packed,
                       DefaultValuedAttr<F32Attr, "0.0f">:$dropout,
                       OptionalAttr<I64Attr>:$seed, OptionalAttr<I64Attr>:$stream);
  let results = (outs TG_FloatTensor:$result, TG_FloatTensor:$lse);
  let assemblyFormat = "$q `,` $k `,` $v (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def TG_SoftmaxCrossEntropyLossOp : TG_Op<"softmax_cross_entropy_loss", [Pure]> {
  let summary = "softmax cross-entropy against class labels";
  let description = [{
    `scores` is `N x C` or `N x C x d1 ...`, `labels` is `N` or `N x d1 ...`.
    The loss of one element is `-log_softmax(scores)[label]`, optionally
    multiplied by `weights[label]`; elements whose label is `ignore_index`
    count zero. `reduction` is "mean" (divided by the sum of the weights of
    counted elements), "sum" or "none". The optional `log_prob` result is
    `log_softmax(scores)` along the class dimension (ONNX's output 1).

    ```mlir
    %l = tg.softmax_cross_entropy_loss %logits, %t {reduction = "mean"} : (tensor<32x64xf32>, tensor<32xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$scores, TG_IndexTensor:$labels,
                       Optional<TG_FloatTensor>:$weights,
                       DefaultValuedAttr<StrAttr, "\"mean\"">:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs TG_FloatTensor:$result, Optional<TG_FloatTensor>:$log_prob);
  let assemblyFormat = "$scores `,` $labels (`,` $weights^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

include "TGGradOps.td"
include "TGOptimizerOps.td"

#endif // HMCC_TG_OPS
