#!/usr/bin/env bash
# Installs the Debian packages hmcc needs, only those missing; needs root (or
# sudo) when something is missing. Safe to run again: a no-op when all is there.
set -euo pipefail

packages=(
  cmake ninja-build g++ make
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools lld-22
  libzstd-dev zlib1g-dev libedit-dev libxml2-dev libffi-dev libncurses-dev
  nlohmann-json3-dev libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libgtest-dev libgmock-dev libopenblas-openmp-dev python3 python3-numpy python3-onnx
  # clang with its sanitizer and libFuzzer runtimes: the fuzz targets (make fuzz)
  clang-22 libclang-rt-22-dev
  # a headless browser: the test that opens hmcc --memory-plot's page
  chromium
  # io_uring for the storage tier (the runtime falls back to pread/pwrite without it)
  liburing-dev
  # vectorised erf, tanh and log for the elementwise kernels
  libsleef-dev
  # oneDNN, for the GEMM engines' comparison (runtime/bench/gemm_backends.cpp)
  libdnnl-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${#missing[@]} missing Debian packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
