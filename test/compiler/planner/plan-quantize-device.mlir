// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-quantize-device="mode=auto vram=60000" | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-quantize-device="mode=auto vram=60000" -plan-tiers="vram=60000" -plan-recompute="vram=60000" -hm-place-buffers -hm-check-budget="vram=60000" | FileCheck %s --check-prefix=FITS
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-quantize-device="mode=auto vram=100000" | FileCheck %s --check-prefix=NONE
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-quantize-device="mode=auto vram=50000" | FileCheck %s --check-prefix=NONE
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-quantize-device="mode=never vram=60000" | FileCheck %s --check-prefix=NONE
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-quantize-device="mode=auto vram=50000 device-profile=h200" | FileCheck %s --check-prefix=ALL
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-quantize-device="mode=auto vram=74000" -plan-recompute="vram=74000" | FileCheck %s --check-prefix=SPEED
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-quantize-device="mode=never vram=74000" -plan-recompute="vram=74000" | FileCheck %s --check-prefix=SLOW
// RUN: not hmcc-opt %s -plan-quantize-device="mode=auto vram=6x" 2>&1 | FileCheck %s --check-prefix=BAD
// plan-quantize-device makes the largest parameters' moments 8-bit when that, and only that, lets the program fit the device budget, or saves recompute.

// Unplanned, the program needs 74752 bytes; at 60000 plan-recompute alone
// cannot make it fit, @w1's moments in 8 bits can: its update becomes
// 8-bit AdamW, on the device (no hm.home), and @w2 (under 4096 elements)
// keeps fp32 moments.
// CHECK: tg.state @w1.exp_avg : tensor<64x64xui8> {kind = "exp_avg", param = @w1}
// CHECK: tg.adamw8bit_update @w1,
// CHECK: tg.adamw_update @w2,

// Then nothing needs the host: plan-tiers moves no parameter.
// FITS-NOT: hm.home
// FITS: hm.arena @arena tier "device" size {{[0-9]+}}
// FITS-NOT: hm.home

// Fits as it is (100000), or not even with 8-bit moments (50000: that is
// plan-tiers' to solve with the host; the cpu profile's host updates 8-bit
// moments slower), or mode=never: nothing changes.
// NONE-NOT: adamw8bit

// Not even with 8-bit moments (50000) on a profile whose host updates 8-bit
// moments as fast as fp32 ones: every eligible update becomes 8-bit, so
// that plan-tiers keeps more parameters on the device.
// ALL: tg.adamw8bit_update @w1,
// ALL: tg.adamw_update @w2,

// At 74000 the program fits with 3 of its 4 forward stages recomputed
// (SLOW); @w1's moments in 8 bits leave room to keep them all, which saves
// more than 1% of the step: auto makes them 8-bit, and nothing is
// recomputed.
// SLOW: recompute_seconds = 1.{{[0-9]+}}{{e-05|E-5}}
// SLOW-NOT: adamw8bit
// SPEED: recompute_seconds = 0.000000e+00
// SPEED: tg.adamw8bit_update @w1,
// SPEED: tg.adamw_update @w2,

// BAD: error: plan-quantize-device: vram: invalid size '6x'
tg.parameter @w1 : tensor<64x64xf32> {source = "w1"}
tg.parameter @w2 : tensor<64x4xf32> {source = "w2"}
func.func @forward(%x: tensor<4x64xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<64x64xf32>
  %w2 = tg.param @w2 : tensor<64x4xf32>
  %0 = tg.matmul %x, %w1 : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
  %1 = tg.tanh %0 : tensor<4x64xf32>
  %2 = tg.matmul %1, %w2 : (tensor<4x64xf32>, tensor<64x4xf32>) -> tensor<4x4xf32>
  %3 = tg.reduce_sum %2 {axes = array<i64>} : tensor<4x4xf32> -> tensor<f32>
  return %3 : tensor<f32>
}
