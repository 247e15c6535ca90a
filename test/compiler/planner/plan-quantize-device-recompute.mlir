// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-quantize-device="mode=auto vram=296000" -plan-recompute="vram=296000" | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-quantize-device="mode=auto vram=310000" -plan-recompute="vram=310000" | FileCheck %s --check-prefix=ONE
// plan-quantize-device goes past the fewest 8-bit moments that fit when more of them save recompute.

// Unplanned, the program needs 330752 bytes, and at 296000 it does not fit
// even with recompute. @w1's moments in 8 bits (the fewest, largest first,
// that fit) leave recompute to do; @w2's too leave none, which the
// dynamic program predicts saves more than 1% of the step: both become
// 8-bit, the others keep fp32 moments.
// CHECK: recompute_seconds = 0.000000e+00
// CHECK: tg.adamw8bit_update @w1,
// CHECK: tg.adamw8bit_update @w2,
// CHECK: tg.adamw_update @w3,
// CHECK: tg.adamw_update @w4,

// At 310000 @w1's alone leave nothing to recompute: the fewest stay.
// ONE: recompute_seconds = 0.000000e+00
// ONE: tg.adamw8bit_update @w1,
// ONE: tg.adamw_update @w2,
tg.parameter @w1 : tensor<64x64xf32> {source = "w1"}
tg.parameter @w2 : tensor<64x64xf32> {source = "w2"}
tg.parameter @w3 : tensor<64x64xf32> {source = "w3"}
tg.parameter @w4 : tensor<64x64xf32> {source = "w4"}
tg.parameter @v : tensor<64x4xf32> {source = "v"}
func.func @forward(%x: tensor<64x64xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<64x64xf32>
  %m1 = tg.matmul %x, %w1 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %t1 = tg.tanh %m1 : tensor<64x64xf32>
  %w2 = tg.param @w2 : tensor<64x64xf32>
  %m2 = tg.matmul %t1, %w2 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %t2 = tg.tanh %m2 : tensor<64x64xf32>
  %w3 = tg.param @w3 : tensor<64x64xf32>
  %m3 = tg.matmul %t2, %w3 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %t3 = tg.tanh %m3 : tensor<64x64xf32>
  %w4 = tg.param @w4 : tensor<64x64xf32>
  %m4 = tg.matmul %t3, %w4 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %t4 = tg.tanh %m4 : tensor<64x64xf32>
  %v = tg.param @v : tensor<64x4xf32>
  %o = tg.matmul %t4, %v : (tensor<64x64xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
  %s = tg.reduce_sum %o {axes = array<i64>} : tensor<64x4xf32> -> tensor<f32>
  return %s : tensor<f32>
}
