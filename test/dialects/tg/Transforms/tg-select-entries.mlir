// RUN: hmcc-opt %s -tg-select-entries="functions=train_step" | FileCheck %s
// RUN: not hmcc-opt %s -tg-select-entries="functions=nothing" 2>&1 | FileCheck %s --check-prefix=MISSING
// tg-select-entries keeps the exported functions and erases the stages before them.

// CHECK-NOT: func.func @forward(
// CHECK-NOT: func.func @forward_backward(
// CHECK: func.func @train_step(
// CHECK-NOT: func.func
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @forward_backward(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// A function the module lacks is an error naming it.
// MISSING: tg-select-entries: no function @nothing
