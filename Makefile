# hmcc: the two commands.
#   make demo   install what is missing, build, import the bundled example and summarise it
#   make test   install what is missing, build, run every test (lit + GoogleTest via ctest)
# Other targets: setup, build, clean.

BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all setup configure build test demo clean

all: build

setup:
	@bash tools/scripts/setup.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DLLVM_USE_LINKER=lld $(CMAKE_FLAGS)

configure: setup $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	@echo "== hmcc: importing the bundled GPT-2-style example (test/fixtures/gpt2/model.onnx)"
	$(BUILD)/bin/hmcc test/fixtures/gpt2/model.onnx
	@echo
	@echo "== its training graph (first lines of hmcc --emit=mlir)"
	@$(BUILD)/bin/hmcc test/fixtures/gpt2/model.onnx --emit=mlir --elide-constants | head -n 40

clean:
	rm -rf $(BUILD)
