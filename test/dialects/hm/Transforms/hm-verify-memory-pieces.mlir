// hm-verify-memory: the pieces of a split parameter (hm.whole) are declared one after the other and make one tensor.
// RUN: hmcc-opt %s -split-input-file -hm-place-buffers -hm-verify-memory -verify-diagnostics | FileCheck %s

// Two pieces of @w, one on the device and one in the host arena, read as
// their concatenation (the host piece through a device copy).
// CHECK: tg.parameter @"w#0" : tensor<2x4xf32> {hm.offset = 0 : i64, hm.whole = "w"
// CHECK: tg.parameter @"w#1" : tensor<2x4xf32> {hm.home = "host", hm.offset = 0 : i64, hm.whole = "w"
tg.parameter @"w#0" : tensor<2x4xf32> {hm.whole = "w", source = "w"}
tg.parameter @"w#1" : tensor<2x4xf32> {hm.home = "host", hm.whole = "w", source = "w"}
func.func @forward(%x: tensor<3x4xf32> {tg.input = "x"}) -> tensor<3x4xf32> {
  %a = tg.param @"w#0" : tensor<2x4xf32>
  %b = tg.param @"w#1" : tensor<2x4xf32>
  %f = tg.identity %b : tensor<2x4xf32>
  %w = tg.concat %a, %f {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %y = tg.matmul %x, %w : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----
// A piece declared away from the other pieces of its whole.
tg.parameter @"w#0" : tensor<2x4xf32> {hm.whole = "w", source = "w"}
tg.parameter @v : tensor<4xf32> {source = "v"}
// expected-error @+1 {{hm-verify-memory: @w#1, a piece of 'w', does not follow the other pieces of its whole}}
tg.parameter @"w#1" : tensor<2x4xf32> {hm.whole = "w", source = "w"}
func.func @forward(%x: tensor<4xf32> {tg.input = "x"}) -> tensor<4xf32> {
  %v = tg.param @v : tensor<4xf32>
  %y = tg.mul %x, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----
// Pieces whose rows differ in length make no one tensor.
tg.parameter @"w#0" : tensor<2x4xf32> {hm.whole = "w", source = "w"}
// expected-error @+1 {{hm-verify-memory: @w#1, a piece of 'w', differs from the first piece in more than its first dimension}}
tg.parameter @"w#1" : tensor<2x3xf32> {hm.whole = "w", source = "w"}
func.func @forward(%x: tensor<4xf32> {tg.input = "x"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----
// A whole's name is no declaration's own.
tg.parameter @w : tensor<4xf32> {source = "w"}
// expected-error @+1 {{hm-verify-memory: @w#0, a piece of 'w', names a whole that is declared itself}}
tg.parameter @"w#0" : tensor<2x4xf32> {hm.whole = "w", source = "w"}
func.func @forward(%x: tensor<4xf32> {tg.input = "x"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
