//===- Liveness.h - what is live where in a scheduled program ---*- C++ -*-===//
//
// The one replay of a scheduled program's hm.place / hm.release sequence.
// The allocator (hm-place-buffers), the checker (hm-verify-memory), the JSON
// dump and the memory summary all read liveness from here; none of them
// walks the places and releases itself.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_HM_ANALYSIS_LIVENESS_H
#define HMCC_HM_ANALYSIS_LIVENESS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace hmcc::hm {

/// A tensor in memory for the whole program: a parameter, an optimizer
/// state or a data input.
struct PersistentTensor {
  llvm::StringRef kind; ///< "param", "state" or "input"
  llvm::StringRef name; ///< the symbol, or the input's ONNX name
  mlir::RankedTensorType type;
  int64_t offset = -1; ///< its hm.offset; -1 where there is none
  int tier = 0; ///< the arena: 0 device, 1 host, 2 storage (hm::homeTier)
  llvm::StringRef whole; ///< of a piece (hm.whole): the whole tensor's name
};

/// The persistent tensors of `module`: parameters, then states, then the
/// inputs that have an offset, once per offset (functions share them), in
/// the order of the functions and their arguments.
llvm::SmallVector<PersistentTensor> persistentTensors(mlir::ModuleOp module);

/// One op of a scheduled function in program order (any op but hm.place
/// and hm.release), with what the hm.place and hm.release ops between it
/// and the next op do to memory. A value placed there is written by the op,
/// so it is in memory while the op runs; a value released there is free
/// once the op has run.
struct LiveStep {
  mlir::Operation *op = nullptr;
  /// The values that get bytes of their own here.
  llvm::SmallVector<mlir::Value, 1> born;
  /// The values whose bytes are free once `op` has run: each is released,
  /// and so is every view placed in its bytes.
  llvm::SmallVector<mlir::Value, 1> freed;
  /// The device arena bytes of placed values while `op` runs: `born`
  /// counted, `freed` still held (persistent tensors are not counted).
  int64_t liveBytes = 0;
  /// The same in the host arena.
  int64_t hostLiveBytes = 0;
};

/// When one placed value is in memory, as indices of steps.
struct Lifetime {
  static constexpr unsigned kNever = ~0u;
  unsigned begin = 0;    ///< placed at steps[begin]
  unsigned end = kNever; ///< released at steps[end]; kNever if it is not
  /// The value whose bytes these are: the value itself or, for the result
  /// of an aliasing view or an in-place op (hm::bytesTakenFrom), the owner
  /// of the operand whose bytes it took.
  mlir::Value owner;
  /// Whether steps[step].op may read the value.
  bool readableAt(unsigned step) const { return begin < step && step <= end; }
};

/// The replay of one scheduled function.
struct FunctionLiveness {
  llvm::SmallVector<LiveStep> steps;
  /// Every value placed in the function.
  llvm::DenseMap<mlir::Value, Lifetime> lifetimes;
  /// The most liveBytes (hostLiveBytes) of any step (0 for none).
  int64_t peakBytes = 0, hostPeakBytes = 0;
  /// The values placed in a host arena.
  llvm::DenseSet<mlir::Value> inHost;
  /// Where the replay stopped, if it did: an hm.place of a value placed
  /// before, or an hm.release of a value not in memory, and that value. The
  /// steps end with the one it belongs to, as far as it got.
  mlir::Operation *broken = nullptr;
  mlir::Value brokenValue;
};

/// Replays the places and releases of `fn` in program order. A view placed
/// in its operand's bytes is resolved to the value owning them once: it
/// holds those bytes, which are free only when it and every other value in
/// them are released.
FunctionLiveness replayFunction(mlir::func::FuncOp fn);

} // namespace hmcc::hm

#endif // HMCC_HM_ANALYSIS_LIVENESS_H
