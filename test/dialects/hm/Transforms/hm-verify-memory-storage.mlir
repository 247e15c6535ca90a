// hm-verify-memory: a parameter homed in storage is read only by its copy to the host arena.
// RUN: hmcc-opt %s -split-input-file -hm-place-buffers -hm-verify-memory -verify-diagnostics | FileCheck %s

// Its host copy lands on a whole 4096-byte block of the host arena (for
// O_DIRECT), the device reads the copy of that copy.
// CHECK: hm.arena @storage tier "storage" size 4096
// CHECK: %[[READ:.*]] = tg.identity %w {hm.home = "host"}
// CHECK-NEXT: hm.place %[[READ]] in @host at 4096
tg.parameter @w : tensor<16xf32> {hm.home = "storage", source = "w"}
tg.parameter @v : tensor<16xf32> {hm.home = "host", source = "v"}
func.func @forward(%x: tensor<16xf32> {tg.input = "x"}) -> tensor<16xf32> {
  %v = tg.param @v : tensor<16xf32>
  %w = tg.param @w : tensor<16xf32>
  %h = tg.identity %w {hm.home = "host"} : tensor<16xf32>
  %d = tg.identity %h : tensor<16xf32>
  %a = tg.mul %x, %d : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----
// A device kernel cannot address storage.
tg.parameter @w : tensor<16xf32> {hm.home = "storage", source = "w"}
func.func @forward(%x: tensor<16xf32> {tg.input = "x"}) -> tensor<16xf32> {
  %w = tg.param @w : tensor<16xf32>
  // expected-error @+1 {{hm-verify-memory: in @forward: reads parameter @w, which is in storage, other than by a copy to the host}}
  %a = tg.mul %x, %w : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----
// An update on the device reaches a parameter homed on the host through a
// staging copy only (plan-staging).
tg.parameter @w : tensor<16xf32> {hm.home = "host", source = "w"}
func.func @train(%g: tensor<16xf32> {tg.input = "g"}, %lr: tensor<f32> {tg.role = "lr"}, %step: tensor<i64> {tg.role = "step"}) {
  // expected-error @+1 {{hm-verify-memory: in @train: runs on the device and changes @w, which is homed on the host, without a staging copy}}
  tg.sgd_update @w, %g, %lr, %step {momentum = 0.0 : f32, weight_decay = 0.0 : f32} : tensor<16xf32>
  return
}
