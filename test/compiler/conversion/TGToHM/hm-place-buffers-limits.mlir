// RUN: not hmcc-opt %s -hm-place-buffers 2>&1 | FileCheck %s
// hm-place-buffers refuses a program whose tensors add up to more than 2^60 bytes, before any
// offset arithmetic could overflow (two tensors of 2^62 bytes here).
// CHECK: error: hm-place-buffers: the program's tensors add up to more than 2^60 bytes
func.func @huge(%x: tensor<1152921504606846976xf32> {tg.input = "x"}) -> tensor<1152921504606846976xf32> {
  %a = tg.exp %x : tensor<1152921504606846976xf32>
  return %a : tensor<1152921504606846976xf32>
}
