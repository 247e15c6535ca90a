//===- TGGradOps.td - ops the autodiff pass emits -----------*- tablegen -*-===//
//
// Vector-Jacobian products that are not compositions of forward ops (or are
// much cheaper as one op), and the reduction that undoes broadcasting. The
// autodiff pass (compiler/Autodiff.cpp) expresses every other rule with the
// forward ops.
//
//===----------------------------------------------------------------------===//

#ifndef HMCC_TG_GRAD_OPS
#define HMCC_TG_GRAD_OPS

def TG_SumToOp : TG_Op<"sum_to", [Pure]> {
  let summary = "sums over broadcast dimensions down to a shape";
  let description = [{
    The gradient of broadcasting: sums `x` over the dimensions along which the
    result shape would be broadcast to `x`'s shape. The result shape must
    broadcast to the operand's.

    ```mlir
    %db = tg.sum_to %g : tensor<2x16x32xf32> -> tensor<32xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$x);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def TG_ReluGradOp : TG_Op<"relu_grad", [Pure, AllTypesMatch<["x", "grad", "result"]>]> {
  let summary = "gradient of relu: grad where x > 0, else 0";
  let description = [{
    ```mlir
    %dx = tg.relu_grad %x, %g : tensor<8x32xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$x, TG_FloatTensor:$grad);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$x `,` $grad attr-dict `:` type($x)";
}

def TG_AttentionGradOp : TG_Op<"attention_grad", [Pure]> {
  let summary = "gradient of tg.attention: dq, dk, dv";
  let description = [{
    From the forward's operands, its `result` and `lse` and the result's
    gradient `grad`; the probabilities are recomputed, never stored. `dk`
    and `dv` sum over the query heads that share a kv head; `bthd` and
    the dropout attributes as for tg.attention. With `packed` (q, k and v
    one value) the one result is that value's gradient, dq, dk and dv in
    its heads.

    ```mlir
    %dq, %dk, %dv = tg.attention_grad %q, %k, %v, %o, %lse, %g {causal, scale = 0.176776692 : f32} : (tensor<8x6x64x32xf32>, tensor<8x6x64x32xf32>, tensor<8x6x64x32xf32>, tensor<8x6x64x32xf32>, tensor<8x6x64xf32>, tensor<8x6x64x32xf32>) -> (tensor<8x6x64x32xf32>, tensor<8x6x64x32xf32>, tensor<8x6x64x32xf32>)
    ```
  }];
  let arguments = (ins TG_FloatTensor:$q, TG_FloatTensor:$k, TG_FloatTensor:$v,
                       TG_FloatTensor:$out, TG_FloatTensor:$lse, TG_FloatTensor:$grad,
                       Optional<TG_FloatTensor>:$bias, F32Attr:$scale, UnitAttr:$causal,
                       UnitAttr:$bthd, UnitAttr:$packed,
                       DefaultValuedAttr<F32Attr, "0.0f">:$dropout,
                       OptionalAttr<I64Attr>:$seed, OptionalAttr<I64Attr>:$stream);
  // dq, dk and dv; with `packed`, the gradient of the one q, k, v value.
  let results = (outs Variadic<TG_FloatTensor>:$grads);
  let assemblyFormat = "$q `,` $k `,` $v `,` $out `,` $lse `,` $grad (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def TG_DropoutGradOp : TG_Op<"dropout_grad", [Pure, AllTypesMatch<["grad", "result"]>]> {
  let summary = "gradient of dropout: grad * mask / (1 - ratio)";
  let description = [{
    ```mlir
    %dx = tg.dropout_grad %g, %mask {ratio = 1.000000e-01 : f32} : tensor<8x32xf32>, tensor<8x32xi1>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_BoolTensor:$mask, F32Attr:$ratio);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $mask attr-dict `:` type($grad) `,` type($mask)";
  let hasVerifier = 1;
}

def TG_SliceGradOp : TG_Op<"slice_grad", [Pure]> {
  let summary = "gradient of slice: grad placed at the sliced positions of zeros";
  let description = [{
    The result has the sliced operand's shape (the result type); `grad` has
    the slice's. Attributes as in `tg.slice`.

    ```mlir
    %dx = tg.slice_grad %g {axes = array<i64: 1>, ends = array<i64: 4>, starts = array<i64: 0>, steps = array<i64: 1>} : tensor<16x4xf32> -> tensor<16x8xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$axes,
                       DenseI64ArrayAttr:$steps);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

def TG_GatherGradOp : TG_Op<"gather_grad", [Pure]> {
  let summary = "gradient of gather: grad scatter-added into zeros";
  let description = [{
    The result has the gathered tensor's shape; rows picked several times
    accumulate (an embedding's gradient).

    ```mlir
    %dw = tg.gather_grad %g, %idx {axis = 0 : i64} : (tensor<2x16x32xf32>, tensor<2x16xi64>) -> tensor<64x32xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def TG_ReduceMaxGradOp : TG_Op<"reduce_max_grad", [Pure]> {
  let summary = "gradient of reduce_max";
  let description = [{
    `grad` (shaped like the reduction's result) flows to every position of
    `x` that equals its group's maximum `max`.

    ```mlir
    %dx = tg.reduce_max_grad %x, %m, %g {axes = array<i64: 1>, keepdims} : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$x, TG_FloatTensor:$max, TG_FloatTensor:$grad,
                       DenseI64ArrayAttr:$axes, UnitAttr:$keepdims);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$x `,` $max `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

class TG_SoftmaxGradOpBase<string mnemonic, string doc>
    : TG_Op<mnemonic, [Pure, AllTypesMatch<["y", "grad", "result"]>]> {
  let summary = "gradient of " # doc # " from its output";
  let description = "Given `y`, the forward output of " # doc # [{ along
    `axis`, and the gradient `grad` of y, computes the gradient of the input.

    ```mlir
    %dx = tg.}] # mnemonic # [{ %y, %g {axis = 1 : i64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$y, TG_FloatTensor:$grad, I64Attr:$axis);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$y `,` $grad attr-dict `:` type($y)";
  let hasVerifier = 1;
}

def TG_SoftmaxGradOp : TG_SoftmaxGradOpBase<"softmax_grad", "softmax">;
def TG_LogSoftmaxGradOp : TG_SoftmaxGradOpBase<"log_softmax_grad", "log_softmax">;

def TG_LayerNormGradOp : TG_Op<"layer_norm_grad", [Pure]> {
  let summary = "gradient of layer_norm";
  let description = [{
    From the output gradient, the input, the scale and the forward pass's
    mean and inverse standard deviation (`tg.layer_norm`'s stats), computes
    the gradients of x, scale and bias.

    ```mlir
    %dx, %dscale, %dbias = tg.layer_norm_grad %g, %x, %s, %mean, %rstd {axis = 2 : i64} : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>) -> (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>)
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_FloatTensor:$x, TG_FloatTensor:$scale,
                       TG_FloatTensor:$mean, TG_FloatTensor:$inv_std_dev, I64Attr:$axis);
  let results = (outs TG_FloatTensor:$dx, TG_FloatTensor:$dscale, TG_FloatTensor:$dbias);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def TG_SoftmaxCrossEntropyLossGradOp : TG_Op<"softmax_cross_entropy_loss_grad", [Pure]> {
  let summary = "gradient of softmax_cross_entropy_loss with respect to the scores";
  let description = [{
    `grad` is the loss's gradient (a scalar for "mean"/"sum", one per label
    for "none"); attributes as in the forward op. With f32 scores, a bf16
    result is the f32 gradient rounded to nearest even (tg-fold-rounding).

    ```mlir
    %ds = tg.softmax_cross_entropy_loss_grad %g, %logits, %t {ignore_index = -100 : i64} : (tensor<f32>, tensor<32x64xf32>, tensor<32xi64>) -> tensor<32x64xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_FloatTensor:$scores, TG_IndexTensor:$labels,
                       Optional<TG_FloatTensor>:$weights,
                       DefaultValuedAttr<StrAttr, "\"mean\"">:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $scores `,` $labels (`,` $weights^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def TG_GradientOp : TG_Op<"gradient", [Pure]> {
  let summary = "the gradient of a value with respect to others (ONNX Gradient)";
  let description = [{
    ONNX's `ai.onnx.preview.training` Gradient: result `i` is the derivative
    of the sum of `y`'s elements with respect to `xs[i]`, through the ops
    that compute `y` from them. `tg-expand-gradients` replaces the op by that
    computation.

    ```mlir
    %da, %db = tg.gradient %c wrt %a, %b : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
    ```
  }];
  let arguments = (ins TG_FloatTensor:$y, Variadic<TG_FloatTensor>:$xs);
  let results = (outs Variadic<TG_FloatTensor>:$results);
  let assemblyFormat = "$y `wrt` $xs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // HMCC_TG_GRAD_OPS
