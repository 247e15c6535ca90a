// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-updates | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer="clip-norm=1.0" -tg-select-entries=functions=train_step -plan-updates | FileCheck %s --check-prefix=CLIP
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=w1" -plan-updates | FileCheck %s --check-prefix=HOST
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-updates -hm-place-buffers -hm-verify-memory | FileCheck %s --check-prefix=PLACED
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -hm-place-buffers | FileCheck %s --check-prefix=UNMOVED
// plan-updates: each update on the device right after its gradient and its parameter's last reader, none before what it reads, none on the host.

// @w2's update follows its gradient and the backward GEMM that reads @w2,
// before the backward of @w1 even starts; @w1's follows its gradient.
// CHECK: %[[W2:.*]] = tg.param @w2
// CHECK: tg.matmul %{{.*}}, %[[W2]] {transB}
// CHECK-NEXT: %[[G2:.*]] = tg.matmul %{{.*}} {transA} : (tensor<4x16xf32>, tensor<4x4xf32>) -> tensor<16x4xf32>
// CHECK-NEXT: tg.adamw_update @w2, %[[G2]],
// CHECK-NEXT: tg.sum_squares %[[G2]]
// CHECK: %[[G1:.*]] = tg.matmul %arg0, %{{.*}} {transA}
// CHECK-NEXT: tg.adamw_update @w1, %[[G1]],
// CHECK-NEXT: tg.sum_squares %[[G1]]

// With clipping, every update reads the coefficient of the whole norm: they
// stay after it.
// CLIP: tg.clip_coefficient
// CLIP: tg.adamw_update @w1
// CLIP: tg.adamw_update @w2

// An update on the host (plan-tiers) is plan-overlap's to move: it stays.
// HOST: tg.adamw_update @w2,
// HOST: tg.norm_of_sum
// HOST-NEXT: tg.adamw_update @w1, {{.*}}hm.home = "host"

// The gradients' bytes free earlier: a smaller arena than with the updates
// at the end.
// PLACED: hm.arena @arena tier "device" size 3456
// UNMOVED: hm.arena @arena tier "device" size 3712
tg.parameter @w1 : tensor<8x16xf32> {source = "w1"}
tg.parameter @w2 : tensor<16x4xf32> {source = "w2"}
func.func @forward(%x: tensor<4x8xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<8x16xf32>
  %w2 = tg.param @w2 : tensor<16x4xf32>
  %0 = tg.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = tg.tanh %0 : tensor<4x16xf32>
  %2 = tg.matmul %1, %w2 : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
  %3 = tg.reduce_sum %2 {axes = array<i64>} : tensor<4x4xf32> -> tensor<f32>
  return %3 : tensor<f32>
}
