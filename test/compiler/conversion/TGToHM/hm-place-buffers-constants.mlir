// RUN: hmcc-opt %s -hm-place-buffers="constants=arena" -hm-verify-memory | FileCheck %s
// RUN: not hmcc-opt %s -hm-place-buffers="constants=gpu" 2>&1 | FileCheck %s --check-prefix=BAD

// constants=arena (a GPU reads no host memory): every constant, small
// ones and int64 ones too, is placed in the arena like any value, and a
// returned constant needs no copy of its own.
// CHECK-LABEL: func.func @consts
// CHECK: %[[C:.*]] = tg.constant dense<2.000000e+00>
// CHECK-NEXT: hm.place %[[C]] in @arena
// CHECK: %[[I:.*]] = tg.constant dense<[0, 1, 2, 3]>
// CHECK-NEXT: hm.place %[[I]] in @arena
// CHECK-NOT: tg.identity
// CHECK: return %{{.*}}, %[[C]]
// BAD: hm-place-buffers: constants must be static or arena, not 'gpu'
func.func @consts(%x: tensor<4xf32> {tg.input = "x"}) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = tg.constant dense<2.0> : tensor<4xf32>
  %i = tg.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %y = tg.mul %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g = tg.gather %y, %i {axis = 0 : i64} : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %g, %c : tensor<4xf32>, tensor<4xf32>
}
