// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="vram=600K chunk-size=16K device-profile=%S/Inputs/slow-host.json device-updates=auto" | FileCheck %s --check-prefix=SLOWHOST
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="vram=600K chunk-size=16K device-profile=%S/Inputs/slow-link.json device-updates=auto" | FileCheck %s --check-prefix=HOST
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="vram=600K chunk-size=16K device-profile=cpu device-updates=auto" | FileCheck %s --check-prefix=HOST
// plan-tiers device-updates=auto: a host parameter's update goes to the device where the host's updates would end the step and the staged copies cost less.

// The unplanned step needs 1.13 MiB; at 600K @w1 (256 KiB, with its
// moments 768 KiB) goes to the host. Where the host updates 1e5 parameters
// a second and the link is fast, its update runs on the device, staged in
// chunks of 4096 elements (two buffers of 4096 x 12 B).
// SLOWHOST: module attributes {hm.device_staging = 98304 : i64
// SLOWHOST: tg.parameter @w1 : tensor<64x1024xf32> {hm.home = "host", source = "w1"}
// SLOWHOST: tg.adamw_update @w1, {{.*}}weight_decay = {{[^,]*}}} : tensor<64x1024xf32>
// Over a link of 10 kB/s the copies would cost more than the host's update;
// on the cpu profile the device is the host: the update stays there.
// HOST-NOT: hm.device_staging
// HOST: tg.parameter @w1 : tensor<64x1024xf32> {hm.home = "host", source = "w1"}
// HOST: tg.adamw_update @w1, {{.*}}hm.home = "host"
tg.parameter @w1 : tensor<64x1024xf32> {source = "w1"}
tg.parameter @w2 : tensor<1024x4xf32> {source = "w2"}
func.func @forward(%x: tensor<4x64xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<64x1024xf32>
  %w2 = tg.param @w2 : tensor<1024x4xf32>
  %0 = tg.matmul %x, %w1 : (tensor<4x64xf32>, tensor<64x1024xf32>) -> tensor<4x1024xf32>
  %1 = tg.tanh %0 : tensor<4x1024xf32>
  %2 = tg.matmul %1, %w2 : (tensor<4x1024xf32>, tensor<1024x4xf32>) -> tensor<4x4xf32>
  %3 = tg.reduce_sum %2 {axes = array<i64>} : tensor<4x4xf32> -> tensor<f32>
  return %3 : tensor<f32>
}
