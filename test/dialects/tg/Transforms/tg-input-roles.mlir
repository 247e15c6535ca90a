// RUN: hmcc-opt %s -split-input-file -tg-input-roles | FileCheck %s
// tg-input-roles marks the token window, its targets and the vocabulary of a language model.

// Two int64 [B, T] inputs of one type: tokens then targets; the tokens index
// the embedding's 50 rows.
// CHECK-LABEL: func.func @lm(
// CHECK-SAME: %arg0: tensor<2x8xi64> {tg.input = "idx", tg.input_role = "tokens", tg.vocab_size = 50 : i64}
// CHECK-SAME: %arg1: tensor<2x8xi64> {tg.input = "targets", tg.input_role = "targets"}
tg.parameter @wte : tensor<50x4xf32> {source = "wte"}
func.func @lm(%idx: tensor<2x8xi64> {tg.input = "idx"}, %t: tensor<2x8xi64> {tg.input = "targets"}) -> tensor<2x8x4xf32> {
  %w = tg.param @wte : tensor<50x4xf32>
  %e = tg.gather %w, %idx {axis = 0 : i64} : (tensor<50x4xf32>, tensor<2x8xi64>) -> tensor<2x8x4xf32>
  return %e : tensor<2x8x4xf32>
}

// -----
// Tokens that index no parameter: roles, but no vocabulary.
// CHECK-LABEL: func.func @noembedding(
// CHECK-SAME: {tg.input = "a", tg.input_role = "tokens"}
// CHECK-SAME: {tg.input = "b", tg.input_role = "targets"}
func.func @noembedding(%a: tensor<2x8xi64> {tg.input = "a"}, %b: tensor<2x8xi64> {tg.input = "b"}) -> tensor<2x8xi64> {
  return %a : tensor<2x8xi64>
}

// -----
// Other inputs get no role: a float input, two id inputs of different shapes,
// or a third id input.
// CHECK-LABEL: func.func @mlp(
// CHECK-NOT: tg.input_role
// CHECK-LABEL: func.func @shapes(
// CHECK-NOT: tg.input_role
// CHECK-LABEL: func.func @three(
// CHECK-NOT: tg.input_role
func.func @mlp(%x: tensor<8x4xf32> {tg.input = "x"}, %y: tensor<8xi64> {tg.input = "y"}) -> tensor<8x4xf32> {
  return %x : tensor<8x4xf32>
}
func.func @shapes(%a: tensor<2x8xi64> {tg.input = "a"}, %b: tensor<2x7xi64> {tg.input = "b"}) -> tensor<2x8xi64> {
  return %a : tensor<2x8xi64>
}
func.func @three(%a: tensor<2x8xi64> {tg.input = "a"}, %b: tensor<2x8xi64> {tg.input = "b"}, %c: tensor<2x8xi64> {tg.input = "c"}) -> tensor<2x8xi64> {
  return %a : tensor<2x8xi64>
}
