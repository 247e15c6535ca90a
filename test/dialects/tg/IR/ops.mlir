// RUN: hmcc-opt %s | FileCheck %s
// RUN: hmcc-opt %s | hmcc-opt | FileCheck %s
// RUN: hmcc-opt %s -mlir-print-op-generic | hmcc-opt | FileCheck %s
// Every tg op parses, verifies and prints back in its custom form (twice, and
// through the generic form).

// CHECK: tg.parameter @fc.weight : tensor<4x3xf32> {source = "fc.weight"}
tg.parameter @"fc.weight" : tensor<4x3xf32> {source = "fc.weight"}
// CHECK: tg.parameter @ext : tensor<2xf32> {length = 8 : i64, location = "weights.bin", offset = 16 : i64, source = "ext"}
tg.parameter @ext : tensor<2xf32> {length = 8 : i64, location = "weights.bin", offset = 16 : i64, source = "ext"}

// A starting value that replaces the initializer's (ONNX training_info).
// CHECK: tg.parameter @count : tensor<i64> {initial_value = dense<3> : tensor<i64>, source = "count"}
tg.parameter @count : tensor<i64> {initial_value = dense<3> : tensor<i64>, source = "count"}

// CHECK-LABEL: func.func @assign
func.func @assign(%v: tensor<i64>) {
  // CHECK: tg.assign @count, %{{.*}} : tensor<i64>
  tg.assign @count, %v : tensor<i64>
  return
}

// CHECK-LABEL: func.func @leaves
func.func @leaves(%x: tensor<2x4xf32> {tg.input = "x"}) -> tensor<4x3xf32> {
  // CHECK: %fc.weight = tg.param @fc.weight : tensor<4x3xf32>
  %w = tg.param @"fc.weight" : tensor<4x3xf32>
  // CHECK: tg.constant dense<[2, 16]> : tensor<2xi64>
  %c = tg.constant dense<[2, 16]> : tensor<2xi64>
  return %w : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %i: tensor<2x3xi64>, %m: tensor<1x3xi1>) {
  // CHECK: tg.sqrt %{{.*}} : tensor<2x3xf32>
  %0 = tg.sqrt %x : tensor<2x3xf32>
  // CHECK: tg.reciprocal
  %1 = tg.reciprocal %x : tensor<2x3xf32>
  // CHECK: tg.neg %{{.*}} : tensor<2x3xi64>
  %2 = tg.neg %i : tensor<2x3xi64>
  // CHECK: tg.exp
  %3 = tg.exp %x : tensor<2x3xf32>
  // CHECK: tg.log
  %4 = tg.log %x : tensor<2x3xf32>
  // CHECK: tg.tanh
  %5 = tg.tanh %x : tensor<2x3xf32>
  // CHECK: tg.sigmoid
  %6 = tg.sigmoid %x : tensor<2x3xf32>
  // CHECK: tg.erf
  %7 = tg.erf %x : tensor<2x3xf32>
  // CHECK: tg.relu
  %8 = tg.relu %x : tensor<2x3xf32>
  // CHECK: tg.identity
  %9 = tg.identity %x : tensor<2x3xf32>
  // CHECK: tg.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %10 = tg.add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: tg.sub
  %11 = tg.sub %y, %x : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: tg.mul
  %12 = tg.mul %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: tg.div
  %13 = tg.div %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: tg.pow
  %14 = tg.pow %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: tg.equal {{.*}} -> tensor<2x3xi1>
  %15 = tg.equal %i, %i : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi1>
  // CHECK: tg.where {{.*}} : (tensor<1x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %16 = tg.where %m, %x, %y : (tensor<1x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: tg.cast %{{.*}} : tensor<2x3xi64> to tensor<2x3xf32>
  %17 = tg.cast %i : tensor<2x3xi64> to tensor<2x3xf32>
  // CHECK: tg.dropout %{{.*}} {ratio = 1.000000e-01 : f32, training} : tensor<2x3xf32> -> tensor<2x3xi1>
  %18, %19 = tg.dropout %x {ratio = 0.1 : f32, training} : tensor<2x3xf32> -> tensor<2x3xi1>
  return
}

// CHECK-LABEL: func.func @linear_algebra
func.func @linear_algebra(%a: tensor<2x16x32xf32>, %w: tensor<32x96xf32>, %v: tensor<32xf32>,
                          %x: tensor<8x16xf32>, %g: tensor<32x16xf32>, %b: tensor<32xf32>) {
  // CHECK: tg.matmul {{.*}} -> tensor<2x16x96xf32>
  %0 = tg.matmul %a, %w : (tensor<2x16x32xf32>, tensor<32x96xf32>) -> tensor<2x16x96xf32>
  // CHECK: tg.matmul {{.*}} -> tensor<2x16xf32>
  %1 = tg.matmul %a, %v : (tensor<2x16x32xf32>, tensor<32xf32>) -> tensor<2x16xf32>
  // CHECK: tg.gemm %{{.*}}, %{{.*}}, %{{.*}} {transB} : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %2 = tg.gemm %x, %g, %b {transB} : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  // CHECK: tg.gemm {{.*}}alpha = 5.000000e-01 : f32{{.*}} : (tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<16x16xf32>
  %3 = tg.gemm %g, %g {alpha = 0.5 : f32, transA} : (tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<16x16xf32>
  return
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<2x16x4x8xf32>, %m: tensor<1x1x32x32xi1>, %e: tensor<64x32xf32>,
                  %idx: tensor<2x16xi64>, %s: tensor<2xi64>, %r: tensor<i64>) {
  // CHECK: tg.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x8xf32> -> tensor<2x4x16x8xf32>
  %0 = tg.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x4x8xf32> -> tensor<2x4x16x8xf32>
  // CHECK: tg.reshape %{{.*}} : tensor<2x16x4x8xf32> -> tensor<32x32xf32>
  %1 = tg.reshape %x : tensor<2x16x4x8xf32> -> tensor<32x32xf32>
  // CHECK: tg.flatten %{{.*}} {axis = 2 : i64} : tensor<2x16x4x8xf32> -> tensor<32x32xf32>
  %2 = tg.flatten %x {axis = 2 : i64} : tensor<2x16x4x8xf32> -> tensor<32x32xf32>
  // CHECK: tg.squeeze %{{.*}} {axes = array<i64: 0, 1>} : tensor<1x1x32x32xi1> -> tensor<32x32xi1>
  %3 = tg.squeeze %m {axes = array<i64: 0, 1>} : tensor<1x1x32x32xi1> -> tensor<32x32xi1>
  // CHECK: tg.unsqueeze %{{.*}} {axes = array<i64: 0, 3>} : tensor<64x32xf32> -> tensor<1x64x32x1xf32>
  %4 = tg.unsqueeze %e {axes = array<i64: 0, 3>} : tensor<64x32xf32> -> tensor<1x64x32x1xf32>
  // CHECK: tg.concat %{{.*}}, %{{.*}} {axis = 3 : i64} : (tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>) -> tensor<2x16x4x16xf32>
  %5 = tg.concat %x, %x {axis = 3 : i64} : (tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>) -> tensor<2x16x4x16xf32>
  // CHECK: tg.split %{{.*}} {axis = 3 : i64, sizes = array<i64: 2, 6>} : tensor<2x16x4x8xf32> -> (tensor<2x16x4x2xf32>, tensor<2x16x4x6xf32>)
  %6:2 = tg.split %x {axis = 3 : i64, sizes = array<i64: 2, 6>} : tensor<2x16x4x8xf32> -> (tensor<2x16x4x2xf32>, tensor<2x16x4x6xf32>)
  // CHECK: tg.slice {{.*}} : tensor<1x1x32x32xi1> -> tensor<1x1x16x32xi1>
  %7 = tg.slice %m {axes = array<i64: 2>, ends = array<i64: 16>, starts = array<i64: 0>, steps = array<i64: 1>} : tensor<1x1x32x32xi1> -> tensor<1x1x16x32xi1>
  // CHECK: tg.slice {{.*}} : tensor<64x32xf32> -> tensor<64x16xf32>
  %8 = tg.slice %e {axes = array<i64: 1>, ends = array<i64: -1>, starts = array<i64: 31>, steps = array<i64: -2>} : tensor<64x32xf32> -> tensor<64x16xf32>
  // CHECK: tg.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<64x32xf32>, tensor<2x16xi64>) -> tensor<2x16x32xf32>
  %9 = tg.gather %e, %idx {axis = 0 : i64} : (tensor<64x32xf32>, tensor<2x16xi64>) -> tensor<2x16x32xf32>
  // CHECK: tg.expand %{{.*}} : tensor<1x1x32x32xi1> -> tensor<2x4x32x32xi1>
  %10 = tg.expand %m : tensor<1x1x32x32xi1> -> tensor<2x4x32x32xi1>
  // CHECK: tg.trilu %{{.*}} {k = 1 : i64, upper} : tensor<64x32xf32>
  %11 = tg.trilu %e {k = 1 : i64, upper} : tensor<64x32xf32>
  // CHECK: tg.shape %{{.*}} {end = 3 : i64, start = 1 : i64} : tensor<2x16x4x8xf32> -> tensor<2xi64>
  %12 = tg.shape %x {start = 1 : i64, end = 3 : i64} : tensor<2x16x4x8xf32> -> tensor<2xi64>
  // CHECK: tg.constant_of_shape %{{.*}} {value = 0.000000e+00 : f32} : tensor<2xi64> -> tensor<4x8xf32>
  %13 = tg.constant_of_shape %s {value = 0.0 : f32} : tensor<2xi64> -> tensor<4x8xf32>
  // CHECK: tg.range {{.*}} -> tensor<16xi64>
  %14 = tg.range %r, %r, %r : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<16xi64>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x16x32xf32>, %g: tensor<32xf32>, %logits: tensor<32x64xf32>,
                      %t: tensor<32xi64>, %w: tensor<64xf32>) {
  // CHECK: tg.reduce_mean %{{.*}} {axes = array<i64: 2>, keepdims} : tensor<2x16x32xf32> -> tensor<2x16x1xf32>
  %0 = tg.reduce_mean %x {axes = array<i64: 2>, keepdims} : tensor<2x16x32xf32> -> tensor<2x16x1xf32>
  // CHECK: tg.reduce_sum %{{.*}} {axes = array<i64: 0, 2>} : tensor<2x16x32xf32> -> tensor<16xf32>
  %1 = tg.reduce_sum %x {axes = array<i64: 0, 2>} : tensor<2x16x32xf32> -> tensor<16xf32>
  // CHECK: tg.reduce_max %{{.*}} {axes = array<i64>} : tensor<2x16x32xf32> -> tensor<f32>
  %2 = tg.reduce_max %x {axes = array<i64>} : tensor<2x16x32xf32> -> tensor<f32>
  // CHECK: tg.softmax %{{.*}} {axis = 2 : i64} : tensor<2x16x32xf32>
  %3 = tg.softmax %x {axis = 2 : i64} : tensor<2x16x32xf32>
  // CHECK: tg.log_softmax %{{.*}} {axis = 1 : i64} : tensor<2x16x32xf32>
  %4 = tg.log_softmax %x {axis = 1 : i64} : tensor<2x16x32xf32>
  // CHECK: tg.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  %5 = tg.layer_norm %x, %g, %g {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  // CHECK: tg.softmax_cross_entropy_loss %{{.*}}, %{{.*}} {ignore_index = -100 : i64} : (tensor<32x64xf32>, tensor<32xi64>) -> tensor<f32>
  %6 = tg.softmax_cross_entropy_loss %logits, %t {ignore_index = -100 : i64} : (tensor<32x64xf32>, tensor<32xi64>) -> tensor<f32>
  // CHECK: tg.softmax_cross_entropy_loss {{.*}} {reduction = "none"} : (tensor<32x64xf32>, tensor<32xi64>, tensor<64xf32>) -> tensor<32xf32>
  %7 = tg.softmax_cross_entropy_loss %logits, %t, %w {reduction = "none"} : (tensor<32x64xf32>, tensor<32xi64>, tensor<64xf32>) -> tensor<32xf32>
  // CHECK: tg.softmax_cross_entropy_loss {{.*}} -> (tensor<f32>, tensor<32x64xf32>)
  %8:2 = tg.softmax_cross_entropy_loss %logits, %t : (tensor<32x64xf32>, tensor<32xi64>) -> (tensor<f32>, tensor<32x64xf32>)
  // CHECK: tg.layer_norm {{.*}} -> (tensor<2x16x32xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
  %9:3 = tg.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x16x32xf32>, tensor<32xf32>) -> (tensor<2x16x32xf32>, tensor<2x16x1xf32>, tensor<2x16x1xf32>)
  return
}

// CHECK-LABEL: func.func @onnx_optimizers
func.func @onnx_optimizers(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>, %g: tensor<2xf32>, %v: tensor<2xf32>) {
  // CHECK: tg.onnx_optimizer %{{.*}} {epsilon = 9.99999974E-6 : f32, kind = "adagrad"} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  %0:2 = tg.onnx_optimizer %r, %t, %x, %g, %v {kind = "adagrad", epsilon = 1.0e-5 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  // CHECK: kind = "adam"
  %1:3 = tg.onnx_optimizer %r, %t, %x, %g, %v, %v {kind = "adam"} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  return
}

// Attention and its gradient over three tensors, and packed: q, k and v one
// (batch, seq, heads + 2 kv heads, head_dim) value with one gradient.
// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<1x2x4x8xf32>, %x: tensor<1x4x6x8xf32>, %g: tensor<1x4x2x8xf32>) {
  // CHECK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, scale = 5.000000e-01 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  %o, %lse = tg.attention %q, %q, %q {causal, scale = 0.5 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  // CHECK: tg.attention_grad {{.*}} -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  %dq, %dk, %dv = tg.attention_grad %q, %q, %q, %o, %lse, %o {causal, scale = 0.5 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  // CHECK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} {bthd, causal, packed, scale = 5.000000e-01 : f32} : (tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) -> (tensor<1x4x2x8xf32>, tensor<1x2x4xf32>)
  %po, %plse = tg.attention %x, %x, %x {bthd, causal, packed, scale = 0.5 : f32} : (tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) -> (tensor<1x4x2x8xf32>, tensor<1x2x4xf32>)
  // CHECK: tg.attention_grad {{.*}} {bthd, causal, packed, scale = 5.000000e-01 : f32} : {{.*}} -> tensor<1x4x6x8xf32>
  %dx = tg.attention_grad %x, %x, %x, %po, %plse, %g {bthd, causal, packed, scale = 0.5 : f32} : (tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>, tensor<1x4x2x8xf32>, tensor<1x2x4xf32>, tensor<1x4x2x8xf32>) -> tensor<1x4x6x8xf32>
  return
}
