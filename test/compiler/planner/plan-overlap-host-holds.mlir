// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-overlap="vram=90000 device-profile=%S/Inputs/slow-link-and-host.json" | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-overlap="vram=100000 device-profile=%S/Inputs/slow-link-and-host.json" | FileCheck %s --check-prefix=ROOM
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-overlap="vram=90000 device-profile=%S/Inputs/fast-host-slow-copies.json" | FileCheck %s --check-prefix=COPY
// plan-overlap holds: an op that reads only the host arena (a host update reading its gradient's host copy) keeps its hold when the device-side ones do not fit.

// At 90000 bytes no fetch can move and no hold on device memory fits: the
// gradients' copies to the host hold nothing, but each host update holds the
// host copy it reads for as long as the slow host takes (so that the next
// gradient's copy is not placed over it and made to wait for the update).
// CHECK: tg.identity %{{[0-9]+}} {hm.home = "host"} : tensor<64x64xf32>
// CHECK-NEXT: tg.adamw_update @w2, {{.*}}hm.hold = {{[1-9][0-9]*}} : i64, hm.home = "host"
// CHECK: tg.identity %{{[0-9]+}} {hm.home = "host"} : tensor<64x64xf32>
// CHECK-NEXT: tg.adamw_update @w1, {{.*}}hm.hold = {{[1-9][0-9]*}} : i64, hm.home = "host"

// With room, every copy holds what it reads too.
// ROOM: tg.identity %{{[0-9]+}} {hm.hold = {{[1-9][0-9]*}} : i64, hm.home = "host"} : tensor<64x64xf32>
// ROOM: tg.adamw_update @w2, {{.*}}hm.hold = {{[1-9][0-9]*}} : i64, hm.home = "host"
// With a host that updates at once but copies that take a while, a host
// update holds its gradient's copy until the copy (which it waits for) and
// then the update end: @w2's, copied while the backward's last five ops run,
// holds past them (one op without the copy's time).
// COPY: tg.adamw_update @w2, {{.*}}hm.hold = 5 : i64, hm.home = "host"
// COPY: tg.adamw_update @w1, {{.*}}hm.hold = 2 : i64, hm.home = "host"
tg.parameter @w1 : tensor<64x64xf32> {source = "w1"}
tg.parameter @w2 : tensor<64x64xf32> {source = "w2"}
func.func @forward(%x: tensor<64x64xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<64x64xf32>
  %w2 = tg.param @w2 : tensor<64x64xf32>
  %0 = tg.matmul %x, %w1 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = tg.tanh %0 : tensor<64x64xf32>
  %2 = tg.matmul %1, %w2 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %3 = tg.tanh %2 : tensor<64x64xf32>
  %4 = tg.reduce_sum %3 {axes = array<i64>} : tensor<64x64xf32> -> tensor<f32>
  return %4 : tensor<f32>
}
