//===- RuntimeCalls.h - the runtime call of each tg op ----------*- C++ -*-===//
//
// The one table from tg ops to the runtime's entry points (the kernels of
// runtime/include/hmrt/*.h) and the groups of arguments they take. It says
// nothing about how a target spells an argument: every target's lowering
// reads the table and turns each argument group into its own expressions
// (the CPU target: EmitC pointer arithmetic on the arena, static arrays).
//
// Adding a tg op that the runtime computes: add its case to runtimeCalls()
// in RuntimeCalls.cpp; every target picks it up.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_TARGET_COMMON_RUNTIMECALLS_H
#define HMCC_TARGET_COMMON_RUNTIMECALLS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace hmcc::tg {
class FusedOp;
} // namespace hmcc::tg

namespace hmcc::rt {

/// One argument group of a runtime call.
struct Arg {
  enum class Kind {
    Data,          ///< a `ctype`* pointer to the bytes of `value` (nullptr without one)
    Persistent,    ///< a `ctype`* pointer to the parameter or state `symbol`
    DataArray,     ///< an array of `ctype`* pointers to the bytes of `values`
    Shape,         ///< two arguments: the rank of `value`, a static int64 array of its dims
    Ints,          ///< a static int64 array holding `ints`
    Mask,          ///< a static uint8 array holding `ints` (a reduction mask)
    Count,         ///< the element count of `value`
    ElementSize,   ///< the bytes of one element of `value`
    Dtype,         ///< the hmrt_dtype of `value`'s element type
    Int,           ///< the integer `number`
    Float,         ///< the float `real`
    Text,          ///< C text: an enumerator, nullptr, sizeof(float)
    Scalar,        ///< the value of the one-element tensor `value` of C type `ctype`
    Step,          ///< the step being run (training functions)
    Lr,            ///< this step's learning rate (training functions)
    FirstStep,     ///< whether the step being run is the first
    DropoutStream, ///< a mask stream unique to the op (`number`; the next in program order when
                   ///< negative) and, in training, to the step
    FillValue,     ///< a static float array holding `real`
    ConstantValue, ///< a static array holding the values of the constant `value` (its op's)
  };
  Kind kind;
  mlir::Value value;
  std::vector<mlir::Value> values;
  mlir::FlatSymbolRefAttr symbol;
  std::string ctype, text;
  std::vector<int64_t> ints;
  int64_t number = 0;
  double real = 0;
  int64_t byteOffset = 0; ///< Data, Persistent: bytes past the start (an update's chunk)
};

/// A call of the runtime: a kernel `callee(args...)` returning an
/// hmrt_status the program checks, or a copy of `args` = (destination,
/// source, bytes) between memory the program addresses, which each target
/// makes its own way (the CPU target: through the execution context, so that
/// the device's memory need not be the host's).
struct Call {
  enum class Kind { Kernel, Copy };
  std::string callee; ///< the kernel's C name; empty for a copy
  llvm::SmallVector<Arg> args;
  Kind kind = Kind::Kernel;
};

/// The calls that compute `op` of a scheduled program, in order: none for a
/// view placed in its operand's bytes, several for a split. Fails after a
/// diagnostic for an op or element type the runtime has no kernel for.
/// Parameter reads, small constants (static data), the memory plan and the
/// return are the target's own business, not calls.
mlir::LogicalResult runtimeCalls(mlir::Operation *op, llvm::SmallVectorImpl<Call> &calls);

/// The code of a tg.fused op as hmrt_fused_f32 takes it: per instruction its
/// opcode (hmrt_fused_op) and three operands, each an input's index, n_in
/// plus an earlier instruction's index, or -1.
llvm::SmallVector<int64_t> fusedCode(tg::FusedOp op);

} // namespace hmcc::rt

#endif // HMCC_TARGET_COMMON_RUNTIMECALLS_H
