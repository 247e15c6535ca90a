#!/usr/bin/env python3
"""Checks a run of a model with ONNX training_info against the generator's reference.

  training_info.py FIXTURE_DIR MODEL.onnx METRICS.jsonl CHECKPOINT_DIR

FIXTURE_DIR/reference.json (written by test/fixtures/generate.py) holds, per
model, the loss of every step and the final value of every initializer that
update_binding changes, from PyTorch's autograd and the ONNX operators'
formulas. The run's per-step losses (--metrics) and the checkpoint it saved
(--save) must agree within 1e-4 relative error; integers (the iteration count
T) exactly. Exit status 1 and a line per failure when any check fails.
"""
import json
import os
import sys

import numpy as np

TOLERANCE = 1e-4
DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "int32": np.int32}


def read_checkpoint(path):
    manifest = json.load(open(os.path.join(path, "manifest.json")))
    data = open(os.path.join(path, manifest["data_file"]), "rb").read()
    tensors = {}
    for t in manifest["tensors"]:
        raw = data[t["offset"]:t["offset"] + t["bytes"]]
        tensors[t["name"]] = np.frombuffer(raw, dtype=DTYPES[t["dtype"]]).reshape(t["shape"])
    return tensors


def rel_err(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b))) / max(float(np.max(np.abs(b))), 1e-30)


def main():
    fixture, model, metrics, checkpoint = sys.argv[1:5]
    ref = json.load(open(os.path.join(fixture, "reference.json")))["models"][model]
    failures = []

    def check(label, err):
        ok = err <= TOLERANCE
        print(f"{'ok' if ok else 'FAIL':4} {label:30} rel err {err:.3e}")
        if not ok:
            failures.append(label)

    losses = [json.loads(line)["loss"] for line in open(metrics) if line.strip()]
    if len(losses) != len(ref["losses"]):
        print(f"FAIL {len(losses)} steps, the reference has {len(ref['losses'])}")
        sys.exit(1)
    check(f"{len(losses)}-step loss curve", max(rel_err(g, r) for g, r in zip(losses, ref["losses"])))
    got = read_checkpoint(checkpoint)
    for name, expected in ref["final"].items():
        if name not in got:
            print(f"FAIL {name:30} missing from the checkpoint")
            failures.append(name)
        elif got[name].dtype.kind == "i":
            same = np.array_equal(got[name], np.asarray(expected))
            print(f"{'ok' if same else 'FAIL':4} {name:30} {got[name].tolist()} (expected {expected})")
            if not same:
                failures.append(name)
        else:
            check(name, rel_err(got[name], expected))
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)


if __name__ == "__main__":
    main()
