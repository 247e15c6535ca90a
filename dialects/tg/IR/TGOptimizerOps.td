//===- TGOptimizerOps.td - optimizer states and updates -----*- tablegen -*-===//
//
// What the optimizer pass (compiler/Optimizer.cpp) adds: module-level
// optimizer states, the global gradient norm, and in-place updates of a
// parameter and its states. Updates write memory the module owns, so they
// are the only tg ops with side effects.
//
//===----------------------------------------------------------------------===//

#ifndef HMCC_TG_OPTIMIZER_OPS
#define HMCC_TG_OPTIMIZER_OPS

def TG_F32Scalar : 0DTensorOf<[F32]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getF32Type())">;
def TG_I64Scalar : 0DTensorOf<[I64]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getI64Type())">;

def TG_StateOp : TG_Op<"state", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "declares an optimizer state tensor of a parameter";
  let description = [{
    A persistent tensor owned by the optimizer, zero at the start of training
    and saved with checkpoints: a momentum buffer, AdamW's moments, or the
    codes and per-block absmax values of an 8-bit moment.

    ```mlir
    tg.state @"fc1.weight.exp_avg" : tensor<32x16xf32> {kind = "exp_avg", param = @fc1.weight}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<TG_Tensor>:$type,
                       FlatSymbolRefAttr:$param, StrAttr:$kind);
  let assemblyFormat = "$sym_name `:` $type attr-dict";
}

def TG_F64Scalar : 0DTensorOf<[F64]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getF64Type())">;

def TG_SumSquaresOp : TG_Op<"sum_squares", [Pure]> {
  let summary = "running sum of squares of the gradients, in double";
  let description = [{
    The first half of the global gradient norm, one per gradient: `acc`
    (none for the first) plus the gradient's sum of squares, summed in
    fixed chunks of 4096 elements, then over chunks in order
    (hmrt_add_sum_of_squares). The optimizer pass puts each right after its
    gradient is complete, in the order the gradients are made, so that it
    reads the gradient where it is made (on the device) before the
    gradient moves to the host for its update, and one running sum is live
    at a time.

    ```mlir
    %s0 = tg.sum_squares %g0 : tensor<32x16xf32>
    %s1 = tg.sum_squares %g1, %s0 : tensor<32xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, Optional<TG_F64Scalar>:$acc);
  let results = (outs TG_F64Scalar:$result);
  let assemblyFormat = "$grad (`,` $acc^)? attr-dict `:` type($grad)";
}

def TG_NormOfSumOp : TG_Op<"norm_of_sum", [Pure]> {
  let summary = "global gradient norm from the running sum of squares";
  let description = [{
    `sqrt(sum)` in double, rounded to f32: of the last running
    `tg.sum_squares`, the norm torch.nn.utils.clip_grad_norm_ computes over
    all gradients together (hmrt_norm_of_sum).

    ```mlir
    %n = tg.norm_of_sum %s1
    ```
  }];
  let arguments = (ins TG_F64Scalar:$sum);
  let results = (outs TG_F32Scalar:$result);
  let assemblyFormat = "$sum attr-dict";
}

def TG_ClipCoefficientOp : TG_Op<"clip_coefficient", [Pure]> {
  let summary = "gradient clipping factor min(1, max_norm / (norm + 1e-6))";
  let description = [{
    The factor torch.nn.utils.clip_grad_norm_ scales every gradient by.

    ```mlir
    %c = tg.clip_coefficient %n {max_norm = 1.000000e+00 : f32}
    ```
  }];
  let arguments = (ins TG_F32Scalar:$norm, F32Attr:$max_norm);
  let results = (outs TG_F32Scalar:$result);
  let assemblyFormat = "$norm attr-dict";
}

class TG_UpdateOp<string mnemonic, string doc> : TG_Op<mnemonic,
    [MemoryEffects<[MemRead, MemWrite]>, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = doc;
  let results = (outs);
  let hasVerifier = 1;
}

def TG_SgdUpdateOp : TG_UpdateOp<"sgd_update",
    "SGD with momentum on a parameter, in place (torch.optim.SGD)"> {
  let description = [{
    `d = g + weight_decay*p`; with momentum the buffer is `d` at step 1 and
    `momentum*buf + (1-dampening)*d` after, and `d` becomes the buffer
    (Nesterov: `d + momentum*buf`); then `p -= lr*d`.

    ```mlir
    tg.sgd_update @w, %g, %lr, %step {momentum = 9.000000e-01 : f32, momentum_buffer = @w.momentum, weight_decay = 0.000000e+00 : f32} : tensor<32x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, TG_FloatTensor:$grad,
                       TG_F32Scalar:$lr, TG_I64Scalar:$step,
                       F32Attr:$momentum, DefaultValuedAttr<F32Attr, "0.0f">:$dampening,
                       F32Attr:$weight_decay, UnitAttr:$nesterov,
                       OptionalAttr<FlatSymbolRefAttr>:$momentum_buffer);
  let assemblyFormat = "$param `,` $grad `,` $lr `,` $step attr-dict `:` type($grad)";
}

def TG_AdamWUpdateOp : TG_UpdateOp<"adamw_update",
    "AdamW on a parameter, in place (torch.optim.AdamW)"> {
  let description = [{
    `p *= 1 - lr*wd; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g^2;
    p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)`.

    ```mlir
    tg.adamw_update @w, %g, %lr, %step {beta1 = 9.000000e-01 : f32, beta2 = 9.990000e-01 : f32, eps = 9.99999993E-9 : f32, exp_avg = @w.exp_avg, exp_avg_sq = @w.exp_avg_sq, weight_decay = 0.00999999977 : f32} : tensor<32x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, TG_FloatTensor:$grad,
                       TG_F32Scalar:$lr, TG_I64Scalar:$step,
                       F32Attr:$beta1, F32Attr:$beta2, F32Attr:$eps, F32Attr:$weight_decay,
                       FlatSymbolRefAttr:$exp_avg, FlatSymbolRefAttr:$exp_avg_sq);
  let assemblyFormat = "$param `,` $grad `,` $lr `,` $step attr-dict `:` type($grad)";
}

def TG_AdamW8bitUpdateOp : TG_UpdateOp<"adamw8bit_update",
    "AdamW with block-wise 8-bit moments, in place (bitsandbytes AdamW8bit)"> {
  let description = [{
    The moments are stored as one ui8 code per element and one f32 absmax per
    block of 256 elements, the first moment with the signed dynamic map and
    the second with the unsigned one; each step dequantizes, applies the
    AdamW update in f32 and requantizes.

    ```mlir
    tg.adamw8bit_update @w, %g, %lr, %step {beta1 = 9.000000e-01 : f32, beta2 = 9.990000e-01 : f32, eps = 9.99999993E-9 : f32, exp_avg = @w.exp_avg, exp_avg_absmax = @w.exp_avg_absmax, exp_avg_sq = @w.exp_avg_sq, exp_avg_sq_absmax = @w.exp_avg_sq_absmax, weight_decay = 0.00999999977 : f32} : tensor<64x128xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, TG_FloatTensor:$grad,
                       TG_F32Scalar:$lr, TG_I64Scalar:$step,
                       F32Attr:$beta1, F32Attr:$beta2, F32Attr:$eps, F32Attr:$weight_decay,
                       FlatSymbolRefAttr:$exp_avg, FlatSymbolRefAttr:$exp_avg_absmax,
                       FlatSymbolRefAttr:$exp_avg_sq, FlatSymbolRefAttr:$exp_avg_sq_absmax);
  let assemblyFormat = "$param `,` $grad `,` $lr `,` $step attr-dict `:` type($grad)";
}

def TG_OnnxOptimizerOp : TG_Op<"onnx_optimizer", [Pure]> {
  let summary = "one step of ONNX's preview-training Adagrad, Momentum or Adam";
  let description = [{
    The operators of the `ai.onnx.preview.training` domain as ONNX defines
    them (their formulas differ from PyTorch's): with `n` tensors, the
    operands are the learning rate `lr` (R), the update count `step` (T),
    then the n X, the n G, and the n states per moment (Adagrad: H;
    Momentum: V; Adam: V then H); the results are the n new X followed by
    the n new states per moment. Pure: the caller decides where results go.

    ```mlir
    %x, %h = tg.onnx_optimizer %r, %t, %x0, %g, %h0 {kind = "adagrad", decay_factor = 1.000000e-01 : f32, epsilon = 9.99999974E-6 : f32, norm_coefficient = 1.000000e-03 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
    ```
  }];
  let arguments = (ins 0DTensorOf<[F32]>:$lr, 0DTensorOf<[I64]>:$step,
                       Variadic<TG_FloatTensor>:$tensors, StrAttr:$kind,
                       DefaultValuedAttr<F32Attr, "0.9f">:$alpha,
                       DefaultValuedAttr<F32Attr, "0.999f">:$beta,
                       DefaultValuedAttr<F32Attr, "1e-6f">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.0f">:$norm_coefficient,
                       DefaultValuedAttr<F32Attr, "0.0f">:$norm_coefficient_post,
                       DefaultValuedAttr<F32Attr, "0.0f">:$decay_factor,
                       UnitAttr:$nesterov);
  let results = (outs Variadic<TG_FloatTensor>:$results);
  let assemblyFormat = "$lr `,` $step (`,` $tensors^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Optimizer states per tensor: 1 (Adagrad, Momentum) or 2 (Adam).
    unsigned getStatesPerTensor() { return getKind() == "adam" ? 2 : 1; }
  }];
}

def TG_AssignOp : TG_Op<"assign",
    [MemoryEffects<[MemWrite]>, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "writes a value into a parameter (ONNX update_binding)";
  let description = [{
    The write-back of a training algorithm that computes new values instead
    of updating in place (ONNX `TrainingInfoProto.update_binding`): the
    parameter holds `value` from the next step on. Every read of the
    parameter in the same step sees the old value, so assignments come
    after the last read, as the step's final operations.

    ```mlir
    tg.assign @W, %w_new : tensor<4x3xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, TG_Tensor:$value);
  let results = (outs);
  let assemblyFormat = "$param `,` $value attr-dict `:` type($value)";
}

#endif // HMCC_TG_OPTIMIZER_OPS
