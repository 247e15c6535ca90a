# hmcc: the two commands.
#   make demo   install what is missing, build, compile the bundled example and train it
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

DEMO_STEPS ?= 300

demo: build
	@echo "== hmcc: compiling the bundled GPT-2-style example (examples/gpt-demo, 2.7 M parameters)"
	$(BUILD)/bin/hmcc examples/gpt-demo/model.onnx
	$(BUILD)/bin/hmcc examples/gpt-demo/model.onnx -o $(BUILD)/demo --force \
	  --optimizer adamw --lr 2e-3 --lr-schedule cosine --warmup-steps 20 --min-lr 2e-4
	@echo
	@echo "== training it on the bundled data (this project's own text as bytes)"
	$(BUILD)/demo/train --data $(BUILD)/data/demo.bin --steps $(DEMO_STEPS) --log-every 10 \
	  --save $(BUILD)/demo/checkpoint

clean:
	rm -rf $(BUILD)
