// Which GEMM engine runs a call, chosen per shape class by measurement on
// the machine at hand, not by vendor.
//
// A shape class is (serial or threaded, trans_a, trans_b, and m, n, k and
// the batch count each rounded up to a power of two, and the thread count).
// The first call of a class times every engine the runtime was built with
// (its own blocked GEMM, OpenBLAS, oneDNN) on that call's shape, in turns
// over several rounds, and keeps the fastest.  Choices persist in a per-machine table file, so every later
// process takes the same engine for the same class and a program computes
// the same bits run after run; the file is read and extended under an
// exclusive lock, so concurrent processes agree too.
//   table: $HMRT_GEMM_TABLE, else $XDG_CACHE_HOME/hmrt/gemm-<cpu>.tsv, else
//          $HOME/.cache/hmrt/gemm-<cpu>.tsv (<cpu> a hash of the CPU model,
//          the engines built in and the table format).  Delete it to measure
//          again.  Where no file can be written, choices last one process.
//   HMRT_GEMM=own|openblas|onednn forces one engine; auto (the default)
//          measures.
#ifndef HMRT_CPU_GEMM_SELECT_H
#define HMRT_CPU_GEMM_SELECT_H

#include <cstdint>
#include <string>

namespace hmrt {

enum class GemmEngine : int { own = 0, openblas = 1, onednn = 2 };
constexpr int kGemmEngines = 3;

const char* gemm_engine_name(GemmEngine e);
// Whether the runtime was built with the engine.
bool gemm_engine_built(GemmEngine e);

struct GemmCall {
  bool serial;  // one thread, inside a kernel's own parallel tasks
  bool trans_a, trans_b;
  int64_t m, n, k, batch;
  int threads;  // 1 when serial
};

// Fills seconds[e] with what one call of `shape` takes on each engine e
// the runtime was built with (INFINITY for the others or a failure). The
// runtime times its engines on scratch operands, taking turns over several
// rounds and keeping each one's best, so that a stall from another process
// on the cores does not decide; tests pass their own.
using GemmTimer = void (*)(const GemmCall& shape, double seconds[kGemmEngines]);

// The engine for `call`: forced by HMRT_GEMM, else this class's entry in
// the table, measured with `timer` the first time.  Thread-safe.
GemmEngine gemm_select(const GemmCall& call, GemmTimer timer);

// "auto" or the forced engine's name.
const char* gemm_select_mode();

// Tests: forget every choice and use `table` as the table file ("" for
// none); `forced` replaces HMRT_GEMM ("auto" to measure).
void gemm_select_reset_for_test(const std::string& table, const char* forced);

}  // namespace hmrt

#endif  // HMRT_CPU_GEMM_SELECT_H
