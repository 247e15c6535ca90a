//===- Recompute.h - the chain plan-recompute works on ----------*- C++ -*-===//
//
// The pieces of plan-recompute (Passes.td), public for unit tests and for
// the planner-quality benchmark: the chain of stages of a function's
// forward, its memory and time profile, the dynamic program and the
// rewrite.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_PLANNER_RECOMPUTE_H
#define HMCC_PLANNER_RECOMPUTE_H

#include "compiler/planner/DeviceProfile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hmcc::planner {

/// The forward ops between two cut points.
struct Stage {
  static constexpr unsigned kNone = std::numeric_limits<unsigned>::max();
  unsigned number = 0;          ///< from 1
  unsigned first = 0, last = 0; ///< its ops: Chain::forward[first..last]
  mlir::Value output;           ///< the cut tensor after it (none for the last)
  int64_t outputBytes = 0, inputBytes = 0;
  bool inputReadByBackward = false; ///< the cut before it is saved anyway
  /// What the backward reads of the values it computes (not `output`).
  llvm::SmallVector<mlir::Value> saved;
  int64_t savedBytes = 0;
  /// Its cheap ops (elementwise, fused elementwise, layer norm) whose saved
  /// results can be made again just before the backward first reads them,
  /// from operands that are there anyway: kept light, the stage keeps the
  /// rest of what it saves.
  struct LightOp {
    mlir::Operation *op;
    unsigned at; ///< block index of the first backward op reading what it saves
  };
  std::vector<LightOp> light;
  int64_t lightBytes = 0; ///< the saved bytes they make
  /// Block index of the first backward op reading a saved value.
  unsigned backwardStart = kNone;
  /// Block index of the first backward op reading `output` (kNone: none
  /// does). Inside a recomputed segment the cut is recomputed too.
  unsigned outputBackwardStart = kNone;
  /// Its ops that make only `output`, not what the backward reads: a
  /// recomputed segment that ends with this stage does not make them again
  /// (the next stage's input is there).
  std::vector<mlir::Operation *> outputOnly;
  // The profile (profileChain).
  double forwardSeconds = 0, backwardSeconds = 0;
  double outputOnlySeconds = 0; ///< the outputOnly ops' time
  double inputTransferSeconds = 0; ///< the cut before it to the host and back
  double savedTransferSeconds = 0; ///< its saved values to the host and back
  double lightSeconds = 0;         ///< the light ops' time, again
  int64_t forwardPeak = 0;    ///< most bytes live while its forward runs
  int64_t forwardGrowth = 0;  ///< what its forward adds to the bytes live before it
  int64_t backwardPeak = 0;   ///< most bytes live while its backward runs
  int64_t liveAtBackward = 0; ///< bytes live just before backwardStart
};

struct Chain {
  llvm::SmallVector<mlir::Operation *> ops;           ///< the block's ops, in order
  llvm::DenseMap<mlir::Operation *, unsigned> index; ///< block position of every op
  llvm::DenseSet<mlir::Operation *> isForward;       ///< the loss's slice, leaves included
  llvm::SmallVector<mlir::Operation *> forward;      ///< its ops, leaves excluded, in order
  unsigned lastForwardIndex = 0;
  std::vector<Stage> stages;
  int64_t tailPeak = 0; ///< most bytes live after the forward, before any stage's backward
};

/// Recomputed segments, as stage ranges [first, last] from 1, in order,
/// and the kept stages kept light.
struct Decision {
  std::vector<std::pair<unsigned, unsigned>> recomputed;
  std::set<unsigned> light;
  /// The first stages of recomputed segments whose input cut goes to host
  /// memory after its last forward reader and comes back just before the
  /// segment is recomputed.
  std::set<unsigned> offloaded;
  /// Kept stages whose saved values go to host memory after their last
  /// forward reader and come back just before their first backward reader
  /// (stored: --recompute N:store; the search does not choose it).
  std::set<unsigned> stored;
  double seconds = 0; ///< predicted recompute (light ones too) and transfer time per step
};

/// What the placement of a decision needs: the device arena, the
/// persistent bytes in it, the most activation bytes live at once.
struct Trial {
  int64_t arena = 0, persistent = 0, activations = 0;
};

/// A decision and its placement.
struct Candidate {
  Decision decision;
  Trial trial;
};

/// plan-recompute's search over one function of a module: the chain, its
/// profile from placing the unplanned program, and decisions placed on
/// copies of the module (which is not changed).
class RecomputeSearch {
public:
  RecomputeSearch(mlir::ModuleOp module, mlir::func::FuncOp fn, const DeviceProfile &profile);

  /// The cheapest decision whose placement fits `budget` device bytes:
  /// solve for the activation budget, place, tighten by what the placement
  /// exceeds (twice that after each round that still exceeds); when that
  /// does not converge (and `thorough`), the cheapest fitting candidate.
  std::optional<Decision> fit(int64_t budget, bool thorough = true);

  /// The least activation budget any decision meets, as the profile
  /// predicts it (no placement).
  int64_t leastActivations() const;

  /// Decisions for activation budgets from the least any decision meets
  /// (as the profile predicts) to the unplanned peak, each placed, and what
  /// extendSmallest finds; computed once, so that the smallest budget named
  /// is one fit meets.
  const std::vector<Candidate> &candidates();

  /// The candidate of the smallest arena (the cheapest among equals).
  const Candidate &smallest();

  Chain chain;
  Trial base;           ///< the unplanned program's placement
  bool planned = false; ///< there is a chain to plan and base was placed
  bool failed = false;  ///< placing the unplanned program failed (and said why)

private:
  /// Local search from the smallest candidate: a kept stage next to a
  /// recomputed segment recomputed too, its input offloaded, wherever that
  /// places smaller (the profile's model of the peak can miss it, e.g. a
  /// stage whose saved tensors are live across the next stage's backward).
  void extendSmallest();

  mlir::ModuleOp module;
  std::string name;
  std::vector<Candidate> cache;
};

/// The chain of `fn`; no stages when it has no loss.
Chain analyzeChain(mlir::func::FuncOp fn);

/// Fills the stages' times and peaks from the bytes live at (and born at)
/// each block index of the unplanned program.
void profileChain(Chain &chain, llvm::ArrayRef<int64_t> liveAt, llvm::ArrayRef<int64_t> bornAt,
                  const DeviceProfile &profile);

/// The decision of least recompute (and transfer) time whose bytes live
/// stay within `budget` at every op, as the profile predicts them; none if
/// none does. Among equally fast ones, the one whose segments free the most
/// bytes by the end, then the one with the most slack (the least bytes to
/// spare at any stage, the most), which a placement is likeliest to fit.
/// With `offload`, a recomputed segment may also send its input cut to
/// host memory until it is recomputed.
std::optional<Decision> solve(const Chain &chain, int64_t budget, bool offload = false);

/// The predicted time of recomputing stages s..t (from 1) as one segment:
/// their forward but the last one's outputOnly ops.
double segmentSeconds(const Chain &chain, unsigned s, unsigned t);

/// Rewrites the function of `chain` by `decision`.
void applyDecision(Chain &chain, const Decision &decision);

/// "none", "all" or segments such as "1-3,5"; error set on failure.
std::optional<Decision> parseDecision(llvm::StringRef text, unsigned stages, std::string &error);

} // namespace hmcc::planner

#endif // HMCC_PLANNER_RECOMPUTE_H
