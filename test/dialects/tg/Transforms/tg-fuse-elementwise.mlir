// RUN: hmcc-opt %s -split-input-file -tg-fuse-elementwise | FileCheck %s
// tg-fuse-elementwise: chains of elementwise ops become one tg.fused each; cheap forward ops the backward reads are computed again there; near misses stay as they are.

// GELU (erf form, as torch exports it) with its bias, and its derivative:
// the forward is one fused op on the matmul's output and the bias; the
// backward recomputes erf from the same two instead of keeping the forward's
// intermediates, so only %mm and %dy are read by both.
// CHECK-LABEL: func.func @gelu
// CHECK-NOT: tg.erf
// CHECK: %[[Y:.*]] = tg.fused %b, %arg0, %{{.*}}, %{{.*}}, %{{.*}} {args = array<i64: 0, 1, -1, 5, 2, -1, 6, -1, -1, 7, 3, -1, 5, 8, -1, 9, 4, -1>, ops = ["add", "div", "erf", "add", "mul", "mul"]} : (tensor<16xf32>, tensor<4x16xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4x16xf32>
// CHECK: %[[DX:.*]] = tg.fused %arg1, %{{.*}}, %b, %arg0, {{.*}} ops = ["mul", "add", "div", "erf", "add", "mul", "mul", "mul", "neg", "exp", "mul", "mul", "div", "add"]}
// CHECK-NOT: tg.mul
// CHECK: return %[[Y]], %[[DX]]
tg.parameter @b : tensor<16xf32> {source = "b"}
func.func @gelu(%mm: tensor<4x16xf32>, %dy: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %b = tg.param @b : tensor<16xf32>
  %x = tg.add %b, %mm : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %s2 = tg.constant dense<1.41421354> : tensor<f32>
  %t = tg.div %x, %s2 : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %e = tg.erf %t : tensor<4x16xf32>
  %one = tg.constant dense<1.0> : tensor<f32>
  %e1 = tg.add %e, %one : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %xe = tg.mul %x, %e1 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %half = tg.constant dense<0.5> : tensor<f32>
  %y = tg.mul %xe, %half : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  // backward
  %g = tg.mul %dy, %half : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %g1 = tg.mul %g, %e1 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %g2 = tg.mul %g, %x : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %tt = tg.mul %t, %t : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %ntt = tg.neg %tt : tensor<4x16xf32>
  %ex = tg.exp %ntt : tensor<4x16xf32>
  %k = tg.constant dense<1.12837923> : tensor<f32>
  %de = tg.mul %ex, %k : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %g3 = tg.mul %g2, %de : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %g4 = tg.div %g3, %s2 : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %dx = tg.add %g1, %g4 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y, %dx : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----
// A value read by a non-elementwise op (here the return) is stored, and the
// chain after it reads it as an input.
// CHECK-LABEL: func.func @stored
// CHECK: %[[A:.*]] = tg.fused %arg0, %arg1 {args = array<i64: 0, 1, -1, 2, -1, -1>, ops = ["mul", "tanh"]}
// CHECK: %[[B:.*]] = tg.fused %[[A]], %arg1 {args = array<i64: 0, -1, -1, 2, 1, -1>, ops = ["exp", "add"]}
// CHECK: return %[[A]], %[[B]]
func.func @stored(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %m = tg.mul %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %t = tg.tanh %m : tensor<8xf32>
  %e = tg.exp %t : tensor<8xf32>
  %s = tg.add %e, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %t, %s : tensor<8xf32>, tensor<8xf32>
}

// -----
// Near misses: one op alone stays; an op of a smaller shape (computed on the
// bias) is not repeated for every element of its user; integer arithmetic
// does not fuse.
// CHECK-LABEL: func.func @near_misses
// CHECK-NOT: tg.fused
// CHECK: tg.mul %arg1, %arg1 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
// CHECK: tg.add %arg0, %{{.*}} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK: tg.add %arg2, %arg2 : (tensor<4xi64>, tensor<4xi64>)
// CHECK: tg.neg
// CHECK-NOT: tg.fused
func.func @near_misses(%x: tensor<4x16xf32>, %b: tensor<16xf32>, %i: tensor<4xi64>) -> (tensor<4x16xf32>, tensor<4xi64>) {
  %bb = tg.mul %b, %b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %y = tg.add %x, %bb : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %j = tg.add %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %k = tg.neg %j : tensor<4xi64>
  return %y, %k : tensor<4x16xf32>, tensor<4xi64>
}

// -----
// An op that reads two tensors of its size and has a user past another op
// (the matmul) is stored rather than computed again there: computing it
// late would keep both its inputs alive instead of it. Both its users' chains
// read it as an input.
// CHECK-LABEL: func.func @two_inputs_far
// CHECK: %[[P:.*]] = tg.mul %arg0, %arg1
// CHECK: tg.fused %[[P]] {{.*}}ops = ["exp", "neg"]
// CHECK: tg.matmul
// CHECK: tg.fused %[[P]], %{{.*}} {{.*}}ops = ["sigmoid", "mul"]
func.func @two_inputs_far(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %p = tg.mul %a, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = tg.exp %p : tensor<4x4xf32>
  %n = tg.neg %e : tensor<4x4xf32>
  %m = tg.matmul %n, %n : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = tg.sigmoid %p : tensor<4x4xf32>
  %r = tg.mul %s, %m : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %n, %r : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----
// The same op read by five stored values is stored itself (it would be
// computed five times); read by two, it is computed in both.
// CHECK-LABEL: func.func @copies
// CHECK: %[[E:.*]] = tg.exp %arg0
// CHECK-COUNT-5: tg.fused %[[E]]
// CHECK: tg.fused %arg1 {args = array<i64: 0, -1, -1, 1, -1, -1>, ops = ["erf", "neg"]}
// CHECK: tg.fused %arg1 {args = array<i64: 0, -1, -1, 1, -1, -1>, ops = ["erf", "relu"]}
func.func @copies(%x: tensor<8xf32>, %z: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %e = tg.exp %x : tensor<8xf32>
  %a = tg.neg %e : tensor<8xf32>
  %a2 = tg.neg %a : tensor<8xf32>
  %b = tg.relu %e : tensor<8xf32>
  %b2 = tg.neg %b : tensor<8xf32>
  %c = tg.tanh %e : tensor<8xf32>
  %c2 = tg.neg %c : tensor<8xf32>
  %d = tg.sigmoid %e : tensor<8xf32>
  %d2 = tg.neg %d : tensor<8xf32>
  %f = tg.sqrt %e : tensor<8xf32>
  %f2 = tg.neg %f : tensor<8xf32>
  %q = tg.erf %z : tensor<8xf32>
  %q1 = tg.neg %q : tensor<8xf32>
  %q2 = tg.relu %q : tensor<8xf32>
  return %a2, %b2, %c2, %d2, %f2, %q1, %q2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----
// A causal mask and a scale: the bool mask is an input of the fused op,
// broadcast over batch and heads.
// CHECK-LABEL: func.func @mask_scale
// CHECK: tg.fused %arg0, %{{.*}}, %arg1, %{{.*}} {args = array<i64: 0, 1, -1, 2, 4, 3, 5, -1, -1>, ops = ["mul", "where", "exp"]} : (tensor<2x3x4x4xf32>, tensor<f32>, tensor<1x1x4x4xi1>, tensor<f32>) -> tensor<2x3x4x4xf32>
func.func @mask_scale(%s: tensor<2x3x4x4xf32>, %m: tensor<1x1x4x4xi1>) -> tensor<2x3x4x4xf32> {
  %k = tg.constant dense<0.125> : tensor<f32>
  %ss = tg.mul %s, %k : (tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<2x3x4x4xf32>
  %ninf = tg.constant dense<-1.0e30> : tensor<f32>
  %w = tg.where %m, %ss, %ninf : (tensor<1x1x4x4xi1>, tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<2x3x4x4xf32>
  %e = tg.exp %w : tensor<2x3x4x4xf32>
  return %e : tensor<2x3x4x4xf32>
}

// -----
// A chain longer than 64 ops: one fused op holds the last 64, the ops before
// it stay on their own (its input).
// CHECK-LABEL: func.func @long_chain
// CHECK-COUNT-6: tg.neg
// CHECK-NOT: tg.neg
// CHECK: tg.fused %{{.*}} {args = array<i64: 0, -1, -1, 1, -1, -1,
// CHECK-NOT: tg.neg
func.func @long_chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %v0 = tg.neg %x : tensor<8xf32>
  %v1 = tg.neg %v0 : tensor<8xf32>
  %v2 = tg.neg %v1 : tensor<8xf32>
  %v3 = tg.neg %v2 : tensor<8xf32>
  %v4 = tg.neg %v3 : tensor<8xf32>
  %v5 = tg.neg %v4 : tensor<8xf32>
  %v6 = tg.neg %v5 : tensor<8xf32>
  %v7 = tg.neg %v6 : tensor<8xf32>
  %v8 = tg.neg %v7 : tensor<8xf32>
  %v9 = tg.neg %v8 : tensor<8xf32>
  %v10 = tg.neg %v9 : tensor<8xf32>
  %v11 = tg.neg %v10 : tensor<8xf32>
  %v12 = tg.neg %v11 : tensor<8xf32>
  %v13 = tg.neg %v12 : tensor<8xf32>
  %v14 = tg.neg %v13 : tensor<8xf32>
  %v15 = tg.neg %v14 : tensor<8xf32>
  %v16 = tg.neg %v15 : tensor<8xf32>
  %v17 = tg.neg %v16 : tensor<8xf32>
  %v18 = tg.neg %v17 : tensor<8xf32>
  %v19 = tg.neg %v18 : tensor<8xf32>
  %v20 = tg.neg %v19 : tensor<8xf32>
  %v21 = tg.neg %v20 : tensor<8xf32>
  %v22 = tg.neg %v21 : tensor<8xf32>
  %v23 = tg.neg %v22 : tensor<8xf32>
  %v24 = tg.neg %v23 : tensor<8xf32>
  %v25 = tg.neg %v24 : tensor<8xf32>
  %v26 = tg.neg %v25 : tensor<8xf32>
  %v27 = tg.neg %v26 : tensor<8xf32>
  %v28 = tg.neg %v27 : tensor<8xf32>
  %v29 = tg.neg %v28 : tensor<8xf32>
  %v30 = tg.neg %v29 : tensor<8xf32>
  %v31 = tg.neg %v30 : tensor<8xf32>
  %v32 = tg.neg %v31 : tensor<8xf32>
  %v33 = tg.neg %v32 : tensor<8xf32>
  %v34 = tg.neg %v33 : tensor<8xf32>
  %v35 = tg.neg %v34 : tensor<8xf32>
  %v36 = tg.neg %v35 : tensor<8xf32>
  %v37 = tg.neg %v36 : tensor<8xf32>
  %v38 = tg.neg %v37 : tensor<8xf32>
  %v39 = tg.neg %v38 : tensor<8xf32>
  %v40 = tg.neg %v39 : tensor<8xf32>
  %v41 = tg.neg %v40 : tensor<8xf32>
  %v42 = tg.neg %v41 : tensor<8xf32>
  %v43 = tg.neg %v42 : tensor<8xf32>
  %v44 = tg.neg %v43 : tensor<8xf32>
  %v45 = tg.neg %v44 : tensor<8xf32>
  %v46 = tg.neg %v45 : tensor<8xf32>
  %v47 = tg.neg %v46 : tensor<8xf32>
  %v48 = tg.neg %v47 : tensor<8xf32>
  %v49 = tg.neg %v48 : tensor<8xf32>
  %v50 = tg.neg %v49 : tensor<8xf32>
  %v51 = tg.neg %v50 : tensor<8xf32>
  %v52 = tg.neg %v51 : tensor<8xf32>
  %v53 = tg.neg %v52 : tensor<8xf32>
  %v54 = tg.neg %v53 : tensor<8xf32>
  %v55 = tg.neg %v54 : tensor<8xf32>
  %v56 = tg.neg %v55 : tensor<8xf32>
  %v57 = tg.neg %v56 : tensor<8xf32>
  %v58 = tg.neg %v57 : tensor<8xf32>
  %v59 = tg.neg %v58 : tensor<8xf32>
  %v60 = tg.neg %v59 : tensor<8xf32>
  %v61 = tg.neg %v60 : tensor<8xf32>
  %v62 = tg.neg %v61 : tensor<8xf32>
  %v63 = tg.neg %v62 : tensor<8xf32>
  %v64 = tg.neg %v63 : tensor<8xf32>
  %v65 = tg.neg %v64 : tensor<8xf32>
  %v66 = tg.neg %v65 : tensor<8xf32>
  %v67 = tg.neg %v66 : tensor<8xf32>
  %v68 = tg.neg %v67 : tensor<8xf32>
  %v69 = tg.neg %v68 : tensor<8xf32>
  return %v69 : tensor<8xf32>
}

// -----
// An expression reading more than 64 tensors stays as separate ops (the
// runtime's fused programs take 64 inputs).
// CHECK-LABEL: func.func @many_inputs
// CHECK-NOT: tg.fused
func.func @many_inputs(%a0: tensor<8xf32>, %a1: tensor<8xf32>, %a2: tensor<8xf32>, %a3: tensor<8xf32>, %a4: tensor<8xf32>, %a5: tensor<8xf32>, %a6: tensor<8xf32>, %a7: tensor<8xf32>, %a8: tensor<8xf32>, %a9: tensor<8xf32>, %a10: tensor<8xf32>, %a11: tensor<8xf32>, %a12: tensor<8xf32>, %a13: tensor<8xf32>, %a14: tensor<8xf32>, %a15: tensor<8xf32>, %a16: tensor<8xf32>, %a17: tensor<8xf32>, %a18: tensor<8xf32>, %a19: tensor<8xf32>, %a20: tensor<8xf32>, %a21: tensor<8xf32>, %a22: tensor<8xf32>, %a23: tensor<8xf32>, %a24: tensor<8xf32>, %a25: tensor<8xf32>, %a26: tensor<8xf32>, %a27: tensor<8xf32>, %a28: tensor<8xf32>, %a29: tensor<8xf32>, %a30: tensor<8xf32>, %a31: tensor<8xf32>, %a32: tensor<8xf32>, %a33: tensor<8xf32>, %a34: tensor<8xf32>, %a35: tensor<8xf32>, %a36: tensor<8xf32>, %a37: tensor<8xf32>, %a38: tensor<8xf32>, %a39: tensor<8xf32>, %a40: tensor<8xf32>, %a41: tensor<8xf32>, %a42: tensor<8xf32>, %a43: tensor<8xf32>, %a44: tensor<8xf32>, %a45: tensor<8xf32>, %a46: tensor<8xf32>, %a47: tensor<8xf32>, %a48: tensor<8xf32>, %a49: tensor<8xf32>, %a50: tensor<8xf32>, %a51: tensor<8xf32>, %a52: tensor<8xf32>, %a53: tensor<8xf32>, %a54: tensor<8xf32>, %a55: tensor<8xf32>, %a56: tensor<8xf32>, %a57: tensor<8xf32>, %a58: tensor<8xf32>, %a59: tensor<8xf32>, %a60: tensor<8xf32>, %a61: tensor<8xf32>, %a62: tensor<8xf32>, %a63: tensor<8xf32>, %a64: tensor<8xf32>, %a65: tensor<8xf32>) -> tensor<8xf32> {
  %s0 = tg.add %a0, %a1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s1 = tg.add %s0, %a2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s2 = tg.add %s1, %a3 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s3 = tg.add %s2, %a4 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s4 = tg.add %s3, %a5 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s5 = tg.add %s4, %a6 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s6 = tg.add %s5, %a7 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s7 = tg.add %s6, %a8 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s8 = tg.add %s7, %a9 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s9 = tg.add %s8, %a10 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s10 = tg.add %s9, %a11 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s11 = tg.add %s10, %a12 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s12 = tg.add %s11, %a13 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s13 = tg.add %s12, %a14 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s14 = tg.add %s13, %a15 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s15 = tg.add %s14, %a16 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s16 = tg.add %s15, %a17 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s17 = tg.add %s16, %a18 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s18 = tg.add %s17, %a19 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s19 = tg.add %s18, %a20 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s20 = tg.add %s19, %a21 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s21 = tg.add %s20, %a22 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s22 = tg.add %s21, %a23 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s23 = tg.add %s22, %a24 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s24 = tg.add %s23, %a25 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s25 = tg.add %s24, %a26 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s26 = tg.add %s25, %a27 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s27 = tg.add %s26, %a28 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s28 = tg.add %s27, %a29 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s29 = tg.add %s28, %a30 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s30 = tg.add %s29, %a31 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s31 = tg.add %s30, %a32 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s32 = tg.add %s31, %a33 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s33 = tg.add %s32, %a34 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s34 = tg.add %s33, %a35 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s35 = tg.add %s34, %a36 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s36 = tg.add %s35, %a37 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s37 = tg.add %s36, %a38 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s38 = tg.add %s37, %a39 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s39 = tg.add %s38, %a40 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s40 = tg.add %s39, %a41 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s41 = tg.add %s40, %a42 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s42 = tg.add %s41, %a43 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s43 = tg.add %s42, %a44 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s44 = tg.add %s43, %a45 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s45 = tg.add %s44, %a46 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s46 = tg.add %s45, %a47 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s47 = tg.add %s46, %a48 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s48 = tg.add %s47, %a49 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s49 = tg.add %s48, %a50 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s50 = tg.add %s49, %a51 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s51 = tg.add %s50, %a52 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s52 = tg.add %s51, %a53 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s53 = tg.add %s52, %a54 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s54 = tg.add %s53, %a55 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s55 = tg.add %s54, %a56 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s56 = tg.add %s55, %a57 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s57 = tg.add %s56, %a58 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s58 = tg.add %s57, %a59 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s59 = tg.add %s58, %a60 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s60 = tg.add %s59, %a61 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s61 = tg.add %s60, %a62 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s62 = tg.add %s61, %a63 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s63 = tg.add %s62, %a64 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s64 = tg.add %s63, %a65 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %s64 : tensor<8xf32>
}
