// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer=optimizer=adamw8bit -tg-select-entries=functions=train_step -plan-tiers="force=b:4096" -hm-place-buffers -hm-verify-memory | FileCheck %s
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer=optimizer=adamw8bit -tg-select-entries=functions=train_step -plan-tiers="force=b:4000" 2>&1 | FileCheck %s --check-prefix=UNALIGNED
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer=optimizer=adamw8bit -tg-select-entries=functions=train_step -plan-tiers="force=b:7936" 2>&1 | FileCheck %s --check-prefix=SMALL
// plan-tiers splits a parameter with 8-bit moments on whole 256-element blocks: the codes like the parameter, the absmax by blocks, a 1-D parameter's included.

// @b (8192 elements) split in half: each piece has 4096 codes per moment
// and 16 absmax entries (4096 / 256), not 4096.
// CHECK: tg.state @"b#0.exp_avg" : tensor<4096xui8> {{{.*}}hm.whole = "b.exp_avg"
// CHECK: tg.state @"b#1.exp_avg" : tensor<4096xui8> {hm.home = "host", {{.*}}hm.whole = "b.exp_avg"
// CHECK: tg.state @"b#0.exp_avg_absmax" : tensor<16xf32> {{{.*}}hm.whole = "b.exp_avg_absmax"
// CHECK: tg.state @"b#1.exp_avg_absmax" : tensor<16xf32> {hm.home = "host", {{.*}}hm.whole = "b.exp_avg_absmax"
// CHECK: tg.adamw8bit_update @"b#0"
// CHECK: tg.adamw8bit_update @"b#1"
// SMALL: cannot home the last 7936 rows of 'b' on the host: {{.*}} pieces of 4096 rows or more
// UNALIGNED: cannot home the last 4000 rows of 'b' on the host: {{.*}} a split after a multiple of 256 rows
tg.parameter @b : tensor<8192xf32> {source = "b"}
func.func @forward(%x: tensor<8192xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %b = tg.param @b : tensor<8192xf32>
  %0 = tg.mul %x, %b : (tensor<8192xf32>, tensor<8192xf32>) -> tensor<8192xf32>
  %1 = tg.reduce_sum %0 {axes = array<i64>} : tensor<8192xf32> -> tensor<f32>
  return %1 : tensor<f32>
}
