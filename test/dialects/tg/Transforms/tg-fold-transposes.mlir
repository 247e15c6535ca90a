// RUN: hmcc-opt %s -split-input-file -tg-fold-transposes | FileCheck %s
// tg-fold-transposes: a matrix transposed on the right of a matmul is read transposed in place; other transposes stay.

// nn.Linear as exported: the weight is read with transB, the copy is gone.
// CHECK-LABEL: func.func @linear
// CHECK-NOT: tg.transpose
// CHECK: tg.matmul %arg0, %w {transB} : (tensor<2x3x8xf32>, tensor<16x8xf32>) -> tensor<2x3x16xf32>
tg.parameter @w : tensor<16x8xf32> {source = "w"}
func.func @linear(%x: tensor<2x3x8xf32>) -> tensor<2x3x16xf32> {
  %w = tg.param @w : tensor<16x8xf32>
  %t = tg.transpose %w {perm = array<i64: 1, 0>} : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = tg.matmul %x, %t : (tensor<2x3x8xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
  return %y : tensor<2x3x16xf32>
}

// -----
// A transpose with another reader stays for it; the matmul still reads the
// original.
// CHECK-LABEL: func.func @shared
// CHECK: %[[T:.*]] = tg.transpose %w
// CHECK: tg.matmul %arg0, %w {transB}
// CHECK: return {{.*}}%[[T]]
tg.parameter @w : tensor<16x8xf32> {source = "w"}
func.func @shared(%x: tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<8x16xf32>) {
  %w = tg.param @w : tensor<16x8xf32>
  %t = tg.transpose %w {perm = array<i64: 1, 0>} : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = tg.matmul %x, %t : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %y, %t : tensor<4x16xf32>, tensor<8x16xf32>
}

// -----
// Near misses: a transpose on the left, of a batch of matrices, or feeding a
// vector product stays as it is.
// CHECK-LABEL: func.func @left
// CHECK: tg.transpose
// CHECK: tg.matmul
// CHECK-NOT: transB
func.func @left(%a: tensor<8x4xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %t = tg.transpose %a {perm = array<i64: 1, 0>} : tensor<8x4xf32> -> tensor<4x8xf32>
  %y = tg.matmul %t, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----
// CHECK-LABEL: func.func @batched
// CHECK: tg.transpose
// CHECK-NOT: transB
func.func @batched(%a: tensor<2x4x8xf32>, %b: tensor<2x16x8xf32>) -> tensor<2x4x16xf32> {
  %t = tg.transpose %b {perm = array<i64: 0, 2, 1>} : tensor<2x16x8xf32> -> tensor<2x8x16xf32>
  %y = tg.matmul %a, %t : (tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
  return %y : tensor<2x4x16xf32>
}

// -----
// CHECK-LABEL: func.func @vector
// CHECK: tg.transpose
// CHECK-NOT: transB
func.func @vector(%v: tensor<8xf32>, %b: tensor<16x8xf32>) -> tensor<16xf32> {
  %t = tg.transpose %b {perm = array<i64: 1, 0>} : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = tg.matmul %v, %t : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}
