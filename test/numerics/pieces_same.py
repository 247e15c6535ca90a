#!/usr/bin/env python3
"""A parameter in pieces with 8-bit AdamW moments computes what the whole does.

  pieces_same.py HMCC MODEL OUTDIR STEPS NAME:ROWS TRAIN-ARG...

Compiles MODEL with --optimizer adamw8bit as it is and with --host-params
NAME:ROWS (the parameter's last ROWS rows on the host, the first on the
device, each piece with its own 8-bit codes and block-wise absmax states),
trains both STEPS steps and requires bit-identical losses and gradient
norms, 8-bit states in both pieces, and checkpoints both ways: the split
program resumed from the whole one's checkpoint of step STEPS/2, and the
whole one from the split one's, go on as the whole did. Prints one line per
check and a verdict.
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
    out.mkdir(parents=True, exist_ok=True)
    half, failures = steps // 2, 0
    for tag, extra in [("whole", []), ("pieces", ["--host-params", split])]:
        run([hmcc, model, "--optimizer", "adamw8bit", "-o", out / tag, "--force",
             "--dump-schedule", out / f"{tag}.json"] + extra)
        run([out / tag / "train", "--quiet", "--steps", steps, "--metrics", out / f"{tag}.jsonl",
             "--force"] + train_args)
        run([out / tag / "train", "--quiet", "--steps", half, "--save", out / f"{tag}-ckpt",
             "--force"] + train_args)
    reference = metrics(out / "whole.jsonl")
    schedule = json.loads((out / "pieces.json").read_text())
    name = split.rsplit(":", 1)[0]
    codes = [t for t in schedule["persistent"] if t.get("whole") == f"{name}.exp_avg"]
    eight_bit = [t["tier"] for t in codes if "xui8>" in t["type"]] == ["device", "host"]
    same = metrics(out / "pieces.jsonl") == reference
    failures += not (same and eight_bit)
    print(f"{split}: 8-bit moments in {'both pieces' if eight_bit else 'NOT BOTH PIECES'}, "
          f"{steps} steps {'bit-identical' if same else 'DIFFER'}")
    for tag, other in [("pieces", "whole"), ("whole", "pieces")]:
        resumed = out / f"{tag}-resumed.jsonl"
        run([out / tag / "train", "--quiet", "--steps", steps, "--resume", out / f"{other}-ckpt",
             "--metrics", resumed, "--force"] + train_args)
        same = metrics(resumed) == reference[half:]
        failures += not same
        print(f"{tag} resumed from the {other} program's step {half}: "
              f"{'bit-identical' if same else 'DIFFER'}")
    print("pieces: " + ("PASS" if failures == 0 else f"FAIL ({failures})"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
