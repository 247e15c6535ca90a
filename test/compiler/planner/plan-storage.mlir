// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="force=w1" -hm-place-buffers -plan-staging -plan-streams -hm-verify-memory -hm-verify-streams | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="ram=1M nvme=1G" -hm-place-buffers -plan-staging | FileCheck %s --check-prefix=FITS
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="ram=3071 nvme=1G" -hm-place-buffers -plan-staging -hm-check-budget="ram=3071 nvme=1G" 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="ram=3071" -hm-place-buffers | FileCheck %s --check-prefix=NONVME
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="force=w3" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not hmcc-opt %s -plan-storage="ram=1x nvme=1G" 2>&1 | FileCheck %s --check-prefix=BADRAM
// plan-storage homes optimizer states in storage past --ram; plan-staging updates them through two host staging buffers.

// @w1's states in a storage arena, in whole 4096-byte blocks; @w2's stay on
// the host. The update reads them from a staging buffer at the end of the
// host arena (page-aligned): staged in before it (the update waits for the
// reads), written back after it (the write-backs wait for the update).
// CHECK: hm.arena @host tier "host" size 20480
// CHECK: hm.arena @storage tier "storage" size 8192
// CHECK: tg.state @w1.exp_avg : tensor<8x16xf32> {hm.home = "storage", hm.offset = 0 : i64
// CHECK: tg.state @w1.exp_avg_sq : tensor<8x16xf32> {hm.home = "storage", hm.offset = 4096 : i64
// CHECK: tg.state @w2.exp_avg : tensor<16x4xf32> {hm.home = "host"
// CHECK: hm.stage "in" @w1.exp_avg at 4096 : tensor<8x16xf32>
// CHECK-NEXT: hm.stage "in" @w1.exp_avg_sq at 8192 {hm.event = [[IN:[0-9]+]] : i64}
// CHECK-NEXT: tg.adamw_update @w1, {{.*}}hm.event = [[UP:[0-9]+]] : i64, hm.home = "host", hm.staged = {w1.exp_avg = 4096 : i64, w1.exp_avg_sq = 8192 : i64}, hm.wait = array<i64: [[IN]], {{[0-9]+}}>
// CHECK-NEXT: hm.stage "out" @w1.exp_avg_sq at 8192 {hm.wait = array<i64: [[UP]]>}
// CHECK-NEXT: hm.stage "out" @w1.exp_avg at 4096 :
// CHECK: tg.adamw_update @w2,
// CHECK-NOT: hm.staged

// A host budget the host arena meets: nothing moves.
// FITS-NOT: storage

// Too small even with every state in storage, which would make the host
// arena larger (the staging buffers are whole pages): nothing moves, and the
// budget check says what the host arena holds.
// SMALL-NOT: hm.stage
// SMALL: error: the program does not fit --ram 3.00 KiB: it needs 3.00 KiB of host memory (parameters 768 B, optimizer states 1.50 KiB, gradients and copies 768 B at their peak); moving optimizer states and parameters to storage (--nvme) does not bring it under the budget

// Without storage nothing can move.
// NONVME-NOT: storage

// BADRAM: error: plan-storage: ram: invalid size '1x': unknown unit 'x'
// BAD: error: plan-storage: force: 'w3' is not a parameter on the host with optimizer states
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
