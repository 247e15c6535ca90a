#!/usr/bin/env bash
# The GPU check: what hmcc's CUDA target does on a machine with one GPU, in
# one call and a few minutes, using only what was built on the build machine
# (the GPU machine has the CUDA toolkit, no MLIR and none of the runtime's
# Debian libraries).
#
#   bench/gpu-check.sh prepare   on the build machine: builds the runtime
#                                standalone with its CUDA backend in
#                                build-gpu/ and gathers what the check runs
#                                into build-gpu/bundle/ (a few MiB)
#   bench/gpu-check.sh run [OUT] on the GPU machine, with build-gpu/bundle
#                                carried: runs the checks, prints a summary
#                                and writes the full output under OUT
#                                (a new or empty folder; default:
#                                build-gpu/results, replaced); exits 0 only
#                                when every check passes
#
# What it checks:
#  1. the CUDA backend's tests (hmrt_cuda_tests): tiers and copies between
#     device, pinned host and storage, streams and events, and every kernel
#     the backend has against the CPU kernels (bitwise for the elementwise
#     kernels, casts and gradient norm; within the fp32 dot-product bound
#     for cuBLAS's GEMMs);
#  2. the GPT-2 fixture compiled with --target cuda (prepare needs hmcc,
#     make build) twice, --precision fp32 and bf16 (bf16 products in the
#     GEMMs, the CUDA default), 20 AdamW steps on the GPU and, with the same
#     executable, on the CPU (train --device cpu, which rounds the GEMM
#     operands to bf16 as the GPU does): the losses must agree within 1e-4
#     relative for fp32 and 1e-3 for bf16 (the sums run in another order on
#     the GPU, and how cuBLAS rounds operands to bf16 is not documented).
# Not yet: the 1.3 B GPT at --vram 8G / 24G beside PyTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}

prepare() {
  local jobs
  jobs=$(nproc)
  [ "$jobs" -gt 2 ] && jobs=2
  # The portable subset: the runtime's own GEMM instead of OpenBLAS and
  # oneDNN, which the GPU machine does not have (the CPU side is only the
  # reference there).
  [ -x build/bin/hmcc ] || { echo "gpu-check prepare: no build/bin/hmcc; run 'make build' first" >&2; exit 2; }
  cmake -S runtime -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DHMRT_USE_OPENBLAS=OFF -DHMRT_USE_ONEDNN=OFF -DHMRT_BUILD_BENCH=OFF >/dev/null
  ninja -C build-gpu -j"$jobs" hmrt_cuda_tests hmrt hmrt_driver hmrt_cuda
  grep -q '^HMRT_CUDA_LINK_LIBS:INTERNAL=.' build-gpu/CMakeCache.txt ||
    { echo "gpu-check prepare: the runtime found no CUDA toolkit" >&2; exit 2; }
  rm -rf build-gpu/bundle
  mkdir -p build-gpu/bundle/lib
  cp build-gpu/test/hmrt_cuda_tests build-gpu/bundle/
  # The GPT-2 fixture's programs, linked with this portable runtime.
  local libs precision
  libs=$(grep -h '^HMRT_LINK_SYSTEM_LIBS:INTERNAL=\|^HMRT_CUDA_LINK_LIBS:INTERNAL=' build-gpu/CMakeCache.txt |
    sed 's/^[^=]*=//' | tr ';' ' ')
  for precision in fp32 bf16; do
    build/bin/hmcc test/fixtures/gpt2/model.onnx --target cuda --precision "$precision" \
      --optimizer adamw --lr 1e-3 --betas 0.9,0.999 --eps 1e-8 --weight-decay 0.01 \
      -o "build-gpu/gpt2-$precision" --force
    mkdir -p "build-gpu/bundle/gpt2-$precision"
    # shellcheck disable=SC2086
    c++ -O2 -std=c++17 -Iruntime/include "build-gpu/gpt2-$precision/model.cpp" \
      build-gpu/libhmrt_driver.a -Wl,--whole-archive build-gpu/libhmrt_cuda.a \
      -Wl,--no-whole-archive build-gpu/libhmrt.a $libs -fopenmp -lm \
      -o "build-gpu/bundle/gpt2-$precision/train"
    cp -r "build-gpu/gpt2-$precision/state" "build-gpu/bundle/gpt2-$precision/"
  done
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
  echo "prepared: carry build-gpu/bundle and run: bench/gpu-check.sh run \$OUT"
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
  mkdir -p "$out"
  [ -x "$bundle/hmrt_cuda_tests" ] || { echo "gpu-check: no $bundle; run 'bench/gpu-check.sh prepare' on the build machine" >&2; exit 2; }
  export LD_LIBRARY_PATH="$PWD/$bundle/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  { date -u
    if command -v nvidia-smi >/dev/null; then
      nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    else
      echo "no nvidia-smi on this machine"
    fi; } | tee "$out/device.txt"
  local status=0
  "$bundle/hmrt_cuda_tests" --gtest_output="xml:$out/hmrt_cuda_tests.xml" >"$out/hmrt_cuda_tests.log" 2>&1 || status=$?
  echo
  echo "| check | result |"
  echo "|---|---|"
  local passed failed skipped
  passed=$(grep -c '^\[       OK \]' "$out/hmrt_cuda_tests.log" || true)
  failed=$(grep -c '^\[  FAILED  \] [A-Za-z]*\.[A-Za-z]* (' "$out/hmrt_cuda_tests.log" || true)
  skipped=$(grep -c '^\[  SKIPPED \] [A-Za-z]*\.[A-Za-z]* (' "$out/hmrt_cuda_tests.log" || true)
  echo "| CUDA backend tests (hmrt_cuda_tests) | $passed passed, $failed failed, $skipped skipped (exit $status) |"
  # The GPT-2 fixture on the GPU and, with the same executable, on the CPU.
  local feed="--feed idx=test/fixtures/gpt2/inputs/idx.npy --feed targets=test/fixtures/gpt2/inputs/targets.npy"
  local precision tol gpu_status cpu_status gpt2 prog
  for precision in fp32 bf16; do
    tol=1e-4
    [ "$precision" = bf16 ] && tol=1e-3
    prog="$bundle/gpt2-$precision"
    gpu_status=0
    cpu_status=0
    # shellcheck disable=SC2086
    "$prog/train" --state "$prog/state" --quiet --steps 20 $feed \
      --metrics "$out/gpt2-$precision-cuda.jsonl" --force >"$out/gpt2-$precision-cuda.log" 2>&1 || gpu_status=$?
    # shellcheck disable=SC2086
    "$prog/train" --state "$prog/state" --device cpu --quiet --steps 20 $feed \
      --metrics "$out/gpt2-$precision-cpu.jsonl" --force >"$out/gpt2-$precision-cpu.log" 2>&1 || cpu_status=$?
    if [ "$gpu_status" != 0 ]; then
      gpt2="did not run on the GPU: $(tail -n 1 "$out/gpt2-$precision-cuda.log")"
      status=1
    elif [ "$cpu_status" != 0 ]; then
      gpt2="did not run on the CPU: $(tail -n 1 "$out/gpt2-$precision-cpu.log")"
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
    echo "| GPT-2 fixture, --precision $precision, 20 AdamW steps, CUDA vs CPU losses | $gpt2 |"
  done
  echo "| GPT 1.3B at --vram 8G / 24G beside PyTorch | not yet |"
  if [ "$skipped" != 0 ]; then
    echo
    echo "skipped because: $(grep -m1 'no GPU here' "$out/hmrt_cuda_tests.log" || echo '(see the log)')"
  fi
  if [ "$failed" != 0 ] || [ "$status" != 0 ]; then
    echo
    grep -B2 -A12 'Failure\|FAILED' "$out/hmrt_cuda_tests.log" | head -80
  fi
  return "$status"
}

case "$mode" in
  prepare) prepare ;;
  run) shift; run "$@" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
