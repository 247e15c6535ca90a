# hmcc: the two commands.
#   make demo   install what is missing, build, compile the bundled example and train it
#   make test   install what is missing, build, run every test (lit + GoogleTest via ctest),
#               then replay the fuzz targets' seeds and regressions (fuzz-regress)
# Other targets: setup, build, clean, and
#   make fuzz          fuzz every target for FUZZ_TIME seconds (test/fuzz/README.md)
#   make fuzz-regress  replay every seed and regression input, then fuzz FUZZ_SMOKE seconds each
#   make test-asan     the whole test suite built with ASan + UBSan, in $(ASAN_BUILD)

BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all setup configure build test demo clean fuzz fuzz-build fuzz-regress test-asan

all: build

setup:
	@bash tools/scripts/setup.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DLLVM_USE_LINKER=lld $(CMAKE_FLAGS)

configure: setup $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The tests keep their own GEMM engine table (runtime/README.md): engines
# timed while other tests load the cores are no choice for later runs.
test: build
	cd $(BUILD) && HMRT_GEMM_TABLE=$(abspath $(BUILD))/test/gemm-engines.tsv ctest --output-on-failure -j $(JOBS)
	@# Why the GPU tests skipped, where they did (no line on a machine with a GPU).
	@if [ -x $(BUILD)/runtime/test/hmrt_cuda_tests ]; then \
	  $(BUILD)/runtime/test/hmrt_cuda_tests --gtest_filter=Cuda.MemsetEveryTierAndAddresses 2>&1 | \
	    grep -m1 'no GPU here' | sed 's/^/make test: the CUDA tests were skipped: /' || true; fi
	@$(MAKE) --no-print-directory fuzz-regress

# ---- Fuzzing (test/fuzz): clang's libFuzzer, ASan and UBSan, in its own build folder.
FUZZ_BUILD ?= build-fuzz
FUZZ_CC ?= clang-22
FUZZ_CXX ?= clang++-22
# Seconds per target: make fuzz, and the short run after the replay in make test.
FUZZ_TIME ?= 60
FUZZ_SMOKE ?= 10
# Targets to run (default: all), e.g. FUZZ_TARGETS="import_fuzz size_fuzz".
FUZZ_TARGETS ?=

$(FUZZ_BUILD)/build.ninja:
	cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE= \
	  -DCMAKE_C_COMPILER=$(FUZZ_CC) -DCMAKE_CXX_COMPILER=$(FUZZ_CXX) -DLLVM_USE_LINKER=lld \
	  -DHMCC_FUZZ=ON -DHMCC_BUILD_TESTS=OFF -DHMRT_BUILD_TESTS=OFF -DHMRT_BUILD_BENCH=OFF \
	  -DHMRT_USE_OPENMP=OFF -DHMRT_USE_OPENBLAS=OFF

fuzz-build: setup $(FUZZ_BUILD)/build.ninja
	cmake --build $(FUZZ_BUILD) --target hmcc-fuzzers -j $(JOBS)

fuzz: fuzz-build
	bash test/fuzz/run.sh fuzz $(FUZZ_BUILD) $(FUZZ_TIME) $(FUZZ_TARGETS)

fuzz-regress: fuzz-build
	bash test/fuzz/run.sh regress $(FUZZ_BUILD) $(FUZZ_SMOKE) $(FUZZ_TARGETS)

# ---- The whole test suite under ASan + UBSan (gcc's), in its own build folder; not part of
# make test (it takes long on 2 cores). The programs hmcc builds in the tests are sanitized
# too: a `c++` first on PATH adds the flags.
ASAN_BUILD ?= build-asan
ASAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_ENV = ASAN_OPTIONS=$${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
  UBSAN_OPTIONS=$${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Tests that run a program under `ulimit -v`, where ASan cannot map its shadow memory.
ASAN_SKIP_CTEST ?= hmrt\.driver_exe_blas_limit
ASAN_SKIP_LIT ?= lib/import/hostile-memory\.test

$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE= -DLLVM_USE_LINKER=lld \
	  "-DCMAKE_C_FLAGS=-O1 -g1 -DNDEBUG $(ASAN_FLAGS)" "-DCMAKE_CXX_FLAGS=-O1 -g1 -DNDEBUG $(ASAN_FLAGS)" \
	  "-DCMAKE_EXE_LINKER_FLAGS=$(ASAN_FLAGS)" "-DCMAKE_SHARED_LINKER_FLAGS=$(ASAN_FLAGS)" \
	  -DHMRT_BUILD_BENCH=OFF $(CMAKE_FLAGS)

test-asan: setup $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	mkdir -p $(ASAN_BUILD)/sanitize-bin
	printf '#!/bin/sh\nexec %s $(ASAN_FLAGS) "$$@"\n' "$$(command -v c++)" >$(ASAN_BUILD)/sanitize-bin/c++
	chmod +x $(ASAN_BUILD)/sanitize-bin/c++
	cd $(ASAN_BUILD) && PATH="$$PWD/sanitize-bin:$$PATH" $(ASAN_ENV) \
	  LIT_FILTER_OUT='$(ASAN_SKIP_LIT)' ctest --output-on-failure -j $(JOBS) -E '$(ASAN_SKIP_CTEST)'

DEMO_STEPS ?= 300
# The demo's memory budget: unplanned, its training step needs 75.1 MiB; under
# a quarter of that the planner homes parameters, gradients and optimizer
# states in host memory and recomputes activations in the backward to fit.
DEMO_VRAM ?= 18M

demo: build
	@echo "== hmcc: compiling the bundled GPT-2-style example (examples/gpt-demo, 2.7 M parameters) under --vram $(DEMO_VRAM)"
	$(BUILD)/bin/hmcc examples/gpt-demo/model.onnx --vram $(DEMO_VRAM) --explain
	$(BUILD)/bin/hmcc examples/gpt-demo/model.onnx -o $(BUILD)/demo --force --vram $(DEMO_VRAM) \
	  --optimizer adamw --lr 2e-3 --lr-schedule cosine --warmup-steps 20 --min-lr 2e-4
	@echo
	@echo "== training it on the bundled data (this project's own text as bytes)"
	$(BUILD)/demo/train --data $(BUILD)/data/demo.bin --steps $(DEMO_STEPS) --log-every 10 \
	  --save $(BUILD)/demo-checkpoint --force

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD) $(ASAN_BUILD)
