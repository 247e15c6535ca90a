// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="vram=140M device-profile=h200 chunk-size=1M" | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="vram=140M device-profile=h200" | FileCheck %s --check-prefix=WHOLE
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="vram=140M device-profile=cpu chunk-size=1M" | FileCheck %s --check-prefix=WHOLE
// plan-tiers with chunk-size: the last parameter for the host split into chunks of rows, the fewest last ones on the host, where the step planned on predicts faster.

// Unplanned, the step needs 146 MB of device memory. Under 140M one of the
// two 16 MiB matrices must leave the device: without a chunk size, all of
// @w1. With chunks of 1 MiB (64 rows of 4096 floats), only its last rows
// go, as many as the budget needs (without room kept for prefetching, with
// which the step predicts slower): the h200 profile predicts the step
// faster with the first rows kept on the device (the link time saved
// exceeds what the concatenation costs). On the cpu profile, whose
// "device" is the host's own memory, it does not, and the whole goes.
// CHECK: tg.parameter @"w1#0" : tensor<832x4096xf32> {hm.whole = "w1", source = "w1"}
// CHECK-NEXT: tg.parameter @"w1#1" : tensor<192x4096xf32> {hm.home = "host", hm.whole = "w1", source = "w1"}
// CHECK-NEXT: tg.parameter @w2 : tensor<4096x1024xf32> {source = "w2"}
// CHECK: tg.concat
// WHOLE: tg.parameter @w1 : tensor<1024x4096xf32> {hm.home = "host", source = "w1"}
// WHOLE-NEXT: tg.parameter @w2 : tensor<4096x1024xf32> {source = "w2"}
// WHOLE-NOT: hm.whole
tg.parameter @w1 : tensor<1024x4096xf32> {source = "w1"}
tg.parameter @w2 : tensor<4096x1024xf32> {source = "w2"}
func.func @forward(%x: tensor<512x1024xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<1024x4096xf32>
  %w2 = tg.param @w2 : tensor<4096x1024xf32>
  %0 = tg.matmul %x, %w1 : (tensor<512x1024xf32>, tensor<1024x4096xf32>) -> tensor<512x4096xf32>
  %1 = tg.tanh %0 : tensor<512x4096xf32>
  %2 = tg.matmul %1, %w2 : (tensor<512x4096xf32>, tensor<4096x1024xf32>) -> tensor<512x1024xf32>
  %3 = tg.reduce_sum %2 {axes = array<i64>} : tensor<512x1024xf32> -> tensor<f32>
  return %3 : tensor<f32>
}
