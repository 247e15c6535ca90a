// RUN: hmcc-opt %s -hm-set-constants="placement=arena" -hm-place-buffers -hm-verify-memory | FileCheck %s
// RUN: hmcc-opt %s -hm-set-constants -hm-place-buffers | FileCheck %s --check-prefix=STATIC
// RUN: not hmcc-opt %s -hm-set-constants="placement=gpu" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: echo 'module attributes {hm.constants = "gpu"} {}' | not hmcc-opt -hm-place-buffers 2>&1 | FileCheck %s --check-prefix=BADATTR

// hm.constants = "arena" (hm-set-constants; a GPU reads no host memory):
// every constant, small ones and int64 ones too, is placed in the arena
// like any value, and a returned constant needs no copy of its own;
// "static" leaves the small ones as the program's static data.
// STATIC-LABEL: func.func @consts
// STATIC: %[[C:.*]] = tg.constant dense<2.000000e+00>
// STATIC-NOT: hm.place %[[C]]
// STATIC: tg.identity %[[C]]
// CHECK-LABEL: func.func @consts
// CHECK: %[[C:.*]] = tg.constant dense<2.000000e+00>
// CHECK-NEXT: hm.place %[[C]] in @arena
// CHECK: %[[I:.*]] = tg.constant dense<[0, 1, 2, 3]>
// CHECK-NEXT: hm.place %[[I]] in @arena
// CHECK-NOT: tg.identity
// CHECK: return %{{.*}}, %[[C]]
// BAD: hm-set-constants: placement must be static or arena, not 'gpu'
// BADATTR: hm.constants must be "static" or "arena" on the module
func.func @consts(%x: tensor<4xf32> {tg.input = "x"}) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = tg.constant dense<2.0> : tensor<4xf32>
  %i = tg.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %y = tg.mul %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g = tg.gather %y, %i {axis = 0 : i64} : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %g, %c : tensor<4xf32>, tensor<4xf32>
}
