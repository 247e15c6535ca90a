//===- Passes.td - hmcc compiler passes ---------------------*- tablegen -*-===//
#ifndef HMCC_COMPILER_PASSES
#define HMCC_COMPILER_PASSES

include "mlir/Pass/PassBase.td"

def TGSummary : Pass<"tg-summary", "::mlir::ModuleOp"> {
  let summary = "Prints parameter count, parameter bytes and an op histogram";
  let description = [{
    Reports what a training graph holds: the number of parameters and of
    their elements and bytes, the constants and data inputs, and how many
    times each op occurs. The report goes to standard output (or the file
    named by `output`); the IR is left unchanged. `hmcc --summary` and
    `make demo` print it.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "File to write the summary to ('-' for standard output)">,
  ];
}

def TGAutodiff : Pass<"tg-autodiff", "::mlir::ModuleOp"> {
  let summary = "Builds the backward pass: loss and d loss / d parameter for every parameter";
  let description = [{
    Clones the forward function `function` (which must return a scalar
    floating-point loss first) into `output`, appends the reverse sweep, and
    makes `output` return the loss followed by the gradient of the loss with
    respect to each `tg.parameter`, in declaration order; each gradient result
    carries `tg.grad_of = @param`. Every tg op has one vector-Jacobian rule;
    only values that depend on a parameter get gradients, and a parameter the
    loss does not depend on gets zeros. Layer norms are given their mean and
    inverse-standard-deviation results, which their gradient reads.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"forward\"",
           "The function to differentiate">,
    Option<"output", "output", "std::string", /*default=*/"\"forward_backward\"",
           "The name of the function to create">,
  ];
}

#endif // HMCC_COMPILER_PASSES
