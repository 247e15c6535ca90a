// RUN: hmcc-opt %s -tg-fold-rounding | FileCheck %s
// RUN: hmcc-opt %s -tg-fold-rounding | hmcc-opt -tg-fold-rounding | FileCheck %s

// A layer norm, a fused program and a cross-entropy gradient whose only
// reader is a nearest-even cast to bf16 write bf16 themselves and the casts
// go; the layer norm's statistics stay f32.
// CHECK-LABEL: func.func @folded
// CHECK:      %[[N:.*]], %{{.*}}:2 = tg.layer_norm %arg0, %arg1 {{.*}} -> (tensor<4x8xbf16>, tensor<4x1xf32>, tensor<4x1xf32>)
// CHECK-NEXT: %[[F:.*]] = tg.fused %arg0, %arg1 {{.*}} -> tensor<4x8xbf16>
// CHECK-NEXT: %[[G:.*]] = tg.softmax_cross_entropy_loss_grad %arg2, %arg0, %arg3 {{.*}} -> tensor<4x8xbf16>
// CHECK-NOT:  tg.cast
// CHECK:      tg.matmul %[[N]], %[[F]] {transA} : (tensor<4x8xbf16>, tensor<4x8xbf16>)
// CHECK-NEXT: tg.matmul %[[G]], %[[F]] {transA} : (tensor<4x8xbf16>, tensor<4x8xbf16>)
func.func @folded(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %d: tensor<f32>, %t: tensor<4xi64>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %n, %mean, %rstd = tg.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %f = tg.fused %x, %g {ops = ["add", "tanh"], args = array<i64: 0, 1, -1, 2, -1, -1>} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %s = tg.softmax_cross_entropy_loss_grad %d, %x, %t : (tensor<f32>, tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  %n16 = tg.cast %n {nearest_even} : tensor<4x8xf32> to tensor<4x8xbf16>
  %f16 = tg.cast %f {nearest_even} : tensor<4x8xf32> to tensor<4x8xbf16>
  %s16 = tg.cast %s {nearest_even} : tensor<4x8xf32> to tensor<4x8xbf16>
  %a = tg.matmul %n16, %f16 {transA} : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<8x8xf32>
  %b = tg.matmul %s16, %f16 {transA} : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<8x8xf32>
  return %a, %b : tensor<8x8xf32>, tensor<8x8xf32>
}

// What stays: a value something else reads too (the f32 tensor is still
// needed), a truncating cast (the kernels round to nearest even), and the
// cast of an op whose kernel writes f32 only (a matmul).
// CHECK-LABEL: func.func @kept
// CHECK:      %[[F:.*]] = tg.fused {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: %[[N:.*]] = tg.layer_norm {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: %[[M:.*]] = tg.matmul {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: tg.cast %[[F]] {nearest_even}
// CHECK-NEXT: tg.cast %[[N]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: tg.cast %[[M]] {nearest_even}
func.func @kept(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xbf16>) {
  %f = tg.fused %x {ops = ["neg"], args = array<i64: 0, -1, -1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = tg.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %m = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %f16 = tg.cast %f {nearest_even} : tensor<4x8xf32> to tensor<4x8xbf16>
  %n16 = tg.cast %n : tensor<4x8xf32> to tensor<4x8xbf16>
  %m16 = tg.cast %m {nearest_even} : tensor<4x8xf32> to tensor<4x8xbf16>
  return %f16, %f, %n16, %m16 : tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xbf16>
}
