#!/usr/bin/env python3
"""Planner quality: plan-recompute against the usual fixed checkpointing.

For GPT graphs of 24 and 96 layers (bench/gpt_shapes.py, shapes only) and
activation budgets of 1/2, 1/4 and 1/8 of the unplanned activation memory,
prints the recompute time per step that hmcc's plan predicts next to the
fixed schedules a user would write by hand, each compiled with
--recompute=SEGMENTS and placed by hmcc, so every figure comes from the
same cost model and the same placement:
  per-stage   every stage of the chain recomputed from its own input cut
  per-block   pairs of stages (a transformer block is an attention stage and
              an MLP stage) recomputed together
  sqrt(n)     segments of ceil(sqrt(n)) stages
A fixed schedule "fits" a budget when its placed arena does. The plan must
never cost more than a fixed schedule that fits. Also prints how long
planning takes. Run on any machine; it needs hmcc built and python3-onnx.

usage: planner_quality.py HMCC [--profile h200] [--layers 24,96]
"""
import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def schedule(hmcc, model, work, tag, args):
    out = work / f"{tag}.json"
    start = time.monotonic()
    p = subprocess.run([hmcc, model, "--dump-schedule", out, "--force"] + args,
                       capture_output=True, text=True)
    seconds = time.monotonic() - start
    if p.returncode != 0:
        return None, seconds
    return json.loads(out.read_text()), seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hmcc")
    ap.add_argument("--profile", default="h200")
    ap.add_argument("--layers", default="24,96")
    a = ap.parse_args()
    here = Path(__file__).resolve().parent
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print(f"| layers | budget (activations) | plan | per-stage | per-block | sqrt(n) "
              f"| planning time |")
        print("|---|---|---|---|---|---|---|")
        for layers in map(int, a.layers.split(",")):
            mdir = work / f"gpt{layers}"
            subprocess.run([sys.executable, here / "gpt_shapes.py", mdir, "--layers",
                            str(layers)], check=True, capture_output=True)
            model = mdir / "model.onnx"
            base_args = ["--device-profile", a.profile]
            free, _ = schedule(a.hmcc, model, work, "free", base_args)
            persistent = sum(t["bytes"] for t in free["persistent"])
            unplanned = free["arena"]["bytes"] - persistent
            n = len(free["recompute"]["stages"])
            k = math.ceil(math.sqrt(n))
            fixed = {
                "per-stage": "all",
                "per-block": ",".join(f"{s}-{min(s + 1, n)}" for s in range(1, n + 1, 2)),
                "sqrt(n)": ",".join(f"{s}-{min(s + k - 1, n)}" for s in range(1, n + 1, k)),
            }
            placed = {}
            for name, segments in fixed.items():
                plan, _ = schedule(a.hmcc, model, work, name, base_args + ["--recompute", segments])
                placed[name] = (plan["arena"]["bytes"], plan["recompute"]["recompute_seconds"])
            for frac in (2, 4, 8):
                budget = persistent + unplanned // frac
                plan, took = schedule(a.hmcc, model, work, f"plan{frac}",
                                      base_args + ["--vram", str(budget)])
                cells = []
                mine = plan["recompute"]["recompute_seconds"] if plan else None
                cells.append(f"{mine * 1e3:.1f} ms" if plan else "does not fit")
                for name in fixed:
                    arena, secs = placed[name]
                    if arena <= budget:
                        cells.append(f"{secs * 1e3:.1f} ms")
                        if mine is not None and mine > secs * (1 + 1e-9):
                            worst = max(worst, mine / secs)
                            cells[-1] += " (BETTER THAN PLAN)"
                    else:
                        cells.append(f"needs {arena / 2**30:.1f} GiB")
                print(f"| {layers} | 1/{frac}: {budget / 2**30:.1f} GiB "
                      f"({(budget - persistent) / 2**30:.1f}) | " + " | ".join(cells) +
                      f" | {took:.2f} s |")
    if worst:
        print(f"FAIL: a fixed schedule beat the plan by {worst:.3f}x")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
