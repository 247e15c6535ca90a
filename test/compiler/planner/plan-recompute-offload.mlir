// RUN: hmcc-opt %s -tg-autodiff -tg-select-entries=functions=forward_backward -plan-recompute="force=4-6:offload" -hm-place-buffers -hm-verify-memory | FileCheck %s
// RUN: not hmcc-opt %s -tg-autodiff -tg-select-entries=functions=forward_backward -plan-recompute="force=1-3:offload" 2>&1 | FileCheck %s --check-prefix=FIRST
// plan-recompute's offload: the cut before a recomputed segment goes to the host and comes back for the recompute.

// Stages 4-6 (of 7, one op each) recomputed with their input cut, stage
// 3's matmul %[[X]], offloaded: a copy homed on the host after its last
// forward reader (which frees it on the device), a copy back just before
// the recomputed ops, which read it; the chain records the offload and
// its copies' time (128 bytes each way on the cpu profile's 8 GB/s links).
// CHECK: hm.recompute = {copy_seconds = 3.200000e-08 : f64,
// CHECK-SAME: stages = [{{.*}}offload_input = false{{.*}}offload_input = false{{.*}}offload_input = false{{.*}}decision = "recompute"{{[^}]*}}offload_input = true
// CHECK: hm.arena @host tier "host" size 128
// CHECK: %[[X:.*]] = tg.matmul %{{.*}}, %w2 :
// CHECK-NEXT: hm.place %[[X]] in @arena
// CHECK-NEXT: tg.tanh %[[X]]
// CHECK: %[[H:.*]] = tg.identity %[[X]] {hm.home = "host"}
// CHECK-NEXT: hm.place %[[H]] in @host at 0
// CHECK-NEXT: hm.release %[[X]]
// CHECK: %[[B:.*]] = tg.identity %[[H]] : tensor<4x8xf32>
// CHECK: tg.tanh %[[B]]

// The first stage has no cut before it.
// FIRST: error: plan-recompute: force (hmcc --recompute): segment '1-3' starts the forward: it has no cut to offload
tg.parameter @w1 : tensor<8x8xf32> {source = "w1"}
tg.parameter @w2 : tensor<8x8xf32> {source = "w2"}
tg.parameter @w3 : tensor<8x8xf32> {source = "w3"}
func.func @forward(%x: tensor<4x8xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<8x8xf32>
  %w2 = tg.param @w2 : tensor<8x8xf32>
  %w3 = tg.param @w3 : tensor<8x8xf32>
  %0 = tg.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = tg.tanh %0 : tensor<4x8xf32>
  %2 = tg.matmul %1, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = tg.tanh %2 : tensor<4x8xf32>
  %4 = tg.matmul %3, %w3 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %5 = tg.tanh %4 : tensor<4x8xf32>
  %6 = tg.reduce_sum %5 {axes = array<i64>} : tensor<4x8xf32> -> tensor<f32>
  return %6 : tensor<f32>
}
