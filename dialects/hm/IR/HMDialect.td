//===- HMDialect.td - the memory/schedule dialect -----------*- tablegen -*-===//
//
// The `hm` dialect holds the scheduled program: the tg ops of each entry
// function in the order they run, with where every tensor lives and for how
// long made explicit. It is what `hmcc --emit=schedule` prints, what
// hm-verify-memory checks, and what code generation reads.
//
//===----------------------------------------------------------------------===//

#ifndef HMCC_HM_DIALECT
#define HMCC_HM_DIALECT

include "mlir/IR/OpBase.td"

def HM_Dialect : Dialect {
  let name = "hm";
  let cppNamespace = "::hmcc::hm";
  let summary = "Scheduled programs: memory tiers, placements and lifetimes";
  let description = [{
    A scheduled program declares its memory with `hm.arena`, one per tier:
    the device arena (on `--target cpu` the host memory standing in for
    it) and, when plan-tiers homed tensors there (`hm.home = "host"` on a
    tg.parameter, a tg.state or an op whose results go there), a host
    arena, and, when plan-storage homed optimizer states or parameters in
    storage (`hm.home = "storage"`), a storage arena: a file, reached only
    through `hm.stage` copies to and from host staging buffers (the update
    names them with `hm.staged`) and, for a parameter, a `tg.identity`
    homed on the host that reads it into a host copy. Persistent tensors have fixed offsets in the arena of their home,
    the discardable attribute `hm.offset` on `tg.parameter`, `tg.state` and
    on data-input arguments. Every other tensor that needs memory is stored
    by an `hm.place` in an arena right after the op that defines it and
    freed by an `hm.release` right after its last reader; function results
    are never released, and a reader with `hm.hold = N` keeps what it reads
    N ops longer. Each op runs on a stream (hm::streamOf: compute, the
    copies between tiers, the host optimizer, storage reads and writes);
    the ops of a stream run in block order, and ops of different streams
    are ordered only by the events `hm.event` / `hm.wait` that plan-streams
    adds.

    ```mlir
    hm.arena @arena tier "device" size 1024
    tg.parameter @w : tensor<4xf32> {hm.offset = 0 : i64, source = "w"}
    func.func @forward(%x: tensor<4xf32> {hm.offset = 64 : i64, tg.input = "x"}) -> tensor<4xf32> {
      %w = tg.param @w : tensor<4xf32>
      %0 = tg.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      hm.place %0 in @arena at 128 : tensor<4xf32>
      %1 = tg.exp %0 : tensor<4xf32>
      hm.place %1 in @arena at 192 : tensor<4xf32>
      hm.release %0 : tensor<4xf32>
      return %1 : tensor<4xf32>
    }
    ```
  }];
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
}

class HM_Op<string mnemonic, list<Trait> traits = []>
    : Op<HM_Dialect, mnemonic, traits>;

#endif // HMCC_HM_DIALECT
