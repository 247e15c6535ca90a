#!/usr/bin/env python3
"""Runs ONNX's own backend tests (node/ and simple/) through hmcc's compiled CPU path.

    onnx_backend.py HMCC_BIN_DIR WORK_DIR [TESTDATA_DIR] [--jobs N] [--only SUBSTR]

For every node test (Debian's libonnx-testdata) whose graph uses only the
operators hmcc supports (hmcc --list-ops; the ai.onnx.preview.training
optimizers included): compile the model's forward pass with
`hmcc --program=forward -o` (graph inputs that must be known at compile
time, such as axes or shapes, are given their test values with
--input-value), run `train --eval` on the test's inputs, and compare every
output with the expected one as ONNX's backend runner does
(numpy.testing rtol 1e-3, atol 1e-7). Prints passed/total; exit status 1 if
any test that ran failed. Tests that cannot be expected to match are
counted apart with the reason: string/sequence/optional values (hmcc
compiles numeric tensor programs) and training-mode dropout with a ratio
above zero (its random mask comes from another generator).
"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def compile_time_operands(hmcc):
    out = subprocess.run([hmcc, "--list-ops", "--compile-time-operands"], check=True,
                         capture_output=True, text=True).stdout
    table = {}
    for line in out.splitlines():
        op, *positions = line.split()
        table[op] = {int(p) for p in positions}
    return table


# Test data that disagree with their own model; each entry says how.
INCONSISTENT = {
    "test_adam_multiple": "its expected outputs were computed with epsilon 1e-2, but the model "
                          "leaves epsilon at the schema's default 1e-6 (onnx/onnx#7749)",
}


def op_key(node):
    """How hmcc --list-ops names a node's operator: the op type in the default
    domain, "domain.OpType" elsewhere."""
    return node.op_type if node.domain in ("", "ai.onnx") else node.domain + "." + node.op_type


def classify(model, supported):
    graph = model.graph
    if not {op_key(n) for n in graph.node} <= supported.keys():
        return None
    for vi in list(graph.input) + list(graph.output):
        t = vi.type
        if not t.HasField("tensor_type") or t.tensor_type.elem_type == onnx.TensorProto.STRING:
            return "string, sequence or optional values"
    return "ok"


def run_case(name, case_dir, hmcc_bin, work, table):
    try:
        return run_case_checked(name, case_dir, hmcc_bin, work, table)
    except Exception as e:  # one broken case must not hide the others' results
        return name, "fail", "runner: %s: %s" % (type(e).__name__, e)


def run_case_checked(name, case_dir, hmcc_bin, work, table):
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    graph = model.graph
    inits = {t.name for t in graph.initializer}
    inputs = [vi.name for vi in graph.input if vi.name not in inits]
    data_dir = os.path.join(case_dir, "test_data_set_0")
    compile_time = set()
    for node in graph.node:
        for k, name_k in enumerate(node.input):
            if k in table.get(op_key(node), ()):
                compile_time.add(name_k)
    values = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data_dir, "input_%d.pb" % k)))
              for k in range(len(inputs))]
    # Training-mode dropout with a non-zero ratio draws a random mask.
    for node in graph.node:
        if node.op_type == "Dropout" and len(node.input) > 2 and node.input[2]:
            ratio = 0.5
            if len(node.input) > 1 and node.input[1] in inputs:
                ratio = float(values[inputs.index(node.input[1])])
            training = bool(values[inputs.index(node.input[2])]) if node.input[2] in inputs else True
            if training and ratio > 0:
                return name, "random", "training-mode dropout draws a random mask"
    out = os.path.join(work, name)
    for stale in (out, out + ".in", out + ".out"):  # a case that failed earlier leaves these
        shutil.rmtree(stale, ignore_errors=True)
    args = [os.path.join(hmcc_bin, "hmcc"), os.path.join(case_dir, "model.onnx"),
            "--program=forward", "-o", out]
    feeds = []
    # An input no node reads gets zeros of its declared shape: some test data
    # give such an input another shape (test_castlike_*_expanded's `like`).
    used = {name_k for node in graph.node for name_k in node.input}
    declared = {vi.name: vi.type.tensor_type for vi in graph.input}
    for k, inp in enumerate(inputs):
        if inp not in used:
            t = declared[inp]
            # bfloat16 travels as the uint16 of its bits (runtime/README.md).
            dtype = (np.uint16 if t.elem_type == onnx.TensorProto.BFLOAT16
                     else onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.elem_type])
            values[k] = np.zeros([d.dim_value for d in t.shape.dim], dtype=dtype)
        if inp in compile_time:
            args.append("--input-value=%s=%s" % (inp, os.path.join(data_dir, "input_%d.pb" % k)))
        else:
            os.makedirs(out + ".in", exist_ok=True)
            path = os.path.join(out + ".in", "input_%d.npy" % k)
            np.save(path, values[k])
            feeds.append("--feed=%s=%s" % (inp, path))
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return name, "fail", "hmcc: " + r.stderr.strip().splitlines()[-1]
    dump = out + ".out"
    r = subprocess.run([os.path.join(out, "train"), "--eval", "--quiet", "--threads", "1",
                        "--dump-outputs", dump] + feeds, capture_output=True, text=True)
    if r.returncode != 0:
        return name, "fail", "train: " + r.stderr.strip()
    for k, vi in enumerate(graph.output):
        expected = numpy_helper.to_array(onnx.load_tensor(os.path.join(data_dir, "output_%d.pb" % k)))
        fname = "".join(c if c.isalnum() or c in "._-" else "_" for c in vi.name) + ".npy"
        got = np.load(os.path.join(dump, fname))
        if got.shape != expected.shape:
            return name, "fail", "output %s has shape %s, expected %s" % (vi.name, got.shape, expected.shape)
        try:
            if expected.dtype == np.bool_ or np.issubdtype(expected.dtype, np.integer):
                np.testing.assert_array_equal(got.astype(expected.dtype), expected)
            else:
                np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-7)
        except AssertionError as e:
            first = [l for l in str(e).splitlines() if l.strip()][:3]
            return name, "fail", "output %s differs: %s" % (vi.name, " ".join(first))
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(out + ".in", ignore_errors=True)
    shutil.rmtree(dump, ignore_errors=True)
    return name, "pass", ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hmcc_bin")
    ap.add_argument("work")
    ap.add_argument("testdata", nargs="?", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    table = compile_time_operands(os.path.join(args.hmcc_bin, "hmcc"))
    os.makedirs(args.work, exist_ok=True)
    cases, skipped, dirs = [], {}, {}
    for suite in ("node", "simple"):
        root = os.path.join(args.testdata, suite)
        for name in sorted(os.listdir(root)):
            if os.path.exists(os.path.join(root, name, "model.onnx")):
                dirs[name] = os.path.join(root, name)
    for name in sorted(dirs):
        if args.only not in name:
            continue
        kind = classify(onnx.load(os.path.join(dirs[name], "model.onnx")), table)
        if kind is None:
            continue
        if name in INCONSISTENT:
            kind = "test data inconsistent with the model: " + INCONSISTENT[name]
        if kind != "ok":
            skipped.setdefault(kind, []).append(name)
            continue
        cases.append(name)
    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_case, n, dirs[n], args.hmcc_bin, args.work, table)
                   for n in cases]
        for f in concurrent.futures.as_completed(futures):
            results.append(f.result())
    results.sort()
    failed = [r for r in results if r[1] == "fail"]
    for name, _, why in failed:
        print("FAIL %s: %s" % (name, why))
    for name, status, why in results:
        if status == "random":
            skipped.setdefault(why, []).append(name)
    for why, names in sorted(skipped.items()):
        print("not run (%s): %d: %s" % (why, len(names), " ".join(names)))
    passed = sum(1 for r in results if r[1] == "pass")
    ran = sum(1 for r in results if r[1] != "random")
    print("ONNX backend node and simple tests through the compiled CPU path: "
          "%d passed, %d failed (of %d run)"
          % (passed, len(failed), ran))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
