//===- Passes.td - conversions between hmcc's dialects -----*- tablegen -*-===//
#ifndef HMCC_CONVERSION_PASSES
#define HMCC_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def HMPlaceBuffers : Pass<"hm-place-buffers", "::mlir::ModuleOp"> {
  let summary = "Lowers entry functions to the scheduled program: every tensor placed in an arena";
  let description = [{
    Program order, no planning of its own (the planner's passes decide
    homes, order and holds before it). Declares `hm.arena @arena`
    (tier "device"); gives parameters, then optimizer states, then data
    inputs fixed offsets (`hm.offset`; inputs of the same ONNX name share
    one across functions); then, per function, places each tensor that
    needs memory (`hm.place`, first fit; a copy to the device or a read
    from storage, which run on streams of their own, take the fitting free
    bytes released longest ago, so they do not wait for the op that read
    them last; a read from storage lands on a 4096-byte block, for
    O_DIRECT) right after the op that defines it, in the arena of the op's
    home (`hm.home`: a host arena, and a storage arena for what plan-storage
    homed there, are declared when anything lives there),
    and releases it (`hm.release`) right after its last reader, so later
    tensors reuse the memory: a reader with `hm.hold = N` keeps it N ops
    longer, and bytes last read by one with `hm.soft_hold = N` go to a new
    value within those N ops only when no other free bytes fit. A result never shares memory with an operand
    of its op, except a view (reshape, flatten, squeeze, unsqueeze,
    identity) of a value it reads for the last time: the operand is released
    and the result placed in its bytes, so the copy it stands for vanishes;
    and an op whose kernel may write its result over an operand
    (hm::inPlaceOperand: the f32 loss gradient over its scores) that it
    reads for the last time: the result is placed in the operand's bytes
    the same way. Function results are never released; a result without memory
    of its own (a parameter, a small constant or an argument returned as it
    is) is first copied by `tg.identity`. Small constants are static data
    of the program, not arena memory, unless the module's `hm.constants` is
    "arena" (hm-set-constants; a GPU reads no host memory): then every
    constant is placed and written in the arena when its op runs. The
    planner's trial placements follow the same attribute. The functions
    share the activation
    memory, so the arena is the persistent bytes plus the largest function's
    activation high-water mark.

    The pass first writes the places and releases, then packs the offsets
    as the hm liveness replay (hm/Analysis/Liveness.h) has the values live,
    twice: first fit, and best fit (the end of the smallest free block that
    fits); each leaves holes the other may not, and the packing with the
    smaller arena is kept (first fit on a tie).
    `test-fault` breaks the packing on purpose, to show that
    hm-verify-memory, which checks the offsets on its own, catches it.
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "The entry functions to place (default: every function)">,
    Option<"testFault", "test-fault", "std::string", /*default=*/"\"\"",
           "For tests of hm-verify-memory only: place wrongly on purpose. "
           "overlap: one value in the bytes of an operand of its op; "
           "early-release: the bytes an op reads for the last time given to "
           "its results; no-release: bytes reused but the hm.release ops "
           "left out">,
  ];
  let dependentDialects = ["::hmcc::hm::HMDialect"];
}

def HMSetConstants : Pass<"hm-set-constants", "::mlir::ModuleOp"> {
  let summary = "Records where the program's constants live: static data or the device arena";
  let description = [{
    Sets the module's `hm.constants` attribute: "static" (small constants
    are the program's static data, which the CPU reads where they are) or
    "arena" (every constant is placed in the arena too and written there
    when its op runs: a device that cannot read host memory). Every
    placement of the module follows it: the planner's trial placements
    (plan-tiers, plan-recompute, plan-overlap, ...) and hm-place-buffers,
    so that the arena the planner fits to the budget is the one the program
    gets. Without the attribute, constants are static. Runs first.
  }];
  let options = [
    Option<"placement", "placement", "std::string", /*default=*/"\"static\"",
           "static or arena">,
  ];
  let dependentDialects = ["::hmcc::hm::HMDialect"];
}

#endif // HMCC_CONVERSION_PASSES
