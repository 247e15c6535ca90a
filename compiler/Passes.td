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

#endif // HMCC_COMPILER_PASSES
