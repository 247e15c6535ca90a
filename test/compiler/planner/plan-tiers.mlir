// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=w1" | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -hm-place-buffers -hm-verify-memory | FileCheck %s --check-prefix=PLACED
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="vram=3000" -plan-recompute="vram=3000" -hm-place-buffers -hm-verify-memory | FileCheck %s --check-prefix=ONE
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="vram=2000" -plan-recompute="vram=2000" -hm-place-buffers -hm-verify-memory | FileCheck %s --check-prefix=TWO
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="vram=1M" | FileCheck %s --check-prefix=FITS
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=w3" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: hmcc-opt %s -tg-autodiff -tg-select-entries=functions=forward_backward -plan-tiers="force=all" | FileCheck %s --check-prefix=NOOPT
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=w1:3" | FileCheck %s --check-prefix=SPLIT
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=w1:3" -hm-place-buffers -hm-verify-memory | FileCheck %s --check-prefix=SPLITPLACED
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=w1:8" 2>&1 | FileCheck %s --check-prefix=SPLITBAD
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=w1:2,w2:3" 2>&1 | FileCheck %s --check-prefix=SPLITTWO
// plan-tiers: parameters homed on the host with their states; fetches before readers, gradients copied to the host, updates on the host; the choice under a budget.

// Forced @w1: it and its states are homed on the host; its one forward
// reader reads a device copy made just before; its complete gradient is
// copied to the host and the update (on the host) reads that copy, while
// its sum of squares for the norm reads it on the device. @w2 is untouched.
// CHECK: tg.parameter @w1 : tensor<8x16xf32> {hm.home = "host", source = "w1"}
// CHECK: tg.parameter @w2 : tensor<16x4xf32> {source = "w2"}
// CHECK: tg.state @w1.exp_avg : tensor<8x16xf32> {hm.home = "host", kind = "exp_avg", param = @w1}
// CHECK: tg.state @w1.exp_avg_sq : tensor<8x16xf32> {hm.home = "host", kind = "exp_avg_sq", param = @w1}
// CHECK: tg.state @w2.exp_avg : tensor<16x4xf32> {kind = "exp_avg", param = @w2}
// CHECK: %[[W1:.*]] = tg.param @w1
// CHECK: %[[W2:.*]] = tg.param @w2
// CHECK-NEXT: %[[F:.*]] = tg.identity %[[W1]] : tensor<8x16xf32>
// CHECK-NEXT: tg.matmul %arg0, %[[F]]
// CHECK: tg.matmul %{{.*}}, %[[W2]] :
// CHECK: %[[G:.*]] = tg.matmul %arg0, %{{.*}} {transA} : (tensor<4x8xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %[[GH:.*]] = tg.identity %[[G]] {hm.home = "host"} : tensor<8x16xf32>
// CHECK-NEXT: %[[S:.*]] = tg.sum_squares %[[G]], %{{.*}} :
// CHECK-NEXT: tg.norm_of_sum %[[S]]{{$}}
// CHECK-NEXT: tg.adamw_update @w1, %[[GH]], {{.*}}hm.home = "host"
// CHECK-NEXT: tg.adamw_update @w2, %{{[0-9]+}}, {{.*}}weight_decay = {{[^,]*}}} : tensor<16x4xf32>

// Placed: a host arena beside the device's; the host tensors at offsets in
// it, the gradient's host copy placed there too.
// PLACED: hm.arena @arena tier "device" size 1280
// PLACED: hm.arena @host tier "host" size 3072
// PLACED: tg.parameter @w1 : tensor<8x16xf32> {hm.home = "host", hm.offset = 0 : i64, source = "w1"}
// PLACED: tg.state @w2.exp_avg_sq : tensor<16x4xf32> {hm.home = "host", hm.offset = 2048 : i64
// PLACED: %[[GH:.*]] = tg.identity %{{.*}} {hm.home = "host"} : tensor<8x16xf32>
// PLACED-NEXT: hm.place %[[GH]] in @host at

// Under a budget: unplanned the step needs 3712 bytes. At 3000 the larger
// parameter (@w1, 512 B) moves to the host and that fits; at 2000 both do.
// ONE: hm.arena @arena tier "device" size 2176
// ONE: tg.parameter @w1 : tensor<8x16xf32> {hm.home = "host"
// ONE: tg.parameter @w2 : tensor<16x4xf32> {hm.offset
// TWO: hm.arena @arena tier "device" size 1280
// TWO: tg.parameter @w1 : tensor<8x16xf32> {hm.home = "host"
// TWO: tg.parameter @w2 : tensor<16x4xf32> {hm.home = "host"
// FITS-NOT: hm.home

// BAD: error: plan-tiers: force (hmcc --host-params): 'w3' is not a parameter

// Forced w1:3: the last 3 of @w1's 8 rows on the host, the first 5 on the
// device, as two pieces naming their whole, with their states split alike;
// the reader reads their concatenation (the host piece fetched just
// before), the norm reads the whole gradient, and each piece's update reads
// its rows of it (the host piece's copied to the host).
// SPLIT: tg.parameter @"w1#0" : tensor<5x16xf32> {hm.whole = "w1", source = "w1"}
// SPLIT-NEXT: tg.parameter @"w1#1" : tensor<3x16xf32> {hm.home = "host", hm.whole = "w1", source = "w1"}
// SPLIT: tg.state @"w1#0.exp_avg" : tensor<5x16xf32> {hm.whole = "w1.exp_avg", kind = "exp_avg", param = @"w1#0"}
// SPLIT-NEXT: tg.state @"w1#1.exp_avg" : tensor<3x16xf32> {hm.home = "host", hm.whole = "w1.exp_avg", kind = "exp_avg", param = @"w1#1"}
// SPLIT: %[[P0:.*]] = tg.param @"w1#0" : tensor<5x16xf32>
// SPLIT-NEXT: %[[P1:.*]] = tg.param @"w1#1" : tensor<3x16xf32>
// SPLIT-NEXT: %[[F:.*]] = tg.identity %[[P1]] : tensor<3x16xf32>
// SPLIT-NEXT: %[[C:.*]] = tg.concat %[[P0]], %[[F]] {axis = 0 : i64} : (tensor<5x16xf32>, tensor<3x16xf32>) -> tensor<8x16xf32>
// SPLIT-NEXT: tg.matmul %arg0, %[[C]]
// SPLIT: %[[G:.*]] = tg.matmul %arg0, %{{.*}} {transA} : (tensor<4x8xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
// SPLIT-NEXT: tg.sum_squares %[[G]], %{{.*}} : tensor<8x16xf32>
// SPLIT: %[[G0:.*]] = tg.slice %[[G]] {axes = array<i64: 0>, ends = array<i64: 5>, starts = array<i64: 0>, steps = array<i64: 1>}
// SPLIT-NEXT: tg.adamw_update @"w1#0", %[[G0]], {{.*}}exp_avg = @"w1#0.exp_avg", exp_avg_sq = @"w1#0.exp_avg_sq"
// SPLIT-NEXT: %[[G1:.*]] = tg.slice %[[G]] {axes = array<i64: 0>, ends = array<i64: 8>, starts = array<i64: 5>, steps = array<i64: 1>}
// SPLIT-NEXT: %[[H:.*]] = tg.identity %[[G1]] {hm.home = "host"}
// SPLIT-NEXT: tg.adamw_update @"w1#1", %[[H]], {{.*}}hm.home = "host"
// SPLITPLACED: tg.parameter @"w1#0" : tensor<5x16xf32> {hm.offset = {{[0-9]+}} : i64, hm.whole = "w1"
// SPLITPLACED: tg.parameter @"w1#1" : tensor<3x16xf32> {hm.home = "host", hm.offset = 0 : i64, hm.whole = "w1"
// SPLITBAD: error: plan-tiers: force (hmcc --host-params): cannot home the last 8 rows of 'w1' on the host: it has 8 rows (all of it: give 'w1' alone)
// SPLITTWO: error: plan-tiers: force (hmcc --host-params): 'w2:3': NAME:ROWS takes a count of rows, for one parameter

// Without hmcc's optimizer there is no update to run on the host: nothing moves.
// NOOPT-NOT: hm.home
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
