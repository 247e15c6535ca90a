// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="force=w1" -plan-quantize-traffic="mode=auto device-profile=cpu" | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="force=w1" -plan-quantize-traffic="mode=auto device-profile=h200" | FileCheck %s --check-prefix=FAST
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="force=w1" -plan-quantize-traffic="mode=never device-profile=cpu" | FileCheck %s --check-prefix=FAST
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="force=w1" -plan-quantize-traffic="mode=auto device-profile=cpu" -hm-place-buffers -plan-staging -plan-streams -hm-verify-memory -hm-verify-streams | FileCheck %s --check-prefix=STAGED
// RUN: not hmcc-opt %s -plan-quantize-traffic="mode=auto device-profile=nowhere" 2>&1 | FileCheck %s --check-prefix=BAD
// plan-quantize-traffic makes the moments of stored parameters 8-bit when that lowers the predicted step's lower bound.

// On the cpu profile every stream shares the host's cores: the loads add
// up, and @w1's fp32 moments in storage cost more in staging traffic than
// the slower 8-bit update adds, so they become 8-bit, still in storage.
// @w2's stay fp32 on the host (not stored, and under 4096 elements).
// CHECK: tg.state @w1.exp_avg : tensor<64x64xui8> {hm.home = "storage", kind = "exp_avg"
// CHECK: tg.state @w1.exp_avg_absmax : tensor<16xf32> {hm.home = "storage", kind = "exp_avg_absmax"
// CHECK: tg.state @w2.exp_avg : tensor<64x4xf32> {hm.home = "host"
// CHECK: tg.adamw8bit_update @w1,
// CHECK: tg.adamw_update @w2,

// With H200 figures the device's compute binds, not the storage links: the
// moments stay fp32 (and with mode=never nothing changes either).
// FAST-NOT: adamw8bit
// FAST: tg.state @w1.exp_avg : tensor<64x64xf32> {hm.home = "storage"
// FAST-NOT: adamw8bit

// The 8-bit states are staged from storage like fp32 ones.
// STAGED: hm.stage "in" @w1.exp_avg at
// STAGED: tg.adamw8bit_update @w1, {{.*}}hm.staged = {w1.exp_avg = {{[0-9]+}} : i64, w1.exp_avg_absmax =

// BAD: error: plan-quantize-traffic:
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
