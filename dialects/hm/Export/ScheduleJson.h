//===- ScheduleJson.h - the scheduled program as JSON -----------*- C++ -*-===//
#ifndef HMCC_HM_EXPORT_SCHEDULEJSON_H
#define HMCC_HM_EXPORT_SCHEDULEJSON_H

#include "hm/Analysis/Timeline.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/raw_ostream.h"

namespace hmcc {

/// Writes the scheduled program (after hm-place-buffers) as JSON: the arena,
/// the persistent tensors and every entry function's ops in execution order
/// with the bytes they read and write (docs/schedule-format.md). This is
/// what `hmcc --dump-schedule=FILE` writes.
/// With `timeline` (of the entry function), every op of it also has its
/// stream and predicted start and end, and the dump a "timeline" object.
mlir::LogicalResult dumpScheduleJson(mlir::ModuleOp module, llvm::raw_ostream &os,
                                     const hm::Timeline *timeline = nullptr);

} // namespace hmcc

#endif // HMCC_HM_EXPORT_SCHEDULEJSON_H
