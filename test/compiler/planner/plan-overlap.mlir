// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-overlap="force=max" | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-overlap="force=none" | FileCheck %s --check-prefix=NONE
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-overlap="force=max vram=1300" -hm-place-buffers | FileCheck %s --check-prefix=TIGHT
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-overlap="force=max" | FileCheck %s --check-prefix=DEVICE
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-overlap -hm-place-buffers -plan-streams -hm-verify-memory -hm-verify-streams | FileCheck %s --check-prefix=HOLD
// RUN: not hmcc-opt %s -plan-overlap="force=bogus" 2>&1 | FileCheck %s --check-prefix=BAD
// plan-overlap: host updates right after their gradient, fetches moved up by their distance within the budget.

// max: every fetch goes right below the parameter it copies; the update of
// @w2 runs right after its gradient reaches the host, before the backward
// of the first layer; @w1's after its own, and both before the norm.
// CHECK: %w1 = tg.param @w1
// CHECK-NEXT: tg.identity %w1
// CHECK-NEXT: %w2 = tg.param @w2
// CHECK-NEXT: tg.identity %w2
// CHECK-NEXT: tg.identity %w2
// CHECK-NEXT: tg.matmul
// CHECK: %[[G2:.*]] = tg.identity %{{.*}} {{{.*}}hm.home = "host"} : tensor<16x4xf32>
// CHECK-NEXT: tg.adamw_update @w2, %[[G2]]
// CHECK-NEXT: tg.sum_squares
// CHECK-NEXT: tg.mul
// CHECK: %[[G1:.*]] = tg.identity %{{.*}} {{{.*}}hm.home = "host"} : tensor<8x16xf32>
// CHECK-NEXT: tg.adamw_update @w1, %[[G1]]
// CHECK-NEXT: tg.sum_squares
// CHECK-NEXT: tg.norm_of_sum

// none: each fetch stays just before its reader, the updates after the norm.
// NONE: %[[F:.*]] = tg.identity %w1
// NONE-NEXT: tg.matmul %arg0, %[[F]]
// NONE: tg.norm_of_sum
// NONE-NEXT: tg.adamw_update

// A budget the fetches moved as far as they go would exceed (1600 bytes
// placed; 1280 where they stay): halving the distances does not fit; each
// fetch at its cost-model distance does, so @w2's moves above the tanh and
// the arena stays 1280.
// TIGHT: hm.arena @arena tier "device" size 1280
// TIGHT: %[[F:.*]] = tg.identity %w2
// TIGHT-NEXT: hm.place %[[F]]
// TIGHT-NEXT: tg.tanh
// TIGHT: tg.matmul %{{.*}}, %[[F]]

// Everything on the device: nothing to fetch, updates stay where they are.
// DEVICE: tg.norm_of_sum
// DEVICE-NEXT: tg.adamw_update

// Without a budget, each copy holds what it reads for the compute its own
// predicted time covers: the device gradient @w2's copy reads is released
// two ops after the copy (the host update, whose compute is none, and the
// gradient's sum of squares), not right after it, so that no op reuses its
// bytes while the copy may still run.
// HOLD: %[[G:[0-9]+]] = tg.matmul %{{[0-9]+}}, %{{[0-9]+}} {{{.*}}transA}
// HOLD: tg.identity %[[G]] {{{.*}}hm.hold = 2 : i64, hm.home = "host"{{.*}}} : tensor<16x4xf32>
// HOLD-NOT: hm.release %[[G]]
// HOLD: tg.adamw_update @w2
// HOLD-NOT: hm.release %[[G]]
// HOLD: tg.sum_squares %[[G]]
// HOLD-NEXT: hm.place
// HOLD-NEXT: hm.release {{.*}}%[[G]]

// BAD: error: plan-overlap: force must be none, max or fetches, not 'bogus'
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
