//===- Output.h - outputs that cannot destroy anything ----------*- C++ -*-===//
//
// hmcc's rules for every file and directory it writes:
//  - an existing output is replaced only when asked (--force), and never
//    when it is, or holds, one of the run's inputs;
//  - symbolic links are neither written through nor replaced;
//  - a file is written to a temporary file beside it, synced, and renamed
//    over it; a directory is built beside it and swapped in; so a failure
//    (a full disk, a failed build) leaves the previous output whole.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_SUPPORT_OUTPUT_H
#define HMCC_SUPPORT_OUTPUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace hmcc {

/// Why `path` may not be written (as a directory when `directory`), or
/// nullopt. `inputs` are the files the run reads; `ownEntries` lists the
/// names a directory output may hold for it to be replaced (anything else in
/// it belongs to somebody else).
std::optional<std::string> checkOutputPath(llvm::StringRef path, bool directory, bool force,
                                           llvm::ArrayRef<std::string> inputs,
                                           llvm::ArrayRef<llvm::StringRef> ownEntries = {});

/// Whether `a` and `b` name the same file (absolute, links resolved where
/// they exist).
bool samePath(llvm::StringRef a, llvm::StringRef b);

/// Writes `path` through a temporary file beside it: `write` fills it
/// (returning an error to abandon it); then it is flushed, synced and
/// renamed over `path`. On any failure `path` is untouched.
llvm::Error writeFileAtomically(llvm::StringRef path,
                                llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write);

/// A directory built beside its final place and swapped in by commit().
/// Destroying it before commit() removes what was built.
class StagedDirectory {
public:
  /// Creates the staging directory next to `path`.
  static llvm::Expected<StagedDirectory> create(llvm::StringRef path);
  StagedDirectory(StagedDirectory &&other);
  ~StagedDirectory();

  /// Where to build: a fresh directory beside the final one.
  llvm::StringRef path() const { return staging; }
  /// Replaces the final directory (if any) with the staged one.
  llvm::Error commit();
  /// Leaves the staging directory in place (to show a build log, say).
  void keep() { staging.clear(); }

private:
  StagedDirectory(std::string target, std::string staging)
      : target(std::move(target)), staging(std::move(staging)) {}
  std::string target, staging;
};

} // namespace hmcc

#endif // HMCC_SUPPORT_OUTPUT_H
