// hm-verify-streams proves plan-streams' events sound and catches each fault plan-streams=test-fault injects on purpose.
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -hm-place-buffers -plan-streams -hm-verify-streams | FileCheck %s --check-prefix=SOUND
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -hm-place-buffers -plan-streams=test-fault=drop-wait -hm-verify-streams 2>&1 | FileCheck %s --check-prefix=RACE
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -hm-place-buffers -plan-streams=test-fault=unrecorded -hm-verify-streams 2>&1 | FileCheck %s --check-prefix=UNRECORDED
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -hm-place-buffers -plan-streams=test-fault=twice -hm-verify-streams 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -hm-place-buffers -hm-verify-streams 2>&1 | FileCheck %s --check-prefix=NONE

// SOUND: hm.wait

// drop-wait: the first matmul reads the fetched copy of @w1 without waiting
// for the fetch.
// RACE: error: hm-verify-streams: in @train_step: tg.matmul on stream compute touches bytes that tg.identity on stream host_to_device (earlier) writes or reads, and no event orders them

// UNRECORDED: error: hm-verify-streams: tg.matmul on stream compute waits for event 1000000, which no earlier op records

// TWICE: error: hm-verify-streams: event 0 is recorded twice

// Without plan-streams, the program of several streams has no events.
// NONE: error: hm-verify-streams: in @train_step: tg.matmul on stream compute touches bytes that tg.identity on stream host_to_device
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
