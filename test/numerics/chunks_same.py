#!/usr/bin/env python3
"""Updates of stored optimizer states chunk by chunk (--chunk-size) compute
what the whole updates compute, 8-bit states included.

  chunks_same.py HMCC OUTDIR STEPS

Writes a seeded MLP whose first weight (1000 x 1101: 1101000 elements, not a
whole number of 256-element blocks) spans five chunks even at 8-bit AdamW's
granularity (262144 elements: every state's slice must start on a 4096-byte
block, the absmax of 256-element blocks included), then for --optimizer adamw8bit and adamw, every parameter on the
host (--host-params all): compiles without storage, then with the host
budget one byte under that plan's host arena, --nvme and --chunk-size 1M
(the largest parameter's states go to storage and are updated in chunks).
Both train STEPS steps on the same batch and must give bit-identical losses
and gradient norms; the chunked plan's host arena must be within the budget
and smaller than with whole updates (with 8-bit states here, whole updates'
staging does not fit the budget at all).
Prints a line per optimizer and a verdict.
"""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def run(cmd, expect_ok=True):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if expect_ok and p.returncode != 0:
        sys.exit(f"chunks_same: {' '.join(map(str, cmd))} failed:\n{p.stderr}")
    return p


def write_model(out):
    rng = np.random.default_rng(11)
    batch, width_in, width, classes = 8, 1000, 1101, 10
    w0 = (rng.standard_normal((width_in, width)) / np.sqrt(width_in)).astype(np.float32)
    w1 = (rng.standard_normal((width, classes)) / np.sqrt(width)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w0"], ["h"], name="fc0"),
        helper.make_node("Tanh", ["h"], ["t"], name="tanh"),
        helper.make_node("MatMul", ["t", "w1"], ["logits"], name="fc1"),
        helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "y"], ["loss"], name="loss"),
    ]
    graph = helper.make_graph(
        nodes, "wide_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, width_in]),
         helper.make_tensor_value_info("y", TensorProto.INT64, [batch])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=[numpy_helper.from_array(w0, "w0"), numpy_helper.from_array(w1, "w1")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, out / "model.onnx")
    np.save(out / "x.npy", rng.standard_normal((batch, width_in)).astype(np.float32))
    np.save(out / "y.npy", rng.integers(0, classes, batch).astype(np.int64))


def main():
    hmcc, out, steps = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    out.mkdir(parents=True, exist_ok=True)
    write_model(out)
    feeds = ["--feed", f"x={out / 'x.npy'}", "--feed", f"y={out / 'y.npy'}"]
    nvme = out / "nvme"
    nvme.mkdir(exist_ok=True)
    failures = 0

    def build_and_train(tag, args, train_args=()):
        plan = out / f"{tag}.json"
        run([hmcc, out / "model.onnx", "-o", out / tag, "--force", "--dump-schedule", plan]
            + args)
        metrics = out / f"{tag}.jsonl"
        run([out / tag / "train", "--quiet", "--steps", steps, "--metrics", metrics, "--force"]
            + feeds + list(train_args))
        rows = [json.loads(line) for line in metrics.read_text().splitlines()]
        return json.loads(plan.read_text()), [(r["loss"], r["grad_norm"]) for r in rows]

    for optimizer in ["adamw8bit", "adamw"]:
        base = ["--optimizer", optimizer, "--host-params", "all"]
        plan, reference = build_and_train(f"{optimizer}-host", base)
        ram = plan["host_arena"]["bytes"] - 1
        spill = base + ["--ram", str(ram), "--nvme", f"{nvme}:1G"]
        chunked, rows = build_and_train(
            f"{optimizer}-chunks", spill + ["--chunk-size", "1M"], ["--nvme", nvme])
        # Whole updates stage whole states: a larger host arena, or none
        # that fits this budget.
        p = run([hmcc, out / "model.onnx", "-o", out / f"{optimizer}-whole", "--force",
                 "--dump-schedule", out / f"{optimizer}-whole.json"] + spill, expect_ok=False)
        whole = (json.loads((out / f"{optimizer}-whole.json").read_text())["host_arena"]["bytes"]
                 if p.returncode == 0 else None)
        updates = [op for f in chunked["functions"] for op in f["ops"]
                   if "chunk" in op and op["op"] != "hm.stage"]
        stored = sum(t["tier"] == "storage" for t in chunked["persistent"])
        host = chunked["host_arena"]["bytes"]
        same = rows == reference and len(reference) == int(steps)
        smaller = host <= ram and (whole is None or host < whole)
        failures += not (same and smaller and len(updates) >= 2 and stored > 0)
        print(f"{optimizer}: {stored} states in storage, {len(updates)} chunk updates "
              f"({updates[0]['op'] if updates else 'none'}), host arena {host} B "
              f"{'within' if host <= ram else 'OVER'} --ram (whole updates: "
              f"{'does not fit' if whole is None else f'{whole} B'}), {len(reference)} steps "
              f"{'bit-identical' if same else 'DIFFER'}")
    print("chunks:", "PASS" if failures == 0 else f"FAIL ({failures})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
