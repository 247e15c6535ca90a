//===- Passes.td - the planner's passes --------------------*- tablegen -*-===//
#ifndef HMCC_PLANNER_PASSES
#define HMCC_PLANNER_PASSES

include "mlir/Pass/PassBase.td"

def PlanTiers : Pass<"plan-tiers", "::mlir::ModuleOp"> {
  let summary = "Homes parameters, with their gradients and optimizer states, in host memory";
  let description = [{
    Runs on training programs before plan-recompute. A parameter homed on
    the host (`hm.home = "host"` on its tg.parameter and its tg.state ops)
    lives in the host arena with its optimizer states; every op that reads
    it reads a device copy fetched just before it (a `tg.identity` of the
    parameter, placed in the device arena and freed after that op); its
    gradient, once complete, is copied to the host (a `tg.identity` with
    `hm.home = "host"`) and the device copy freed; the optimizer update
    reads the host copy and runs where the states live (marked
    `hm.home = "host"`), while the gradient's sum of squares for the norm
    (tg.sum_squares, right after the gradient) reads it on the device. Copies are exact, so the
    program computes the same values.

    Which parameters: when the program does not fit `vram` with what
    plan-recompute can do, the fewest first ones in planner::hostCandidates'
    order (largest first, but those whose update and fetch could not run
    beside compute, such as an embedding read first and differentiated
    last, after all others) such that it does: a first guess from the bytes
    over the budget (each parameter takes its states and gradient along),
    then a bisection on how many, each count judged by plan-recompute's own
    fit on a copy of the module. When even all of them on the host do not fit,
    all are homed there and plan-recompute reports the smallest budget.
    When some must go, the choice is made for the whole budget and, on a
    profile whose copies do not share the host's cores, for `vram` less the
    largest parameter's bytes (planner::prefetchHeadroom: room for
    plan-overlap to fetch ahead, at the cost of more parameters on the
    host); where both fit, the one whose step planned on (as below)
    predicts faster is kept.
    With `chunk-size`, the last of those parameters is then split into
    chunks of its rows (of about that many bytes; where it has 4096 elements
    or more, whole 256-element blocks, so that 8-bit moments split exactly)
    and only the fewest last chunks that fit go to the host, judged the same
    way, where the step planned on (plan-recompute, plan-overlap, placement
    and plan-streams run on a copy) predicts faster, by 0.1% at least, than
    with all of it on the host: the parameter becomes two pieces (`name#0` on the device, `name#1`
    on the host, `hm.whole = "name"` on both and on their optimizer states,
    which split alike), each reader reads a `tg.concat` of the two made just
    before it, and each piece's update reads its rows of the gradient
    (`tg.slice`), which the norm still reads whole: the same values again.
    Checkpoints and the program's descriptor know the whole. The later
    quantization passes leave a split parameter's states as they are.
    Programs whose updates are the model's own (ONNX training_info) are left
    as they are. `force` replaces the choice: "none", "all", or parameter
    names separated by commas, one of which may be NAME:ROWS, its last ROWS
    rows.

    `device-updates` ("auto", "none" (the default), "all", or names of
    parameters it homes on the host) keeps their optimizer updates on the
    device: the gradient is not
    copied to the host, and plan-staging copies the parameter and its
    states to device staging buffers for the update and back after it (two
    buffers, of the largest such update's tensors or, with `chunk-size`,
    of one chunk's). The buffers' bytes go on the module
    (`hm.device_staging`), and plan-recompute and plan-overlap plan the
    rest within the budget less them. The update is the same kernel on the
    same values: the program computes the same values. With "auto", under
    `vram`, on a profile whose copies do not share the host's cores, and
    where the host optimizer's stream ends the step planned on (as above):
    the same with a share of the host's parameters updated on the device
    (those whose gradients come last first), each with the fewest
    parameters on the host that fit beside the staging buffers (and beside
    the prefetch headroom where the choice above kept it): from a quarter,
    the share moves to the next of 1/16, 1/8, 1/4, 1/2 and all, up or
    down, while the step planned on predicts faster; then the counts
    between the best share and its neighbours are tried, the gaps halved
    twice toward the faster half; the fastest, where it beats the choice
    above by 0.1% at least, is kept.

    `bf16-fetches`: a reader of a host parameter that rounds it to bf16
    anyway (a factor of a GEMM with bf16 products, `tg.math = "bf16"`, or
    the `tg.cast {nearest_even}` of bf16 storage) reads a bf16 copy
    instead: the parameter is rounded once on the host (a
    `tg.cast {nearest_even}` with `hm.home = "host"` right after its
    tg.param, on the host optimizer's stream, into the host arena, before
    the parameter changes), and each such fetch copies those 2 bytes an
    element instead of 4. A GEMM then left with one bf16 and one f32
    factor converts the smaller one just before it, as tg-precision does:
    the same products, so the same values. "auto" (the default) does so
    where the profile's copies do not share the host's cores (not on the
    cpu profile, where the "device" is host memory); "always", "never".
  }];
  let options = [
    Option<"vram", "vram", "std::string", /*default=*/"\"\"",
           "Device memory budget, e.g. 24G (empty: no bound, nothing moved)">,
    Option<"chunkSize", "chunk-size", "std::string", /*default=*/"\"\"",
           "Split the last parameter for the host into chunks of about this size (empty: "
           "whole parameters)">,
    Option<"deviceProfile", "device-profile", "std::string", /*default=*/"\"cpu\"",
           "cpu, h200 or a JSON profile (for plan-recompute's search)">,
    Option<"force", "force", "std::string", /*default=*/"\"\"",
           "For tests: none, all, or parameter names separated by commas">,
    Option<"deviceUpdates", "device-updates", "std::string", /*default=*/"\"\"",
           "none, all, or names of parameters homed on the host whose updates run on the "
           "device through staging buffers">,
    Option<"bf16Fetches", "bf16-fetches", "std::string", /*default=*/"\"auto\"",
           "auto (where the profile's copies do not share the host's cores), always or never: "
           "host parameters fetched in bf16 for the readers that round them so">,
  ];
  let dependentDialects = ["::hmcc::hm::HMDialect"];
}

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
    backward op that reads one, the ops of the segment's forward that make
    what the backward reads are run again from its input cut, and the
    backward reads the copies; the last stage's ops that make only its
    output cut, the next stage's input, are not). The pass picks the
    decision of least predicted recompute time (device-profile's cost model:
    each recomputed segment its stages' forward time less its last stage's
    output-only ops) whose activations fit `vram` less the persistent tensors, by a dynamic
    program over the chain that keeps, for each prefix, every decision not
    dominated in (recompute time, bytes freed); among equals, the one with
    the most slack (the fewest bytes to spare at any stage, the most),
    which the placement is likeliest to fit (a model's layers are alike:
    which of them to recompute often makes no difference to the time or
    the bytes freed). The bytes live at each
    point come from placing the unplanned program (hm-place-buffers); each
    decision found is then placed for real, and the budget tightened by
    what the placement exceeds (twice as much after each round that still
    exceeds, up to eight rounds) until it fits. When that does not converge,
    the decisions for a range of activation budgets are placed, and from
    the smallest of them a local search recomputes one more stage next to
    a recomputed segment (its input offloaded) while that places smaller
    (the profile's model of the peak can miss a stage whose saved tensors
    stay live across the next stage's backward). When no decision fits,
    the pass fails with the smallest `--vram` that does, what takes it and
    the recompute time there. With parameters homed on the host, the
    decision is first sought for `vram` less the largest parameter's bytes
    (the prefetch headroom plan-tiers keeps too), then for the whole
    budget.

    A kept stage may also be kept light: its cheap ops (elementwise, fused
    elementwise programs, layer norms: one pass over their operands) whose
    saved results the backward reads, where each operand is there anyway
    when the backward first reads them (a parameter, a constant, an input,
    or a value the backward reads then or later, made by no other light
    op), are copied just before that first read, and the backward reads
    the copies: a GELU's output, computed again from its input, which its
    gradient reads; a layer norm's, from its input and parameters. Those
    values then live only through the forward, and their copies only
    through the backward. The dynamic program weighs the copies' time
    against the bytes freed like any other choice; on the 1.3 B GPT they
    are 40% of what a block saves for about a tenth of its forward time.

    Recomputation is exact: the copies are the same ops on the same inputs,
    and each tg.dropout is given its mask stream (`stream`) before any copy
    is made, so a copy draws the same mask.

    The chain, each stage's predicted forward and backward time, its cut
    and saved bytes and the decision are recorded on the module as
    `hm.recompute` for the schedule dump and the summary. `force` replaces
    the search: "none", "all" (every stage its own recomputed segment), or
    segments and light stages such as "1-3,5:offload,7:light" (stages are
    numbered from 1), and stored stages such as "8:store": a kept stage
    whose saved values go to host memory (a `tg.identity` homed there)
    after their last forward reader and come back just before their first
    backward reader, which reads what came back. The search does not store
    stages: on the h200 profile the copies of a transformer stage's saved
    values take about 8 times its recompute on the link, and a first
    attempt (stores weighed at a fraction of their copy time, kept where
    the busiest resource's load fell) planned the 1.3 B GPT at 8 GiB 26 ms
    slower: the values come back just before their readers, and there is
    no room to bring them earlier.

    Offload: a recomputed segment may also send the cut before it to host
    memory (a `tg.identity` homed on the host) after its last forward reader
    and bring it back just before the segment is recomputed; the backward
    reads what came back. The dynamic program weighs the two copies (the
    profile's links) against the bytes freed meanwhile.
  }];
  let options = [
    Option<"vram", "vram", "std::string", /*default=*/"\"\"",
           "Device memory budget, e.g. 24G (empty: no bound, nothing recomputed)">,
    Option<"deviceProfile", "device-profile", "std::string", /*default=*/"\"cpu\"",
           "cpu, h200 or a JSON profile: the cost model's figures">,
    Option<"force", "force", "std::string", /*default=*/"\"\"",
           "For tests: none, all, or the recomputed segments, light and stored stages, e.g. "
           "1-3,5,7:light,8:store">,
    Option<"vramReserve", "vram-reserve", "int64_t", /*default=*/"0",
           "Device bytes the runtime holds beside the arena (hmcc --target cuda): `vram` is "
           "the arena's budget, and messages name the user's --vram, these added">,
  ];
  let dependentDialects = ["::hmcc::hm::HMDialect"];
}

def PlanOverlap : Pass<"plan-overlap", "::mlir::ModuleOp"> {
  let summary = "Orders the program so that transfers and host updates overlap compute";
  let description = [{
    Runs after plan-tiers and plan-recompute, before hm-place-buffers; the
    values computed do not change, only when.

    Shared fetches: plan-tiers gives each reader of a host parameter its own
    fetch, and plan-recompute's copies of forward ops fetch again. A fetch
    whose first reader starts, on the clock of the predicted compute, no
    later than its own copy time after the last reader of the same
    parameter's fetch before it is dropped: its readers read that copy,
    which lives until them (the parameter changes only in its update, after
    every reader). Made when the program then fits the budget (all such
    fetches, or none); `share-fetches=false` keeps every fetch.

    Updates: each optimizer update on the host (the host_optimizer stream)
    moves up to just after the last op it
    must follow (the ops defining its operands, the gradient among them,
    and every reader of its parameter, through views), so that the update
    of a layer homed on the host runs on the host optimizer's stream while
    the backward of the layers before it computes. With gradient clipping
    the updates follow the norm and stay near the end.

    Fetches: a copy to the device (the fetch of a parameter homed on the
    host, the return of an offloaded cut) is put just before the op that
    reads it; on its own stream (host_to_device) it would then run while
    compute waits. It moves earlier by its prefetch distance, on the clock
    of the predicted compute time (device-profile's cost model) before each
    op: the copies run on the host-to-device link one after another, so
    each must end before its reader starts and before the next copy has to
    start; from the last copy back, each gets the latest start meeting both
    and goes before the last op compute reaches by then, never above the
    op defining what it copies.

    Holds: each op of another stream than compute gets `hm.hold = N`: what
    it reads stays in memory for the N ops after it whose predicted compute
    covers the time until it ends (its own predicted time, from when compute
    issues it or, if later, when the op before it on its stream ends), so
    that hm-place-buffers does not hand those bytes to an op that would have
    to wait for it. An op that reads temporaries of the host arena alone (an
    update on the host, reading its gradient's host copy) always gets its
    hold, even when no fetch can move: it costs no device memory, and
    without it a later gradient's copy to the host, placed in the bytes the
    update still reads, would wait for the host's updates, and compute for
    that copy.

    Moved copies and holds keep bytes longer and moved updates change when
    gradients are freed: under `vram`, the program is placed after the
    moves, first with every fetch at its full distance and the holds. When
    that does not fit, the candidates that do are: every fetch at the
    longest of its distance halved up to five times that fits, without
    holds; and, at the full, half and quarter distance, the fetches up to a
    size, the largest size that fits (a bisection over the fetches' sizes),
    the others staying; and when such a candidate is the best, the same
    with the others at the longest of its distance halved up to five times
    that fits. The candidate whose copies the compute before their
    readers covers best (the least copy time left uncovered, summed) wins,
    with the holds when they fit too (those of ops reading the host arena
    alone always), else with them as `hm.soft_hold`
    (hm-place-buffers then gives those bytes to a new value only when no
    other free bytes fit) when that fits; updates move only when that fits. `force`:
    "none" moves nothing, "max" moves each copy as far up as its operand
    allows (within the budget, as above), "fetches" moves only the fetches.
  }];
  let options = [
    Option<"vram", "vram", "std::string", /*default=*/"\"\"",
           "Device memory budget, e.g. 24G (empty: no bound)">,
    Option<"deviceProfile", "device-profile", "std::string", /*default=*/"\"cpu\"",
           "cpu, h200 or a JSON profile: the cost model's figures">,
    Option<"force", "force", "std::string", /*default=*/"\"\"",
           "For tests: none, max or fetches">,
    Option<"shareFetchesOption", "share-fetches", "bool", /*default=*/"true",
           "Share a host parameter's device copy between fetches close together">,
  ];
}

def PlanQuantize : Pass<"plan-quantize", "::mlir::ModuleOp"> {
  let summary = "Keeps optimizer states 8-bit where the host budget needs it (--quantize-states auto)";
  let description = [{
    Runs after plan-tiers, plan-recompute and plan-overlap, before
    plan-storage. With `mode=auto`, when the host arena the program would
    be placed with exceeds `ram`, the AdamW updates of parameters homed on
    the host become 8-bit AdamW (block-wise 8-bit moments: one code per
    element and one absmax per 256, as tg-optimizer's adamw8bit), those of
    the largest parameters first, until the host arena fits: each takes
    exactly the bytes its moments shrink by out of the arena (persistent
    tensors are packed first), and its host update and any storage traffic
    move a quarter of the bytes. What is still over goes to storage
    (plan-storage). Parameters under 4096 elements keep fp32 moments, as
    with adamw8bit. `never` and `always` leave the program as it is
    (`always` is tg-optimizer's adamw8bit); `host` quantizes every host
    parameter's states (for tests). A checkpoint resumes only in a program
    whose states have the same format: the loader names the state whose
    dtype differs.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"never\"",
           "never, auto, always (tg-optimizer's adamw8bit) or host (tests)">,
    Option<"ram", "ram", "std::string", /*default=*/"\"\"",
           "Host memory budget, e.g. 96G (empty: no bound, nothing quantized)">,
  ];
  let dependentDialects = ["::hmcc::hm::HMDialect"];
}

def PlanUpdates : Pass<"plan-updates", "::mlir::ModuleOp"> {
  let summary = "Moves optimizer updates on the device up to just after their gradients";
  let description = [{
    Runs on training programs before the other planning passes. tg-optimizer
    puts every update at the end of the step, so every gradient lives until
    then; this pass moves each update that runs on the device up to just
    after the last op it must follow (what defines its operands, such as
    its gradient, and every reader of its parameter, through views of it),
    so that each gradient's bytes free as soon as its parameter is updated
    and the backward's later stages run beside fewer of them. The updates
    are elementwise and each touches only its own parameter and states:
    the program computes the same values. (Updates that read the clipping
    coefficient of the global norm stay after every gradient.) Should
    plan-recompute later copy a forward op that reads an updated parameter
    after its update, it moves the update after the copy again.
  }];
}

def PlanQuantizeDevice : Pass<"plan-quantize-device", "::mlir::ModuleOp"> {
  let summary = "Keeps optimizer states 8-bit where the device budget or the recompute time needs it (--quantize-states auto)";
  let description = [{
    Runs before plan-tiers. With `mode=auto`, when the training program
    does not fit `vram` with what plan-recompute can do, but would with
    every AdamW update 8-bit (parameters of 4096 elements or more), the
    fewest of the largest parameters' updates become 8-bit AdamW (as
    plan-quantize does it) such that it fits: a bisection on how many,
    largest first, each count judged by plan-recompute's own fit on a copy
    of the module (its quick search, as plan-tiers judges; with
    `recompute=none`, by the unplanned arena). 8-bit moments take about a
    quarter of the device bytes and cost no transfers, where plan-tiers
    would move parameters to the host and fetch them every step.

    When it fits with recompute, as it is or with those fewest, more 8-bit
    moments can still shorten the step: the room they free keeps
    activations that would be recomputed. Where all of them would save
    recompute time of 1% of the step's compute or more (plan-recompute's
    dynamic program, without offload, for the activation budget their
    bytes widen, against the quick search's time with the fewest that fit),
    about the fewest largest ones past those (a bisection on how many, to
    within a quarter of them) that come within 1% of that saving become
    8-bit.

    When even all of them 8-bit do not fit,
    plan-tiers will move parameters to the host: then, if the profile's
    host optimizer updates 8-bit moments at least as fast as fp32 ones
    (h200), all of them become 8-bit, so that the device holds more
    parameters, whose updates move nothing over the links; else (the cpu
    profile) nothing changes here, and plan-quantize and
    plan-quantize-traffic decide about the host parameters' states.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"never\"",
           "never, auto or always (only auto changes anything here)">,
    Option<"vram", "vram", "std::string", /*default=*/"\"\"",
           "Device memory budget, e.g. 24G (empty: no bound, nothing quantized)">,
    Option<"deviceProfile", "device-profile", "std::string", /*default=*/"\"cpu\"",
           "cpu, h200 or a JSON profile (for plan-recompute's search)">,
    Option<"recompute", "recompute", "std::string", /*default=*/"\"auto\"",
           "plan-recompute's force (hmcc --recompute): with none, the fit is the unplanned arena's">,
  ];
  let dependentDialects = ["::hmcc::hm::HMDialect"];
}

def PlanQuantizeTraffic : Pass<"plan-quantize-traffic", "::mlir::ModuleOp"> {
  let summary = "Keeps stored optimizer states 8-bit where that shortens the predicted step (--quantize-states auto)";
  let description = [{
    Runs after plan-storage, before hm-place-buffers. With `mode=auto`, the
    fp32 AdamW updates whose moments plan-storage homed in storage become
    8-bit AdamW (as plan-quantize does it), those of the largest parameters
    first, as long as each lowers the step's lower bound as `device-profile`
    predicts it: every resource's load over one train_step (each op on its
    stream, plus the staging traffic of the states in storage, both ways),
    the largest of them, or their sum where the profile's device is the
    host. An 8-bit state moves a quarter of the bytes over the storage links
    and is updated at the profile's 8-bit host rate; so states are
    quantized when the storage links bind the step and not when the device
    or the host optimizer does. Stops at the first parameter that gains
    nothing (smaller ones gain less). Parameters under 4096 elements keep
    fp32 moments. Other modes leave the program as it is.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"never\"",
           "never, auto or always (only auto changes anything here)">,
    Option<"deviceProfile", "device-profile", "std::string", /*default=*/"\"cpu\"",
           "cpu, h200 or a JSON profile: the cost model of the step">,
  ];
  let dependentDialects = ["::hmcc::hm::HMDialect"];
}

def PlanStorage : Pass<"plan-storage", "::mlir::ModuleOp"> {
  let summary = "Homes optimizer states, then parameters, in storage when the host arena exceeds its budget";
  let description = [{
    Runs after the other planning passes, before hm-place-buffers. When the
    host arena the program would be placed with exceeds `ram` and there is
    storage (`nvme`), the optimizer states of parameters homed on the host
    move to the storage arena (`hm.home = "storage"` on their tg.state),
    those of the largest parameters first, until the host arena fits: it
    loses exactly the states' bytes (persistent tensors come first in it)
    and gains two staging buffers, each as large as the states of the
    largest parameter moved, or with `chunk-size` of the largest chunk
    (plan-staging adds them after placement). The
    host arena without storage comes from placing a copy of the program.

    When every state is in storage and the host arena is still over, the
    parameters on the host follow (`hm.home = "storage"` on their
    tg.parameter), largest first, the fewest that fit, each count judged by
    placing a copy of the program: each device copy of such a parameter
    (plan-tiers' fetches) reads a host copy read from storage (a
    `tg.identity` homed on the host, on the storage_read stream, placed on
    a 4096-byte block so that it moves with O_DIRECT), and its update
    stages the parameter with its states (plan-staging). Device copies of
    one parameter share a read when the compute between them
    (`device-profile`'s cost model) is no longer than reading it again
    would take (a layer's recomputed forward and its backward, say); each
    read goes right after the device copy that follows the stored
    parameter read before it, so that the storage link reads one ahead.
    Only parameters read by nothing but their device copies move.

    When moving everything is not enough, all move if that makes the host
    arena smaller (small states need not: storage moves whole pages), none
    otherwise, and hm-check-budget reports what the host arena still needs.
    `force` replaces the choice of states ("all", or parameter names
    separated by commas), `force-params` that of parameters.
  }];
  let options = [
    Option<"ram", "ram", "std::string", /*default=*/"\"\"",
           "Host memory budget, e.g. 96G (empty: no bound, nothing moved)">,
    Option<"nvme", "nvme", "std::string", /*default=*/"\"\"",
           "Storage budget, e.g. 400G (empty: no storage, nothing moved)">,
    Option<"chunkSize", "chunk-size", "std::string", /*default=*/"\"\"",
           "plan-staging's chunk size, for the staging buffers' size (empty: whole parameters)">,
    Option<"force", "force", "std::string", /*default=*/"\"\"",
           "For tests: all, or parameters on the host whose states go to storage">,
    Option<"forceParams", "force-params", "std::string", /*default=*/"\"\"",
           "For tests: all, or parameters on the host that go to storage themselves">,
    Option<"deviceProfile", "device-profile", "std::string", /*default=*/"\"cpu\"",
           "cpu, h200 or a JSON profile: whether fetches of a stored parameter share a read">,
  ];
  let dependentDialects = ["::hmcc::hm::HMDialect"];
}

def PlanStaging : Pass<"plan-staging", "::mlir::ModuleOp"> {
  let summary = "Updates optimizer states and parameters homed a tier below where the update runs through staging buffers";
  let description = [{
    Runs after hm-place-buffers, before plan-streams. Each optimizer update
    whose states or parameter plan-storage homed in storage (`hm.home =
    "storage"` on the tg.state or tg.parameter) runs on the host's copies of
    them: two staging buffers are added at the end of the host arena
    (4096-byte aligned, each as large as the stored tensors of the largest
    such update), used in turn; `hm.stage "in"` ops read the update's
    stored states (and parameter) from the storage arena into its buffer,
    `hm.staged` on the update names where each one is, and `hm.stage "out"`
    ops write them back right after the update. The reads for an update
    are issued right after the update before it, so they run (on the
    storage_read stream) while that one updates; plan-streams orders them
    after the write-back that last used their buffer.

    Likewise one tier up: an update that runs on the device (no `hm.home`)
    while its parameter and states are homed on the host (plan-tiers'
    device updates) runs on device copies of them, staged through two
    buffers added at the end of the device arena (each value aligned as
    the arena's are) by hm.stage ops on the host_to_device and
    device_to_host streams, which copy exactly the tensors' bytes.

    With `chunk-size` (bytes of fp32 parameter, rounded down to a multiple
    of 4 KiB, at least 4 KiB, and up to a multiple of 1 MiB for 8-bit
    states, so that every state's slice starts on a 4096-byte block), the
    AdamW, 8-bit AdamW and SGD updates of larger parameters run chunk by
    chunk: one update per chunk of elements (`hm.chunk = array<i64: lo,
    hi>`), whose hm.stage ops move only that chunk's slice of each state. The staging buffers then hold one chunk's
    states instead of the largest parameter's, and reading the next chunk
    overlaps the update of this one within a parameter too. The values
    computed are the same: the updates are elementwise and the chunks
    start on 8-bit AdamW's 256-element blocks.
  }];
  let options = [
    Option<"chunkSize", "chunk-size", "std::string", /*default=*/"\"\"",
           "Parameter bytes per chunk of a stored update, e.g. 64M (empty: whole parameters)">,
  ];
}

def PlanStreams : Pass<"plan-streams", "::mlir::ModuleOp"> {
  let summary = "Orders the ops of different streams with events";
  let description = [{
    Runs on scheduled programs, after hm-place-buffers. Each op runs on its
    stream (hm::streamOf: compute, host_to_device, device_to_host,
    host_optimizer, storage_read, storage_write), ops of one stream in
    program order and streams beside one another. Where an op touches bytes
    that an earlier op of another stream writes, or writes bytes that one
    reads (hm/Analysis/Streams.h: the read of a fetched copy after its fetch,
    the reuse of freed bytes after their last reader on any stream, an
    update after the fetches of the parameter it changes), the later op
    waits for an event the earlier one records: `hm.event = N` on the op
    that records event N once it has run, `hm.wait = [N, ...]` on the op
    that waits. A wait is left out when the stream already follows that op
    through an earlier wait (vector clocks over the streams), so each pair
    of streams synchronises only where the bytes demand it.

    `test-fault` breaks the result on purpose, for hm-verify-streams' tests:
    "drop-wait" removes the first wait, "unrecorded" makes it wait for an
    event no op records, "twice" records the first event on a second op.
  }];
  let options = [
    Option<"testFault", "test-fault", "std::string", /*default=*/"\"\"",
           "For tests: drop-wait, unrecorded or twice">,
  ];
}

#endif // HMCC_PLANNER_PASSES
