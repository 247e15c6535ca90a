// RUN: hmcc-opt %s -tg-summary -o /dev/null | FileCheck %s
// tg-summary counts parameters (tensors, elements, bytes), constants, inputs,
// outputs and ops, most frequent op first.

// CHECK:      model tiny
// CHECK-NEXT:   parameters   2 tensors, 160 elements, 640 B
// CHECK-NEXT:   constants    1 tensors, 8 B
// CHECK-NEXT:   function @forward
// CHECK-NEXT:     input  x tensor<4x16xf32>
// CHECK-NEXT:     input  y tensor<4xi64>
// CHECK-NEXT:     output loss tensor<f32>
// CHECK-NEXT:   ops          7 in all
// CHECK-NEXT:     tg.param                                2
// CHECK-NEXT:     tg.add                                  1
// CHECK-NEXT:     tg.constant                             1
// CHECK-NEXT:     tg.gemm                                 1
// CHECK-NEXT:     tg.relu                                 1
// CHECK-NEXT:     tg.softmax_cross_entropy_loss           1
module @tiny {
  tg.parameter @w : tensor<10x15xf32> {source = "w"}
  tg.parameter @b : tensor<10xf32> {source = "b"}
  func.func @forward(%x: tensor<4x16xf32> {tg.input = "x"}, %y: tensor<4xi64> {tg.input = "y"})
      -> (tensor<f32> {tg.output = "loss"}) {
    %w = tg.param @w : tensor<10x15xf32>
    %b = tg.param @b : tensor<10xf32>
    %c = tg.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %h = tg.relu %x : tensor<4x16xf32>
    %s = tg.add %h, %h : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %z = tg.gemm %s, %x {transB} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x4xf32>
    %l = tg.softmax_cross_entropy_loss %z, %y : (tensor<4x4xf32>, tensor<4xi64>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
