// RUN: hmcc-opt %s -hm-place-buffers -hm-verify-memory | FileCheck %s
// hm-place-buffers gives bytes an op with hm.soft_hold may still read to a new value only when no other free bytes fit.

// %a's last reader is a copy to the host that may run 3 ops longer: the
// tanh's result goes to the other free bytes (%z's, at 256), not to %a's
// (at 128, after @w and the input)...
// CHECK-LABEL: func.func @soft
// CHECK: tg.identity
// CHECK: %[[C:[0-9]+]] = tg.tanh %{{[0-9]+}} : tensor<16xf32>
// CHECK-NEXT: hm.place %[[C]] in @arena at 256
tg.parameter @w : tensor<16xf32> {source = "w"}
func.func @soft(%x: tensor<16xf32> {tg.input = "x"}) -> (tensor<16xf32>, tensor<16xf32>) {
  %a = tg.exp %x : tensor<16xf32>
  %k = tg.exp %x : tensor<16xf32>
  %z = tg.exp %x : tensor<16xf32>
  %y = tg.tanh %z : tensor<16xf32>
  %h = tg.identity %a {hm.home = "host", hm.soft_hold = 3 : i64} : tensor<16xf32>
  %c = tg.tanh %y : tensor<16xf32>
  %d = tg.add %c, %k : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %d, %h : tensor<16xf32>, tensor<16xf32>
}

// ... which first fit takes without it.
// CHECK-LABEL: func.func @none
// CHECK: tg.identity
// CHECK: %[[C:[0-9]+]] = tg.tanh %{{[0-9]+}} : tensor<16xf32>
// CHECK-NEXT: hm.place %[[C]] in @arena at 128
func.func @none(%x: tensor<16xf32> {tg.input = "x"}) -> (tensor<16xf32>, tensor<16xf32>) {
  %a = tg.exp %x : tensor<16xf32>
  %k = tg.exp %x : tensor<16xf32>
  %z = tg.exp %x : tensor<16xf32>
  %y = tg.tanh %z : tensor<16xf32>
  %h = tg.identity %a {hm.home = "host"} : tensor<16xf32>
  %c = tg.tanh %y : tensor<16xf32>
  %d = tg.add %c, %k : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %d, %h : tensor<16xf32>, tensor<16xf32>
}
