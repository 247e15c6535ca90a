// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="force=all" -hm-place-buffers -plan-staging="chunk-size=4K" -plan-streams -hm-verify-memory -hm-verify-streams | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="force=all" -hm-place-buffers -plan-staging | FileCheck %s --check-prefix=WHOLE
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer="optimizer=adamw8bit" -tg-select-entries=functions=train_step -plan-tiers="force=all" -plan-storage="force=all" -hm-place-buffers -plan-staging="chunk-size=4K" -plan-streams -hm-verify-memory -hm-verify-streams | FileCheck %s --check-prefix=Q8
// RUN: not hmcc-opt %s -plan-staging="chunk-size=4Q" 2>&1 | FileCheck %s --check-prefix=BAD
// plan-staging with a chunk size: the update of a stored parameter runs chunk by chunk, each chunk's slices of its states staged in turn.

// @w (5120 elements) in chunks of 4 KiB of parameter (1024 elements): five
// updates; each stages its 4 KiB slice of both moments into alternating
// buffers of 8 KiB, read while the update before runs. Whole parameters
// would need two buffers of 40 KiB (WHOLE).
// CHECK: hm.arena @host tier "host" size 57344
// CHECK: hm.stage "in" @w.exp_avg at [[A:[0-9]+]] {hm.chunk = array<i64: 0, 1024>}
// CHECK-NEXT: hm.stage "in" @w.exp_avg_sq at [[A2:[0-9]+]] {hm.chunk = array<i64: 0, 1024>
// CHECK-NEXT: tg.adamw_update @w, {{.*}}hm.chunk = array<i64: 0, 1024>{{.*}}hm.staged = {w.exp_avg = [[A]] : i64, w.exp_avg_sq = [[A2]] : i64}
// CHECK-NEXT: hm.stage "in" @w.exp_avg at [[B:[0-9]+]] {hm.chunk = array<i64: 1024, 2048>
// CHECK-NEXT: hm.stage "in" @w.exp_avg_sq at {{[0-9]+}} {hm.chunk = array<i64: 1024, 2048>
// CHECK-NEXT: hm.stage "out" @w.exp_avg_sq at [[A2]] {hm.chunk = array<i64: 0, 1024>
// CHECK-NEXT: hm.stage "out" @w.exp_avg at [[A]] {hm.chunk = array<i64: 0, 1024>
// CHECK-NEXT: tg.adamw_update @w, {{.*}}hm.chunk = array<i64: 1024, 2048>{{.*}}hm.staged = {w.exp_avg = [[B]] : i64
// CHECK: tg.adamw_update @w, {{.*}}hm.chunk = array<i64: 2048, 3072>{{.*}}hm.staged = {w.exp_avg = [[A]] : i64
// CHECK: tg.adamw_update @w, {{.*}}hm.chunk = array<i64: 3072, 4096>{{.*}}hm.staged = {w.exp_avg = [[B]] : i64
// CHECK: tg.adamw_update @w, {{.*}}hm.chunk = array<i64: 4096, 5120>{{.*}}hm.staged = {w.exp_avg = [[A]] : i64
// CHECK-NOT: tg.adamw_update @w,

// WHOLE: hm.arena @host tier "host" size 122880
// WHOLE-NOT: hm.chunk

// With 8-bit moments a chunk starts on a block of every state, the absmax
// of 256-element blocks included: 4 KiB rounds up to 262144 elements, more
// than @w has, so its update stays whole.
// Q8-NOT: hm.chunk
// Q8: tg.adamw8bit_update @w

// BAD: error: plan-staging: chunk-size: invalid size '4Q'
tg.parameter @w : tensor<80x64xf32> {source = "w"}
func.func @forward(%x: tensor<4x80xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w = tg.param @w : tensor<80x64xf32>
  %0 = tg.matmul %x, %w : (tensor<4x80xf32>, tensor<80x64xf32>) -> tensor<4x64xf32>
  %1 = tg.reduce_sum %0 {axes = array<i64>} : tensor<4x64xf32> -> tensor<f32>
  return %1 : tensor<f32>
}
