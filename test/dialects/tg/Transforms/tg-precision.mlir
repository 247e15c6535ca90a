// RUN: hmcc-opt %s -tg-precision="precision=bf16" | FileCheck %s --check-prefix=BF16
// RUN: hmcc-opt %s -tg-precision="precision=bf16" | hmcc-opt -tg-precision | FileCheck %s --check-prefix=FP32
// RUN: hmcc-opt %s -tg-precision="precision=bf16 bf16-storage=true" | FileCheck %s --check-prefix=STORE
// RUN: not hmcc-opt %s -tg-precision="precision=fp16" 2>&1 | FileCheck %s --check-prefix=BAD
// With precision=bf16 every MatMul, Gemm and attention (forward and
// gradient) is marked for bf16 products (tg.math = "bf16") and nothing else
// is; precision=fp32 clears the mark; another precision is an error naming it.
// BF16-LABEL: func.func @gemms
// BF16: tg.matmul %arg0, %arg1 {tg.math = "bf16"}
// BF16: tg.gemm %{{.*}}, %arg2, %arg3 {tg.math = "bf16"}
// BF16: tg.matmul %{{.*}} {tg.math = "bf16", transB}
// BF16: tg.add %{{.*}}, %{{.*}} :
// BF16-NOT: tg.math
// BF16-NOT: tg.cast
// BF16-LABEL: func.func @mixed
// BF16-LABEL: func.func @attention
// BF16: tg.attention %arg0, %arg1, %arg2 {causal, scale = 5.000000e-01 : f32, tg.math = "bf16"}
// BF16: tg.attention_grad %{{.*}} {causal, scale = 5.000000e-01 : f32, tg.math = "bf16"}
// BF16: tg.exp
// BF16-NOT: tg.math
// FP32-LABEL: func.func @gemms
// FP32-NOT: tg.math
// BAD: tg-precision: precision must be fp32 or bf16, not 'fp16'

// bf16-storage: a value made here whose bytes only GEMMs read (%y, through
// its view %r) is rounded once right after its op and its views view the
// bf16 copy (the f32 one dies there); a GEMM left with one f32 operand
// (an argument here) reads it as it is (the kernel rounds it, as it rounds
// two); Gemm's c stays f32.
// STORE-LABEL: func.func @gemms
// STORE:      %[[Y:.*]] = tg.matmul %arg0, %arg1 {tg.math = "bf16"} : (tensor<2x3x8xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
// STORE-NEXT: %[[Y16:.*]] = tg.cast %[[Y]] {nearest_even} : tensor<2x3x16xf32> to tensor<2x3x16xbf16>
// STORE-NEXT: %[[R16:.*]] = tg.reshape %[[Y16]] : tensor<2x3x16xbf16> -> tensor<6x16xbf16>
// STORE-NEXT: %[[Z:.*]] = tg.gemm %[[R16]], %arg2, %arg3 {tg.math = "bf16"} : (tensor<6x16xbf16>, tensor<16x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
// STORE-NEXT: tg.matmul %[[R16]], %[[R16]] {tg.math = "bf16", transB} : (tensor<6x16xbf16>, tensor<6x16xbf16>) -> tensor<6x6xf32>
// STORE-NEXT: tg.add %[[Z]], %arg3
func.func @gemms(%x: tensor<2x3x8xf32>, %w: tensor<8x16xf32>, %v: tensor<16x4xf32>, %c: tensor<4xf32>) -> (tensor<6x4xf32>, tensor<6x6xf32>) {
  %y = tg.matmul %x, %w : (tensor<2x3x8xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
  %r = tg.reshape %y : tensor<2x3x16xf32> -> tensor<6x16xf32>
  %z = tg.gemm %r, %v, %c : (tensor<6x16xf32>, tensor<16x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
  %u = tg.matmul %r, %r {transB} : (tensor<6x16xf32>, tensor<6x16xf32>) -> tensor<6x6xf32>
  %s = tg.add %z, %c : (tensor<6x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
  return %s, %u : tensor<6x4xf32>, tensor<6x6xf32>
}

// bf16-storage: a value two GEMMs and another op read (%e) stays f32, also
// for the GEMM whose other operand is bf16 (%p, read by that GEMM only,
// rounded once after its op).
// STORE-LABEL: func.func @mixed
// STORE:      %[[E:.*]] = tg.exp %arg0
// STORE-NEXT: %[[P:.*]] = tg.matmul %[[E]], %arg1 {tg.math = "bf16"}
// STORE-NEXT: %[[P16:.*]] = tg.cast %[[P]] {nearest_even}
// STORE-NEXT: tg.neg %[[E]]
// STORE-NEXT: tg.matmul %[[P16]], %[[E]] {tg.math = "bf16"} : (tensor<4x4xbf16>, tensor<4x4xf32>)
// STORE-NOT: tg.cast
func.func @mixed(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tg.exp %a : tensor<4x4xf32>
  %p = tg.matmul %e, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %n = tg.neg %e : tensor<4x4xf32>
  %q = tg.matmul %p, %e : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %n, %q : tensor<4x4xf32>, tensor<4x4xf32>
}

// bf16-storage: a parameter (and a view of one) lives throughout: never
// rounded where it is made, even where GEMMs alone read it, nor where the
// other operand is bf16.
// STORE-LABEL: func.func @params
// STORE:      %[[W:.*]] = tg.param @w
// STORE-NEXT: %[[V:.*]] = tg.reshape %[[W]]
// STORE-NEXT: %[[H:.*]] = tg.matmul %arg0, %[[V]] {tg.math = "bf16"}
// STORE-NEXT: %[[H16:.*]] = tg.cast %[[H]] {nearest_even}
// STORE-NEXT: %[[F16:.*]] = tg.reshape %[[H16]] : tensor<4x4xbf16> -> tensor<4x4xbf16>
// STORE-NEXT: tg.matmul %[[F16]], %[[V]] {tg.math = "bf16", transB} : (tensor<4x4xbf16>, tensor<4x4xf32>)
// STORE-NEXT: tg.matmul %[[F16]], %[[F16]] {tg.math = "bf16", transA}
tg.parameter @w : tensor<16xf32> {source = "w"}
func.func @params(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %w = tg.param @w : tensor<16xf32>
  %v = tg.reshape %w : tensor<16xf32> -> tensor<4x4xf32>
  %h = tg.matmul %a, %v : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %f = tg.reshape %h : tensor<4x4xf32> -> tensor<4x4xf32>
  %p = tg.matmul %f, %v {transB} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %q = tg.matmul %f, %f {transA} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %p, %q : tensor<4x4xf32>, tensor<4x4xf32>
}

func.func @attention(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %g: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) {
  %o, %lse = tg.attention %q, %k, %v {causal, scale = 0.5 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  %dq, %dk, %dv = tg.attention_grad %q, %k, %v, %o, %lse, %g {causal, scale = 0.5 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  %e = tg.exp %dq : tensor<1x2x4x8xf32>
  return %e, %dk : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
}

// bf16-storage: a GEMM factor that widens a bf16 value (exactly) is that
// value again (the kernel would round it back to the same bits); the
// widening stays for its other reader.
// BF16-LABEL: func.func @widen
// STORE-LABEL: func.func @widen
// STORE:      %[[Y16:.*]] = tg.cast %arg0 {nearest_even} : tensor<2x8xf32> to tensor<2x8xbf16>
// STORE-NEXT: %[[Y32:.*]] = tg.cast %[[Y16]] : tensor<2x8xbf16> to tensor<2x8xf32>
// STORE-NEXT: tg.neg %[[Y32]]
// STORE-NEXT: tg.matmul %[[Y16]], %arg1 {tg.math = "bf16"} : (tensor<2x8xbf16>, tensor<8x64xf32>)
// STORE-NEXT: return
func.func @widen(%x: tensor<2x8xf32>, %w: tensor<8x64xf32>) -> (tensor<2x8xf32>, tensor<2x64xf32>) {
  %y16 = tg.cast %x {nearest_even} : tensor<2x8xf32> to tensor<2x8xbf16>
  %y32 = tg.cast %y16 : tensor<2x8xbf16> to tensor<2x8xf32>
  %n = tg.neg %y32 : tensor<2x8xf32>
  %z = tg.matmul %y32, %w : (tensor<2x8xf32>, tensor<8x64xf32>) -> tensor<2x64xf32>
  return %n, %z : tensor<2x8xf32>, tensor<2x64xf32>
}
