// RUN: hmcc-opt %s -tg-precision="precision=bf16" | FileCheck %s --check-prefix=BF16
// RUN: hmcc-opt %s -tg-precision="precision=bf16" | hmcc-opt -tg-precision | FileCheck %s --check-prefix=FP32
// RUN: not hmcc-opt %s -tg-precision="precision=fp16" 2>&1 | FileCheck %s --check-prefix=BAD
// With precision=bf16 every MatMul and Gemm is marked for bf16 products
// (tg.math = "bf16") and nothing else is; precision=fp32 clears the mark;
// another precision is an error naming it.

// BF16-LABEL: func.func @gemms
// BF16: tg.matmul %arg0, %arg1 {tg.math = "bf16"}
// BF16: tg.gemm %{{.*}}, %arg2 {tg.math = "bf16"}
// BF16: tg.add %{{.*}}, %{{.*}} :
// BF16-NOT: tg.math
// FP32-LABEL: func.func @gemms
// FP32-NOT: tg.math
// BAD: tg-precision: precision must be fp32 or bf16, not 'fp16'
func.func @gemms(%x: tensor<2x3x8xf32>, %w: tensor<8x16xf32>, %v: tensor<16x4xf32>) -> tensor<6x4xf32> {
  %y = tg.matmul %x, %w : (tensor<2x3x8xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
  %r = tg.reshape %y : tensor<2x3x16xf32> -> tensor<6x16xf32>
  %z = tg.gemm %r, %v : (tensor<6x16xf32>, tensor<16x4xf32>) -> tensor<6x4xf32>
  %s = tg.add %z, %z : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  return %s : tensor<6x4xf32>
}
