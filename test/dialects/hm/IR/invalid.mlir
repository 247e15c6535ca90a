// RUN: hmcc-opt %s -split-input-file -verify-diagnostics
// Each case breaks one rule of an hm op's verifier and checks its message.

// Arenas belong to a tier hmcc knows.
// expected-error @+1 {{tier must be "device" or "host", not "tape"}}
hm.arena @arena tier "tape" size 512

// -----
// Arena sizes are whole 64-byte units.
// expected-error @+1 {{size must be a non-negative multiple of 64}}
hm.arena @arena tier "device" size 100

// -----
// Persistent offsets are aligned.
// expected-error @+1 {{hm.offset must be a non-negative multiple of 64 bytes}}
tg.parameter @w : tensor<4xf32> {hm.offset = 8 : i64, source = "w"}

// -----
hm.arena @arena tier "device" size 512
func.func @f(%x: tensor<4xf32>) {
  %0 = tg.exp %x : tensor<4xf32>
  // expected-error @+1 {{offset must be a non-negative multiple of 64}}
  hm.place %0 in @arena at 32 : tensor<4xf32>
  return
}

// -----
// A place stores what an op before it defined.
hm.arena @arena tier "device" size 512
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{places a value that is not defined before it in the same block}}
  hm.place %x in @arena at 0 : tensor<4xf32>
  return
}

// -----
// It must name an arena...
func.func @f(%x: tensor<4xf32>) {
  %0 = tg.exp %x : tensor<4xf32>
  // expected-error @+1 {{@nowhere is not a declared hm.arena}}
  hm.place %0 in @nowhere at 0 : tensor<4xf32>
  return
}

// -----
// ... and lie inside it.
hm.arena @arena tier "device" size 128
func.func @f(%x: tensor<64xf32>) {
  %0 = tg.exp %x : tensor<64xf32>
  // expected-error @+1 {{bytes [64, 320) lie beyond the 128 bytes of @arena}}
  hm.place %0 in @arena at 64 : tensor<64xf32>
  return
}
