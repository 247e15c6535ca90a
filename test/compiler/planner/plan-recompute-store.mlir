// RUN: hmcc-opt %s -tg-autodiff -tg-select-entries=functions=forward_backward -plan-recompute="force=2:store" -hm-place-buffers -hm-verify-memory | FileCheck %s
// RUN: not hmcc-opt %s -tg-autodiff -tg-select-entries=functions=forward_backward -plan-recompute="force=1:store" 2>&1 | FileCheck %s --check-prefix=NOTHING
// RUN: not hmcc-opt %s -tg-autodiff -tg-select-entries=functions=forward_backward -plan-recompute="force=2:store,1" 2>&1 | FileCheck %s --check-prefix=ORDER
// plan-recompute's stored stages: a kept stage's saved values go to the host after the forward and come back for the backward.

// Stage 2 (exp, mul) saves exp's result %[[E]] for the backward: a copy
// homed on the host right after its last forward reader (which frees it on
// the device), a copy back just before its first backward reader; the
// backward reads only what came back. The chain records "store".
// CHECK: decision = "store"
// CHECK: hm.arena @host tier "host" size 128
// CHECK: %[[E:.*]] = tg.exp %{{.*}} : tensor<4x8xf32>
// CHECK: %[[M:.*]] = tg.mul %[[E]], %{{.*}} : (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT: hm.place %[[M]] in @arena
// CHECK-NEXT: %[[H:.*]] = tg.identity %[[E]] {hm.home = "host"}
// CHECK-NEXT: hm.place %[[H]] in @host at 0
// CHECK-NEXT: hm.release %[[E]]
// CHECK-NOT: %[[E]]{{[ ,:]}}
// CHECK: %[[B:.*]] = tg.identity %[[H]] : tensor<4x8xf32>
// CHECK-NOT: %[[E]]{{[ ,:]}}
// CHECK: tg.mul %{{.*}}, %[[B]]

// Stage 1 (the first matmul) saves nothing but its cut.
// NOTHING: error: plan-recompute: force (hmcc --recompute): stage 1 has nothing to store (the backward reads nothing it computes)
// ORDER: error: plan-recompute: force (hmcc --recompute): segment '1' is not a range of stages in order within 1..4
tg.parameter @w1 : tensor<8x8xf32> {source = "w1"}
tg.parameter @w2 : tensor<8x8xf32> {source = "w2"}
func.func @forward(%x: tensor<4x8xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<8x8xf32>
  %w2 = tg.param @w2 : tensor<8x8xf32>
  %0 = tg.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = tg.exp %0 : tensor<4x8xf32>
  %2 = tg.mul %1, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = tg.matmul %2, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %4 = tg.reduce_sum %3 {axes = array<i64>} : tensor<4x8xf32> -> tensor<f32>
  return %4 : tensor<f32>
}
