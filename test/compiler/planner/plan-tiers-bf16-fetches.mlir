// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -tg-precision=precision=bf16 -plan-tiers="force=all bf16-fetches=always" | FileCheck %s
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -tg-precision=precision=bf16 -plan-tiers="force=all bf16-fetches=always" -hm-place-buffers -plan-streams -hm-verify-memory -hm-verify-streams | FileCheck %s --check-prefix=PLACED
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -tg-precision="precision=bf16 bf16-storage=true" -plan-tiers="force=all bf16-fetches=always" | FileCheck %s --check-prefix=STORAGE
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -tg-precision=precision=bf16 -plan-tiers="force=all bf16-fetches=never" | FileCheck %s --check-prefix=F32
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -tg-precision=precision=bf16 -plan-tiers="force=all" | FileCheck %s --check-prefix=F32
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -tg-precision=precision=bf16 -plan-tiers="force=all device-profile=h200" | FileCheck %s --check-prefix=H200
// RUN: hmcc-opt %s -tg-autodiff -tg-optimizer -tg-select-entries=functions=train_step -plan-tiers="force=all bf16-fetches=always" | FileCheck %s --check-prefix=F32
// RUN: not hmcc-opt %s -plan-tiers="force=all bf16-fetches=yes" 2>&1 | FileCheck %s --check-prefix=BAD
// plan-tiers bf16-fetches: host parameters that only bf16 GEMM factors read are rounded once on the host and fetched in bf16.

// Each such parameter is rounded on the host right after its tg.param; the
// GEMMs read bf16 fetches of that copy. The bias, which the GEMM adds in
// fp32, is fetched as it is. A GEMM left with one bf16 and one f32 factor
// reads both as they are (the kernel rounds the f32 one): nothing is
// converted on the device.
// CHECK: %[[W1:.*]] = tg.param @w1
// CHECK-NEXT: %[[R1:.*]] = tg.cast %[[W1]] {hm.home = "host", nearest_even} : tensor<8x4xf32> to tensor<8x4xbf16>
// CHECK: %[[W2:.*]] = tg.param @w2
// CHECK-NEXT: %[[R2:.*]] = tg.cast %[[W2]] {hm.home = "host", nearest_even} : tensor<4x64xf32> to tensor<4x64xbf16>
// CHECK-NEXT: %[[F1:.*]] = tg.identity %[[R1]] : tensor<8x4xbf16>
// CHECK-NEXT: %[[B1:.*]] = tg.identity %b1 : tensor<4xf32>
// CHECK-NEXT: tg.gemm %arg0, %[[F1]], %[[B1]] {tg.math = "bf16"} : (tensor<16x8xf32>, tensor<8x4xbf16>, tensor<4xf32>)
// CHECK: %[[F2:.*]] = tg.identity %[[R2]] : tensor<4x64xbf16>
// CHECK-NEXT: tg.matmul %{{.*}}, %[[F2]] {tg.math = "bf16"} : (tensor<16x4xf32>, tensor<4x64xbf16>) -> tensor<16x64xf32>
// CHECK: %[[G2:.*]] = tg.identity %[[R2]] : tensor<4x64xbf16>
// CHECK-NEXT: tg.matmul %{{.*}}, %[[G2]] {tg.math = "bf16", transB} : (tensor<16x64xf32>, tensor<4x64xbf16>)
// CHECK-NOT: tg.identity %w
// CHECK-NOT: tg.cast %{{[0-9]+}}

// Placed: the rounded copies in the host arena, made on the host optimizer's
// stream; each fetch waits for its rounding's event.
// PLACED: hm.arena @host tier "host"
// PLACED: tg.cast %w1 {hm.event = [[E1:[0-9]+]] : i64, hm.home = "host", nearest_even}
// PLACED-NEXT: hm.place %{{.*}} in @host at
// PLACED: tg.identity %{{.*}} {{{.*}}hm.wait = array<i64: {{.*}}[[E1]]{{.*}}>} : tensor<8x4xbf16>

// With bf16 storage, x * x, which only GEMMs read, is kept in bf16; with
// @w3 fetched in bf16 the GEMM reads two bf16 factors, and no conversion of
// a fetched parameter is left on the device.
// STORAGE: %[[R3:.*]] = tg.cast %w3 {hm.home = "host", nearest_even}
// STORAGE: %[[H:.*]] = tg.cast %{{.*}} {nearest_even} : tensor<16x8xf32> to tensor<16x8xbf16>
// STORAGE-NEXT: %[[F3:.*]] = tg.identity %[[R3]] : tensor<8x32xbf16>
// STORAGE-NEXT: tg.matmul %[[H]], %[[F3]] {tg.math = "bf16"}
// STORAGE-NOT: tensor<16x8xbf16> to tensor<16x8xf32>
// STORAGE-NOT: {nearest_even} : tensor<4x64xf32> to tensor<4x64xbf16>

// Never, or auto on the cpu profile (the "device" is host memory), or
// without bf16 GEMMs: fetched as they are.
// F32-NOT: hm.home = "host", nearest_even
// F32: tg.identity %w1 : tensor<8x4xf32>
// F32-NOT: hm.home = "host", nearest_even

// Auto on the h200 profile: in bf16.
// H200: tg.cast %w1 {hm.home = "host", nearest_even}

// BAD: error: plan-tiers: bf16-fetches (hmcc --bf16-fetches) must be auto, always or never, not 'yes'
tg.parameter @w1 : tensor<8x4xf32> {source = "w1"}
tg.parameter @b1 : tensor<4xf32> {source = "b1"}
tg.parameter @w2 : tensor<4x64xf32> {source = "w2"}
tg.parameter @w3 : tensor<8x32xf32> {source = "w3"}
func.func @forward(%x: tensor<16x8xf32> {tg.input = "x"}) -> (tensor<f32> {tg.output = "loss"}) {
  %w1 = tg.param @w1 : tensor<8x4xf32>
  %b1 = tg.param @b1 : tensor<4xf32>
  %w2 = tg.param @w2 : tensor<4x64xf32>
  %0 = tg.gemm %x, %w1, %b1 : (tensor<16x8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<16x4xf32>
  %1 = tg.tanh %0 : tensor<16x4xf32>
  %2 = tg.matmul %1, %w2 : (tensor<16x4xf32>, tensor<4x64xf32>) -> tensor<16x64xf32>
  %3 = tg.reduce_sum %2 {axes = array<i64>} : tensor<16x64xf32> -> tensor<f32>
  %w3 = tg.param @w3 : tensor<8x32xf32>
  %4 = tg.mul %x, %x : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %5 = tg.matmul %4, %w3 : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %6 = tg.reduce_sum %5 {axes = array<i64>} : tensor<16x32xf32> -> tensor<f32>
  %7 = tg.add %3, %6 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %7 : tensor<f32>
}
