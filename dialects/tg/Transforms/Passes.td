//===- Passes.td - passes on the training graph (tg) -------*- tablegen -*-===//
#ifndef HMCC_TG_TRANSFORMS_PASSES
#define HMCC_TG_TRANSFORMS_PASSES

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

def TGOptimizer : Pass<"tg-optimizer", "::mlir::ModuleOp"> {
  let summary = "Adds the optimizer: states, gradient norm and clipping, in-place updates";
  let description = [{
    Builds `output(inputs..., step, lr) -> (loss, grad_norm)` from the
    gradient function `function` (see tg-autodiff): the global L2 norm of
    the gradients, clipping to `clip-norm` when it is positive, and one
    update per parameter: `tg.sgd_update` (SGD with momentum),
    `tg.adamw_update`, or with `adamw8bit` `tg.adamw8bit_update` for every
    parameter of 4096 elements or more (smaller ones keep fp32 moments).
    States are declared as `tg.state @<param>.<kind>`. The hyper-parameters
    are recorded in the module attribute `tg.optimizer`.
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "sgd, adamw or adamw8bit">,
    Option<"lr", "lr", "float", /*default=*/"1e-3f", "Learning rate">,
    Option<"beta1", "beta1", "float", /*default=*/"0.9f", "AdamW beta1">,
    Option<"beta2", "beta2", "float", /*default=*/"0.999f", "AdamW beta2">,
    Option<"eps", "eps", "float", /*default=*/"1e-8f", "AdamW epsilon">,
    Option<"weightDecay", "weight-decay", "float", /*default=*/"-1.0f",
           "Decoupled weight decay (AdamW) or L2 penalty (SGD); negative: 0.01 for AdamW, 0 for SGD">,
    Option<"momentum", "momentum", "float", /*default=*/"0.9f", "SGD momentum">,
    Option<"clipNorm", "clip-norm", "float", /*default=*/"0.0f",
           "Clip the global gradient norm to this value (0: no clipping)">,
    Option<"function", "function", "std::string", /*default=*/"\"forward_backward\"",
           "The gradient function to build on">,
    Option<"output", "output", "std::string", /*default=*/"\"train_step\"",
           "The name of the training-step function to create">,
  ];
}

def TGLegalizeCpuTypes : Pass<"tg-legalize-cpu-types", "::mlir::ModuleOp"> {
  let summary = "Moves arithmetic to the element types the CPU runtime computes in";
  let description = [{
    The CPU runtime's elementwise kernels compute in f32 and i64. An
    arithmetic op on another element type (ui8, i32, f64, ...) or with
    operands of different types (ONNX Pow) becomes casts to f32 (floats, and
    every operand of a transcendental op or Pow) or i64 (integers), the op,
    and a cast back to the original result type.
  }];
}

def TGPrecision : Pass<"tg-precision", "::mlir::ModuleOp"> {
  let summary = "Chooses the arithmetic of the GEMMs and attention: fp32, or bf16 products with fp32 sums";
  let description = [{
    With `precision=bf16`, every tg.matmul and tg.gemm (forward, backward,
    recomputed alike) gets the discardable attribute `tg.math = "bf16"`:
    its products are of bf16 values and are summed in fp32, the result
    stays fp32 (hmrt_matmul_f32_bf16 rounds f32 operands to bfloat16,
    nearest even, as it reads them; on a GPU, cuBLAS's bf16 tensor-core
    path).  So do tg.attention and tg.attention_grad: their GEMMs multiply
    q, k, v, dO, the probabilities and dS rounded to bf16, while the
    softmax and every sum stay fp32 (HMRT_ATTENTION_BF16; on a GPU, the
    tensor-core flash kernels).  The cost model then times these ops at the
    profile's bf16 peak.
    Tensors, master weights, gradients and optimizer states stay fp32.
    With `precision=fp32` (the default) the pass removes the attribute.

    `bf16-storage` also keeps in bf16 what only GEMMs read: each value made
    here whose bytes (through views or not) only GEMM operands read is
    rounded once by a `tg.cast {nearest_even}` right after its op, and its
    views view the copy, so the f32 tensor dies there and half its bytes
    live on (the activations a linear layer keeps for its backward).  A GEMM
    then left with one bf16 and one f32 operand (a weight, say) reads both as
    they are: its kernel rounds the f32 one as it rounds two
    (hmrt_matmul_mixed_bf16), so nothing is converted beside it; an f32
    operand that widens a bf16 value is that value again
    (tg::readWidenedFactors, which plan-tiers' bf16 fetches use too).  The
    results are those of the kernel's own rounding, bit for bit.
    tg-fold-rounding then lets the ops that can write bf16 (layer norm,
    fused programs, the loss gradient) take the cast that follows them.
    hmcc's `--bf16-storage auto` plans the program with and without it and
    keeps the shorter predicted step.

    Example: `tg.matmul %x, %w` becomes `tg.matmul %x, %w {tg.math = "bf16"}`.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "fp32, or bf16 (bf16 products with fp32 sums in MatMul, Gemm and attention)">,
    Option<"bf16Storage", "bf16-storage", "bool", /*default=*/"false",
           "With bf16: keep the values only GEMMs read in bf16">,
  ];
}

def TGFoldTransposes : Pass<"tg-fold-transposes", "::mlir::ModuleOp"> {
  let summary = "Reads a matrix transposed in the matmul instead of copying it transposed";
  let description = [{
    `tg.matmul %x, (tg.transpose %w {perm = [1, 0]})`, as torch.onnx exports
    nn.Linear, becomes `tg.matmul %x, %w {transB}` when %x has rank 2 or
    more: the GEMM reads the weight transposed where it lies, so the copy is
    neither computed nor kept for the backward (tg-autodiff differentiates
    such a matmul with two GEMMs on %w as it is). A transpose left without
    readers is removed. Other transposes stay.
  }];
}

def TGFuseAttention : Pass<"tg-fuse-attention", "::mlir::ModuleOp"> {
  let summary = "Replaces scaled-dot-product attention as exported by one tg.attention";
  let description = [{
    Runs on the forward graph, before tg-autodiff, which differentiates the
    op with one tg.attention_grad: neither keeps the (queries x keys)
    probabilities, the runtime recomputes them from each row's log-sum-exp.
    Recognised, from the matmul with V backwards: an optional dropout
    (one that drops in training moves into the op with its mask stream;
    the pass first numbers every dropout's stream in program order, as
    plan-recompute would), a softmax over the last axis, an optional
    mask (`where(m, -inf, s)`, `where(m, s, -inf)` with a constant bool m,
    or `add(s, b)` with a constant f32 b), an optional scale (`mul` or `div`
    by a scalar constant) and `matmul(q, transpose(k))`, each intermediate
    read only by the next. A mask that is exactly causal becomes the
    `causal` flag, any other an additive f32 bias; K and V expanded from
    fewer heads (unsqueeze, expand, reshape, as grouped-query attention is
    exported) are read from their kv heads. q, k and v that are one
    projection split along its last axis (reshaped to heads, each read
    only by the attention) are read from the projection itself: the op's
    `packed` form, whose gradient is likewise one tensor, so neither the
    split nor the concat of dq, dk and dv copies anything. Anything else
    (another reader of the probabilities or of the dropout mask, a mask
    computed at run time, a learned bias) stays as it is.
  }];
  let options = [
    Option<"packQkv", "pack-qkv", "bool", /*default=*/"true",
           "Read q, k and v from the projection they were split from (the packed form)">,
  ];
}

def TGFuseElementwise : Pass<"tg-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Computes chains of elementwise ops as one tg.fused op each";
  let description = [{
    Runs on the training graph (forward, backward and optimizer together).
    Each elementwise op (add, sub, mul, div, pow, exp, log, sqrt, neg,
    reciprocal, tanh, sigmoid, erf, relu, where, relu_grad, on f32) whose
    users are all elementwise ops of its shape is *inlined*: computed inside
    its users' fused ops rather than stored as a tensor, provided it is then
    computed in at most 4 fused ops and keeps no more memory alive than
    storing it would (its expression reads at most one tensor of its size,
    or its users follow it with nothing else in between). A cheap forward op
    that the backward reads (the erf of GELU, say) is so computed again in
    the backward's fused op instead of kept for it. Each op that is not
    inlined becomes a `tg.fused` of its expression (at most 64 ops; inputs
    are the tensors it reads, broadcast ones included), and the inlined ops
    go. The fused op computes the same bits as the ops one by one.
  }];
}

def TGFoldRounding : Pass<"tg-fold-rounding", "::mlir::ModuleOp"> {
  let summary = "Ops whose value only a bf16 copy reads write that copy themselves";
  let description = [{
    tg-precision's bf16-storage rounds a value that only GEMM operands read
    with a `tg.cast {nearest_even}` right after the op that makes it. Where
    that op can write its result in bf16 (a `tg.fused` program, the result
    of `tg.layer_norm` and `tg.softmax_cross_entropy_loss_grad`: their
    runtime kernels compute in f32 and round each element as the cast
    would) and the cast is the value's only reader, the op's result becomes
    bf16 and the cast goes: the f32 tensor is never written, the op writes
    half the bytes, and the values are the same bits. Runs after
    tg-fuse-elementwise, which forms the fused programs; other casts stay.

    Example: `%y = tg.layer_norm %x, ... -> tensor<8x32xf32>` then
    `%c = tg.cast %y {nearest_even} : ... to tensor<8x32xbf16>` becomes
    `%c = tg.layer_norm %x, ... -> tensor<8x32xbf16>`.
  }];
}

def TGExpandGradients : Pass<"tg-expand-gradients", "::mlir::ModuleOp"> {
  let summary = "Replaces each tg.gradient by the reverse sweep that computes it";
  let description = [{
    For ONNX's Gradient operator: each `tg.gradient %y wrt %xs` becomes the
    reverse-mode sweep (the same vector-Jacobian rules as tg-autodiff) from
    `y`, seeded with ones, back to the `xs`, inserted where the op was.
  }];
}

def TGTrainingInfo : Pass<"tg-training-info", "::mlir::ModuleOp"> {
  let summary = "Makes ONNX training_info's algorithm the training step";
  let description = [{
    For a model that brings its own training algorithm (ONNX
    `training_info`, imported as `@algorithm`): renames it `@train_step` and
    gives it the training-step interface `(inputs..., step, lr) -> (loss,
    grad_norm)` that tg-optimizer builds for other models.

    - The loss is the value the algorithm's Gradient ops differentiate (all
      must differentiate the same one); without Gradient ops, its first
      scalar floating-point output.
    - The gradient norm is the global L2 norm of every tg.gradient result
      (0 without Gradient ops).
    - A scalar f32 data input that an optimizer op takes as its learning
      rate R is fed by the `lr` argument (so `--lr` and the learning-rate schedule drive
      it); a scalar i64 data input that an optimizer op takes as its
      iteration count T is fed by `step - 1` (ONNX counts updates from 0).

    Runs before tg-expand-gradients, which still sees the tg.gradient ops.
  }];
  let options = [
    Option<"lr", "lr", "float", /*default=*/"1e-3f",
           "The learning rate fed to an algorithm input used as an optimizer's R">,
  ];
}

def TGLrSchedule : Pass<"tg-lr-schedule", "::mlir::ModuleOp"> {
  let summary = "Records the learning-rate schedule the training program follows";
  let description = [{
    Sets the module attribute `tg.lr_schedule` (a dictionary: `kind`,
    `warmup_steps`, `decay_steps`, `min_lr`), which code generation writes
    into the program's hyper-parameters; the runtime's driver applies it to
    the base learning rate each step (formula in runtime/README.md).

    Example: `hmcc-opt --tg-lr-schedule="kind=cosine warmup-steps=20"` gives
    `module attributes {tg.lr_schedule = {decay_steps = 0 : i64,
    kind = "cosine", min_lr = 0.000000e+00 : f32, warmup_steps = 20 : i64}}`.
  }];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"\"constant\"",
           "constant, or cosine (linear warm-up, then cosine decay to min-lr)">,
    Option<"warmupSteps", "warmup-steps", "int64_t", /*default=*/"0",
           "Warm-up steps of the cosine learning-rate schedule">,
    Option<"decaySteps", "decay-steps", "int64_t", /*default=*/"0",
           "Step at which the cosine learning-rate schedule reaches min-lr (0: the run's --steps)">,
    Option<"minLr", "min-lr", "float", /*default=*/"0.0f",
           "Final learning rate of the cosine learning-rate schedule">,
  ];
}

def TGSelectEntries : Pass<"tg-select-entries", "::mlir::ModuleOp"> {
  let summary = "Keeps only the functions the program exports; erases the stages before them";
  let description = [{
    After the training passes a module holds every stage they built
    (`@forward`, `@forward_backward`, `@train_step`, `@algorithm`). The
    generated program exports one or two of them; this pass erases the
    others, so that the scheduled program holds only what runs. A name in
    `functions` that the module lacks is an error naming the function.
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "The functions to keep (in the order the module holds them)">,
  ];
}

def TGInputRoles : Pass<"tg-input-roles", "::mlir::ModuleOp"> {
  let summary = "Marks the token and target inputs of a language model for the data loader";
  let description = [{
    The generated program's driver fills data inputs either from `--feed`
    files or, for a language model, from a token file: a window of ids and
    the next ids. This pass decides which inputs those are, so that no
    target has to guess. In every function, when exactly two data inputs
    (`tg.input`) are int64 `[B, T]` tensors of one type, the first gets
    `tg.input_role = "tokens"` and the second `tg.input_role = "targets"`.
    When the tokens index a parameter along axis 0 (an embedding), the
    tokens input also gets `tg.vocab_size`, the parameter's row count.
    Other inputs get no role.
  }];
}

#endif // HMCC_TG_TRANSFORMS_PASSES
