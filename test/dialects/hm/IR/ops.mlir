// RUN: hmcc-opt %s | FileCheck %s
// RUN: hmcc-opt %s | hmcc-opt | FileCheck %s
// RUN: hmcc-opt %s -mlir-print-op-generic | hmcc-opt | FileCheck %s
// Every hm op parses, verifies and prints back in its custom form.

// CHECK: hm.arena @arena tier "device" size 512
hm.arena @arena tier "device" size 512
// CHECK: tg.parameter @w : tensor<4xf32> {hm.offset = 0 : i64, source = "w"}
tg.parameter @w : tensor<4xf32> {hm.offset = 0 : i64, source = "w"}

// CHECK-LABEL: func.func @forward
// CHECK-SAME: {hm.offset = 64 : i64, tg.input = "x"}
func.func @forward(%x: tensor<4xf32> {hm.offset = 64 : i64, tg.input = "x"}) -> tensor<4xf32> {
  %w = tg.param @w : tensor<4xf32>
  %0 = tg.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hm.place %{{.*}} in @arena at 128 : tensor<4xf32>
  hm.place %0 in @arena at 128 : tensor<4xf32>
  %1 = tg.exp %0 : tensor<4xf32>
  hm.place %1 in @arena at 192 : tensor<4xf32>
  // CHECK: hm.release %{{.*}} : tensor<4xf32>
  hm.release %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
