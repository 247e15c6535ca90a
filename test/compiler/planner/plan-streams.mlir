// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=w1" -hm-place-buffers -plan-streams -hm-verify-streams | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -hm-place-buffers -plan-streams -hm-verify-streams | FileCheck %s --check-prefix=ONE
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=w1" -hm-place-buffers -plan-streams=test-fault=bogus 2>&1 | FileCheck %s --check-prefix=BOGUS
// plan-streams: an event exactly where an op of one stream touches bytes of an op of another, none within a stream, none already implied.

// @w1 lives on the host. Its fetch (host_to_device) records an event the
// matmul reading the copy waits for; the gradient's copy to the host
// (device_to_host) waits for the matmul that computes it; its sum of
// squares (compute) reads the device gradient in program order, with no
// wait, and the host update (host_optimizer) reads the host copy after the
// copy. The update also overwrites @w1, which the fetch read: that order
// follows through the copy's wait, so it gets no wait of its own.
// CHECK: %[[F:.*]] = tg.identity %w1 {hm.event = [[FETCH:[0-9]+]] : i64} : tensor<8x16xf32>
// CHECK: tg.matmul %arg0, %[[F]] {hm.wait = array<i64: [[FETCH]]>}
// CHECK-NOT: hm.wait
// CHECK: %[[G:.*]] = tg.matmul %arg0, %{{.*}} {hm.event = [[GRAD:[0-9]+]] : i64, transA}
// CHECK: tg.identity %[[G]] {hm.event = [[COPY:[0-9]+]] : i64, hm.home = "host", hm.wait = array<i64: [[GRAD]]>}
// CHECK-NEXT: hm.place
// CHECK-NEXT: tg.sum_squares %[[G]], %{{.*}} :
// CHECK-NEXT: hm.place
// CHECK-NEXT: hm.release %{{[0-9]+}}, %[[G]] :
// CHECK-NEXT: tg.norm_of_sum
// CHECK-NOT: hm.wait
// CHECK: tg.adamw_update @w1, {{.*}}hm.home = "host", hm.wait = array<i64: [[COPY]]>
// CHECK-NOT: hm.wait
// CHECK: return

// Everything on the device: one stream, no events.
// ONE-NOT: hm.event
// ONE-NOT: hm.wait

// BOGUS: error: plan-streams: unknown test-fault 'bogus'
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
