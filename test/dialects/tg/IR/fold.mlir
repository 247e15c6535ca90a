// RUN: hmcc-opt %s -canonicalize | FileCheck %s
// tg.shape folds to a constant (shapes are static); tg.constant folds to its value.

// CHECK-LABEL: func.func @shape_folds
func.func @shape_folds(%x: tensor<2x16x32xf32>) -> tensor<2xi64> {
  // CHECK-NEXT: %[[C:.*]] = tg.constant dense<[16, 32]> : tensor<2xi64>
  // CHECK-NEXT: return %[[C]]
  %0 = tg.shape %x {start = 1 : i64, end = 3 : i64} : tensor<2x16x32xf32> -> tensor<2xi64>
  return %0 : tensor<2xi64>
}
