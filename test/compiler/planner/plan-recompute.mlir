// RUN: hmcc-opt %s -split-input-file -tg-autodiff -tg-select-entries=functions=forward_backward -plan-recompute="force=none" | FileCheck %s --check-prefix=NONE
// RUN: hmcc-opt %s -split-input-file -tg-autodiff -tg-select-entries=functions=forward_backward -plan-recompute="force=1-3" | FileCheck %s --check-prefix=SEG
// RUN: hmcc-opt %s -split-input-file -tg-autodiff -tg-select-entries=functions=forward_backward -plan-recompute="vram=2560" -hm-place-buffers -hm-verify-memory | FileCheck %s --check-prefix=FIT
// RUN: not hmcc-opt %s -split-input-file -tg-autodiff -tg-select-entries=functions=forward_backward -plan-recompute="vram=2500" 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: not hmcc-opt %s -split-input-file -tg-autodiff -tg-select-entries=functions=forward_backward -plan-recompute="force=3-2" 2>&1 | FileCheck %s --check-prefix=BADFORCE
// RUN: not hmcc-opt %s -split-input-file -tg-autodiff -plan-recompute="device-profile=nowhere.json" 2>&1 | FileCheck %s --check-prefix=BADPROFILE
// RUN: hmcc-opt %s -split-input-file -tg-autodiff -tg-select-entries=functions=forward_backward -plan-recompute="force=3" | FileCheck %s --check-prefix=OUTPUT
// plan-recompute: the chain of stages between single-tensor cuts, forced and budget-driven decisions, the copies made, and the errors.

// A pure chain: every op is a cut, so each op is a stage (11). Forced none:
// nothing copied, every stage kept, the chain recorded.
// NONE: hm.recompute = {copy_seconds = 0.000000e+00 : f64, forced = true, recompute_seconds = 0.000000e+00 : f64, stages = [{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{[^"]*}}]}
// NONE: func.func @forward_backward
// NONE-COUNT-5: tg.matmul %{{.*}}, %w{{[0-9]}} :
// NONE-NOT: tg.matmul %{{.*}}, %w{{[0-9]}} :
// NONE: return

// Stages 1-3 (matmul, tanh, matmul) recomputed as one segment: the cut
// inside it (%[[A]], read by the backward) is freed after the forward and
// recomputed from the input just before its first backward reader; the
// backward reads the copy.
// SEG: func.func @forward_backward
// SEG: %[[A:.*]] = tg.tanh %{{.*}} : tensor<4x8xf32>
// SEG: %[[B:.*]] = tg.tanh %{{.*}} : tensor<4x8xf32>
// SEG: tg.matmul %[[B]], %{{.*}} {transA}
// SEG: %[[C0:.*]] = tg.matmul %arg0, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// SEG-NEXT: %[[C1:.*]] = tg.tanh %[[C0]] : tensor<4x8xf32>
// SEG-NEXT: tg.matmul %[[C1]], %{{.*}} {transA}
// SEG-NOT: %[[A]]{{[ ,]}}
// SEG: return

// A segment does not make its last stage's output again (the next stage's
// input is there): stage 3 alone, whose one op makes only that cut, costs
// nothing and copies nothing.
// OUTPUT: hm.recompute = {copy_seconds = 0.000000e+00 : f64, forced = true, recompute_seconds = 0.000000e+00 : f64, stages = [{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "recompute"
// OUTPUT: func.func @forward_backward
// OUTPUT-COUNT-5: tg.matmul %{{.*}}, %w{{[0-9]}} :
// OUTPUT-NOT: tg.matmul %{{.*}}, %w{{[0-9]}} :
// OUTPUT: return

// Under a budget the cheapest decision that fits is chosen: the unplanned
// program needs 2688 bytes; at 2560 a segment of 3 stages is recomputed,
// the first (stages 1-3 and 9-11 both cost a matmul and a tanh: neither
// makes its last op's output again).
// FIT: hm.recompute = {budget = 2560 : i64, copy_seconds = 0.000000e+00 : f64, forced = false{{.*}}decision = "recompute"{{.*}}decision = "recompute"{{.*}}decision = "recompute"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"
// FIT: hm.arena @arena tier "device" size 2560

// Below the smallest feasible budget: the error names it and what takes it.
// SMALL: error: the program does not fit --vram 2.44 KiB: the smallest budget that fits is --vram 2560 (2.50 KiB), mostly activations (896 B persistent, 1.62 KiB for activations with 3 of 11 forward stages recomputed, {{.*}} of recompute per step predicted)

// BADFORCE: error: plan-recompute: force (hmcc --recompute): segment '3-2' is not a range of stages in order within 1..11

// BADPROFILE: error: plan-recompute: device profile 'nowhere.json' is neither cpu, h200 nor a readable file
tg.parameter @w1 : tensor<8x8xf32> {source = "w1"}
tg.parameter @w2 : tensor<8x8xf32> {source = "w2"}
tg.parameter @w3 : tensor<8x8xf32> {source = "w3"}
func.func @forward(%x: tensor<4x8xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<8x8xf32>
  %w2 = tg.param @w2 : tensor<8x8xf32>
  %w3 = tg.param @w3 : tensor<8x8xf32>
  %0 = tg.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = tg.tanh %0 : tensor<4x8xf32>
  %2 = tg.matmul %1, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = tg.tanh %2 : tensor<4x8xf32>
  %4 = tg.matmul %3, %w3 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %5 = tg.tanh %4 : tensor<4x8xf32>
  %6 = tg.matmul %5, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %7 = tg.tanh %6 : tensor<4x8xf32>
  %8 = tg.matmul %7, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %9 = tg.tanh %8 : tensor<4x8xf32>
  %10 = tg.reduce_sum %9 {axes = array<i64>} : tensor<4x8xf32> -> tensor<f32>
  return %10 : tensor<f32>
}

// -----
// A recomputed dropout draws the same mask: the dropouts are numbered
// (stream) before any copy, and the copy keeps the number.
// SEG: func.func @forward_backward
// SEG: tg.dropout %{{.*}} {ratio = 5.000000e-01 : f32, stream = 0 : i64, training}
// SEG: tg.dropout %{{.*}} {ratio = 5.000000e-01 : f32, stream = 1 : i64, training}
// SEG: tg.matmul %arg0, %w1
// SEG-NEXT: %[[R:.*]], %[[M:.*]] = tg.dropout %{{.*}} {ratio = 5.000000e-01 : f32, stream = 0 : i64, training}
// SEG: tg.dropout_grad %{{.*}}, %[[M]]
tg.parameter @w1 : tensor<8x8xf32> {source = "w1"}
tg.parameter @w2 : tensor<8x8xf32> {source = "w2"}
func.func @forward(%x: tensor<4x8xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<8x8xf32>
  %w2 = tg.param @w2 : tensor<8x8xf32>
  %0 = tg.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1, %m = tg.dropout %0 {ratio = 5.000000e-01 : f32, training} : tensor<4x8xf32> -> tensor<4x8xi1>
  %2 = tg.matmul %1, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3, %n = tg.dropout %2 {ratio = 5.000000e-01 : f32, training} : tensor<4x8xf32> -> tensor<4x8xi1>
  %4 = tg.reduce_sum %3 {axes = array<i64>} : tensor<4x8xf32> -> tensor<f32>
  return %4 : tensor<f32>
}

// -----
// Not a chain everywhere: %g is read at the end, so no cut lies between it
// and its reader and those five ops form one stage (of 3). Recomputing
// stages 1-3 copies the whole forward from the input, %g included, and the
// backward reads only copies.
// NONE: stages = [{{[^]]*}}ops = 1 {{[^]]*}}ops = 5 {{[^]]*}}ops = 1 {{[^]]*}}]
// SEG: func.func @forward_backward
// SEG: %[[G:.*]] = tg.matmul %arg0, %w0
// SEG: tg.expand
// SEG-NEXT: %[[G2:.*]] = tg.matmul %arg0, %w0
// SEG-NEXT: tg.matmul %[[G2]], %w1
// SEG-NEXT: tg.tanh
// SEG-NEXT: tg.matmul %{{.*}}, %w2
// SEG-NEXT: tg.tanh
// SEG-NEXT: tg.mul %{{.*}}, %[[G2]]
// SEG-NOT: %[[G]]{{[, ]}}
// SEG: return
tg.parameter @w0 : tensor<8x8xf32> {source = "w0"}
tg.parameter @w1 : tensor<8x8xf32> {source = "w1"}
tg.parameter @w2 : tensor<8x8xf32> {source = "w2"}
func.func @forward(%x: tensor<4x8xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w0 = tg.param @w0 : tensor<8x8xf32>
  %w1 = tg.param @w1 : tensor<8x8xf32>
  %w2 = tg.param @w2 : tensor<8x8xf32>
  %g = tg.matmul %x, %w0 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %0 = tg.matmul %g, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = tg.tanh %0 : tensor<4x8xf32>
  %2 = tg.matmul %1, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = tg.tanh %2 : tensor<4x8xf32>
  %4 = tg.mul %3, %g : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = tg.reduce_sum %4 {axes = array<i64>} : tensor<4x8xf32> -> tensor<f32>
  return %5 : tensor<f32>
}

// -----
// No parameters, no backward: nothing is planned or recorded.
// NONE: func.func @forward_backward
// NONE-NOT: hm.recompute
func.func @forward(%x: tensor<4x8xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %0 = tg.tanh %x : tensor<4x8xf32>
  %1 = tg.reduce_sum %0 {axes = array<i64>} : tensor<4x8xf32> -> tensor<f32>
  return %1 : tensor<f32>
}
