// hm-verify-memory catches each placement bug that hm-place-buffers=test-fault injects on purpose.
// RUN: hmcc-opt %s -hm-place-buffers -hm-verify-memory | FileCheck %s --check-prefix=SOUND
// RUN: not hmcc-opt %s -hm-place-buffers=test-fault=overlap -hm-verify-memory 2>&1 | FileCheck %s --check-prefix=OVERLAP
// RUN: not hmcc-opt %s -hm-place-buffers=test-fault=early-release -hm-verify-memory 2>&1 | FileCheck %s --check-prefix=EARLY
// RUN: not hmcc-opt %s -hm-place-buffers=test-fault=no-release -hm-verify-memory 2>&1 | FileCheck %s --check-prefix=NORELEASE
// RUN: not hmcc-opt %s -hm-place-buffers=test-fault=bogus 2>&1 | FileCheck %s --check-prefix=BOGUS

// Without a fault the same program verifies.
// SOUND: hm.arena @arena tier "device" size 320

// overlap: %b is placed on %a, which the exp is still reading.
// OVERLAP: error: hm-verify-memory: in @forward: writes the result of tg.exp at [128, 192) of the device arena over the result of tg.mul (placed at 128), which is live

// early-release: %b's bytes are handed to %c while the tanh reads %b.
// EARLY: error: hm-verify-memory: in @forward: writes the result of tg.tanh at [192, 256) of the device arena over the result of tg.exp (placed at 192), which is live

// no-release: %d reuses %b's bytes, but the program never released %b.
// NORELEASE: error: hm-verify-memory: in @forward: writes the result of tg.add at [192, 256) of the device arena over the result of tg.exp (placed at 192), which is live

// BOGUS: error: hm-place-buffers: unknown test-fault 'bogus'
tg.parameter @w : tensor<16xf32> {source = "w"}
func.func @forward(%x: tensor<16xf32> {tg.input = "x"}) -> tensor<16xf32> {
  %w = tg.param @w : tensor<16xf32>
  %a = tg.mul %x, %w : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %b = tg.exp %a : tensor<16xf32>
  %c = tg.tanh %b : tensor<16xf32>
  %d = tg.add %c, %a : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %d : tensor<16xf32>
}
