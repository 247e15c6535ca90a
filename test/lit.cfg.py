# -*- Python -*-
# lit configuration for hmcc. Paths come from lit.site.cfg.py (generated).
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "hmcc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py",
                   "fixtures", "unit", "runtime", "reference", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.hmcc_obj_root, "test")

llvm_config.with_system_environment(["HOME", "TMPDIR"])
# The compiled programs' GEMM engine table (runtime/README.md): the tests'
# own, not the user's, since timings taken under a parallel test run are no
# choice for later runs.
config.environment["HMRT_GEMM_TABLE"] = os.path.join(config.hmcc_obj_root, "test", "gemm-engines.tsv")
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.hmcc_tools_dir, append_path=True)
llvm_config.use_default_substitutions()

config.substitutions.append(("%fixtures", os.path.join(config.hmcc_src_root, "test", "fixtures")))
config.substitutions.append(("%hmcc_src", config.hmcc_src_root))
config.substitutions.append(("%hmcc_bin", config.hmcc_tools_dir))
# The bundled demo dataset, made at build time (target demo-data).
config.substitutions.append(("%hmrt_measure", os.path.join(config.hmcc_obj_root, "runtime", "hmrt-measure")))
config.substitutions.append(("%demo_data", os.path.join(config.hmcc_obj_root, "data", "demo.bin")))

# Tests that need ONNX's backend test data (Debian: libonnx-testdata).
if os.path.isdir(os.path.join(config.onnx_testdata_dir, "node")):
    config.available_features.add("onnx-testdata")
    config.substitutions.append(("%onnx_testdata", config.onnx_testdata_dir))

# The numerics tests compare with NumPy (Debian: python3-numpy).
import sys
config.substitutions.append(("%python", sys.executable))
# hmcc --target cuda links programs with the runtime's CUDA backend, built
# where the CUDA toolkit was found (runtime/CMakeLists.txt).
if config.hmcc_cuda_runtime == "ON":
    config.available_features.add("cuda-runtime")

# The memory plot is opened in a headless browser (Debian: chromium, which
# tools/scripts/setup.sh installs); without one that test is UNSUPPORTED.
import shutil
chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if chromium:
    config.available_features.add("chromium")
    config.substitutions.append(("%chromium", chromium))
