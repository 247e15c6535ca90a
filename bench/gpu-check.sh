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
#                                (default: build-gpu/results)
#
# What it checks today: the CUDA backend's tests (hmrt_cuda_tests): tiers
# and copies between device, pinned host and storage, streams and events,
# and every kernel of the device kernel table against the CPU kernels
# (bitwise for the elementwise kernels, casts and gradient norm; within the
# fp32 dot-product bound for cuBLAS's GEMMs).  Not yet: training the GPT-2
# fixture and the 1.3 B GPT on CUDA, which need generated programs that run
# their kernels through the device's kernel table; the script says so
# rather than skipping it silently.
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
  cmake -S runtime -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DHMRT_USE_OPENBLAS=OFF -DHMRT_USE_ONEDNN=OFF -DHMRT_BUILD_BENCH=OFF >/dev/null
  ninja -C build-gpu -j"$jobs" hmrt_cuda_tests
  rm -rf build-gpu/bundle
  mkdir -p build-gpu/bundle/lib
  cp build-gpu/test/hmrt_cuda_tests build-gpu/bundle/
  # The shared libraries it needs that are neither glibc's nor CUDA's.
  ldd build-gpu/test/hmrt_cuda_tests | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
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
  echo "| GPT-2 fixture, 20 steps, CUDA vs CPU losses | not yet: generated programs do not run on the cuda backend |"
  echo "| GPT 1.3B at --vram 8G / 24G | not yet: as above |"
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
  *) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
