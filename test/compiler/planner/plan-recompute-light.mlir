// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-recompute="force=4:light" | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-recompute="vram=2310272" -hm-place-buffers | FileCheck %s --check-prefix=AUTO
// RUN: not hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-recompute="force=3:light" 2>&1 | FileCheck %s --check-prefix=NOTHING
// plan-recompute keeps a stage light: the cheap op whose saved result the backward reads is copied just before that read, from operands the backward keeps anyway.

// Four blocks a = x W, s = a * a, r = s V + a; stage 2k is block k's
// mul, second matmul and add. Block 2 (stage 4) kept light: its product
// %s is freed after the forward; in the backward, after the gradient
// reaches V's input, the product is made again from %a (which the
// product's own gradient reads later) and V's gradient reads the copy.
// CHECK: recompute_seconds = {{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep light", forward_seconds = {{[^,]*}}, light_bytes = 131072
// CHECK: %[[A:.*]] = tg.matmul %{{.*}}, %w3 :
// CHECK-NEXT: %[[S:.*]] = tg.mul %[[A]], %[[A]] :
// CHECK-NEXT: tg.matmul %[[S]], %w4 :
// CHECK: %[[DS:.*]] = tg.matmul %{{.*}}, %w4 {transB}
// CHECK-NEXT: %[[COPY:.*]] = tg.mul %[[A]], %[[A]] :
// CHECK-NEXT: tg.matmul %[[COPY]], %{{.*}} {transA}
// CHECK-NOT: tg.matmul %[[S]],

// At 2310272 bytes (the unplanned program needs 2506880) two blocks kept
// light are enough, and nothing is recomputed.
// AUTO: decision = "keep"{{.*}}decision = "keep light"{{.*}}decision = "keep"{{.*}}decision = "keep light"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"{{.*}}decision = "keep"
// AUTO-NOT: decision = "recompute"
// AUTO: hm.arena @arena tier "device" size {{[0-9]+}}

// Stage 3 is block 2's first matmul alone: nothing cheap to keep light.
// NOTHING: error: plan-recompute: force (hmcc --recompute): stage 3 has nothing to keep light
tg.parameter @w1 : tensor<64x64xf32> {source = "w1"}
tg.parameter @w2 : tensor<64x64xf32> {source = "w2"}
tg.parameter @w3 : tensor<64x64xf32> {source = "w3"}
tg.parameter @w4 : tensor<64x64xf32> {source = "w4"}
tg.parameter @w5 : tensor<64x64xf32> {source = "w5"}
tg.parameter @w6 : tensor<64x64xf32> {source = "w6"}
tg.parameter @w7 : tensor<64x64xf32> {source = "w7"}
tg.parameter @w8 : tensor<64x64xf32> {source = "w8"}
func.func @forward(%x: tensor<512x64xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<64x64xf32>
  %w2 = tg.param @w2 : tensor<64x64xf32>
  %a1 = tg.matmul %x, %w1 : (tensor<512x64xf32>, tensor<64x64xf32>) -> tensor<512x64xf32>
  %s1 = tg.mul %a1, %a1 : (tensor<512x64xf32>, tensor<512x64xf32>) -> tensor<512x64xf32>
  %c1 = tg.matmul %s1, %w2 : (tensor<512x64xf32>, tensor<64x64xf32>) -> tensor<512x64xf32>
  %r1 = tg.add %c1, %a1 : (tensor<512x64xf32>, tensor<512x64xf32>) -> tensor<512x64xf32>
  %w3 = tg.param @w3 : tensor<64x64xf32>
  %w4 = tg.param @w4 : tensor<64x64xf32>
  %a2 = tg.matmul %r1, %w3 : (tensor<512x64xf32>, tensor<64x64xf32>) -> tensor<512x64xf32>
  %s2 = tg.mul %a2, %a2 : (tensor<512x64xf32>, tensor<512x64xf32>) -> tensor<512x64xf32>
  %c2 = tg.matmul %s2, %w4 : (tensor<512x64xf32>, tensor<64x64xf32>) -> tensor<512x64xf32>
  %r2 = tg.add %c2, %a2 : (tensor<512x64xf32>, tensor<512x64xf32>) -> tensor<512x64xf32>
  %w5 = tg.param @w5 : tensor<64x64xf32>
  %w6 = tg.param @w6 : tensor<64x64xf32>
  %a3 = tg.matmul %r2, %w5 : (tensor<512x64xf32>, tensor<64x64xf32>) -> tensor<512x64xf32>
  %s3 = tg.mul %a3, %a3 : (tensor<512x64xf32>, tensor<512x64xf32>) -> tensor<512x64xf32>
  %c3 = tg.matmul %s3, %w6 : (tensor<512x64xf32>, tensor<64x64xf32>) -> tensor<512x64xf32>
  %r3 = tg.add %c3, %a3 : (tensor<512x64xf32>, tensor<512x64xf32>) -> tensor<512x64xf32>
  %w7 = tg.param @w7 : tensor<64x64xf32>
  %w8 = tg.param @w8 : tensor<64x64xf32>
  %a4 = tg.matmul %r3, %w7 : (tensor<512x64xf32>, tensor<64x64xf32>) -> tensor<512x64xf32>
  %s4 = tg.mul %a4, %a4 : (tensor<512x64xf32>, tensor<512x64xf32>) -> tensor<512x64xf32>
  %c4 = tg.matmul %s4, %w8 : (tensor<512x64xf32>, tensor<64x64xf32>) -> tensor<512x64xf32>
  %r4 = tg.add %c4, %a4 : (tensor<512x64xf32>, tensor<512x64xf32>) -> tensor<512x64xf32>
  %loss = tg.reduce_sum %r4 {axes = array<i64>} : tensor<512x64xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
