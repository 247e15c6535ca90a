#!/usr/bin/env python3
"""A parameter in pieces computes what the whole does.

  pieces_same.py HMCC MODEL OUTDIR STEPS NAME:ROWS [--states-in-storage] TRAIN-ARG...

Compiles MODEL as it is and with --host-params NAME:ROWS (the parameter's
last ROWS rows on the host, the first on the device, each piece with its
own optimizer states): with --optimizer adamw8bit (each piece with its own
8-bit codes and block-wise absmax states), or with --states-in-storage
with AdamW and --ram one byte under the split plan's host arena, --nvme and
--chunk-size 16K (the host piece's states go to storage, the device
piece's stay on the device). Trains both STEPS steps and requires
bit-identical losses and gradient norms, the pieces' states where they
should be, and checkpoints both ways: the split program resumed from the
whole one's checkpoint of step STEPS/2, and the whole one from the split
one's, go on as the whole did. Prints one line per check and a verdict.
"""
import json
import subprocess
import sys
from pathlib import Path


def run(cmd):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"pieces_same: {' '.join(map(str, cmd))} failed:\n{p.stderr}")


def metrics(path):
    return [(r["loss"], r["grad_norm"]) for r in map(json.loads, path.read_text().splitlines())]


def main():
    hmcc, model, out, steps, split = sys.argv[1:6]
    train_args, steps, out = sys.argv[6:], int(steps), Path(out)
    storage = "--states-in-storage" in train_args
    if storage:
        train_args.remove("--states-in-storage")
    out.mkdir(parents=True, exist_ok=True)
    half, failures = steps // 2, 0
    optimizer = ["--optimizer", "adamw" if storage else "adamw8bit"]
    split_args = ["--host-params", split]
    if storage:
        # The split plan's host arena, then one byte less of --ram.
        run([hmcc, model, "-o", out / "probe", "--force", "--dump-schedule", out / "probe.json"]
            + optimizer + split_args)
        host = json.loads((out / "probe.json").read_text())["host_arena"]["bytes"]
        (out / "nvme").mkdir(exist_ok=True)
        split_args += ["--ram", str(host - 1), "--nvme", f"{out / 'nvme'}:1G",
                       "--chunk-size", "16K"]
    for tag, extra in [("whole", []), ("pieces", split_args)]:
        run([hmcc, model, "-o", out / tag, "--force", "--dump-schedule", out / f"{tag}.json"]
            + optimizer + extra)
        args = train_args + (["--nvme", out / "nvme"] if storage and tag == "pieces" else [])
        run([out / tag / "train", "--quiet", "--steps", steps, "--metrics", out / f"{tag}.jsonl",
             "--force"] + args)
        run([out / tag / "train", "--quiet", "--steps", half, "--save", out / f"{tag}-ckpt",
             "--force"] + args)
    reference = metrics(out / "whole.jsonl")
    schedule = json.loads((out / "pieces.json").read_text())
    name = split.rsplit(":", 1)[0]
    moments = [t for t in schedule["persistent"] if t.get("whole") == f"{name}.exp_avg"]
    if storage:
        placed = [t["tier"] for t in moments] == ["device", "storage"]
        where = "first moment on the device and in storage" if placed else "MOMENTS MISPLACED"
    else:
        placed = [t["tier"] for t in moments if "xui8>" in t["type"]] == ["device", "host"]
        where = "8-bit moments in both pieces" if placed else "NOT BOTH PIECES 8-BIT"
    same = metrics(out / "pieces.jsonl") == reference
    failures += not (same and placed)
    print(f"{split}: {where}, {steps} steps {'bit-identical' if same else 'DIFFER'}")
    for tag, other in [("pieces", "whole"), ("whole", "pieces")]:
        resumed = out / f"{tag}-resumed.jsonl"
        args = train_args + (["--nvme", out / "nvme"] if storage and tag == "pieces" else [])
        run([out / tag / "train", "--quiet", "--steps", steps, "--resume", out / f"{other}-ckpt",
             "--metrics", resumed, "--force"] + args)
        same = metrics(resumed) == reference[half:]
        failures += not same
        print(f"{tag} resumed from the {other} program's step {half}: "
              f"{'bit-identical' if same else 'DIFFER'}")
    print("pieces: " + ("PASS" if failures == 0 else f"FAIL ({failures})"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
