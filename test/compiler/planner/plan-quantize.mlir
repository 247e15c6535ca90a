// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-quantize="mode=host" -hm-place-buffers -hm-verify-memory | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-quantize="mode=auto ram=150000" -hm-place-buffers | FileCheck %s --check-prefix=ONE
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-quantize="mode=auto ram=1M" | FileCheck %s --check-prefix=NONE
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-quantize="mode=auto ram=1" | FileCheck %s --check-prefix=NONE
// RUN: not hmcc-opt %s -plan-quantize="mode=bogus" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not hmcc-opt %s -plan-quantize="mode=auto ram=-1" 2>&1 | FileCheck %s --check-prefix=BADRAM
// plan-quantize: 8-bit AdamW moments for the largest parameters on the host, as far as --ram needs.

// Every host parameter of 4096 elements or more: its moments become codes
// and absmax states of tg-optimizer's adamw8bit names, still on the host,
// and its update 8-bit AdamW there; @b (32 elements) keeps fp32 moments.
// CHECK: hm.arena @host tier "host" size 123776
// CHECK-DAG: tg.state @w1.exp_avg : tensor<64x128xui8> {hm.home = "host"
// CHECK-DAG: tg.state @w1.exp_avg_absmax : tensor<32xf32> {hm.home = "host"
// CHECK-DAG: tg.state @w2.exp_avg_sq : tensor<128x32xui8> {hm.home = "host"
// CHECK-DAG: tg.state @b.exp_avg : tensor<32xf32> {hm.home = "host"
// CHECK-DAG: tg.adamw8bit_update @w1, {{.*}}exp_avg_absmax = @w1.exp_avg_absmax{{.*}}hm.home = "host"
// CHECK-DAG: tg.adamw8bit_update @w2,
// CHECK-DAG: tg.adamw_update @b,

// The fp32 plan's host arena is 197120 bytes; 8-bit moments for @w1 (the
// largest) take 48896 off it, which meets 150000: @w2 stays fp32.
// ONE: hm.arena @host tier "host" size 148224
// ONE-DAG: tg.adamw8bit_update @w1,
// ONE-DAG: tg.adamw_update @w2,

// A budget the host arena meets, or nothing on the host: nothing changes.
// NONE-NOT: adamw8bit

// BAD: error: plan-quantize: mode must be never, auto or always, not 'bogus'
// A malformed budget is an error also when nothing would be quantized.
// BADRAM: error: plan-quantize: ram: invalid size '-1': sizes cannot be negative
tg.parameter @w1 : tensor<64x128xf32> {source = "w1"}
tg.parameter @w2 : tensor<128x32xf32> {source = "w2"}
tg.parameter @b : tensor<32xf32> {source = "b"}
func.func @forward(%x: tensor<4x64xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<64x128xf32>
  %w2 = tg.param @w2 : tensor<128x32xf32>
  %b = tg.param @b : tensor<32xf32>
  %0 = tg.matmul %x, %w1 : (tensor<4x64xf32>, tensor<64x128xf32>) -> tensor<4x128xf32>
  %1 = tg.tanh %0 : tensor<4x128xf32>
  %2 = tg.matmul %1, %w2 : (tensor<4x128xf32>, tensor<128x32xf32>) -> tensor<4x32xf32>
  %3 = tg.add %2, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %4 = tg.reduce_sum %3 {axes = array<i64>} : tensor<4x32xf32> -> tensor<f32>
  return %4 : tensor<f32>
}
