//===- Streams.h - the bytes each op touches, and what orders them -*- C++ -*-===//
//
// A scheduled program runs its ops on several streams (hm::streamOf): ops of
// one stream in program order, ops of different streams only as ordered by
// events.  Two ops conflict when one writes bytes the other reads or writes;
// conflicting ops on different streams need an event between them.  This is
// the one place that says which bytes an op touches and which earlier ops
// it conflicts with: plan-streams places events from it, and
// hm-verify-streams checks any program's events against it.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_HM_ANALYSIS_STREAMS_H
#define HMCC_HM_ANALYSIS_STREAMS_H

#include "hm/IR/HMOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <array>
#include <cstdint>

namespace hmcc::hm {

/// The streams, numbered as the runtime's HMRT_EXEC_STREAM_* (hmrt/program.h).
constexpr std::array<const char *, 6> kStreams = {
    "compute",        "host_to_device", "device_to_host",
    "host_optimizer", "storage_read",   "storage_write"};
/// The number of stream `name`; kStreams.size() for an unknown name.
unsigned streamIndex(llvm::StringRef name);

/// Bytes [begin, end) of one tier's arena that an op reads or writes.
struct Access {
  int tier = 0; ///< 0 device, 1 host, 2 storage
  int64_t begin = 0, end = 0;
  bool write = false;
};

/// Where the values of one scheduled function are, from its hm.place ops,
/// placed arguments and the parameters and states it reads and updates.
class AccessMap {
public:
  explicit AccessMap(mlir::func::FuncOp fn);
  /// The bytes `op` reads (its operands) and writes (its results, and the
  /// parameters and states it names by symbol, which it updates; for a
  /// state in storage, its staging copy, hm.staged). An hm.stage reads one
  /// side and writes the other. Nothing for an op that does not run or an
  /// aliasing view.
  llvm::SmallVector<Access, 6> accesses(mlir::Operation &op) const;

private:
  struct Where {
    int tier;
    int64_t offset;
  };
  llvm::DenseMap<mlir::Value, Where> values;
  llvm::StringMap<std::pair<Where, int64_t>> symbols; ///< and their bytes
};

/// The ops of `fn` that run, in program order, with their stream numbers.
struct StreamOps {
  llvm::SmallVector<mlir::Operation *> ops;
  llvm::SmallVector<unsigned> streams;
};
StreamOps streamOps(mlir::func::FuncOp fn);

/// For each op j of `s` in order, calls conflict(j, i) for each earlier op
/// i on another stream that j must wait for: the last writer of any byte j
/// touches, and, for the bytes j writes, the last reader on each stream
/// since their last write. When every such pair is ordered, every pair of
/// conflicting ops is (the pairs left out are ordered through these).
void forEachConflict(const StreamOps &s, const AccessMap &map,
                     llvm::function_ref<void(unsigned j, unsigned i)> conflict);

} // namespace hmcc::hm

#endif // HMCC_HM_ANALYSIS_STREAMS_H
