// RUN: hmcc-opt %s -split-input-file -tg-fuse-attention | FileCheck %s
// RUN: hmcc-opt %s -split-input-file -tg-fuse-attention=pack-qkv=false | FileCheck %s --check-prefix=NOPACK
// tg-fuse-attention: scaled-dot-product attention as torch exports it becomes one tg.attention (causal, masked, seq-major, q, k and v packed in their projection); near misses stay.

// GPT-2 as exported: heads split by transposes, a constant causal mask
// through where, the scale a mul, a dropout of ratio 0. One op reads the
// projections' (batch, seq, heads, head_dim) tensors directly; no
// transpose is left.
// CHECK-LABEL: func.func @gpt2
// CHECK-NOT: tg.transpose
// CHECK-NOT: tg.softmax
// CHECK: %[[O:.*]], %{{.*}} = tg.attention %arg0, %arg1, %arg2 {bthd, causal, scale = 1.250000e-01 : f32} : (tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>) -> (tensor<2x4x3x8xf32>, tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[O]]
func.func @gpt2(%q: tensor<2x4x3x8xf32>, %k: tensor<2x4x3x8xf32>, %v: tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32> {
  %qt = tg.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>
  %kt = tg.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<2x4x3x8xf32> -> tensor<2x3x8x4xf32>
  %vt = tg.transpose %v {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>
  %s = tg.matmul %qt, %kt : (tensor<2x3x4x8xf32>, tensor<2x3x8x4xf32>) -> tensor<2x3x4x4xf32>
  %c = tg.constant dense<0.125> : tensor<f32>
  %ss = tg.mul %s, %c : (tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<2x3x4x4xf32>
  %m = tg.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %ninf = tg.constant dense<0xFF800000> : tensor<f32>
  %w = tg.where %m, %ninf, %ss : (tensor<1x1x4x4xi1>, tensor<f32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %p = tg.softmax %w {axis = 3 : i64} : tensor<2x3x4x4xf32>
  %pd, %pm = tg.dropout %p {ratio = 0.000000e+00 : f32, training} : tensor<2x3x4x4xf32> -> tensor<2x3x4x4xi1>
  %o = tg.matmul %pd, %vt : (tensor<2x3x4x4xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
  %ot = tg.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x4x8xf32> -> tensor<2x4x3x8xf32>
  return %ot : tensor<2x4x3x8xf32>
}

// -----
// nanoGPT's form: K's heads split by one transpose and K^T made by a
// second; the two compose to the (batch, seq, heads, head_dim) tensor, so
// the op reads it directly and no transpose is left here either.
// CHECK-LABEL: func.func @two_transposes
// CHECK-NOT: tg.transpose
// CHECK: %[[O:.*]], %{{.*}} = tg.attention %arg0, %arg1, %arg2 {bthd, causal, scale = 1.250000e-01 : f32}
// CHECK-NEXT: return %[[O]]
func.func @two_transposes(%q: tensor<2x4x3x8xf32>, %k: tensor<2x4x3x8xf32>, %v: tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32> {
  %qt = tg.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>
  %kh = tg.transpose %k {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>
  %kt = tg.transpose %kh {perm = array<i64: 0, 1, 3, 2>} : tensor<2x3x4x8xf32> -> tensor<2x3x8x4xf32>
  %vt = tg.transpose %v {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>
  %s = tg.matmul %qt, %kt : (tensor<2x3x4x8xf32>, tensor<2x3x8x4xf32>) -> tensor<2x3x4x4xf32>
  %c = tg.constant dense<0.125> : tensor<f32>
  %ss = tg.mul %s, %c : (tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<2x3x4x4xf32>
  %m = tg.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %ninf = tg.constant dense<0xFF800000> : tensor<f32>
  %w = tg.where %m, %ninf, %ss : (tensor<1x1x4x4xi1>, tensor<f32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %p = tg.softmax %w {axis = 3 : i64} : tensor<2x3x4x4xf32>
  %o = tg.matmul %p, %vt : (tensor<2x3x4x4xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
  %ot = tg.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x4x8xf32> -> tensor<2x4x3x8xf32>
  return %ot : tensor<2x4x3x8xf32>
}

// -----
// Heads already first, scale a div, a mask that is not causal (where
// selecting the scores where it is true): an additive bias of 0 and -inf.
// CHECK-LABEL: func.func @masked
// CHECK-DAG: %[[B:.*]] = tg.constant dense<{{\[\[\[\[}}0xFF800000, 0.000000e+00], [0.000000e+00, 0.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK-DAG: %[[KT:.*]] = tg.transpose %arg1 {perm = array<i64: 0, 1, 3, 2>}
// CHECK: tg.attention %arg0, %[[KT]], %arg2, %[[B]] {scale = 5.000000e-01 : f32}
func.func @masked(%q: tensor<1x2x2x4xf32>, %kt: tensor<1x2x4x2xf32>, %v: tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %s = tg.matmul %q, %kt : (tensor<1x2x2x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x2x2xf32>
  %c = tg.constant dense<2.0> : tensor<f32>
  %ss = tg.div %s, %c : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %m = tg.constant dense<[[false, true], [true, true]]> : tensor<2x2xi1>
  %ninf = tg.constant dense<0xFF800000> : tensor<f32>
  %w = tg.where %m, %ss, %ninf : (tensor<2x2xi1>, tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %p = tg.softmax %w {axis = 3 : i64} : tensor<1x2x2x2xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x2x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %o : tensor<1x2x2x4xf32>
}

// -----
// Near misses: the probabilities are read elsewhere too; a dropout whose
// mask is read elsewhere; a mask computed at run time. All stay as they
// are.
// CHECK-LABEL: func.func @near_misses
// CHECK-NOT: tg.attention
// CHECK-COUNT-3: tg.softmax
// CHECK-NOT: tg.attention
func.func @near_misses(%q: tensor<1x1x2x4xf32>, %kt: tensor<1x1x4x2xf32>, %v: tensor<1x1x2x4xf32>, %mask: tensor<2x2xi1>) -> (tensor<1x1x2x4xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x2xf32>) {
  %s = tg.matmul %q, %kt : (tensor<1x1x2x4xf32>, tensor<1x1x4x2xf32>) -> tensor<1x1x2x2xf32>
  %p = tg.softmax %s {axis = 3 : i64} : tensor<1x1x2x2xf32>
  %o = tg.matmul %p, %v : (tensor<1x1x2x2xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %s2 = tg.matmul %q, %kt : (tensor<1x1x2x4xf32>, tensor<1x1x4x2xf32>) -> tensor<1x1x2x2xf32>
  %p2 = tg.softmax %s2 {axis = 3 : i64} : tensor<1x1x2x2xf32>
  %pd, %pm = tg.dropout %p2 {ratio = 1.000000e-01 : f32, training} : tensor<1x1x2x2xf32> -> tensor<1x1x2x2xi1>
  %o2 = tg.matmul %pd, %v : (tensor<1x1x2x2xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %pmf = tg.cast %pm : tensor<1x1x2x2xi1> to tensor<1x1x2x2xf32>
  %s3 = tg.matmul %q, %kt : (tensor<1x1x2x4xf32>, tensor<1x1x4x2xf32>) -> tensor<1x1x2x2xf32>
  %ninf = tg.constant dense<0xFF800000> : tensor<f32>
  %w = tg.where %mask, %ninf, %s3 : (tensor<2x2xi1>, tensor<f32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %p3 = tg.softmax %w {axis = 3 : i64} : tensor<1x1x2x2xf32>
  %o3 = tg.matmul %p3, %v : (tensor<1x1x2x2xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  return %o, %p, %o2, %o3, %pmf : tensor<1x1x2x4xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x2xf32>
}

// -----
// A dropout that drops in training moves into the op with its mask stream:
// every dropout is numbered first, in program order, so the one before it
// keeps stream 0 and the fused one takes 1.
// CHECK-LABEL: func.func @dropout
// CHECK: tg.dropout %arg0 {ratio = 5.000000e-01 : f32, stream = 0 : i64, training}
// CHECK: tg.attention %{{.*}}, %{{.*}}, %arg2 {dropout = 1.000000e-01 : f32, scale = 1.000000e+00 : f32, seed = 42 : i64, stream = 1 : i64}
func.func @dropout(%q: tensor<1x1x2x4xf32>, %kt: tensor<1x1x4x2xf32>, %v: tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32> {
  %qd, %qm = tg.dropout %q {ratio = 5.000000e-01 : f32, training} : tensor<1x1x2x4xf32> -> tensor<1x1x2x4xi1>
  %s = tg.matmul %qd, %kt : (tensor<1x1x2x4xf32>, tensor<1x1x4x2xf32>) -> tensor<1x1x2x2xf32>
  %p = tg.softmax %s {axis = 3 : i64} : tensor<1x1x2x2xf32>
  %pd, %pm = tg.dropout %p {ratio = 1.000000e-01 : f32, seed = 42 : i64, training} : tensor<1x1x2x2xf32> -> tensor<1x1x2x2xi1>
  %o = tg.matmul %pd, %v : (tensor<1x1x2x2xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  return %o : tensor<1x1x2x4xf32>
}

// -----
// Grouped-query attention as exported: K and V expanded from 2 kv heads to
// 4 by unsqueeze, expand and reshape are read from their kv heads.
// CHECK-LABEL: func.func @grouped
// CHECK-NOT: tg.expand
// CHECK: tg.attention %arg0, %{{.*}}, %arg2 {scale = 1.000000e+00 : f32} : (tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>)
func.func @grouped(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) -> tensor<1x4x3x8xf32> {
  %ku = tg.unsqueeze %k {axes = array<i64: 2>} : tensor<1x2x3x8xf32> -> tensor<1x2x1x3x8xf32>
  %ke = tg.expand %ku : tensor<1x2x1x3x8xf32> -> tensor<1x2x2x3x8xf32>
  %kr = tg.reshape %ke : tensor<1x2x2x3x8xf32> -> tensor<1x4x3x8xf32>
  %vu = tg.unsqueeze %v {axes = array<i64: 2>} : tensor<1x2x3x8xf32> -> tensor<1x2x1x3x8xf32>
  %ve = tg.expand %vu : tensor<1x2x1x3x8xf32> -> tensor<1x2x2x3x8xf32>
  %vr = tg.reshape %ve : tensor<1x2x2x3x8xf32> -> tensor<1x4x3x8xf32>
  %kt = tg.transpose %kr {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x3x8xf32> -> tensor<1x4x8x3xf32>
  %s = tg.matmul %q, %kt : (tensor<1x4x3x8xf32>, tensor<1x4x8x3xf32>) -> tensor<1x4x3x3xf32>
  %p = tg.softmax %s {axis = 3 : i64} : tensor<1x4x3x3xf32>
  %o = tg.matmul %p, %vr : (tensor<1x4x3x3xf32>, tensor<1x4x3x8xf32>) -> tensor<1x4x3x8xf32>
  return %o : tensor<1x4x3x8xf32>
}

// -----
// GPT-2's q, k and v as one projection split along its last axis and
// reshaped to heads: the op reads the projection (packed), viewed as
// (batch, seq, 3 heads, head_dim); no split is left. pack-qkv=false keeps
// the split.
// CHECK-LABEL: func.func @packed
// CHECK-NOT: tg.split
// CHECK: %[[P:.*]] = tg.reshape %arg0 : tensor<2x4x72xf32> -> tensor<2x4x9x8xf32>
// CHECK-NOT: tg.split
// CHECK: %[[O:.*]], %{{.*}} = tg.attention %[[P]], %[[P]], %[[P]] {bthd, causal, packed, scale = 1.250000e-01 : f32} : (tensor<2x4x9x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x8xf32>) -> (tensor<2x4x3x8xf32>, tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[O]]
// NOPACK-LABEL: func.func @packed
// NOPACK: tg.split
// NOPACK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} {bthd, causal, scale = 1.250000e-01 : f32}
func.func @packed(%qkv: tensor<2x4x72xf32>) -> tensor<2x4x3x8xf32> {
  %q0, %k0, %v0 = tg.split %qkv {axis = 2 : i64, sizes = array<i64: 24, 24, 24>} : tensor<2x4x72xf32> -> (tensor<2x4x24xf32>, tensor<2x4x24xf32>, tensor<2x4x24xf32>)
  %q = tg.reshape %q0 : tensor<2x4x24xf32> -> tensor<2x4x3x8xf32>
  %k = tg.reshape %k0 : tensor<2x4x24xf32> -> tensor<2x4x3x8xf32>
  %v = tg.reshape %v0 : tensor<2x4x24xf32> -> tensor<2x4x3x8xf32>
  %qt = tg.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>
  %kt = tg.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<2x4x3x8xf32> -> tensor<2x3x8x4xf32>
  %vt = tg.transpose %v {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>
  %s = tg.matmul %qt, %kt : (tensor<2x3x4x8xf32>, tensor<2x3x8x4xf32>) -> tensor<2x3x4x4xf32>
  %c = tg.constant dense<0.125> : tensor<f32>
  %ss = tg.mul %s, %c : (tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<2x3x4x4xf32>
  %m = tg.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %ninf = tg.constant dense<0xFF800000> : tensor<f32>
  %w = tg.where %m, %ninf, %ss : (tensor<1x1x4x4xi1>, tensor<f32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %p = tg.softmax %w {axis = 3 : i64} : tensor<2x3x4x4xf32>
  %o = tg.matmul %p, %vt : (tensor<2x3x4x4xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
  %ot = tg.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x4x8xf32> -> tensor<2x4x3x8xf32>
  return %ot : tensor<2x4x3x8xf32>
}

// -----
// Not packed: v is read by another op too, and the second attention takes
// the split's results out of order (k before q); each keeps its split.
// CHECK-LABEL: func.func @packing_near_misses
// CHECK-COUNT-2: tg.split
// CHECK-NOT: packed
func.func @packing_near_misses(%qkv: tensor<2x4x48xf32>) -> (tensor<2x4x2x8xf32>, tensor<2x4x2x8xf32>, tensor<2x4x2x8xf32>) {
  %q0, %k0, %v0 = tg.split %qkv {axis = 2 : i64, sizes = array<i64: 16, 16, 16>} : tensor<2x4x48xf32> -> (tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>)
  %q = tg.reshape %q0 : tensor<2x4x16xf32> -> tensor<2x4x2x8xf32>
  %k = tg.reshape %k0 : tensor<2x4x16xf32> -> tensor<2x4x2x8xf32>
  %v = tg.reshape %v0 : tensor<2x4x16xf32> -> tensor<2x4x2x8xf32>
  %qt = tg.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x2x8xf32> -> tensor<2x2x4x8xf32>
  %kt = tg.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<2x4x2x8xf32> -> tensor<2x2x8x4xf32>
  %vt = tg.transpose %v {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x2x8xf32> -> tensor<2x2x4x8xf32>
  %s = tg.matmul %qt, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %p = tg.softmax %s {axis = 3 : i64} : tensor<2x2x4x4xf32>
  %o = tg.matmul %p, %vt : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %ot = tg.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x4x8xf32> -> tensor<2x4x2x8xf32>
  %a0, %b0, %c0 = tg.split %qkv {axis = 2 : i64, sizes = array<i64: 16, 16, 16>} : tensor<2x4x48xf32> -> (tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>)
  %a = tg.reshape %a0 : tensor<2x4x16xf32> -> tensor<2x4x2x8xf32>
  %b = tg.reshape %b0 : tensor<2x4x16xf32> -> tensor<2x4x2x8xf32>
  %c = tg.reshape %c0 : tensor<2x4x16xf32> -> tensor<2x4x2x8xf32>
  %bt = tg.transpose %b {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x2x8xf32> -> tensor<2x2x4x8xf32>
  %at = tg.transpose %a {perm = array<i64: 0, 2, 3, 1>} : tensor<2x4x2x8xf32> -> tensor<2x2x8x4xf32>
  %ct = tg.transpose %c {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x2x8xf32> -> tensor<2x2x4x8xf32>
  %s2 = tg.matmul %bt, %at : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %p2 = tg.softmax %s2 {axis = 3 : i64} : tensor<2x2x4x4xf32>
  %o2 = tg.matmul %p2, %ct : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  %ot2 = tg.transpose %o2 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x4x8xf32> -> tensor<2x4x2x8xf32>
  return %ot, %ot2, %v : tensor<2x4x2x8xf32>, tensor<2x4x2x8xf32>, tensor<2x4x2x8xf32>
}
