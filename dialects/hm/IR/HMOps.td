//===- HMOps.td - ops of the memory/schedule dialect --------*- tablegen -*-===//
#ifndef HMCC_HM_OPS
#define HMCC_HM_OPS

include "hm/IR/HMDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def HM_ArenaOp : HM_Op<"arena", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "declares the memory of one tier";
  let description = [{
    `size` bytes of the tier `tier`: "device" (GPU memory; the host memory
    that stands in for it on the CPU target) or "host". The program
    allocates exactly this much; every offset in the program lies inside.

    ```mlir
    hm.arena @arena tier "device" size 4096
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$tier, I64Attr:$size);
  let extraClassDeclaration = [{
    /// The size in bytes, signed like every offset.
    int64_t getBytes() { return getSizeAttr().getInt(); }
  }];
  let assemblyFormat = "$sym_name `tier` $tier `size` $size attr-dict";
  let hasVerifier = 1;
}

def HM_PlaceOp : HM_Op<"place", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "stores a value in an arena from its definition on";
  let description = [{
    The value, defined by the op just before, occupies the bytes
    `[offset, offset + size)` of the arena until an `hm.release` of it.
    Offsets are multiples of 64.

    ```mlir
    hm.place %0 in @arena at 128 : tensor<8x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$value, FlatSymbolRefAttr:$arena, I64Attr:$offset);
  let extraClassDeclaration = [{
    /// The offset in bytes, signed like every offset.
    int64_t getByteOffset() { return getOffsetAttr().getInt(); }
  }];
  let assemblyFormat = "$value `in` $arena `at` $offset attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def HM_ReleaseOp : HM_Op<"release"> {
  let summary = "ends the lifetimes of values";
  let description = [{
    The memory of each value is free for later `hm.place`s; the value must
    not be read after this point.

    ```mlir
    hm.release %0, %1 : tensor<8x3xf32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

def HM_StageOp : HM_Op<"stage", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "moves an optimizer state or parameter between its home and a staging copy a tier up";
  let description = [{
    An optimizer state or a parameter homed in storage (`hm.home =
    "storage"` on its tg.state or tg.parameter) is updated through host
    memory: `"in"` reads its bytes from
    the storage arena into the host arena at `offset` (a staging buffer,
    a multiple of 4096 bytes), the update reads and writes them there (its
    `hm.staged` names the offset), and `"out"` writes them back. Runs on the
    storage_read or storage_write stream.

    One homed on the host whose update runs on the device (plan-tiers'
    device updates) is staged alike in the device arena: `"in"` copies it
    to the device on the host_to_device stream, `"out"` back on the
    device_to_host stream.

    ```mlir
    hm.stage "in" @w.exp_avg at 8192 : tensor<64x128xf32>
    ```
  }];
  let arguments = (ins StrAttr:$direction, FlatSymbolRefAttr:$state, I64Attr:$offset,
                       TypeAttrOf<AnyRankedTensor>:$type);
  let assemblyFormat = "$direction $state `at` $offset attr-dict `:` $type";
  let hasVerifier = 1;
}

#endif // HMCC_HM_OPS
