// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="vram=300K chunk-size=4K device-profile=%S/Inputs/host-and-slow-link.json device-updates=auto" | FileCheck %s
// plan-tiers device-updates=auto: counts of device updates between the shares it starts from.

// At 300K seven of the ten 16 KiB weights go to the host (@w0-@w6). Of the
// shares tried first (1/16 to all of them: 1, 2, 4 or 7 updates on the
// device), four predicts fastest; the counts between it and its neighbours
// then find three faster still: the updates of @w0-@w2, whose gradients
// come last, run on the device; @w3-@w6 are updated on the host.
// CHECK-LABEL: func.func @train_step
// CHECK-DAG: tg.adamw_update @w2, {{.*}}exp_avg_sq = @w2.exp_avg_sq, weight_decay
// CHECK-DAG: tg.adamw_update @w1, {{.*}}exp_avg_sq = @w1.exp_avg_sq, weight_decay
// CHECK-DAG: tg.adamw_update @w0, {{.*}}exp_avg_sq = @w0.exp_avg_sq, weight_decay
// CHECK-DAG: tg.adamw_update @w3, {{.*}}hm.home = "host"
// CHECK-DAG: tg.adamw_update @w4, {{.*}}hm.home = "host"
// CHECK-DAG: tg.adamw_update @w5, {{.*}}hm.home = "host"
// CHECK-DAG: tg.adamw_update @w6, {{.*}}hm.home = "host"
// CHECK: return
tg.parameter @w0 : tensor<64x64xf32> {source = "w0"}
tg.parameter @w1 : tensor<64x64xf32> {source = "w1"}
tg.parameter @w2 : tensor<64x64xf32> {source = "w2"}
tg.parameter @w3 : tensor<64x64xf32> {source = "w3"}
tg.parameter @w4 : tensor<64x64xf32> {source = "w4"}
tg.parameter @w5 : tensor<64x64xf32> {source = "w5"}
tg.parameter @w6 : tensor<64x64xf32> {source = "w6"}
tg.parameter @w7 : tensor<64x64xf32> {source = "w7"}
tg.parameter @w8 : tensor<64x64xf32> {source = "w8"}
tg.parameter @w9 : tensor<64x64xf32> {source = "w9"}
func.func @forward(%x: tensor<16x64xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w0 = tg.param @w0 : tensor<64x64xf32>
  %m0 = tg.matmul %x, %w0 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %t0 = tg.tanh %m0 : tensor<16x64xf32>
  %w1 = tg.param @w1 : tensor<64x64xf32>
  %m1 = tg.matmul %t0, %w1 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %t1 = tg.tanh %m1 : tensor<16x64xf32>
  %w2 = tg.param @w2 : tensor<64x64xf32>
  %m2 = tg.matmul %t1, %w2 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %t2 = tg.tanh %m2 : tensor<16x64xf32>
  %w3 = tg.param @w3 : tensor<64x64xf32>
  %m3 = tg.matmul %t2, %w3 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %t3 = tg.tanh %m3 : tensor<16x64xf32>
  %w4 = tg.param @w4 : tensor<64x64xf32>
  %m4 = tg.matmul %t3, %w4 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %t4 = tg.tanh %m4 : tensor<16x64xf32>
  %w5 = tg.param @w5 : tensor<64x64xf32>
  %m5 = tg.matmul %t4, %w5 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %t5 = tg.tanh %m5 : tensor<16x64xf32>
  %w6 = tg.param @w6 : tensor<64x64xf32>
  %m6 = tg.matmul %t5, %w6 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %t6 = tg.tanh %m6 : tensor<16x64xf32>
  %w7 = tg.param @w7 : tensor<64x64xf32>
  %m7 = tg.matmul %t6, %w7 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %t7 = tg.tanh %m7 : tensor<16x64xf32>
  %w8 = tg.param @w8 : tensor<64x64xf32>
  %m8 = tg.matmul %t7, %w8 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %t8 = tg.tanh %m8 : tensor<16x64xf32>
  %w9 = tg.param @w9 : tensor<64x64xf32>
  %m9 = tg.matmul %t8, %w9 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %t9 = tg.tanh %m9 : tensor<16x64xf32>
  %r = tg.reduce_sum %t9 {axes = array<i64>} : tensor<16x64xf32> -> tensor<f32>
  return %r : tensor<f32>
}
