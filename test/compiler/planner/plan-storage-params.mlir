// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="ram=600K nvme=1G chunk-size=4K" -hm-place-buffers -plan-staging="chunk-size=4K" -plan-streams -hm-verify-memory -hm-verify-streams | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="ram=900K nvme=1G chunk-size=4K" -hm-place-buffers | FileCheck %s --check-prefix=STATES
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="ram=400K nvme=1G chunk-size=4K" -hm-place-buffers -plan-staging="chunk-size=4K" -plan-streams -hm-verify-memory -hm-verify-streams | FileCheck %s --check-prefix=BOTH
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="force=all force-params=all device-profile=%S/Inputs/fast-storage.json" -hm-place-buffers -hm-verify-memory | FileCheck %s --check-prefix=FAST
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="ram=300K nvme=1G chunk-size=4K" -hm-place-buffers -plan-staging="chunk-size=4K" -hm-check-budget="ram=300K nvme=1G" 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="force-params=w2" -hm-place-buffers -plan-staging -plan-streams -hm-verify-memory -hm-verify-streams | FileCheck %s --check-prefix=FORCED
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=w2" -plan-storage="force-params=w1" 2>&1 | FileCheck %s --check-prefix=BAD
// plan-storage homes parameters in storage once every optimizer state is there and the host arena is still over --ram.

// 600K: every state in storage leaves the host arena over; @w1 (the
// largest) follows, and that is enough: @w2 stays on the host.
// CHECK: tg.parameter @w1 : tensor<256x256xf32> {hm.home = "storage"
// CHECK: tg.parameter @w2 : tensor<256x64xf32> {hm.home = "host"
// Each device copy of @w1 reads a host copy read from storage just before
// it, on a whole 4096-byte block; the device copy waits for that read.
// CHECK: %[[READ:[0-9]+]] = tg.identity %w1 {hm.event = [[E:[0-9]+]] : i64, hm.home = "host"}
// (@w2 takes the host arena's first 64 KiB.)
// CHECK-NEXT: hm.place %[[READ]] in @host at 65536 :
// CHECK-NEXT: %[[FETCH:[0-9]+]] = tg.identity %[[READ]] {{{.*}}hm.wait = array<i64: [[E]]>}
// CHECK-NEXT: hm.place %[[FETCH]] in @arena
// CHECK-NEXT: hm.release %[[READ]]
// Its update stages it chunk by chunk with its states and writes it back.
// CHECK: hm.stage "in" @w1 at {{[0-9]+}} {hm.chunk = array<i64: 0, 1024>
// CHECK-NEXT: tg.adamw_update @w1, {{.*}}hm.staged = {w1 = {{[0-9]+}} : i64, w1.exp_avg = {{[0-9]+}} : i64, w1.exp_avg_sq = {{[0-9]+}} : i64}
// CHECK: hm.stage "out" @w1 at {{[0-9]+}} {hm.chunk = array<i64: 0, 1024>
// CHECK: tg.adamw_update @w2,
// CHECK-NOT: w2 =
// CHECK-SAME: hm.staged = {w2.exp_avg

// 900K: the states in storage are enough; the parameters stay.
// STATES: tg.parameter @w1 : tensor<256x256xf32> {hm.home = "host"
// STATES: tg.parameter @w2 : tensor<256x64xf32> {hm.home = "host"
// STATES: tg.state @w1.exp_avg : {{.*}}hm.home = "storage"

// 400K: both parameters. The storage link reads one ahead: @w2's read
// follows the device copy of @w1 at once, before the compute that reads
// that copy. @w2's two device copies (forward, backward) are a few
// microseconds of compute apart on the cpu profile, less than reading it
// again would take: they share one read, which stays until the second.
// BOTH: tg.parameter @w1 : tensor<256x256xf32> {hm.home = "storage"
// BOTH: tg.parameter @w2 : tensor<256x64xf32> {hm.home = "storage"
// BOTH: %[[R1:[0-9]+]] = tg.identity %w1 {{{.*}}hm.home = "host"
// BOTH: %[[F1:[0-9]+]] = tg.identity %[[R1]]
// BOTH-NEXT: hm.place %[[F1]] in @arena
// BOTH-NEXT: hm.release %[[R1]]
// BOTH-NEXT: %[[R2:[0-9]+]] = tg.identity %w2 {{{.*}}hm.home = "host"
// BOTH: tg.matmul %arg0, %[[F1]]
// BOTH: tg.identity %[[R2]]
// BOTH-NOT: tg.identity %w2
// BOTH: tg.identity %[[R2]]
// BOTH-NEXT: hm.place
// BOTH-NEXT: hm.release %[[R2]]

// On a profile whose storage reads take no time, reading @w2 again is
// cheaper than keeping it: each device copy has a read of its own.
// FAST-COUNT-2: tg.identity %w2 {hm.home = "host"}

// 300K: the gradients' host copies alone take more; everything is in
// storage and the budget check names what the host arena holds.
// SMALL: error: the program does not fit --ram 300 KiB: it needs 344 KiB of host memory (parameters 0 B, optimizer states 0 B, gradients and copies 320 KiB at their peak, staging of stored tensors 24.0 KiB); moving optimizer states and parameters to storage (--nvme) does not bring it under the budget

// force-params: @w2 in storage with its states on the host; its update
// stages only the parameter.
// FORCED: tg.parameter @w2 : tensor<256x64xf32> {hm.home = "storage"
// FORCED: tg.state @w2.exp_avg : {{.*}}hm.home = "host"
// FORCED: tg.adamw_update @w2, {{.*}}hm.staged = {w2 = {{[0-9]+}} : i64}

// Only a parameter on the host can go.
// BAD: error: plan-storage: force-params: 'w1' is not a parameter on the host read only by its device copies
tg.parameter @w1 : tensor<256x256xf32> {source = "w1"}
tg.parameter @w2 : tensor<256x64xf32> {source = "w2"}
func.func @forward(%x: tensor<4x256xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<256x256xf32>
  %w2 = tg.param @w2 : tensor<256x64xf32>
  %0 = tg.matmul %x, %w1 : (tensor<4x256xf32>, tensor<256x256xf32>) -> tensor<4x256xf32>
  %1 = tg.tanh %0 : tensor<4x256xf32>
  %2 = tg.matmul %1, %w2 : (tensor<4x256xf32>, tensor<256x64xf32>) -> tensor<4x64xf32>
  %3 = tg.reduce_sum %2 {axes = array<i64>} : tensor<4x64xf32> -> tensor<f32>
  return %3 : tensor<f32>
}
