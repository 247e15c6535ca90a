// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-overlap="device-profile=%S/Inputs/slow-link.json" -hm-place-buffers -plan-streams -hm-verify-memory -hm-verify-streams | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-overlap="device-profile=%S/Inputs/slow-link.json share-fetches=false" | FileCheck %s --check-prefix=KEEP
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-overlap | FileCheck %s --check-prefix=KEEP
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-overlap="device-profile=%S/Inputs/slow-link.json vram=1200" | FileCheck %s --check-prefix=KEEP
// plan-overlap shares a host parameter's device copy between fetches when reading it again would take longer than the compute between them, and the program fits.

// A slow link (Inputs/slow-link.json: 10 kB/s): fetching @w2 again for the
// backward takes longer than the few ops between its readers, so the
// forward's copy serves both; the placed program verifies.
// CHECK: %[[W2:.*]] = tg.param @w2
// CHECK-NEXT: %[[C:.*]] = tg.identity %[[W2]]
// CHECK-NOT: tg.identity %[[W2]]
// CHECK: tg.matmul %{{.*}}, %[[C]] {hm.wait
// CHECK-NOT: tg.identity %[[W2]]
// CHECK: tg.matmul %{{.*}}, %[[C]] {transB}

// Every fetch stays: with share-fetches=false; with the cpu profile, whose
// link reads @w2's 256 bytes again in far less than the ops between its
// readers take; and under a budget the shared program would exceed.
// KEEP: %[[W2:.*]] = tg.param @w2
// KEEP: tg.identity %[[W2]]
// KEEP: tg.identity %[[W2]]
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
