// RUN: hmcc-opt %s -tg-expand-gradients | FileCheck %s
// ONNX Gradient: tg.gradient becomes the reverse sweep from y (seeded with
// ones, i.e. the gradient of y's sum) back to each x.

// CHECK-LABEL: func.func @add_and_mul
func.func @add_and_mul(%a: tensor<1x2xf32>, %b: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %c = tg.add %a, %b : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %d = tg.mul %c, %a : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  // CHECK-NOT: tg.gradient
  // CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<1x2xf32>
  // CHECK: %[[DC:.*]] = tg.mul %[[ONE]], %arg0
  // CHECK: %[[DA1:.*]] = tg.mul %[[ONE]], %{{.*}}
  // CHECK: %[[DA:.*]] = tg.add %[[DA1]], %[[DC]]
  // CHECK: return %[[DA]], %[[DC]]
  %da, %db = tg.gradient %d wrt %a, %b : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  return %da, %db : tensor<1x2xf32>, tensor<1x2xf32>
}

// An x that y does not depend on gets zeros.
// CHECK-LABEL: func.func @unused
func.func @unused(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %e = tg.exp %a : tensor<2xf32>
  // CHECK: %[[Z:.*]] = tg.constant dense<0.000000e+00> : tensor<2xf32>
  // CHECK: return %[[Z]]
  %da, %db = tg.gradient %e wrt %a, %b : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %db : tensor<2xf32>
}
