// RUN: hmcc-opt %s -split-input-file -verify-diagnostics
// Each case breaks one rule of a tg op's verifier and checks its message.

// A parameter's external bytes need a location.
// expected-error @+1 {{offset and length need a location}}
tg.parameter @p : tensor<2xf32> {source = "p", offset = 0 : i64}

// -----
// A parameter's external length must match its type.
// expected-error @+1 {{length 4 does not match the 8 bytes of 'tensor<2xf32>'}}
tg.parameter @p : tensor<2xf32> {source = "p", location = "w.bin", offset = 0 : i64, length = 4 : i64}

// -----
// A parameter's initial value must have its type.
// expected-error @+1 {{initial_value has type 'tensor<3xf32>', expected 'tensor<2xf32>'}}
tg.parameter @p : tensor<2xf32> {source = "p", initial_value = dense<0.0> : tensor<3xf32>}

// -----
// tg.assign writes a declared parameter...
func.func @f(%v: tensor<2xf32>) {
  // expected-error @+1 {{param @q is not a declared tg.parameter}}
  tg.assign @q, %v : tensor<2xf32>
  return
}

// -----
// ... of the value's type.
tg.parameter @p : tensor<2xf32> {source = "p"}
func.func @f(%v: tensor<3xf32>) {
  // expected-error @+1 {{param @p has type 'tensor<2xf32>', expected 'tensor<3xf32>'}}
  tg.assign @p, %v : tensor<3xf32>
  return
}

// -----
// tg.param must name a declared parameter.
func.func @f() {
  // expected-error @+1 {{'missing' is not a declared tg.parameter}}
  %0 = tg.param @missing : tensor<2xf32>
  return
}

// -----
// tg.param must have the declared type.
tg.parameter @p : tensor<2xf32> {source = "p"}
func.func @f() {
  // expected-error @+1 {{differs from the declared 'tensor<2xf32>'}}
  %0 = tg.param @p : tensor<3xf32>
  return
}

// -----
// Data inputs must be statically shaped.
func.func @f(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{must be statically shaped tensor}}
  %0 = tg.exp %x : tensor<?x3xf32>
  return
}

// -----
// Binary operands must broadcast.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes 'tensor<2x3xf32>' and 'tensor<4xf32>' do not broadcast}}
  %0 = tg.add %x, %y : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----
// Binary result must be the broadcast shape.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{result type 'tensor<3xf32>' does not match the expected 'tensor<2x3xf32>'}}
  %0 = tg.mul %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----
// Binary operands share an element type.
func.func @f(%x: tensor<3xf32>, %y: tensor<3xi64>) {
  // expected-error @+1 {{operands must have the same element type, got 'f32' and 'i64'}}
  %0 = tg.sub %x, %y : (tensor<3xf32>, tensor<3xi64>) -> tensor<3xf32>
  return
}

// -----
// Where's condition, x and y broadcast together.
func.func @f(%c: tensor<4xi1>, %x: tensor<3xf32>) {
  // expected-error @+1 {{operand shapes do not broadcast}}
  %0 = tg.where %c, %x, %x : (tensor<4xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----
// Where's x and y share an element type.
func.func @f(%c: tensor<3xi1>, %x: tensor<3xf32>, %y: tensor<3xf64>) {
  // expected-error @+1 {{x and y must have the same element type}}
  %0 = tg.where %c, %x, %y : (tensor<3xi1>, tensor<3xf32>, tensor<3xf64>) -> tensor<3xf32>
  return
}

// -----
// Cast keeps the shape.
func.func @f(%x: tensor<3xi64>) {
  // expected-error @+1 {{result type 'tensor<4xf32>' does not match the expected 'tensor<3xf32>'}}
  %0 = tg.cast %x : tensor<3xi64> to tensor<4xf32>
  return
}

// -----
// Rounding to nearest even is a cast from f32 to bf16 only.
func.func @f(%x: tensor<3xf32>) {
  // expected-error @+1 {{nearest_even rounds f32 to bf16 only}}
  %0 = tg.cast %x {nearest_even} : tensor<3xf32> to tensor<3xf16>
  return
}

// -----
// Dropout's ratio lies in [0, 1).
func.func @f(%x: tensor<3xf32>) {
  // expected-error @+1 {{ratio 1.000000e+00 must be in [0, 1)}}
  %0, %1 = tg.dropout %x {ratio = 1.0 : f32} : tensor<3xf32> -> tensor<3xi1>
  return
}

// -----
// Dropout's mask has the shape of x.
func.func @f(%x: tensor<3xf32>) {
  // expected-error @+1 {{mask type 'tensor<4xi1>' does not match the expected 'tensor<3xi1>'}}
  %0, %1 = tg.dropout %x {ratio = 0.5 : f32} : tensor<3xf32> -> tensor<4xi1>
  return
}

// -----
// MatMul's contracted dimensions agree.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<4x5xf32>) {
  // expected-error @+1 {{cannot multiply 'tensor<2x3xf32>' by 'tensor<4x5xf32>'}}
  %0 = tg.matmul %x, %y : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----
// MatMul's batch dimensions broadcast into the result.
func.func @f(%x: tensor<2x4x3xf32>, %y: tensor<3x5xf32>) {
  // expected-error @+1 {{result type 'tensor<4x5xf32>' does not match the expected 'tensor<2x4x5xf32>'}}
  %0 = tg.matmul %x, %y : (tensor<2x4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return
}

// -----
// MatMul's result has its operands' element type (or f32 for bf16 ones).
func.func @f(%x: tensor<2x3xf32>, %y: tensor<3x5xf32>) {
  // expected-error @+1 {{result type 'tensor<2x5xbf16>' does not match the expected 'tensor<2x5xf32>'}}
  %0 = tg.matmul %x, %y : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xbf16>
  return
}

// -----
// Gemm's c has the result's element type.
func.func @f(%x: tensor<2x3xbf16>, %y: tensor<3x5xbf16>, %c: tensor<5xbf16>) {
  // expected-error @+1 {{c must have the result's element type 'f32'}}
  %0 = tg.gemm %x, %y, %c : (tensor<2x3xbf16>, tensor<3x5xbf16>, tensor<5xbf16>) -> tensor<2x5xf32>
  return
}

// -----
// Gemm takes matrices.
func.func @f(%x: tensor<3xf32>, %y: tensor<3x5xf32>) {
  // expected-error @+1 {{operands a and b must be matrices}}
  %0 = tg.gemm %x, %y : (tensor<3xf32>, tensor<3x5xf32>) -> tensor<1x5xf32>
  return
}

// -----
// Gemm's contracted dimensions agree after the transposes.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<3x5xf32>) {
  // expected-error @+1 {{contracted dimensions differ: 3 and 5}}
  %0 = tg.gemm %x, %y {transB} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  return
}

// -----
// Gemm's c broadcasts to the result.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<3x5xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{does not broadcast to 2x5}}
  %0 = tg.gemm %x, %y, %c : (tensor<2x3xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<2x5xf32>
  return
}

// -----
// Transpose's perm has one entry per dimension.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm has 3 entries for rank 2}}
  %0 = tg.transpose %x {perm = array<i64: 0, 1, 2>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----
// Transpose's perm is a permutation.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm is not a permutation}}
  %0 = tg.transpose %x {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----
// Transpose's perm entries are dimensions.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm entry 2 is out of range for rank 2}}
  %0 = tg.transpose %x {perm = array<i64: 2, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----
// Reshape keeps the number of elements.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot reshape 'tensor<2x3xf32>' to 'tensor<7xf32>': element counts differ}}
  %0 = tg.reshape %x : tensor<2x3xf32> -> tensor<7xf32>
  return
}

// -----
// Reshape keeps the element type.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{operand and result must have the same element type}}
  %0 = tg.reshape %x : tensor<2x3xf32> -> tensor<6xi64>
  return
}

// -----
// Flatten's axis lies in [0, rank].
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 3 is out of range for rank 2}}
  %0 = tg.flatten %x {axis = 3 : i64} : tensor<2x3xf32> -> tensor<6x1xf32>
  return
}

// -----
// Flatten's result is rows x columns.
func.func @f(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{result type 'tensor<6x4xf32>' does not match the expected 'tensor<2x12xf32>'}}
  %0 = tg.flatten %x {axis = 1 : i64} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  return
}

// -----
// Squeeze removes only dimensions of size 1.
func.func @f(%x: tensor<2x1xf32>) {
  // expected-error @+1 {{cannot squeeze dimension 0 of size 2}}
  %0 = tg.squeeze %x {axes = array<i64: 0>} : tensor<2x1xf32> -> tensor<1xf32>
  return
}

// -----
// Axis lists are sorted and unique.
func.func @f(%x: tensor<1x1xf32>) {
  // expected-error @+1 {{axes must be sorted and unique}}
  %0 = tg.squeeze %x {axes = array<i64: 1, 0>} : tensor<1x1xf32> -> tensor<f32>
  return
}

// -----
// Unsqueeze's axes index the result.
func.func @f(%x: tensor<2xf32>) {
  // expected-error @+1 {{axes 2 is out of range for rank 2}}
  %0 = tg.unsqueeze %x {axes = array<i64: 2>} : tensor<2xf32> -> tensor<2x1xf32>
  return
}

// -----
// Unsqueeze's result has the size-1 dimensions where listed.
func.func @f(%x: tensor<2xf32>) {
  // expected-error @+1 {{result type 'tensor<2x1xf32>' does not match the expected 'tensor<1x2xf32>'}}
  %0 = tg.unsqueeze %x {axes = array<i64: 0>} : tensor<2xf32> -> tensor<2x1xf32>
  return
}

// -----
// Concat's inputs agree off the axis.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<3x3xf32>) {
  // expected-error @+1 {{inputs differ in dimension 0}}
  %0 = tg.concat %x, %y {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  return
}

// -----
// Concat's inputs share rank and element type.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<2x3xf64>) {
  // expected-error @+1 {{input 'tensor<2x3xf64>' does not match 'tensor<2x3xf32>'}}
  %0 = tg.concat %x, %y {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf64>) -> tensor<2x6xf32>
  return
}

// -----
// Concat needs an input.
func.func @f() {
  // expected-error @+1 {{needs at least one input}}
  %0 = tg.concat {axis = 0 : i64} : () -> tensor<2xf32>
  return
}

// -----
// Concat's axis is a dimension.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = tg.concat %x {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----
// Split's sizes cover the axis exactly.
func.func @f(%x: tensor<6xf32>) {
  // expected-error @+1 {{sizes add up to 5, not to dimension 6}}
  %0:2 = tg.split %x {axis = 0 : i64, sizes = array<i64: 2, 3>} : tensor<6xf32> -> (tensor<2xf32>, tensor<3xf32>)
  return
}

// -----
// Split has one size per result.
func.func @f(%x: tensor<6xf32>) {
  // expected-error @+1 {{3 sizes for 2 results}}
  %0:2 = tg.split %x {axis = 0 : i64, sizes = array<i64: 2, 2, 2>} : tensor<6xf32> -> (tensor<2xf32>, tensor<2xf32>)
  return
}

// -----
// Split's sizes are not negative.
func.func @f(%x: tensor<6xf32>) {
  // expected-error @+1 {{sizes must not be negative}}
  %0:2 = tg.split %x {axis = 0 : i64, sizes = array<i64: -1, 7>} : tensor<6xf32> -> (tensor<2xf32>, tensor<7xf32>)
  return
}

// -----
// Split's results have their sizes.
func.func @f(%x: tensor<6xf32>) {
  // expected-error @+1 {{result type 'tensor<3xf32>' does not match the expected 'tensor<2xf32>'}}
  %0:2 = tg.split %x {axis = 0 : i64, sizes = array<i64: 2, 4>} : tensor<6xf32> -> (tensor<3xf32>, tensor<4xf32>)
  return
}

// -----
// Slice's lists have one length.
func.func @f(%x: tensor<6xf32>) {
  // expected-error @+1 {{starts, ends, axes and steps must have the same length}}
  %0 = tg.slice %x {axes = array<i64: 0>, ends = array<i64: 2>, starts = array<i64: 0, 1>, steps = array<i64: 1>} : tensor<6xf32> -> tensor<2xf32>
  return
}

// -----
// Slice's steps are non-zero.
func.func @f(%x: tensor<6xf32>) {
  // expected-error @+1 {{steps must be non-zero}}
  %0 = tg.slice %x {axes = array<i64: 0>, ends = array<i64: 2>, starts = array<i64: 0>, steps = array<i64: 0>} : tensor<6xf32> -> tensor<2xf32>
  return
}

// -----
// Slice's bounds are clamped to the dimension at import.
func.func @f(%x: tensor<6xf32>) {
  // expected-error @+1 {{bounds [0, 9) step 1 are not clamped to dimension 6}}
  %0 = tg.slice %x {axes = array<i64: 0>, ends = array<i64: 9>, starts = array<i64: 0>, steps = array<i64: 1>} : tensor<6xf32> -> tensor<6xf32>
  return
}

// -----
// Slice slices an axis once.
func.func @f(%x: tensor<6xf32>) {
  // expected-error @+1 {{axis 0 is sliced twice}}
  %0 = tg.slice %x {axes = array<i64: 0, 0>, ends = array<i64: 2, 2>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<6xf32> -> tensor<2xf32>
  return
}

// -----
// Slice's result extent follows from the bounds.
func.func @f(%x: tensor<6xf32>) {
  // expected-error @+1 {{result type 'tensor<3xf32>' does not match the expected 'tensor<2xf32>'}}
  %0 = tg.slice %x {axes = array<i64: 0>, ends = array<i64: 4>, starts = array<i64: 0>, steps = array<i64: 2>} : tensor<6xf32> -> tensor<3xf32>
  return
}

// -----
// Gather's result splices the index shape in at the axis.
func.func @f(%x: tensor<64x32xf32>, %i: tensor<2x16xi64>) {
  // expected-error @+1 {{result type 'tensor<2x16xf32>' does not match the expected 'tensor<2x16x32xf32>'}}
  %0 = tg.gather %x, %i {axis = 0 : i64} : (tensor<64x32xf32>, tensor<2x16xi64>) -> tensor<2x16xf32>
  return
}

// -----
// Gather's indices are integers.
func.func @f(%x: tensor<64x32xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = tg.gather %x, %i {axis = 0 : i64} : (tensor<64x32xf32>, tensor<2xf32>) -> tensor<2x32xf32>
  return
}

// -----
// Gather's axis is a dimension.
func.func @f(%x: tensor<64x32xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = tg.gather %x, %i {axis = 2 : i64} : (tensor<64x32xf32>, tensor<2xi64>) -> tensor<2x32xf32>
  return
}

// -----
// Expand only broadcasts.
func.func @f(%x: tensor<2x16xf32>) {
  // expected-error @+1 {{cannot expand 'tensor<2x16xf32>' to 'tensor<4x16xf32>'}}
  %0 = tg.expand %x : tensor<2x16xf32> -> tensor<4x16xf32>
  return
}

// -----
// Trilu needs a matrix.
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{needs a tensor of rank 2 or more}}
  %0 = tg.trilu %x : tensor<4xf32>
  return
}

// -----
// Shape's bounds lie within the rank.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{start 1 and end 3 must satisfy 0 <= start <= end <= 2}}
  %0 = tg.shape %x {start = 1 : i64, end = 3 : i64} : tensor<2x3xf32> -> tensor<2xi64>
  return
}

// -----
// Shape's result has one entry per dimension.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result type 'tensor<1xi64>' does not match the expected 'tensor<2xi64>'}}
  %0 = tg.shape %x {start = 0 : i64, end = 2 : i64} : tensor<2x3xf32> -> tensor<1xi64>
  return
}

// -----
// ConstantOfShape's shape operand describes the result.
func.func @f(%s: tensor<3xi64>) {
  // expected-error @+1 {{shape operand 'tensor<3xi64>' does not describe 'tensor<4x8xf32>'}}
  %0 = tg.constant_of_shape %s {value = 0.0 : f32} : tensor<3xi64> -> tensor<4x8xf32>
  return
}

// -----
// ConstantOfShape's value has the result's element type.
func.func @f(%s: tensor<2xi64>) {
  // expected-error @+1 {{value of type 'i64' does not match the element type 'f32'}}
  %0 = tg.constant_of_shape %s {value = 0 : i64} : tensor<2xi64> -> tensor<4x8xf32>
  return
}

// -----
// Range takes scalars.
func.func @f(%a: tensor<1xi64>) {
  // expected-error @+1 {{start, limit and delta must be scalars}}
  %0 = tg.range %a, %a, %a : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  return
}

// -----
// Range's operands share an element type.
func.func @f(%a: tensor<i64>, %b: tensor<f32>) {
  // expected-error @+1 {{start and limit must have the same element type}}
  %0 = tg.range %a, %b, %a : (tensor<i64>, tensor<f32>, tensor<i64>) -> tensor<4xi64>
  return
}

// -----
// Range's result is 1-D.
func.func @f(%a: tensor<i64>) {
  // expected-error @+1 {{result must be 1-D}}
  %0 = tg.range %a, %a, %a : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2x2xi64>
  return
}

// -----
// Reductions keep or drop the reduced axes as keepdims says.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result type 'tensor<2x1xf32>' does not match the expected 'tensor<2xf32>'}}
  %0 = tg.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1xf32>
  return
}

// -----
// Reduction axes are dimensions.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axes 2 is out of range for rank 2}}
  %0 = tg.reduce_max %x {axes = array<i64: 2>, keepdims} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----
// Reductions over no listed axis reduce everything.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result type 'tensor<2x3xf32>' does not match the expected 'tensor<1x1xf32>'}}
  %0 = tg.reduce_mean %x {axes = array<i64>, keepdims} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----
// Softmax's axis is a dimension.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = tg.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  return
}

// -----
// LogSoftmax's axis is a dimension.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis -1 is out of range for rank 2}}
  %0 = tg.log_softmax %x {axis = -1 : i64} : tensor<2x3xf32>
  return
}

// -----
// LayerNorm's scale covers the normalised dimensions.
func.func @f(%x: tensor<2x3xf32>, %g: tensor<2xf32>) {
  // expected-error @+1 {{scale type 'tensor<2xf32>' does not match the expected 'tensor<3xf32>'}}
  %0 = tg.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return
}

// -----
// LayerNorm's bias covers the normalised dimensions.
func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf32>, %b: tensor<6xf32>) {
  // expected-error @+1 {{bias type 'tensor<6xf32>' does not match the expected 'tensor<3xf32>'}}
  %0 = tg.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<6xf32>) -> tensor<2x3xf32>
  return
}

// -----
// LayerNorm's result is the input's type, or bf16 (rounded) from f32 only:
// not f16.
func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{result type 'tensor<2x3xf16>' does not match the expected 'tensor<2x3xf32>'}}
  %0 = tg.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf16>
  return
}

// -----
// tg.fused: a result of f32 or bf16 (rounded), not f16.
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{result must be f32 or bf16}}
  %0 = tg.fused %x {ops = ["neg"], args = array<i64: 0, -1, -1>} : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----
// LayerNorm's axis is a dimension.
func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = tg.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// -----
// Cross-entropy scores are N x C (x ...).
func.func @f(%s: tensor<8xf32>, %t: tensor<8xi64>) {
  // expected-error @+1 {{scores must have rank 2 or more}}
  %0 = tg.softmax_cross_entropy_loss %s, %t : (tensor<8xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----
// Cross-entropy labels drop the class dimension of the scores.
func.func @f(%s: tensor<8x10xf32>, %t: tensor<10xi64>) {
  // expected-error @+1 {{labels 'tensor<10xi64>' do not match scores 'tensor<8x10xf32>'}}
  %0 = tg.softmax_cross_entropy_loss %s, %t : (tensor<8x10xf32>, tensor<10xi64>) -> tensor<f32>
  return
}

// -----
// Cross-entropy weights have one entry per class.
func.func @f(%s: tensor<8x10xf32>, %t: tensor<8xi64>, %w: tensor<8xf32>) {
  // expected-error @+1 {{weights type 'tensor<8xf32>' does not match the expected 'tensor<10xf32>'}}
  %0 = tg.softmax_cross_entropy_loss %s, %t, %w : (tensor<8x10xf32>, tensor<8xi64>, tensor<8xf32>) -> tensor<f32>
  return
}

// -----
// Cross-entropy reductions are mean, sum or none.
func.func @f(%s: tensor<8x10xf32>, %t: tensor<8xi64>) {
  // expected-error @+1 {{reduction must be "mean", "sum" or "none", not "max"}}
  %0 = tg.softmax_cross_entropy_loss %s, %t {reduction = "max"} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----
// Cross-entropy without reduction returns one loss per label.
func.func @f(%s: tensor<8x10xf32>, %t: tensor<8xi64>) {
  // expected-error @+1 {{result type 'tensor<f32>' does not match the expected 'tensor<8xf32>'}}
  %0 = tg.softmax_cross_entropy_loss %s, %t {reduction = "none"} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----
// LayerNorm's mean has the normalised dimensions set to 1.
func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{mean type 'tensor<2x3xf32>' does not match the expected 'tensor<2x1xf32>'}}
  %0:3 = tg.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>)
  return
}

// -----
// LayerNorm's inv_std_dev is f32.
func.func @f(%x: tensor<2x3xf64>, %g: tensor<3xf64>) {
  // expected-error @+1 {{inv_std_dev type 'tensor<2x1xf64>' does not match the expected 'tensor<2x1xf32>'}}
  %0:3 = tg.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3xf64>, tensor<3xf64>) -> (tensor<2x3xf64>, tensor<2x1xf32>, tensor<2x1xf64>)
  return
}

// -----
// LayerNorm's statistics come as a pair.
func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{stats must be empty or hold the mean and inv_std_dev}}
  %0:2 = tg.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>)
  return
}

// -----
// Cross-entropy's log_prob has the scores' type.
func.func @f(%s: tensor<8x10xf32>, %t: tensor<8xi64>) {
  // expected-error @+1 {{log_prob type 'tensor<8xf32>' does not match the expected 'tensor<8x10xf32>'}}
  %0:2 = tg.softmax_cross_entropy_loss %s, %t : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8xf32>)
  return
}

// -----
// ONNX optimizers are adagrad, momentum or adam.
func.func @f(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>) {
  // expected-error @+1 {{kind must be adagrad, momentum or adam, not 'lion'}}
  %0:2 = tg.onnx_optimizer %r, %t, %x, %x, %x {kind = "lion"} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return
}

// -----
// Adam takes X, G, V and H per tensor.
func.func @f(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>) {
  // expected-error @+1 {{3 tensor operands do not split into 4 per optimized tensor}}
  %0:3 = tg.onnx_optimizer %r, %t, %x, %x, %x {kind = "adam"} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  return
}

// -----
// Each state has the type of its X.
func.func @f(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>, %h: tensor<3xf32>) {
  // expected-error @+1 {{operand 4 must have the type of X0}}
  %0:2 = tg.onnx_optimizer %r, %t, %x, %x, %h {kind = "adagrad"} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return
}

// -----
// tg.fused: three args per op.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has 2 args for 1 ops: it needs 3 per op}}
  %0 = tg.fused %x {ops = ["neg"], args = array<i64: 0, -1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----
// tg.fused: only the elementwise ops it knows.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{op 0 'softmax' is not an elementwise op it knows}}
  %0 = tg.fused %x {ops = ["softmax"], args = array<i64: 0, -1, -1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----
// tg.fused: an arg names an input or an earlier op, never a later one.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{op 0 (add) arg 1 is 1: it must name an input or an earlier op}}
  %0 = tg.fused %x {ops = ["add", "neg"], args = array<i64: 0, 1, -1, 1, -1, -1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----
// tg.fused: the places an op does not take hold -1.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{op 0 (neg) takes 1 operands but arg 1 is 0, not -1}}
  %0 = tg.fused %x {ops = ["neg"], args = array<i64: 0, 0, -1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----
// tg.fused: inputs broadcast to the result.
func.func @f(%x: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{input 0 of type 'tensor<3xf32>' does not broadcast to the result}}
  %0 = tg.fused %x {ops = ["neg"], args = array<i64: 0, -1, -1>} : (tensor<3xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----
// tg.fused: a bool input is where's condition and nothing else.
func.func @f(%m: tensor<4xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{op 0 (add) arg 0 is a bool input: only where's condition may be}}
  %0 = tg.fused %m, %x {ops = ["add"], args = array<i64: 0, 1, -1>} : (tensor<4xi1>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----
// tg.fused: where's condition is a bool input.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{op 0 (where) arg 0 must be a bool input}}
  %0 = tg.fused %x {ops = ["where"], args = array<i64: 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----
// tg.attention: dropout needs its mask stream (the backward draws it again).
func.func @f(%q: tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32> {
  // expected-error @+1 {{dropout needs a mask stream}}
  %o, %lse = tg.attention %q, %q, %q {dropout = 1.000000e-01 : f32, scale = 1.000000e+00 : f32} : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x1x2xf32>)
  return %o : tensor<1x1x2x4xf32>
}

// -----
// tg.attention: heads a multiple of kv heads.
func.func @f(%q: tensor<1x3x2x4xf32>, %k: tensor<1x2x2x4xf32>) -> tensor<1x3x2x4xf32> {
  // expected-error @+1 {{does not fit q}}
  %o, %lse = tg.attention %q, %k, %k {scale = 1.000000e+00 : f32} : (tensor<1x3x2x4xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> (tensor<1x3x2x4xf32>, tensor<1x3x2xf32>)
  return %o : tensor<1x3x2x4xf32>
}

// -----
// tg.attention packed: q, k and v are one value.
func.func @f(%q: tensor<1x2x6x4xf32>, %k: tensor<1x2x6x4xf32>) -> tensor<1x2x2x4xf32> {
  // expected-error @+1 {{packed needs bthd and q, k and v one value}}
  %o, %lse = tg.attention %q, %k, %q {bthd, packed, scale = 1.000000e+00 : f32} : (tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2xf32>)
  return %o : tensor<1x2x2x4xf32>
}

// -----
// tg.attention packed: 5 heads are not 2 query heads and two equal kv groups.
func.func @f(%x: tensor<1x2x5x4xf32>) -> tensor<1x2x2x4xf32> {
  // expected-error @+1 {{must hold 2 query heads and two equal groups of kv heads}}
  %o, %lse = tg.attention %x, %x, %x {bthd, packed, scale = 1.000000e+00 : f32} : (tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2xf32>)
  return %o : tensor<1x2x2x4xf32>
}

// -----
// tg.attention_grad packed: one result, the gradient of the packed value.
func.func @f(%x: tensor<1x2x6x4xf32>, %o: tensor<1x2x2x4xf32>, %lse: tensor<1x2x2xf32>) -> tensor<1x2x2x4xf32> {
  // expected-error @+1 {{packed: one result, the gradient of q, k and v, of their type}}
  %dq, %dk, %dv = tg.attention_grad %x, %x, %x, %o, %lse, %o {bthd, packed, scale = 1.000000e+00 : f32} : (tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2xf32>, tensor<1x2x2x4xf32>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>)
  return %dq : tensor<1x2x2x4xf32>
}

// -----
// tg.attention_grad packed: out (the forward's result) keeps the batch,
// sequence and head_dim of the packed value.
func.func @f(%x: tensor<1x2x6x4xf32>, %o: tensor<1x2xf32>, %lse: tensor<1x2x2xf32>) -> tensor<1x2x6x4xf32> {
  // expected-error @+1 {{out 'tensor<1x2xf32>' does not fit the packed 'tensor<1x2x6x4xf32>'}}
  %g = tg.attention_grad %x, %x, %x, %o, %lse, %o {bthd, packed, scale = 1.000000e+00 : f32} : (tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2xf32>, tensor<1x2x2xf32>, tensor<1x2xf32>) -> tensor<1x2x6x4xf32>
  return %g : tensor<1x2x6x4xf32>
}

// -----
// tg.sum_squares: the running sum it adds to is an f64 scalar.
func.func @f(%g: tensor<4xf32>, %acc: tensor<f32>) -> tensor<f64> {
  // expected-error @+1 {{operand #1 must be 0D tensor of 64-bit float values}}
  %s = "tg.sum_squares"(%g, %acc) : (tensor<4xf32>, tensor<f32>) -> tensor<f64>
  return %s : tensor<f64>
}

// -----
// tg.norm_of_sum: of an f64 running sum.
func.func @f(%s: tensor<2xf64>) -> tensor<f32> {
  // expected-error @+1 {{operand #0 must be 0D tensor of 64-bit float values}}
  %n = "tg.norm_of_sum"(%s) : (tensor<2xf64>) -> tensor<f32>
  return %n : tensor<f32>
}
