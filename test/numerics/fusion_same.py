#!/usr/bin/env python3
"""Fused and unfused programs train alike.

Compiles MODEL twice, by default with tg-fuse-elementwise (--fuse=elementwise)
and with --fuse=none, trains each STEPS steps and requires loss, learning
rate and gradient norm identical at every step (the runtime's fused programs
compute each op through the same vector code as the one-op kernels). With
--modes A,B and --rtol R it compares --fuse=A against --fuse=B and allows
the losses and gradient norms that relative difference (attention's kernel
rounds differently from the ops it replaces); --unfused-arg A gives hmcc A
for the second program only. Prints how many fused ops (tg.fused and
tg.attention) the first program has, both arenas (from --dump-schedule) and
a verdict.

usage: fusion_same.py HMCC MODEL OUTDIR STEPS [--modes A,B] [--rtol R]
                      [--hmcc-arg A]... [--unfused-arg A]... TRAIN-ARG...
"""
import json
import subprocess
import sys
from pathlib import Path


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"fusion_same: {' '.join(map(str, cmd))} failed:\n{p.stderr}")
    return p


def main():
    hmcc, model, out, steps = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4]
    rest = sys.argv[5:]
    hmcc_args, unfused_args, train_args, modes, rtol = [], [], [], ["elementwise", "none"], 0.0
    while rest:
        if rest[0] in ("--hmcc-arg", "--unfused-arg", "--modes", "--rtol") and len(rest) < 2:
            sys.exit(f"fusion_same: {rest[0]} needs a value")
        if rest[0] in ("--hmcc-arg", "--unfused-arg"):
            (hmcc_args if rest[0] == "--hmcc-arg" else unfused_args).append(rest[1])
            rest = rest[2:]
        elif rest[0] == "--modes":
            modes = rest[1].split(",")
            rest = rest[2:]
        elif rest[0] == "--rtol":
            rtol = float(rest[1])
            rest = rest[2:]
        else:
            train_args.append(rest.pop(0))
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for tag, flags in (("fused", ["--fuse=" + modes[0]]),
                       ("unfused", ["--fuse=" + modes[1]] + unfused_args)):
        exe, plan, metrics = out / tag, out / f"{tag}.json", out / f"{tag}.jsonl"
        run([hmcc, model, "-o", exe, "--force", "--dump-schedule", plan] + flags + hmcc_args)
        run([exe / "train", "--quiet", "--steps", steps, "--metrics", metrics, "--force"]
            + train_args)
        schedule = json.loads(plan.read_text())
        fused = sum(op["op"] in ("tg.fused", "tg.attention")
                    for f in schedule["functions"] for op in f["ops"])
        rows = [json.loads(line) for line in metrics.read_text().splitlines()]
        results[tag] = (fused, schedule["arena"]["bytes"], rows)
    (nf, arena_f, rows_f), (nu, arena_u, rows_u) = results["fused"], results["unfused"]
    print(f"fused ops: {nf} (unfused program: {nu}); arena {arena_f} B fused, {arena_u} B unfused: "
          + ("smaller" if arena_f < arena_u else "FAIL: not smaller"))
    keys = ("step", "loss", "lr", "grad_norm")

    def close(x, y):
        if rtol == 0.0 or not isinstance(x, float):
            return x == y
        return abs(x - y) <= rtol * max(abs(x), abs(y))

    same = len(rows_f) == len(rows_u) == int(steps) and all(
        all(close(a.get(k), b.get(k)) for k in keys) for a, b in zip(rows_f, rows_u))
    for a, b in zip(rows_f, rows_u):
        if any(not close(a.get(k), b.get(k)) for k in keys):
            print(f"step {a.get('step')}: --fuse={modes[0]} {a} --fuse={modes[1]} {b}")
            break
    verdict = "bit-identical" if rtol == 0.0 else f"within {rtol:g} relative"
    print(f"{steps} steps {verdict}" if same else "FAIL: the losses differ")


if __name__ == "__main__":
    main()
