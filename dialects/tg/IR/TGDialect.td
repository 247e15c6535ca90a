//===- TGDialect.td - the training-graph dialect ------------*- tablegen -*-===//
//
// The `tg` dialect holds a model as hmcc imports it: a forward graph on
// tensors with value semantics whose result is a scalar loss. Later phases
// (autodiff, optimizer) extend the same graph with the backward pass and the
// parameter updates before it is lowered to the schedule dialect.
//
//===----------------------------------------------------------------------===//

#ifndef HMCC_TG_DIALECT
#define HMCC_TG_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def TG_Dialect : Dialect {
  let name = "tg";
  let cppNamespace = "::hmcc::tg";
  let summary = "Training graphs: tensor programs with parameters, constants and data inputs";
  let description = [{
    A `tg` module has three kinds of leaves, kept apart so that every later
    pass can tell them from each other:

    * **parameters** are declared once at module level with `tg.parameter`
      (name, type, where the initial value comes from) and read inside the
      graph with `tg.param @name`; these are what the optimizer updates;
    * **constants** (`tg.constant`) are values fixed at compile time: causal
      masks, rotary tables, folded shape arithmetic and initializers that are
      frozen;
    * **data inputs** are the arguments of the graph function, each marked with
      `tg.input = "<onnx name>"`.

    Ops follow ONNX semantics (numpy-style broadcasting, negative axes
    normalised at import) on statically shaped tensors. Every op verifies that
    its result types are the ones its operands and attributes imply.
  }];
  let hasConstantMaterializer = 1;
}

class TG_Op<string mnemonic, list<Trait> traits = []>
    : Op<TG_Dialect, mnemonic, traits>;

#endif // HMCC_TG_DIALECT
