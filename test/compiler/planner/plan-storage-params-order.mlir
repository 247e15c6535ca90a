// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="force=all force-params=all" -hm-place-buffers -plan-staging -plan-streams -hm-verify-memory -hm-verify-streams | FileCheck %s
// plan-storage reads a stored parameter ahead of its device copy, but never above the parameter's own read.

// @w2 is read (tg.param) only after the first matmul: its storage read
// cannot go right after @w1's device copy, so it goes right after that.
// CHECK: tg.identity %w1 {{{.*}}hm.home = "host"
// CHECK: %w2 = tg.param @w2
// CHECK-NEXT: tg.identity %w2 {{{.*}}hm.home = "host"
tg.parameter @w1 : tensor<256x256xf32> {source = "w1"}
tg.parameter @w2 : tensor<256x64xf32> {source = "w2"}
func.func @forward(%x: tensor<4x256xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<256x256xf32>
  %0 = tg.matmul %x, %w1 : (tensor<4x256xf32>, tensor<256x256xf32>) -> tensor<4x256xf32>
  %1 = tg.tanh %0 : tensor<4x256xf32>
  %w2 = tg.param @w2 : tensor<256x64xf32>
  %2 = tg.matmul %1, %w2 : (tensor<4x256xf32>, tensor<256x64xf32>) -> tensor<4x64xf32>
  %3 = tg.reduce_sum %2 {axes = array<i64>} : tensor<4x64xf32> -> tensor<f32>
  return %3 : tensor<f32>
}
