// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=w1 device-updates=w1" | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=w1 device-updates=w1" -hm-place-buffers -plan-staging -plan-streams -hm-verify-memory -hm-verify-streams | FileCheck %s --check-prefix=STAGED
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all device-updates=all" -hm-place-buffers -plan-staging -plan-streams -hm-verify-memory -hm-verify-streams | FileCheck %s --check-prefix=ALL
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=w1 device-updates=w2" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all device-updates=all" -plan-recompute="vram=3000" 2>&1 | FileCheck %s --check-prefix=BUDGET
// plan-tiers device-updates: a host parameter's update stays on the device, its gradient there; plan-staging copies the parameter and states to device buffers for it and back.

// @w1 and its states on the host, its fetch before its reader as ever; its
// gradient is not copied to the host: the update reads it on the device,
// right after it, and is not marked for the host. The staging buffers'
// bytes (two of @w1 and its two moments, 3 x 512 B) are on the module.
// CHECK: module attributes {hm.device_staging = 3072 : i64
// CHECK: tg.parameter @w1 : tensor<8x16xf32> {hm.home = "host", source = "w1"}
// CHECK: tg.state @w1.exp_avg : tensor<8x16xf32> {hm.home = "host", kind = "exp_avg", param = @w1}
// CHECK: %[[W1:.*]] = tg.param @w1
// CHECK: tg.identity %[[W1]] : tensor<8x16xf32>
// CHECK: %[[G:.*]] = tg.matmul %arg0, %{{.*}} {transA} : (tensor<4x8xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: tg.adamw_update @w1, %[[G]], {{.*}}weight_decay = {{[^,]*}}} : tensor<8x16xf32>
// CHECK-NOT: tg.identity %[[G]]

// Placed and staged: two buffers at the end of the device arena (2176 B
// before them); the moments and the parameter copied in on the
// host-to-device stream, the update waits for the last copy and reads them
// there (hm.staged), and they go back on the device-to-host stream after it.
// STAGED: hm.arena @arena tier "device" size 5248
// STAGED: hm.stage "in" @w1.exp_avg at 2176 : tensor<8x16xf32>
// STAGED-NEXT: hm.stage "in" @w1.exp_avg_sq at 2688 : tensor<8x16xf32>
// STAGED-NEXT: hm.stage "in" @w1 at 3200 {hm.event = [[IN:[0-9]+]] : i64} : tensor<8x16xf32>
// STAGED-NEXT: tg.adamw_update @w1, {{.*}}hm.event = [[UP:[0-9]+]] : i64, hm.staged = {w1 = 3200 : i64, w1.exp_avg = 2176 : i64, w1.exp_avg_sq = 2688 : i64}, hm.wait = array<i64: [[IN]]>
// STAGED-NEXT: hm.stage "out" @w1 at 3200 {hm.wait = array<i64: [[UP]]>} : tensor<8x16xf32>
// STAGED-NEXT: hm.stage "out" @w1.exp_avg_sq at 2688 : tensor<8x16xf32>
// STAGED-NEXT: hm.stage "out" @w1.exp_avg at 2176 : tensor<8x16xf32>

// Both on the host, both updated on the device: the second update's
// tensors in the other buffer, read in right after the first update.
// ALL: hm.stage "in" @w2.exp_avg at [[B0:[0-9]+]]
// ALL: tg.adamw_update @w2, {{.*}}hm.staged
// ALL-NEXT: hm.stage "in" @w1.exp_avg at [[B1:[0-9]+]]
// ALL: tg.adamw_update @w1, {{.*}}hm.staged
// ALL-NOT: hm.home = "host"}

// BAD: error: plan-tiers: device-updates (hmcc --device-updates): 'w2' is not a parameter homed on the host

// Under a budget, plan-recompute plans beside the staging buffers and says
// so when nothing fits.
// BUDGET: error: the program does not fit --vram 2.93 KiB: the smallest budget that fits is --vram {{[0-9]+}} ({{.*}}, 3.00 KiB of it staging buffers for device updates)
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
