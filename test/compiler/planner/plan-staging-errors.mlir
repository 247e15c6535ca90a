// RUN: hmcc-opt %s -split-input-file -hm-place-buffers -plan-staging -verify-diagnostics
// plan-staging: what no staging buffer can serve is refused, naming it.

// An update on the device cannot reach a state in storage: only one on the
// host stages from there.
tg.parameter @w : tensor<16xf32> {hm.home = "host", source = "w"}
tg.state @w.m : tensor<16xf32> {hm.home = "storage", kind = "momentum_buffer", param = @w}
func.func @train(%g: tensor<16xf32> {tg.input = "g"}, %lr: tensor<f32> {tg.role = "lr"}, %step: tensor<i64> {tg.role = "step"}) {
  // expected-error @+1 {{plan-staging: an op on the device names @w.m, which is in storage}}
  tg.sgd_update @w, %g, %lr, %step {momentum = 0.9 : f32, momentum_buffer = @w.m, weight_decay = 0.0 : f32} : tensor<16xf32>
  return
}
