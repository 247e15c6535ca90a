// RUN: hmcc-opt %s -split-input-file -tg-autodiff -verify-diagnostics | FileCheck %s
// RUN: not hmcc-opt %s -split-input-file -tg-autodiff 2>&1 | FileCheck %s --check-prefix=ERR
// Structure of the function tg-autodiff builds. (-verify-diagnostics exits 0
// when the expected errors occur, so the second RUN line checks, with `not`,
// that the plain run fails on them.)

// The gradient function keeps the forward's arguments and returns the loss,
// then one gradient per parameter in declaration order, each tagged
// tg.grad_of; @forward stays as it was.
// CHECK-LABEL: func.func @forward(%arg0: tensor<2x4xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"})
// CHECK-NOT:   tg.sum_to
// CHECK:       return
// CHECK-LABEL: func.func @forward_backward(%arg0: tensor<2x4xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}, tensor<4x3xf32> {tg.grad_of = @w}, tensor<3xf32> {tg.grad_of = @b})
// CHECK:       %[[LOSS:.*]] = tg.reduce_sum
// CHECK:       return %[[LOSS]], %{{.*}}, %{{.*}} : tensor<f32>, tensor<4x3xf32>, tensor<3xf32>
tg.parameter @w : tensor<4x3xf32> {source = "w"}
tg.parameter @b : tensor<3xf32> {source = "b"}
func.func @forward(%x: tensor<2x4xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w = tg.param @w : tensor<4x3xf32>
  %b = tg.param @b : tensor<3xf32>
  %0 = tg.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %1 = tg.add %0, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = tg.reduce_sum %1 {axes = array<i64>} : tensor<2x3xf32> -> tensor<f32>
  return %2 : tensor<f32>
}

// -----
// A parameter read twice (or by two tg.param ops) gets the sum of the
// gradients of its uses.
// CHECK-LABEL: func.func @forward_backward
// CHECK:       %[[G1:[0-9]+]] = tg.mul %[[SEED:[0-9]+]], %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:       %[[G2:[0-9]+]] = tg.mul %[[SEED]], %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:       %[[SQ:[0-9]+]] = tg.add %[[G1]], %[[G2]]
// CHECK:       %[[SUM:[0-9]+]] = tg.add %[[SQ]], %[[SEED]] : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:       return %{{.*}}, %[[SUM]] : tensor<f32>, tensor<3xf32>
tg.parameter @w : tensor<3xf32> {source = "w"}
func.func @forward() -> tensor<f32> {
  %w = tg.param @w : tensor<3xf32>
  %w2 = tg.param @w : tensor<3xf32>
  %0 = tg.mul %w, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = tg.add %0, %w2 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = tg.reduce_sum %1 {axes = array<i64>} : tensor<3xf32> -> tensor<f32>
  return %2 : tensor<f32>
}

// -----
// A parameter the loss does not depend on gets zeros, and its unused
// forward computation gets no gradient ops.
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME:  tensor<5xf32> {tg.grad_of = @unused}
// CHECK-NOT:   tg.mul
// CHECK:       %[[Z:.*]] = tg.constant dense<0.000000e+00> : tensor<5xf32>
// CHECK:       return %{{.*}}, %{{.*}}, %[[Z]] : tensor<f32>, tensor<3xf32>, tensor<5xf32>
tg.parameter @w : tensor<3xf32> {source = "w"}
tg.parameter @unused : tensor<5xf32> {source = "unused"}
func.func @forward() -> tensor<f32> {
  %w = tg.param @w : tensor<3xf32>
  %u = tg.param @unused : tensor<5xf32>
  %e = tg.exp %u : tensor<5xf32>
  %0 = tg.reduce_sum %w {axes = array<i64>} : tensor<3xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----
// Operands broadcast by an elementwise op (or a gemm's c) get their gradient
// summed back to their shape by tg.sum_to.
// CHECK-LABEL: func.func @forward_backward
// CHECK-DAG:   %[[DB:.*]] = tg.sum_to %{{.*}} : tensor<2x3xf32> -> tensor<3xf32>
// CHECK-DAG:   %[[DS:.*]] = tg.sum_to %{{.*}} : tensor<2x3xf32> -> tensor<f32>
// CHECK-DAG:   %[[DC:.*]] = tg.sum_to %{{.*}} : tensor<2x3xf32> -> tensor<2x1xf32>
// CHECK:       return %{{.*}}, %[[DB]], %[[DS]], %[[DC]] : tensor<f32>, tensor<3xf32>, tensor<f32>, tensor<2x1xf32>
tg.parameter @b : tensor<3xf32> {source = "b"}
tg.parameter @s : tensor<f32> {source = "s"}
tg.parameter @c : tensor<2x1xf32> {source = "c"}
func.func @forward(%x: tensor<2x3xf32>, %y: tensor<2x2xf32>) -> tensor<f32> {
  %b = tg.param @b : tensor<3xf32>
  %s = tg.param @s : tensor<f32>
  %c = tg.param @c : tensor<2x1xf32>
  %0 = tg.add %x, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = tg.mul %0, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %2 = tg.gemm %y, %1, %c : (tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %3 = tg.reduce_sum %2 {axes = array<i64>} : tensor<2x3xf32> -> tensor<f32>
  return %3 : tensor<f32>
}

// -----
// A layer norm without statistics is rebuilt with them (mean and inverse
// standard deviation, f32) in the gradient function, and its gradient reads
// them.
// CHECK-LABEL: func.func @forward(
// CHECK:       tg.layer_norm %{{.*}} -> tensor<2x4xf32>
// CHECK-LABEL: func.func @forward_backward
// CHECK:       %{{.*}}, %[[S:.*]]:2 = tg.layer_norm %arg0, %g, %b {{.*}} -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
// CHECK:       %{{.*}}, %[[DG:.*]], %[[DB:.*]] = tg.layer_norm_grad %{{.*}}, %arg0, %g, %[[S]]#0, %[[S]]#1 {axis = 1 : i64}
// CHECK:       return %{{.*}}, %[[DG]], %[[DB]]
tg.parameter @g : tensor<4xf32> {source = "g"}
tg.parameter @b : tensor<4xf32> {source = "b"}
func.func @forward(%x: tensor<2x4xf32>) -> tensor<f32> {
  %g = tg.param @g : tensor<4xf32>
  %b = tg.param @b : tensor<4xf32>
  %0 = tg.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = tg.reduce_sum %0 {axes = array<i64>} : tensor<2x4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----
// Values that depend on no parameter (here the data input's chain through
// tanh and exp) get no gradient ops: only d loss / d w = grad * exp(tanh(x)).
// CHECK-LABEL: func.func @forward_backward
// CHECK:       %[[E:[0-9]+]] = tg.exp %
// CHECK:       tg.reduce_sum
// CHECK-NOT:   tg.tanh
// CHECK-NOT:   tg.sub
// CHECK-NOT:   tg.exp %
// CHECK:       %[[DW:[0-9]+]] = tg.mul %{{[0-9]+}}, %[[E]]
// CHECK-NOT:   tg.mul
// CHECK:       return %{{.*}}, %[[DW]]
tg.parameter @w : tensor<3xf32> {source = "w"}
func.func @forward(%x: tensor<3xf32>) -> tensor<f32> {
  %w = tg.param @w : tensor<3xf32>
  %t = tg.tanh %x : tensor<3xf32>
  %e = tg.exp %t : tensor<3xf32>
  %m = tg.mul %e, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %l = tg.reduce_sum %m {axes = array<i64>} : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----
// The function must return a scalar loss first; a vector is an error.
// ERR: error: tg-autodiff: @forward must return a floating-point scalar loss as its first result
tg.parameter @w : tensor<3xf32> {source = "w"}
// expected-error @+1 {{tg-autodiff: @forward must return a floating-point scalar loss as its first result}}
func.func @forward() -> tensor<3xf32> {
  %w = tg.param @w : tensor<3xf32>
  return %w : tensor<3xf32>
}

// -----
// So is a loss that is not a tensor (this used to crash the pass).
// ERR: error: tg-autodiff: @forward must return a floating-point scalar loss as its first result
// expected-error @+1 {{tg-autodiff: @forward must return a floating-point scalar loss as its first result}}
func.func @forward(%a: f32) -> f32 {
  return %a : f32
}

// -----
// A weight read transposed (tg-fold-transposes): y = x · wᵀ, so dx = g · w
// and dw = gᵀ · x with the batch folded into the rows, both on w as it is.
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[Y:[0-9]+]] = tg.matmul %arg0, %w {transB} : (tensor<2x3x8xf32>, tensor<16x8xf32>) -> tensor<2x3x16xf32>
// CHECK-DAG: %[[X:[0-9]+]] = tg.reshape %arg0 : tensor<2x3x8xf32> -> tensor<6x8xf32>
// CHECK-DAG: %[[G:[0-9]+]] = tg.reshape %{{[0-9]+}} : tensor<2x3x16xf32> -> tensor<6x16xf32>
// CHECK: %[[DW:[0-9]+]] = tg.matmul %[[G]], %[[X]] {transA} : (tensor<6x16xf32>, tensor<6x8xf32>) -> tensor<16x8xf32>
// CHECK: return %{{.*}}, %[[DW]]
tg.parameter @w : tensor<16x8xf32> {source = "w"}
func.func @forward(%x: tensor<2x3x8xf32>) -> tensor<f32> {
  %w = tg.param @w : tensor<16x8xf32>
  %y = tg.matmul %x, %w {transB} : (tensor<2x3x8xf32>, tensor<16x8xf32>) -> tensor<2x3x16xf32>
  %l = tg.reduce_sum %y {axes = array<i64>} : tensor<2x3x16xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----
// Packed attention (q, k and v one projection) has one gradient, the packed
// value's, which flows back through the projection's reshape to the weight.
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[O:.*]], %[[L:.*]] = tg.attention %[[P:.*]], %[[P]], %[[P]] {bthd, causal, packed, scale = 5.000000e-01 : f32}
// CHECK: %[[G:.*]] = tg.attention_grad %[[P]], %[[P]], %[[P]], %[[O]], %[[L]], %{{.*}} {bthd, causal, packed, scale = 5.000000e-01 : f32} : {{.*}} -> tensor<1x4x6x8xf32>
// CHECK: tg.reshape %[[G]] : tensor<1x4x6x8xf32> -> tensor<1x4x48xf32>
// CHECK: return %{{.*}}, %{{.*}} : tensor<f32>, tensor<16x48xf32>
tg.parameter @w : tensor<16x48xf32> {source = "w"}
func.func @forward(%x: tensor<1x4x16xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w = tg.param @w : tensor<16x48xf32>
  %qkv = tg.matmul %x, %w : (tensor<1x4x16xf32>, tensor<16x48xf32>) -> tensor<1x4x48xf32>
  %p = tg.reshape %qkv : tensor<1x4x48xf32> -> tensor<1x4x6x8xf32>
  %o, %lse = tg.attention %p, %p, %p {bthd, causal, packed, scale = 0.5 : f32} : (tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) -> (tensor<1x4x2x8xf32>, tensor<1x2x4xf32>)
  %l = tg.reduce_sum %o {axes = array<i64>} : tensor<1x4x2x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
