// RUN: hmcc-opt %s -split-input-file -hm-verify-memory -verify-diagnostics
// hm-verify-memory: each case breaks the memory plan once and must be caught.

// A sound program passes.
hm.arena @arena tier "device" size 256
tg.parameter @w : tensor<16xf32> {hm.offset = 0 : i64, source = "w"}
func.func @ok(%x: tensor<16xf32> {hm.offset = 64 : i64, tg.input = "x"}) -> tensor<16xf32> {
  %w = tg.param @w : tensor<16xf32>
  %a = tg.mul %x, %w : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  hm.place %a in @arena at 128 : tensor<16xf32>
  %b = tg.exp %a : tensor<16xf32>
  hm.place %b in @arena at 192 : tensor<16xf32>
  hm.release %a : tensor<16xf32>
  %c = tg.exp %b : tensor<16xf32>
  hm.place %c in @arena at 128 : tensor<16xf32>
  return %c : tensor<16xf32>
}

// -----
// Two persistent tensors in the same bytes.
hm.arena @arena tier "device" size 256
tg.parameter @w : tensor<16xf32> {hm.offset = 0 : i64, source = "w"}
// expected-error @+1 {{state @w.m overlaps parameter @w}}
tg.state @w.m : tensor<16xf32> {hm.offset = 0 : i64, kind = "exp_avg", param = @w}

// -----
// A persistent tensor beyond the arena.
hm.arena @arena tier "device" size 64
// expected-error @+1 {{parameter @w lies at [64, 128), beyond the device arena's 64 bytes}}
tg.parameter @w : tensor<16xf32> {hm.offset = 64 : i64, source = "w"}

// -----
// A value placed over a live one.
hm.arena @arena tier "device" size 256
func.func @f(%x: tensor<16xf32> {hm.offset = 0 : i64, tg.input = "x"}) -> tensor<16xf32> {
  %a = tg.exp %x : tensor<16xf32>
  hm.place %a in @arena at 64 : tensor<16xf32>
  // expected-error @+1 {{writes the result of tg.exp at [64, 128) of the device arena over the result of tg.exp (placed at 64), which is live}}
  %b = tg.exp %a : tensor<16xf32>
  hm.place %b in @arena at 64 : tensor<16xf32>
  return %b : tensor<16xf32>
}

// -----
// A value placed over an input.
hm.arena @arena tier "device" size 256
func.func @f(%x: tensor<16xf32> {hm.offset = 0 : i64, tg.input = "x"}) -> tensor<16xf32> {
  // expected-error @+1 {{over input 'x', which is live}}
  %a = tg.exp %x : tensor<16xf32>
  hm.place %a in @arena at 0 : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----
// A read after the release.
hm.arena @arena tier "device" size 256
func.func @f(%x: tensor<16xf32> {hm.offset = 0 : i64, tg.input = "x"}) -> tensor<16xf32> {
  %a = tg.exp %x : tensor<16xf32>
  hm.place %a in @arena at 64 : tensor<16xf32>
  hm.release %a : tensor<16xf32>
  // expected-error @+1 {{reads the result of tg.exp after its release}}
  %b = tg.exp %a : tensor<16xf32>
  hm.place %b in @arena at 128 : tensor<16xf32>
  return %b : tensor<16xf32>
}

// -----
// A read of a value before its place.
hm.arena @arena tier "device" size 256
func.func @f(%x: tensor<16xf32> {hm.offset = 0 : i64, tg.input = "x"}) -> tensor<16xf32> {
  %a = tg.exp %x : tensor<16xf32>
  // expected-error @+1 {{reads the result of tg.exp, which has no memory}}
  %b = tg.exp %a : tensor<16xf32>
  hm.place %a in @arena at 64 : tensor<16xf32>
  hm.place %b in @arena at 128 : tensor<16xf32>
  return %b : tensor<16xf32>
}

// -----
// A release of something not in memory.
hm.arena @arena tier "device" size 256
func.func @f(%x: tensor<16xf32> {hm.offset = 0 : i64, tg.input = "x"}) -> tensor<16xf32> {
  %a = tg.exp %x : tensor<16xf32>
  hm.place %a in @arena at 64 : tensor<16xf32>
  hm.release %a : tensor<16xf32>
  // expected-error @+1 {{releases the result of tg.exp, which is not in memory}}
  hm.release %a : tensor<16xf32>
  return %x : tensor<16xf32>
}

// -----
// The same value placed twice.
hm.arena @arena tier "device" size 256
func.func @f(%x: tensor<16xf32> {hm.offset = 0 : i64, tg.input = "x"}) -> tensor<16xf32> {
  %a = tg.exp %x : tensor<16xf32>
  hm.place %a in @arena at 64 : tensor<16xf32>
  // expected-error @+1 {{the result of tg.exp is placed twice}}
  hm.place %a in @arena at 128 : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----
// An argument with no memory (neither an input nor step/lr).
hm.arena @arena tier "device" size 256
func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{reads argument #0, which has no memory}}
  %a = tg.exp %x : tensor<16xf32>
  hm.place %a in @arena at 64 : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----
// An op writes its result when it runs: releasing the operand before the
// place does not make a transpose over its own input sound...
hm.arena @arena tier "device" size 256
func.func @f(%x: tensor<4x4xf32> {hm.offset = 0 : i64, tg.input = "x"}) -> tensor<4x4xf32> {
  %a = tg.exp %x : tensor<4x4xf32>
  hm.place %a in @arena at 64 : tensor<4x4xf32>
  // expected-error @+1 {{writes the result of tg.transpose at [64, 128) of the device arena over the result of tg.exp (placed at 64), which is live}}
  %b = tg.transpose %a {perm = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32>
  hm.release %a : tensor<4x4xf32>
  hm.place %b in @arena at 64 : tensor<4x4xf32>
  return %b : tensor<4x4xf32>
}

// -----
// ... while a view may take over its operand's bytes.
hm.arena @arena tier "device" size 256
func.func @f(%x: tensor<16xf32> {hm.offset = 0 : i64, tg.input = "x"}) -> tensor<4x4xf32> {
  %a = tg.exp %x : tensor<16xf32>
  hm.place %a in @arena at 64 : tensor<16xf32>
  %b = tg.reshape %a : tensor<16xf32> -> tensor<4x4xf32>
  hm.release %a : tensor<16xf32>
  hm.place %b in @arena at 64 : tensor<4x4xf32>
  return %b : tensor<4x4xf32>
}

// -----
// Every result an op computes needs memory, read or not.
hm.arena @arena tier "device" size 256
func.func @f(%x: tensor<16xf32> {hm.offset = 0 : i64, tg.input = "x"}) -> tensor<16xf32> {
  // expected-error @+1 {{the result of tg.exp has no memory (no hm.place)}}
  %a = tg.exp %x : tensor<16xf32>
  return %x : tensor<16xf32>
}

// -----
// Two functions that share an input offset must agree on its type.
hm.arena @arena tier "device" size 256
func.func @f(%x: tensor<16xf32> {hm.offset = 0 : i64, tg.input = "x"}) {
  return
}
// expected-error @+1 {{input 'x' ('tensor<8xf32>') and input 'x' ('tensor<16xf32>') share offset 0}}
func.func @g(%x: tensor<8xf32> {hm.offset = 0 : i64, tg.input = "x"}) {
  return
}

// -----
// The loss gradient written in place of its scores, read by nothing after
// it: sound (hmrt_sce_loss_backward_f32 allows dscores == scores).
hm.arena @arena tier "device" size 512
func.func @f(%s: tensor<4x8xf32> {hm.offset = 0 : i64, tg.input = "s"},
             %t: tensor<4xi64> {hm.offset = 128 : i64, tg.input = "t"}) -> tensor<4x8xf32> {
  %e = tg.exp %s : tensor<4x8xf32>
  hm.place %e in @arena at 192 : tensor<4x8xf32>
  %g = tg.constant dense<1.0> : tensor<f32>
  hm.place %g in @arena at 320 : tensor<f32>
  %d = tg.softmax_cross_entropy_loss_grad %g, %e, %t : (tensor<f32>, tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  hm.release %e : tensor<4x8xf32>
  hm.place %d in @arena at 192 : tensor<4x8xf32>
  hm.release %g : tensor<f32>
  return %d : tensor<4x8xf32>
}

// -----
// The same with the scores read again after it: their bytes now hold the
// gradient.
hm.arena @arena tier "device" size 512
func.func @f(%s: tensor<4x8xf32> {hm.offset = 0 : i64, tg.input = "s"},
             %t: tensor<4xi64> {hm.offset = 128 : i64, tg.input = "t"}) -> tensor<4x8xf32> {
  %e = tg.exp %s : tensor<4x8xf32>
  hm.place %e in @arena at 192 : tensor<4x8xf32>
  %g = tg.constant dense<1.0> : tensor<f32>
  hm.place %g in @arena at 320 : tensor<f32>
  // expected-error @+1 {{writes its result in place of the result of tg.exp, which is not released right after it}}
  %d = tg.softmax_cross_entropy_loss_grad %g, %e, %t : (tensor<f32>, tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  hm.place %d in @arena at 192 : tensor<4x8xf32>
  %y = tg.add %d, %e : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  hm.place %y in @arena at 384 : tensor<4x8xf32>
  hm.release %d, %e, %g : tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>
  return %y : tensor<4x8xf32>
}

// -----
// An f32 op that may not run in place (tg.exp) placed over its operand.
hm.arena @arena tier "device" size 512
func.func @f(%s: tensor<4x8xf32> {hm.offset = 0 : i64, tg.input = "s"}) -> tensor<4x8xf32> {
  %e = tg.exp %s : tensor<4x8xf32>
  hm.place %e in @arena at 192 : tensor<4x8xf32>
  // expected-error @+1 {{writes the result of tg.exp at [192, 320) of the device arena over the result of tg.exp (placed at 192), which is live}}
  %f = tg.exp %e : tensor<4x8xf32>
  hm.release %e : tensor<4x8xf32>
  hm.place %f in @arena at 192 : tensor<4x8xf32>
  return %f : tensor<4x8xf32>
}
