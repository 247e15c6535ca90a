// RUN: hmcc-opt %s -split-input-file -hm-place-buffers -hm-verify-memory | FileCheck %s
// hm-place-buffers: persistent tensors first, then placement by lifetime
// (first fit or best fit, the smaller arena); the result is checked by
// hm-verify-memory in the same run.

// Parameters, then states, then inputs get fixed offsets; a value is placed
// right after its op and released after its last reader, and its memory
// goes to the next value that fits (%d takes %b's); a result never reuses
// the memory of its own op's operands; the returned value is not released.
// CHECK: hm.arena @arena tier "device" size 384
// CHECK: tg.parameter @w : tensor<16xf32> {hm.offset = 0 : i64, source = "w"}
// CHECK: tg.state @w.m : tensor<16xf32> {hm.offset = 64 : i64, kind = "exp_avg", param = @w}
// CHECK-LABEL: func.func @forward(%arg0: tensor<16xf32> {hm.offset = 128 : i64, tg.input = "x"})
// CHECK: %[[A:.*]] = tg.mul
// CHECK-NEXT: hm.place %[[A]] in @arena at 192
// CHECK-NEXT: %[[B:.*]] = tg.exp %[[A]]
// CHECK-NEXT: hm.place %[[B]] in @arena at 256
// CHECK-NEXT: %[[C:.*]] = tg.tanh %[[B]]
// CHECK-NEXT: hm.place %[[C]] in @arena at 320
// CHECK-NEXT: hm.release %[[B]]
// CHECK-NEXT: %[[D:.*]] = tg.add %[[C]], %[[A]]
// CHECK-NEXT: hm.place %[[D]] in @arena at 256
// CHECK-NEXT: hm.release %[[A]], %[[C]]
// CHECK-NEXT: return %[[D]]
tg.parameter @w : tensor<16xf32> {source = "w"}
tg.state @w.m : tensor<16xf32> {kind = "exp_avg", param = @w}
func.func @forward(%x: tensor<16xf32> {tg.input = "x"}) -> tensor<16xf32> {
  %w = tg.param @w : tensor<16xf32>
  %a = tg.mul %x, %w : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %b = tg.exp %a : tensor<16xf32>
  %c = tg.tanh %b : tensor<16xf32>
  %d = tg.add %c, %a : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %d : tensor<16xf32>
}

// -----
// A returned parameter or small constant gets a placed copy; a result
// nobody reads is released at once; small constants stay static data.
// CHECK-LABEL: func.func @outputs
// CHECK: %[[C:.*]] = tg.constant dense<2.000000e+00>
// CHECK-NOT: hm.place %[[C]]
// CHECK: %[[R:.*]], %[[M:.*]] = tg.dropout
// CHECK-NEXT: hm.place %[[R]]
// CHECK-NEXT: hm.place %[[M]]
// CHECK-NEXT: hm.release %{{.*}}, %[[M]]
// CHECK: %[[P:.*]] = tg.identity %w
// CHECK-NEXT: hm.place %[[P]]
// CHECK: %[[Q:.*]] = tg.identity %[[C]]
// CHECK-NEXT: hm.place %[[Q]]
// CHECK: return %{{.*}}, %[[P]], %[[Q]]
tg.parameter @w : tensor<4xf32> {source = "w"}
func.func @outputs(%x: tensor<4xf32> {tg.input = "x"}) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %w = tg.param @w : tensor<4xf32>
  %c = tg.constant dense<2.0> : tensor<4xf32>
  %y = tg.mul %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r, %m = tg.dropout %y {ratio = 0.0 : f32} : tensor<4xf32> -> tensor<4xi1>
  return %r, %w, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----
// Two functions share the persistent memory (the input of one name has one
// offset) and the activation memory above it; only the named ones are placed.
// CHECK: hm.arena @arena tier "device" size 192
// CHECK: func.func @a(%arg0: tensor<16xf32> {hm.offset = 0 : i64, tg.input = "x"})
// CHECK: hm.place %{{.*}} in @arena at 64
// CHECK: func.func @b(%arg0: tensor<16xf32> {hm.offset = 0 : i64, tg.input = "x"})
// CHECK: hm.place %{{.*}} in @arena at 64
// CHECK: hm.place %{{.*}} in @arena at 128
func.func @a(%x: tensor<16xf32> {tg.input = "x"}) -> tensor<16xf32> {
  %0 = tg.exp %x : tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @b(%x: tensor<16xf32> {tg.input = "x"}) -> tensor<16xf32> {
  %0 = tg.exp %x : tensor<16xf32>
  %1 = tg.exp %0 : tensor<16xf32>
  return %1 : tensor<16xf32>
}

// -----
// A view of a value read for the last time takes over its bytes (released,
// then placed at the same offset); a view of a value still needed later
// gets bytes of its own.
// CHECK-LABEL: func.func @views
// CHECK: %[[A:.*]] = tg.exp
// CHECK-NEXT: hm.place %[[A]] in @arena at 64
// CHECK-NEXT: %[[B:.*]] = tg.reshape %[[A]]
// CHECK-NEXT: hm.place %[[B]] in @arena at 128
// CHECK-NEXT: %[[C:.*]] = tg.reshape %[[A]]
// CHECK-NEXT: hm.release %[[A]]
// CHECK-NEXT: hm.place %[[C]] in @arena at 64
func.func @views(%x: tensor<16xf32> {tg.input = "x"}) -> (tensor<4x4xf32>, tensor<2x8xf32>) {
  %a = tg.exp %x : tensor<16xf32>
  %b = tg.reshape %a : tensor<16xf32> -> tensor<4x4xf32>
  %c = tg.reshape %a : tensor<16xf32> -> tensor<2x8xf32>
  return %b, %c : tensor<4x4xf32>, tensor<2x8xf32>
}

// -----
// A copy to the device (of a host parameter) runs on its own stream: it
// takes the fitting free bytes released longest ago (448, where %big was),
// not those the op just before it read last (320, where %a was), which it
// would have to wait for; the compute op after it takes the first fit.
// CHECK-LABEL: func.func @copies
// CHECK: hm.place %[[A:.*]] in @arena at 320
// CHECK: hm.place %[[BIG:.*]] in @arena at 384 : tensor<64xf32>
// CHECK: hm.release %[[A]]
// CHECK: %[[F:.*]] = tg.identity %w
// CHECK-NEXT: hm.place %[[F]] in @arena at 448
// CHECK-NEXT: tg.add
// CHECK-NEXT: hm.place %{{.*}} in @arena at 320
tg.parameter @w : tensor<16xf32> {hm.home = "host", source = "w"}
func.func @copies(%x: tensor<16xf32> {tg.input = "x"}, %y: tensor<64xf32> {tg.input = "y"}) -> (tensor<16xf32>, tensor<f32>) {
  %a = tg.exp %x : tensor<16xf32>
  %big = tg.exp %y : tensor<64xf32>
  %s = tg.reduce_sum %big {axes = array<i64>} : tensor<64xf32> -> tensor<f32>
  %c = tg.exp %a : tensor<16xf32>
  %w = tg.param @w : tensor<16xf32>
  %f = tg.identity %w : tensor<16xf32>
  %r = tg.add %c, %f : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %r, %s : tensor<16xf32>, tensor<f32>
}

// -----
// The loss gradient takes the bytes of its scores, which it reads last
// (the runtime's kernel may write dscores over scores): released before
// the gradient is placed, at their offset; the op's other dying values
// are released after it.
// CHECK-LABEL: func.func @grad_in_place
// CHECK: %[[E:.*]] = tg.exp
// CHECK-NEXT: hm.place %[[E]] in @arena at [[AT:[0-9]+]]
// CHECK: %[[D:.*]] = tg.softmax_cross_entropy_loss_grad %{{.*}}, %[[E]]
// CHECK-NEXT: hm.release %[[E]]
// CHECK-NEXT: hm.place %[[D]] in @arena at [[AT]]
// CHECK-NEXT: hm.release %{{.*}} : tensor<f32>
func.func @grad_in_place(%s: tensor<4x8xf32> {tg.input = "s"}, %t: tensor<4xi64> {tg.input = "t"},
                         %l: tensor<f32> {tg.input = "l"}) -> tensor<4x8xf32> {
  %e = tg.exp %s : tensor<4x8xf32>
  %g = tg.exp %l : tensor<f32>
  %d = tg.softmax_cross_entropy_loss_grad %g, %e, %t : (tensor<f32>, tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----
// Scores read after the gradient keep their bytes: the gradient gets its
// own.
// CHECK-LABEL: func.func @scores_read_after
// CHECK: %[[E:.*]] = tg.exp
// CHECK-NEXT: hm.place %[[E]] in @arena at 256
// CHECK: %[[D:.*]] = tg.softmax_cross_entropy_loss_grad
// CHECK-NEXT: hm.place %[[D]] in @arena at 448
// CHECK: tg.add %[[D]], %[[E]]
func.func @scores_read_after(%s: tensor<4x8xf32> {tg.input = "s"}, %t: tensor<4xi64> {tg.input = "t"},
                             %l: tensor<f32> {tg.input = "l"}) -> tensor<4x8xf32> {
  %e = tg.exp %s : tensor<4x8xf32>
  %g = tg.exp %l : tensor<f32>
  %d = tg.softmax_cross_entropy_loss_grad %g, %e, %t : (tensor<f32>, tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  %y = tg.add %d, %e : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----
// First fit and best fit are both tried and the smaller arena kept. Here
// first fit puts %g in the first hole, the two units %a left, and %h (two
// units) then grows the arena to 832 bytes; best fit puts %g in the end of
// the smallest hole that fits (%c's one unit), %h takes %a's bytes, and
// the arena stays at 704.
// CHECK: hm.arena @arena tier "device" size 704
// CHECK-LABEL: func.func @holes
// CHECK: %[[A:.*]] = tg.exp %arg1
// CHECK-NEXT: hm.place %[[A]] in @arena at 192
// CHECK: %[[C:.*]] = tg.tanh %arg0
// CHECK-NEXT: hm.place %[[C]] in @arena at 384
// CHECK: %[[E:.*]] = tg.exp %[[C]]
// CHECK: %[[F:.*]] = tg.tanh %[[A]]
// CHECK: %[[G:.*]] = tg.exp %[[E]]
// CHECK-NEXT: hm.place %[[G]] in @arena at 384
// CHECK: %[[H:.*]] = tg.exp %[[F]]
// CHECK-NEXT: hm.place %[[H]] in @arena at 192
func.func @holes(%x: tensor<16xf32> {tg.input = "x"}, %y: tensor<32xf32> {tg.input = "y"}) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<32xf32>) {
  %a = tg.exp %y : tensor<32xf32>
  %b = tg.exp %x : tensor<16xf32>
  %c = tg.tanh %x : tensor<16xf32>
  %d = tg.sqrt %x : tensor<16xf32>
  %e = tg.exp %c : tensor<16xf32>
  %f = tg.tanh %a : tensor<32xf32>
  %g = tg.exp %e : tensor<16xf32>
  %h = tg.exp %f : tensor<32xf32>
  return %b, %d, %g, %h : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<32xf32>
}
