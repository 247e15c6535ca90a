// RUN: hmcc-opt %s -tg-legalize-cpu-types | FileCheck %s
// Arithmetic on types the CPU kernels lack is done in i64 (integers) or f32
// (floats, transcendental ops, mixed-type pow) between casts; f32 and i64
// arithmetic is left alone.

// CHECK-LABEL: func.func @small_ints
func.func @small_ints(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  // CHECK: %[[A:.*]] = tg.cast %arg0 : tensor<4xui8> to tensor<4xi64>
  // CHECK: %[[B:.*]] = tg.cast %arg1 : tensor<4xui8> to tensor<4xi64>
  // CHECK: %[[S:.*]] = tg.add %[[A]], %[[B]] : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  // CHECK: tg.cast %[[S]] : tensor<4xi64> to tensor<4xui8>
  %0 = tg.add %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// CHECK-LABEL: func.func @mixed_pow
func.func @mixed_pow(%a: tensor<4xf32>, %b: tensor<4xi64>) -> tensor<4xf32> {
  // CHECK: %[[E:.*]] = tg.cast %arg1 : tensor<4xi64> to tensor<4xf32>
  // CHECK: tg.pow %arg0, %[[E]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %0 = tg.pow %a, %b : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @double_exp
func.func @double_exp(%a: tensor<4xf64>) -> tensor<4xf64> {
  // CHECK: tg.cast %arg0 : tensor<4xf64> to tensor<4xf32>
  // CHECK: tg.exp %{{.*}} : tensor<4xf32>
  // CHECK: tg.cast %{{.*}} : tensor<4xf32> to tensor<4xf64>
  %0 = tg.exp %a : tensor<4xf64>
  return %0 : tensor<4xf64>
}

// CHECK-LABEL: func.func @untouched
func.func @untouched(%a: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  // CHECK-NOT: tg.cast
  %0 = tg.exp %a : tensor<4xf32>
  %1 = tg.mul %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0, %1 : tensor<4xf32>, tensor<4xi64>
}
