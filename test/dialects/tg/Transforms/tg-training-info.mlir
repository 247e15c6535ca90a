// RUN: hmcc-opt %s -split-input-file -tg-training-info='lr=0.05' -verify-diagnostics | FileCheck %s
// ONNX training_info's @algorithm becomes @train_step(inputs..., step, lr) -> (loss, grad_norm).

// The loss is the Gradient's y; R (an input used as the optimizer's learning
// rate) is fed by lr and T (its iteration count) by step - 1; the norm of
// the Gradient's results (sums of squares, then their norm) right after it; the assignments stay.
// CHECK: tg.optimizer = {lr = 5.000000e-02 : f32, name = "onnx"}
// CHECK-LABEL: func.func @train_step(%arg0: tensor<2xf32> {tg.input = "x"}, %arg1: tensor<i64> {tg.role = "step"}, %arg2: tensor<f32> {tg.role = "lr"}) -> (tensor<f32> {tg.output = "loss"}, tensor<f32> {tg.output = "grad_norm"})
// CHECK: %[[ONE:.*]] = tg.constant dense<1> : tensor<i64>
// CHECK: %[[T:.*]] = tg.sub %arg1, %[[ONE]]
// CHECK: %[[LOSS:.*]] = tg.reduce_sum
// CHECK: %[[G:.*]] = tg.gradient %[[LOSS]] wrt %[[W:.*]] :
// CHECK-NEXT: %[[S:.*]] = tg.sum_squares %[[G]] : tensor<2xf32>
// CHECK-NEXT: %[[NORM:.*]] = tg.norm_of_sum %[[S]]
// CHECK: %[[NEW:.*]]:2 = tg.onnx_optimizer %arg2, %[[T]], %[[W]], %[[G]]
// CHECK: tg.assign @w, %[[NEW]]#0
// CHECK: tg.assign @w_state, %[[NEW]]#1
// CHECK: return %[[LOSS]], %[[NORM]] : tensor<f32>, tensor<f32>
tg.parameter @w : tensor<2xf32> {source = "w"}
tg.parameter @w_state : tensor<2xf32> {source = "w_state"}
func.func @algorithm(%x: tensor<2xf32> {tg.input = "x"}, %r: tensor<f32> {tg.input = "R"},
                     %t: tensor<i64> {tg.input = "T"}) -> tensor<2xf32> {
  %w = tg.param @w : tensor<2xf32>
  %h = tg.param @w_state : tensor<2xf32>
  %y = tg.mul %x, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %loss = tg.reduce_sum %y {axes = array<i64>} : tensor<2xf32> -> tensor<f32>
  %g = tg.gradient %loss wrt %w : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  %w1, %h1 = tg.onnx_optimizer %r, %t, %w, %g, %h {kind = "adagrad"} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  tg.assign @w, %w1 : tensor<2xf32>
  tg.assign @w_state, %h1 : tensor<2xf32>
  return %w1 : tensor<2xf32>
}

// -----
// Without Gradient ops, the loss is the first scalar f32 output and the norm
// is 0; a learning rate that is not an input leaves lr out of tg.optimizer.
// CHECK: tg.optimizer = {name = "onnx"}
// CHECK-LABEL: func.func @train_step
// CHECK: %[[Z:.*]] = tg.constant dense<0.000000e+00> : tensor<f32>
// CHECK: return %arg0, %[[Z]]
tg.parameter @n : tensor<i64> {source = "n"}
func.func @algorithm(%s: tensor<f32> {tg.input = "s"}) -> (tensor<i64>, tensor<f32>) {
  %n = tg.param @n : tensor<i64>
  %one = tg.constant dense<1> : tensor<i64>
  %n1 = tg.add %n, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
  tg.assign @n, %n1 : tensor<i64>
  return %n1, %s : tensor<i64>, tensor<f32>
}

// -----
// One loss per step: two Gradient ops must differentiate the same value.
tg.parameter @w : tensor<2xf32> {source = "w"}
func.func @algorithm(%x: tensor<2xf32> {tg.input = "x"}) -> (tensor<2xf32>, tensor<2xf32>) {
  %w = tg.param @w : tensor<2xf32>
  %y = tg.mul %x, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %a = tg.reduce_sum %y {axes = array<i64>} : tensor<2xf32> -> tensor<f32>
  %b = tg.reduce_mean %y {axes = array<i64>} : tensor<2xf32> -> tensor<f32>
  %ga = tg.gradient %a wrt %w : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  // expected-error @+1 {{the algorithm differentiates more than one value}}
  %gb = tg.gradient %b wrt %w : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  return %ga, %gb : tensor<2xf32>, tensor<2xf32>
}

// -----
// Nothing to report as the loss.
tg.parameter @n : tensor<i64> {source = "n"}
// expected-error @+1 {{the algorithm needs a scalar f32 loss to report}}
func.func @algorithm() -> tensor<i64> {
  %n = tg.param @n : tensor<i64>
  return %n : tensor<i64>
}

// -----
// expected-error @+1 {{no @algorithm (the model has no training_info)}}
module {
  func.func @forward() {
    return
  }
}
