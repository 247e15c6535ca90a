//===- Passes.td - the planner's passes --------------------*- tablegen -*-===//
#ifndef HMCC_PLANNER_PASSES
#define HMCC_PLANNER_PASSES

include "mlir/Pass/PassBase.td"

def PlanRecompute : Pass<"plan-recompute", "::mlir::ModuleOp"> {
  let summary = "Chooses which activations are kept and which are recomputed, under the budget";
  let description = [{
    Runs on tg programs that differentiate a loss (train_step,
    forward_backward), before hm-place-buffers. The forward ops (those the
    loss depends on) are cut into a chain of stages at the graph's
    single-tensor cut points: the places in program order where exactly one
    activation computed so far is still read by a later forward op (the
    residual stream between transformer blocks, say). A stage's saved
    activations are the values it computes that the backward reads; its
    output (the cut tensor) is not among them.

    A decision groups the stages into segments, each kept (its saved
    activations stay in memory from the forward to their backward) or
    recomputed (they are freed after the forward; just before the first
    backward op that reads one, the segment's forward is run again from its
    input cut, and the backward reads the copies). The pass picks the
    decision of least predicted recompute time (device-profile's cost model)
    whose activations fit `vram` less the persistent tensors, by a dynamic
    program over the chain that keeps, for each prefix, every decision not
    dominated in (recompute time, bytes freed). The bytes live at each
    point come from placing the unplanned program (hm-place-buffers); each
    decision found is then placed for real, and the budget tightened by
    what the placement exceeds until it fits. When no decision fits, the
    pass fails with the smallest `--vram` that does, what takes it and the
    recompute time there.

    Recomputation is exact: the copies are the same ops on the same inputs,
    and each tg.dropout is given its mask stream (`stream`) before any copy
    is made, so a copy draws the same mask.

    The chain, each stage's predicted forward and backward time, its cut
    and saved bytes and the decision are recorded on the module as
    `hm.recompute` for the schedule dump and the summary. `force` replaces
    the search: "none", "all" (every stage its own recomputed segment), or
    segments such as "1-3,5" (stages are numbered from 1).
  }];
  let options = [
    Option<"vram", "vram", "std::string", /*default=*/"\"\"",
           "Device memory budget, e.g. 24G (empty: no bound, nothing recomputed)">,
    Option<"deviceProfile", "device-profile", "std::string", /*default=*/"\"cpu\"",
           "cpu, h200 or a JSON profile: the cost model's figures">,
    Option<"force", "force", "std::string", /*default=*/"\"\"",
           "For tests: none, all, or the recomputed segments, e.g. 1-3,5">,
  ];
  let dependentDialects = ["::hmcc::hm::HMDialect"];
}

#endif // HMCC_PLANNER_PASSES
