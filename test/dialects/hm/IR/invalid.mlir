// RUN: hmcc-opt %s -split-input-file -verify-diagnostics
// Each case breaks one rule of an hm op's verifier and checks its message.

// Arenas belong to a tier hmcc knows.
// expected-error @+1 {{tier must be "device", "host" or "storage", not "tape"}}
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

// -----
// A stage moves a state one way or the other...
tg.parameter @w : tensor<4xf32> {source = "w"}
tg.state @w.m : tensor<4xf32> {hm.home = "storage", kind = "momentum_buffer", param = @w}
func.func @f() {
  // expected-error @+1 {{direction must be "in" or "out", not "up"}}
  hm.stage "up" @w.m at 4096 : tensor<4xf32>
  return
}

// -----
// ... to a staging buffer aligned as arena values are...
tg.parameter @w : tensor<4xf32> {source = "w"}
tg.state @w.m : tensor<4xf32> {hm.home = "host", kind = "momentum_buffer", param = @w}
func.func @f() {
  // expected-error @+1 {{offset must be a non-negative multiple of 64}}
  hm.stage "in" @w.m at 32 : tensor<4xf32>
  return
}

// -----
// ... page-aligned where it comes from storage...
tg.parameter @w : tensor<4xf32> {source = "w"}
tg.state @w.m : tensor<4xf32> {hm.home = "storage", kind = "momentum_buffer", param = @w}
func.func @f() {
  // expected-error @+1 {{offset of a copy from storage must be a multiple of 4096}}
  hm.stage "in" @w.m at 64 : tensor<4xf32>
  return
}

// -----
// ... and only a state homed on the host or in storage.
tg.parameter @w : tensor<4xf32> {source = "w"}
tg.state @w.m : tensor<4xf32> {kind = "momentum_buffer", param = @w}
func.func @f() {
  // expected-error @+1 {{@w.m is not homed on the host or in storage}}
  hm.stage "in" @w.m at 4096 : tensor<4xf32>
  return
}

// -----
// Homes are the three tiers.
// expected-error @+1 {{hm.home must be "host", "storage" or "device"}}
tg.parameter @w : tensor<4xf32> {hm.home = "tape", source = "w"}

// -----
// Events are numbered from 0.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{hm.wait must be an array<i64> of events >= 0}}
  %0 = tg.exp %x {hm.wait = array<i64: -1>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{hm.event must be an integer >= 0}}
  %0 = tg.exp %x {hm.event = "e"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----
// Staging offsets are aligned as arena offsets.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{hm.staged must map state names to arena offsets, multiples of 64}}
  %0 = tg.exp %x {hm.staged = {m = 100 : i64}} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----
// A chunk is a non-empty element range starting on a 1024-element boundary.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{hm.chunk must be array<i64: lo, hi> with 0 <= lo < hi and lo a multiple of 1024}}
  %0 = tg.exp %x {hm.chunk = array<i64: 100, 2048>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----
// A chunk of 8-bit states starts on a block of every state it stages: the
// absmax of 256-element blocks needs multiples of 262144 elements.
tg.parameter @w : tensor<600x500xf32> {source = "w"}
tg.state @w.exp_avg_absmax : tensor<1172xf32> {hm.home = "storage", kind = "exp_avg_absmax", param = @w}
func.func @f() {
  // expected-error @+1 {{chunk [1024, 2048) does not start on a 4096-byte block of @w.exp_avg_absmax (a multiple of 262144 elements)}}
  hm.stage "in" @w.exp_avg_absmax at 4096 {hm.chunk = array<i64: 1024, 2048>} : tensor<1172xf32>
  return
}

// -----
// A stage moves a state or a parameter homed on the host or in storage,
// nothing else...
tg.parameter @w : tensor<4xf32> {hm.home = "device", source = "w"}
func.func @f() {
  // expected-error @+1 {{@w is not homed on the host or in storage}}
  hm.stage "in" @w at 4096 : tensor<4xf32>
  return
}

// -----
// ... and no other symbol.
func.func @g() {
  return
}
func.func @f() {
  // expected-error @+1 {{@g is not a tg.state or a tg.parameter}}
  hm.stage "in" @g at 4096 : tensor<4xf32>
  return
}

// -----
// A soft hold counts ops.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{hm.soft_hold must be an integer >= 0}}
  %0 = tg.exp %x {hm.soft_hold = -1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
