#!/usr/bin/env python3
"""Compares what a compiled hmcc program computed with PyTorch's reference values.

  compare.py grads FIXTURE_DIR DUMP_DIR
      DUMP_DIR holds `train --eval --dump-outputs` of a --program=gradients
      build: loss.npy and grad.<param>.npy. Checks the loss and every
      parameter's gradient against FIXTURE_DIR/reference.json and grads/.
  compare.py curve FIXTURE_DIR METRICS.jsonl adamw|sgd
      Checks the per-step losses of a 20-step run against the reference curve.

Relative error of a tensor: max|a - b| / max|b| (for a scalar, |a - b| / |b|).
The bound is 1e-4: PyTorch and hmcc both compute in fp32 but sum in different
orders, which moves the last few bits; 1e-4 leaves room for that and nothing
else (a wrong gradient or a missed term is off by far more).
Exit status 1 and a line per failure when any check fails.
"""
import json
import math
import os
import sys

import numpy as np

TOLERANCE = 1e-4


def rel_err(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return math.inf
    scale = max(float(np.max(np.abs(b))) if b.size else 0.0, 1e-30)
    return float(np.max(np.abs(a - b))) / scale if b.size else 0.0


def dump_name(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def check(label, err, failures):
    status = "ok" if err <= TOLERANCE else "FAIL"
    print(f"{status:4} {label:40} rel err {err:.3e}")
    if err > TOLERANCE:
        failures.append(label)


def grads(fixture, dump):
    ref = json.load(open(os.path.join(fixture, "reference.json")))
    failures = []
    loss = np.load(os.path.join(dump, "loss.npy"))
    check("loss", rel_err(loss, ref["loss"]), failures)
    for name, path in ref["gradients"].items():
        expected = np.load(os.path.join(fixture, path))
        got_path = os.path.join(dump, dump_name("grad." + name) + ".npy")
        if not os.path.exists(got_path):
            print(f"FAIL {'grad ' + name:40} missing {got_path}")
            failures.append(name)
            continue
        check("grad " + name, rel_err(np.load(got_path), expected), failures)
    return failures


def curve(fixture, metrics, optimizer):
    ref = json.load(open(os.path.join(fixture, "reference.json")))[optimizer]["losses"]
    got = [json.loads(line)["loss"] for line in open(metrics) if line.strip()]
    failures = []
    if len(got) != len(ref):
        print(f"FAIL {len(got)} steps, the reference has {len(ref)}")
        return ["length"]
    worst = max(rel_err(g, r) for g, r in zip(got, ref))
    check(f"{optimizer} {len(ref)}-step loss curve", worst, failures)
    print(f"     first {got[0]:.6f} (ref {ref[0]:.6f}), last {got[-1]:.6f} (ref {ref[-1]:.6f})")
    return failures


def main():
    mode = sys.argv[1]
    failures = grads(*sys.argv[2:4]) if mode == "grads" else curve(*sys.argv[2:5])
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)


if __name__ == "__main__":
    main()
