//===- Passes.td - passes on the scheduled program (hm) ----*- tablegen -*-===//
#ifndef HMCC_HM_TRANSFORMS_PASSES
#define HMCC_HM_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def HMVerifyMemory : Pass<"hm-verify-memory", "::mlir::ModuleOp"> {
  let summary = "Proves that a scheduled program stays inside its arena";
  let description = [{
    Follows every function in program order, the values live where the hm
    liveness replay (hm/Analysis/Liveness.h) has them, the bytes each one
    occupies read from its `hm.place` (never from the allocator), and fails
    on the first violation: a persistent tensor or a placed value outside
    the arena, two persistent tensors that overlap, a placement that
    overlaps a live value or a persistent tensor, a value placed twice, a
    release of a value that is not live, a read of a value that has no
    memory (neither placed, persistent, a parameter, nor a static constant)
    or that was released, a result written in place of an operand
    (hm::inPlaceOperand) that is read after it. A view, and such a
    result, may sit in the bytes of the operand it takes them from. A
    program that passes never touches memory outside `hm.arena` and never
    overwrites a value before its last read.
  }];
}

def HMCheckBudget : Pass<"hm-check-budget", "::mlir::ModuleOp"> {
  let summary = "Refuses a scheduled program whose arena exceeds the device budget";
  let description = [{
    The memory contract of `hmcc --vram`: the arena of the scheduled
    program (parameters, optimizer states, inputs and the activations at
    their peak) must fit `vram` (a size such as 24G, 512M or 1.5T, binary
    units). When it does not, the pass fails with one message giving the
    bytes needed and how they split. Likewise the host arena (parameters,
    states and gradients plan-tiers homed there) must fit `ram`, and the
    storage arena (the optimizer states homed there) `nvme`. Without a
    budget it checks nothing.
  }];
  let options = [
    Option<"vram", "vram", "std::string", /*default=*/"\"\"",
           "Device memory budget, e.g. 24G (empty: no bound)">,
    Option<"ram", "ram", "std::string", /*default=*/"\"\"",
           "Host memory budget for the host arena, e.g. 96G (empty: no bound)">,
    Option<"nvme", "nvme", "std::string", /*default=*/"\"\"",
           "Storage budget for the storage arena, e.g. 400G (empty: no bound)">,
    Option<"vramReserve", "vram-reserve", "int64_t", /*default=*/"0",
           "Device bytes the runtime holds beside the arena: `vram` is the arena's budget, and "
           "the message names the user's --vram, these added">,
  ];
}

def HMVerifyStreams : Pass<"hm-verify-streams", "::mlir::ModuleOp"> {
  let summary = "Proves that the streams of a scheduled program never race";
  let description = [{
    Follows every scheduled function in program order with one vector clock
    per stream, built from the events the program records (`hm.event`) and
    waits for (`hm.wait`) and nothing else, and checks each pair of ops on
    different streams whose bytes conflict (hm/Analysis/Streams.h: one
    writes what the other reads or writes, in any arena) is ordered: the
    later op's stream has seen the earlier op finish. Fails on a race,
    naming both ops and their streams, on a wait for an event that no
    earlier op records, and on an event recorded twice. A program without
    events passes when all its conflicting ops share a stream.
  }];
}

#endif // HMCC_HM_TRANSFORMS_PASSES
