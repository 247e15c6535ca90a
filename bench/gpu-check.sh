#!/usr/bin/env bash
# The GPU check: what hmcc's CUDA target does on a machine with one GPU, in
# one call and a few minutes, using only what was built on the build machine
# (the GPU machine has the CUDA toolkit, no MLIR and none of the runtime's
# Debian libraries).
#
#   bench/gpu-check.sh prepare   on the build machine: builds the runtime
#                                standalone with its CUDA backend in
#                                build-gpu/ and gathers what the check runs
#                                into build-gpu/bundle/ (about 50 MiB) and
#                                build-gpu/bundle.tgz (about 16 MiB, what
#                                travels: the bundle beside the repository
#                                is more than a 64 MiB transfer allows)
#   bench/gpu-check.sh run [OUT [PART...]]
#                                on the GPU machine, with build-gpu/bundle
#                                or build-gpu/bundle.tgz carried (unpacked
#                                first): runs the checks, prints a summary
#                                and writes the full output under OUT
#                                (a new or empty folder; default:
#                                build-gpu/results, replaced); exits 0 only
#                                when every check passes.  PARTs (default:
#                                kernels gpt2 gpt13 pytorch profile trace,
#                                in this order); also optrace
#
# What it checks:
#  1. the CUDA backend's tests (hmrt_cuda_tests): tiers and copies between
#     device, pinned host and storage, streams and events, and every kernel
#     the backend has against the CPU kernels (bitwise for the elementwise
#     kernels, casts and gradient norm; within the fp32 dot-product bound
#     for cuBLAS's GEMMs);
#  2. the GPT-2 fixture compiled with --target cuda (prepare needs hmcc,
#     make build) four times, --precision fp32, bf16 (bf16 products in the
#     GEMMs, fp32 tensors), bf16 with --bf16-storage=always (GEMM operands
#     kept in bf16: written so by layer norm, the fused GELU and the loss
#     gradient, or rounded by casts of their own; the bf16-operand GEMMs and
#     those of one bf16 and one fp32 operand) and fp32 with a parameter in
#     pieces (--host-params NAME:ROWS:
#     its last rows in pinned host memory, updated by the host optimizer),
#     20 AdamW steps on the GPU and, with the same executable, on
#     the CPU (train --device cpu, which rounds the GEMM operands to bf16 as
#     the GPU does): the losses must agree within 1e-4 relative for fp32 and
#     1e-3 for bf16 (the sums run in another order on the GPU); and the fp32
#     program again with every kernel waited for (HMRT_CUDA_SYNC=1), and
#     with its fused programs interpreted instead of run as the kernels hmcc
#     generated for them (HMRT_CUDA_FUSED=interpreter): its losses and
#     gradient norms must be bit-identical to the default run's each time;
#     and fp32 compiled with attention's q, k and v split apart
#     (--pack-qkv=false) instead of read in place from their projection,
#     and with every parameter in host memory updated on the GPU through
#     staging buffers (--host-params all --device-updates all):
#     bit-identical losses and gradient norms too. (bf16 with every
#     parameter in host memory fetched in bf16, rounded there, is among the
#     CUDA-vs-CPU runs: --bf16-fetches always.)
#  3. the 1.3 B GPT of the planning benchmarks (bench/gpt_shapes.py: 24
#     layers, width 2048, 16 heads, vocabulary 50304, batch 8 x 1024;
#     shape-only, started from seeded parameters, train --init) compiled for
#     the GPU at --vram 8G and 24G (--precision bf16, planned under
#     bench/profiles/h200-measured.json or $GPU_CHECK_PROFILE),
#     a few steps each: step time, tokens/s, the GPU's peak memory in use
#     (nvidia-smi, sampled), beside the plan's predicted step and LB; then
#     PyTorch's eager, per-block-checkpointed and FSDP2-CPU-offload (fused
#     CPU AdamW) runs of the same model (bench/gpu_pytorch.py; the GPU
#     machine's PyTorch), eager's kernels also timed by kind (what PyTorch's
#     kernels reach, beside the device profile's efficiencies).  These are
#     figures, not pass/fail checks.
#  4. the GPU's device profile (hmrt-measure-cuda --device cuda: peaks,
#     links, storage in OUT, launch overhead, each op kind's efficiency with
#     the backend's kernels) in OUT/profile-measured.json, for hmcc
#     --device-profile on the build machine.
#  5. a Chrome trace of three steps of the 1.3 B GPT at --vram 8G
#     (gpt13-8G.trace.json), the measured timeline beside the plan's; and
#     (optrace, not run by default) two steps at 24G with every kernel
#     waited for, so that each op's span is its GPU time.
# Each run has a time limit, so that the whole check stays within 8 minutes
# (kernels 90 s, each GPT-2 run 40 s, each 1.3 B run 75 s, each PyTorch run
# 70 s, the profile 60 s, the traces 120 and 90 s); on an H200 on 2026-12-04 the
# default parts took under 5 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}

# hmcc's flags for a GPT-2 check: fp32, bf16 or bf16-storage.
precision_flags() {
  case "$1" in
    # bf16 products with fp32 tensors, and with bf16 storage (written so by
    # the layer norms, GELUs and the loss gradient, or rounded by casts).
    bf16) echo "--precision bf16 --bf16-storage=never" ;;
    bf16-storage) echo "--precision bf16 --bf16-storage=always" ;;
    # A parameter in pieces: its last rows in pinned host memory, updated
    # there, the first on the GPU; read as their concatenation.
    pieces) echo "--precision fp32 --host-params h.0.attn.c_attn.weight:48" ;;
    # q, k and v split apart for attention, as before it read them in place.
    split) echo "--precision fp32 --pack-qkv=false" ;;
    # Every parameter in pinned host memory, every update on the GPU: the
    # parameter and its states staged to device buffers and back.
    device-updates) echo "--precision fp32 --host-params all --device-updates all" ;;
    # Every parameter in pinned host memory, those only bf16 GEMMs read
    # rounded there once a step and fetched in bf16.
    bf16-fetches) echo "--precision bf16 --bf16-storage=never --host-params all --bf16-fetches always" ;;
    *) echo "--precision $1" ;;
  esac
}

prepare() {
  # Debian's python3 has ONNX and NumPy (make setup installs them).
  local py=python3
  [ -x /usr/bin/python3 ] && py=/usr/bin/python3
  local jobs
  jobs=$(nproc)
  [ "$jobs" -gt 2 ] && jobs=2
  # The portable subset: the runtime's own GEMM instead of OpenBLAS and
  # oneDNN, which the GPU machine does not have (the CPU side is only the
  # reference there).
  [ -x build/bin/hmcc ] || { echo "gpu-check prepare: no build/bin/hmcc; run 'make build' first" >&2; exit 2; }
  cmake -S runtime -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DHMRT_USE_OPENBLAS=OFF -DHMRT_USE_ONEDNN=OFF -DHMRT_BUILD_BENCH=OFF >/dev/null
  ninja -C build-gpu -j"$jobs" hmrt_cuda_tests hmrt hmrt_driver hmrt_cuda hmrt-measure-cuda
  grep -q '^HMRT_CUDA_LINK_LIBS:INTERNAL=.' build-gpu/CMakeCache.txt ||
    { echo "gpu-check prepare: the runtime found no CUDA toolkit" >&2; exit 2; }
  rm -rf build-gpu/bundle
  mkdir -p build-gpu/bundle/lib
  cp build-gpu/test/hmrt_cuda_tests build-gpu/bundle/
  cp build-gpu/hmrt-measure-cuda build-gpu/bundle/
  # The GPT-2 fixture's programs, linked with this portable runtime.
  local libs precision
  libs=$(grep -h '^HMRT_LINK_SYSTEM_LIBS:INTERNAL=\|^HMRT_CUDA_LINK_LIBS:INTERNAL=' build-gpu/CMakeCache.txt |
    sed 's/^[^=]*=//' | tr ';' ' ')
  for precision in fp32 bf16 bf16-storage pieces split device-updates bf16-fetches; do
    # shellcheck disable=SC2046
    build/bin/hmcc test/fixtures/gpt2/model.onnx --target cuda $(precision_flags "$precision") \
      --optimizer adamw --lr 1e-3 --betas 0.9,0.999 --eps 1e-8 --weight-decay 0.01 \
      -o "build-gpu/gpt2-$precision" --force
    mkdir -p "build-gpu/bundle/gpt2-$precision"
    # shellcheck disable=SC2086
    c++ -O1 -std=c++17 -Iruntime/include "build-gpu/gpt2-$precision/model.cpp" \
      $(fused_object "build-gpu/gpt2-$precision") build-gpu/libhmrt_driver.a -Wl,--whole-archive build-gpu/libhmrt_cuda.a \
      -Wl,--no-whole-archive build-gpu/libhmrt.a $libs -fopenmp -lm \
      -o "build-gpu/bundle/gpt2-$precision/train"
    cp -r "build-gpu/gpt2-$precision/state" "build-gpu/bundle/gpt2-$precision/"
  done
  # The 1.3 B GPT (shape-only: its 5.3 GiB of weights are never written),
  # planned for the H200 at 8 and 24 GiB (--quantize-states auto), with one
  # batch of tokens, under the profile an H200 run measured
  # (bench/profiles/h200-measured.json; GPU_CHECK_PROFILE=h200 for the
  # design's figures), so that the runs meet the predictions of their own
  # plans.
  rm -rf build-gpu/g13
  "$py" bench/gpt_shapes.py build-gpu/g13 >/dev/null
  mkdir -p build-gpu/bundle/gpt13
  "$py" - build-gpu/bundle/gpt13 <<'PY'
import sys
import numpy as np
rng = np.random.default_rng(0)
for name in ("idx", "targets"):
    np.save(f"{sys.argv[1]}/{name}.npy", rng.integers(0, 50304, size=(8, 1024), dtype=np.int64))
PY
  local vram
  for vram in 8G 24G; do
    build/bin/hmcc build-gpu/g13/model.onnx --target cuda --precision bf16 --no-initial-state \
      --device-profile "${GPU_CHECK_PROFILE:-bench/profiles/h200-measured.json}" --vram "$vram" --quantize-states auto --dump-schedule="build-gpu/bundle/gpt13/plan-$vram.json" \
      -o "build-gpu/gpt13-$vram" --force
    # shellcheck disable=SC2086
    c++ -O1 -std=c++17 -Iruntime/include "build-gpu/gpt13-$vram/model.cpp" \
      $(fused_object "build-gpu/gpt13-$vram") build-gpu/libhmrt_driver.a -Wl,--whole-archive build-gpu/libhmrt_cuda.a \
      -Wl,--no-whole-archive build-gpu/libhmrt.a $libs -fopenmp -lm \
      -o "build-gpu/bundle/gpt13/train-$vram"
  done
  rm -rf build-gpu/g13
  cp bench/gpu_pytorch.py build-gpu/bundle/
  # The shared libraries they need that are neither glibc's nor CUDA's.
  { ldd build-gpu/test/hmrt_cuda_tests; ldd build-gpu/bundle/gpt2-fp32/train; } |
    awk '$3 ~ /^\// {print $3}' | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libstdc++.so*|libgcc_s.so*) ;;
      libcublas*|libcudart*) ;;
      *) cp -L "$lib" build-gpu/bundle/lib/ ;;
    esac
  done
  du -sh build-gpu/bundle
  tar czf build-gpu/bundle.tgz -C build-gpu bundle
  du -sh build-gpu/bundle.tgz
  echo "prepared: carry build-gpu/bundle.tgz and run: bench/gpu-check.sh run \$OUT"
}

# The fused kernels hmcc compiled for the program in DIR (DIR/fused.o),
# if it has fused programs.
fused_object() {
  [ ! -f "$1/fused.o" ] || echo "$1/fused.o"
}

run() {
  local out=${1:-build-gpu/results}
  local bundle=build-gpu/bundle
  # Results go in a folder of their own: the default is replaced, a folder
  # given that already holds something is refused (nothing of the user's is
  # overwritten).
  if [ -z "${1:-}" ]; then
    rm -rf "$out"
  elif [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
    echo "gpu-check run: $out is not empty; give a new or empty folder" >&2
    exit 2
  fi
  [ $# -gt 0 ] && shift
  local parts=("$@") part
  [ ${#parts[@]} -gt 0 ] || parts=(kernels gpt2 gpt13 pytorch profile trace)
  for part in "${parts[@]}"; do
    case "$part" in
      kernels|gpt2|gpt13|pytorch|profile|trace|optrace) ;;
      *) echo "gpu-check run: unknown part '$part' (kernels gpt2 gpt13 pytorch profile trace optrace)" >&2; exit 2 ;;
    esac
  done
  mkdir -p "$out"
  if [ ! -d "$bundle" ] && [ -f "$bundle.tgz" ]; then
    tar xzf "$bundle.tgz" -C "$(dirname "$bundle")"
  fi
  [ -x "$bundle/hmrt_cuda_tests" ] || { echo "gpu-check: no $bundle; run 'bench/gpu-check.sh prepare' on the build machine" >&2; exit 2; }
  export LD_LIBRARY_PATH="$PWD/$bundle/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  { date -u
    if command -v nvidia-smi >/dev/null; then
      nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    else
      echo "no nvidia-smi on this machine"
    fi; } | tee "$out/device.txt"
  status=0
  echo
  echo "| check | result |"
  echo "|---|---|"
  for part in "${parts[@]}"; do
    echo "$(date -u +%T) $part" >>"$out/progress.txt"
    "check_$part" "$bundle" "$out"
  done
  return "$status"
}

# 1. The backend's tests; a failure's lines go to stderr after the table row.
check_kernels() {
  local bundle=$1 out=$2 rc=0 passed failed skipped
  timeout 90 "$bundle/hmrt_cuda_tests" --gtest_output="xml:$out/hmrt_cuda_tests.xml" \
    >"$out/hmrt_cuda_tests.log" 2>&1 || rc=$?
  passed=$(grep -c '^\[       OK \]' "$out/hmrt_cuda_tests.log" || true)
  failed=$(grep -c '^\[  FAILED  \] [A-Za-z]*\.[A-Za-z]* (' "$out/hmrt_cuda_tests.log" || true)
  skipped=$(grep -c '^\[  SKIPPED \] [A-Za-z]*\.[A-Za-z]* (' "$out/hmrt_cuda_tests.log" || true)
  echo "| CUDA backend tests (hmrt_cuda_tests) | $passed passed, $failed failed, $skipped skipped (exit $rc$([ "$rc" = 124 ] && echo ', timed out')) |"
  [ "$rc" = 0 ] || status=1
  if [ "$skipped" != 0 ]; then
    echo "  skipped because: $(grep -m1 'no GPU here' "$out/hmrt_cuda_tests.log" || echo '(see the log)')" >&2
  fi
  if [ "$rc" != 0 ]; then
    grep -B2 -A8 'Failure\|FAILED' "$out/hmrt_cuda_tests.log" | head -60 >&2 || true
    tail -n 5 "$out/hmrt_cuda_tests.log" >&2
  fi
}

# 2. The GPT-2 fixture on the GPU and, with the same executable, on the CPU.
check_gpt2() {
  local bundle=$1 out=$2
  local feed="--feed idx=test/fixtures/gpt2/inputs/idx.npy --feed targets=test/fixtures/gpt2/inputs/targets.npy"
  local precision tol gpu_status cpu_status gpt2 prog
  for precision in fp32 bf16 bf16-storage pieces split device-updates bf16-fetches; do
    tol=1e-4
    [ "${precision#bf16}" != "$precision" ] && tol=1e-3
    prog="$bundle/gpt2-$precision"
    gpu_status=0
    cpu_status=0
    # shellcheck disable=SC2086
    timeout 40 "$prog/train" --state "$prog/state" --quiet --steps 20 $feed \
      --metrics "$out/gpt2-$precision-cuda.jsonl" --force >"$out/gpt2-$precision-cuda.log" 2>&1 || gpu_status=$?
    # shellcheck disable=SC2086
    timeout 40 "$prog/train" --state "$prog/state" --device cpu --quiet --steps 20 $feed \
      --metrics "$out/gpt2-$precision-cpu.jsonl" --force >"$out/gpt2-$precision-cpu.log" 2>&1 || cpu_status=$?
    if [ "$gpu_status" != 0 ]; then
      gpt2="did not run on the GPU (exit $gpu_status): $(tail -n 1 "$out/gpt2-$precision-cuda.log")"
      status=1
    elif [ "$cpu_status" != 0 ]; then
      gpt2="did not run on the CPU (exit $cpu_status): $(tail -n 1 "$out/gpt2-$precision-cpu.log")"
      status=1
    else
      gpt2=$(python3 - "$out/gpt2-$precision-cuda.jsonl" "$out/gpt2-$precision-cpu.jsonl" "$tol" <<'PY'
import json, sys
gpu, cpu = ([json.loads(line)["loss"] for line in open(f)] for f in sys.argv[1:3])
tol = float(sys.argv[3])
worst = max(abs(g - c) / max(abs(c), 1e-30) for g, c in zip(gpu, cpu))
ok = len(gpu) == len(cpu) == 20 and worst <= tol
print(f"{'PASS' if ok else 'FAIL'}: {len(gpu)} steps, largest relative loss difference "
      f"{worst:.2e} (tolerance {tol:g}), final loss {gpu[-1]:.6f} (CPU {cpu[-1]:.6f})")
PY
)
      [ "${gpt2#PASS}" != "$gpt2" ] || status=1
    fi
    echo "| GPT-2 fixture, $(precision_flags "$precision"), 20 AdamW steps, CUDA vs CPU losses | $gpt2 |"
  done
  # Asynchronous kernels (the default) against kernels each waited for
  # (HMRT_CUDA_SYNC=1): the same kernels in the same order, so the same
  # bits; a missing wait between the kernels and a copy would show here.
  same_as_default "asynchronous kernels vs HMRT_CUDA_SYNC=1" sync HMRT_CUDA_SYNC=1
  # The fused programs' generated kernels (hmcc --target cuda compiles one
  # per program) against the runtime's interpreter of the same programs.
  same_as_default "generated fused kernels vs HMRT_CUDA_FUSED=interpreter" interpreter \
    HMRT_CUDA_FUSED=interpreter
  # Attention reading q, k and v in place (the default) against the program
  # that splits them apart: strides of the same kernels, the same bits.
  local packed
  packed=$(same_runs "$out/gpt2-fp32-cuda.jsonl" "$out/gpt2-split-cuda.jsonl")
  [ "${packed#PASS}" != "$packed" ] || status=1
  echo "| GPT-2 fixture, --precision fp32, q, k and v in place vs --pack-qkv=false | $packed |"
  # Updates staged from host memory against updates of parameters on the
  # GPU: the same kernels on the same values, the same bits.
  local staged
  staged=$(same_runs "$out/gpt2-fp32-cuda.jsonl" "$out/gpt2-device-updates-cuda.jsonl")
  [ "${staged#PASS}" != "$staged" ] || status=1
  echo "| GPT-2 fixture, --precision fp32, parameters on the GPU vs on the host updated on the GPU (--device-updates all) | $staged |"
}

# Whether two runs' metrics (JSON lines) have the same losses and gradient
# norms, bit for bit, over 20 steps: prints PASS or FAIL with what differs.
same_runs() {
  python3 - "$1" "$2" <<'PY'
import json, sys
try:
    a, b = ([(r["loss"], r["grad_norm"]) for r in map(json.loads, open(f))] for f in sys.argv[1:3])
except OSError as e:
    print(f"FAIL: {e}")
    sys.exit()
ok = len(a) == len(b) == 20 and a == b
print(f"{'PASS' if ok else 'FAIL'}: {len(a)} and {len(b)} steps, losses and gradient norms "
      f"{'bit-identical' if a == b else 'DIFFER'}")
PY
}

# The fp32 GPT-2 program run on the GPU again with the environment
# variables given (after LABEL and SUFFIX): its losses and gradient norms
# against the default run's, bit for bit.  Uses check_gpt2's bundle, out,
# feed and status.
same_as_default() {
  local label=$1 suffix=$2 rc=0 result prog="$bundle/gpt2-fp32"
  shift 2
  # shellcheck disable=SC2086
  env "$@" timeout 40 "$prog/train" --state "$prog/state" --quiet --steps 20 $feed \
    --metrics "$out/gpt2-fp32-cuda-$suffix.jsonl" --force >"$out/gpt2-fp32-cuda-$suffix.log" 2>&1 ||
    rc=$?
  if [ "$rc" != 0 ] || [ ! -s "$out/gpt2-fp32-cuda.jsonl" ]; then
    result="did not run (exit $rc): $(tail -n 1 "$out/gpt2-fp32-cuda-$suffix.log")"
    status=1
  else
    result=$(same_runs "$out/gpt2-fp32-cuda.jsonl" "$out/gpt2-fp32-cuda-$suffix.jsonl")
    [ "${result#PASS}" != "$result" ] || status=1
  fi
  echo "| GPT-2 fixture, --precision fp32, $label | $result |"
}

# 4. The GPU's device profile, measured with the backend's own kernels and
# copies (hmcc --device-profile reads it on the build machine).
check_profile() {
  local bundle=$1 out=$2 measured
  if timeout 60 "$bundle/hmrt-measure-cuda" --device cuda --storage "$out" \
      -o "$out/profile-measured.json" >"$out/profile-measured.log" 2>&1; then
    measured=$(python3 - "$out/profile-measured.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
e = p["efficiency"]
print(f"bf16 {p['peak_flops']['bf16'] / 1e12:.0f} TFLOP/s, f32 {p['peak_flops']['f32'] / 1e12:.0f}, "
      f"launch {p['launch_overhead'] * 1e6:.1f} us, efficiency: "
      + ", ".join(f"{k} {v:.2f}" for k, v in sorted(e.items())))
PY
)
  else
    measured="failed: $(tail -n 1 "$out/profile-measured.log")"
    status=1
  fi
  echo "| device profile (hmrt-measure-cuda, profile-measured.json) | $measured |"
}

# The largest memory.used nvidia-smi reported in a sample file, in GiB.
peak_of() {
  { sort -n "$1" 2>/dev/null || true; } | tail -n 1 |
    awk '{ m = $1 } END { if (m != "") printf "%.1f GiB", m / 1024; else printf "-" }'
}

# The 1.3 B GPT's table, printed once before its first row.
gpt13_header() {
  [ -z "${gpt13_headed:-}" ] || return 0
  gpt13_headed=1
  echo
  echo "| GPT 1.3B, batch 8x1024, one GPU | step | tokens/s | peak GPU memory in use | predicted step (LB, binding) | last loss |"
  echo "|---|---|---|---|---|---|"
}

# 3. The 1.3 B GPT: hmcc's programs ...
check_gpt13() {
  local bundle=$1 out=$2 vram log peak row
  local feed="--feed idx=$bundle/gpt13/idx.npy --feed targets=$bundle/gpt13/targets.npy"
  gpt13_header
  for vram in 8G 24G; do
    log="$out/gpt13-$vram"
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 >"$log.mem" 2>/dev/null &
    local sampler=$!
    local rc=0
    # shellcheck disable=SC2086
    timeout 75 "$bundle/gpt13/train-$vram" --init 1 --steps 6 $feed \
      --metrics "$log.jsonl" --force >"$log.log" 2>&1 || rc=$?
    kill "$sampler" 2>/dev/null || true
    peak=$(peak_of "$log.mem")
    row=$(python3 - "$log.jsonl" "$bundle/gpt13/plan-$vram.json" "$rc" <<'PY'
import json, statistics, sys
rc = int(sys.argv[3])
plan = json.load(open(sys.argv[2]))["timeline"]
predicted = f"{plan['predicted_step_seconds']:.3f} s ({plan['lower_bound_seconds']:.3f} s, {plan['binding']})"
try:
    rows = [json.loads(line) for line in open(sys.argv[1])]
except OSError:
    rows = []
t = [b["elapsed_s"] - a["elapsed_s"] for a, b in zip(rows, rows[1:])]
if rc != 0 or len(t) < 2:
    why = "timed out" if rc == 124 else f"exit {rc}, {len(rows)} steps"
    print(f"failed ({why}) | - | | {predicted} | -")
else:
    step = statistics.median(t[1:])
    print(f"{step:.3f} s | {8 * 1024 / step:,.0f} | | {predicted} | {rows[-1]['loss']:.4f}")
PY
)
    echo "| hmcc --vram $vram (bf16 products) | ${row/| |/| $peak |} |"
    [ "$rc" = 0 ] || tail -n 3 "$log.log" >&2
  done
}

# The 8 GiB program's timeline, measured: a Chrome trace of 3 steps, one
# track per stream, to set beside hmcc's --dump-trace of the same plan.
check_trace() {
  local bundle=$1 out=$2 rc=0
  local feed="--feed idx=$bundle/gpt13/idx.npy --feed targets=$bundle/gpt13/targets.npy"
  timeout 120 "$bundle/gpt13/train-8G" --init 1 --quiet --steps 3 $feed --trace "$out/gpt13-8G.trace.json" \
    --trace-steps 3 --force >"$out/gpt13-8G-trace.log" 2>&1 || rc=$?
  echo "| 1.3 B at --vram 8G, 3 steps traced (gpt13-8G.trace.json) | exit $rc, $(du -h "$out/gpt13-8G.trace.json" 2>/dev/null | cut -f1) |"
  [ "$rc" = 0 ] || status=1
}

# The 24 GiB program with every kernel waited for (HMRT_CUDA_SYNC=1), 2
# steps traced: each op's span is then its time on the GPU, for setting the
# device profile's figures beside the kernels' own.
check_optrace() {
  local bundle=$1 out=$2 rc=0
  local feed="--feed idx=$bundle/gpt13/idx.npy --feed targets=$bundle/gpt13/targets.npy"
  HMRT_CUDA_SYNC=1 timeout 90 "$bundle/gpt13/train-24G" --init 1 --quiet --steps 2 $feed \
    --trace "$out/gpt13-24G-sync.trace.json" --trace-steps 2 --force >"$out/gpt13-24G-sync.log" 2>&1 || rc=$?
  echo "| 1.3 B at --vram 24G, every kernel waited for, 2 steps traced (gpt13-24G-sync.trace.json) | exit $rc |"
  [ "$rc" = 0 ] || status=1
}

# ... and PyTorch's configurations of the same model.
check_pytorch() {
  local bundle=$1 out=$2 mode log peak row
  gpt13_header
  for mode in eager checkpoint fsdp2; do
    log="$out/pytorch-$mode"
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 >"$log.mem" 2>/dev/null &
    local sampler=$!
    # Eager's kernels are timed by kind too (two more steps, profiled).
    local extra=""
    [ "$mode" = eager ] && extra=--kernel-times
    timeout 70 python3 "$bundle/gpu_pytorch.py" --mode "$mode" $extra >"$log.json" 2>"$log.log" || true
    kill "$sampler" 2>/dev/null || true
    peak=$(peak_of "$log.mem")
    row=$(python3 - "$log.json" <<'PY'
import json, sys
try:
    r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
except (OSError, ValueError, IndexError):
    r = {"error": "no result (timed out or crashed; see the log)"}
if "error" in r:
    print(f"failed: {r['error']} | - | | - | -")
else:
    print(f"{r['step_s']:.3f} s | {r['tokens_per_s']:,.0f} | | - | {r['loss']:.4f}")
PY
)
    echo "| PyTorch $mode | ${row/| |/| $peak |} |"
  done
  python3 - "$out/pytorch-eager.json" <<'PY' || true
import json, sys
try:
    r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
    k = r["kernel_seconds"]
except (OSError, ValueError, IndexError, KeyError):
    sys.exit(0)
print("\nPyTorch eager's GPU time per step by kind (pytorch-eager.json): "
      + ", ".join(f"{kind} {sec * 1e3:.1f} ms" for kind, sec in sorted(k.items(), key=lambda kv: -kv[1])))
PY
}

case "$mode" in
  prepare) prepare ;;
  run) shift; run "$@" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
