#!/usr/bin/env python3
"""Prediction: hmcc's predicted step against the measured one on this machine.

Measures this machine's device profile (hmcc --measure-device, storage in a
temporary directory), compiles the bundled demo model with it at five
budgets (unplanned, half, a quarter of the unplanned arena, the quarter
with --ram 0.7 times that plan's host arena, so that optimizer states spill to
storage in the temporary directory, and with --ram 0.4 times it and
--chunk-size 64K, so that parameters spill too), trains each for
STEPS steps and compares the median measured step (from the per-step
elapsed times of --metrics, after the first 5 steps) with the predicted
step and its lower bound LB (from --dump-schedule's timeline).

usage: prediction.py BUILD_DIR [--steps 30]
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--steps", type=int, default=30)
    a = ap.parse_args()
    build = Path(a.build).resolve()
    hmcc = build / "bin" / "hmcc"
    model = Path(__file__).resolve().parent.parent / "examples" / "gpt-demo" / "model.onnx"
    data = build / "data" / "demo.bin"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        profile = work / "profile.json"
        subprocess.run([hmcc, "--measure-device", "-o", profile, "--nvme", f"{tmp}:1G"],
                       check=True)
        free = work / "free.json"
        subprocess.run([hmcc, model, "--dump-schedule", free, "--device-profile", profile],
                       check=True, capture_output=True)
        unplanned = json.loads(free.read_text())["arena"]["bytes"]
        print(f"| budget | device arena | host arena | storage arena | predicted step "
              f"| LB (binding) | measured step (median) | median / predicted | median / LB "
              f"| fastest step | fastest / predicted |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        quarter_host = 0
        # (label, fraction of the unplanned arena for --vram, tenths of the
        # 1/4 plan's host arena for --ram, further flags): at 0.7x the
        # optimizer states spill to storage, at 0.4x parameters too.
        budgets = [("unplanned", None, None, []), ("1/2", 2, None, []), ("1/4", 4, None, []),
                   ("1/4, --ram 0.7x", 4, 7, []),
                   ("1/4, --ram 0.4x", 4, 4, ["--chunk-size", "64K"])]
        for k, (label, divisor, tenths, extra) in enumerate(budgets):
            exe, plan = work / f"exe-{k}", work / "plan.json"
            cmd = [hmcc, model, "-o", exe, "--force", "--dump-schedule", plan,
                   "--device-profile", profile] + extra
            train = []
            if divisor:
                cmd += ["--vram", str(unplanned // divisor)]
            if tenths:
                cmd += ["--ram", str(quarter_host * tenths // 10), "--nvme", f"{tmp}:1G"]
                train = ["--nvme", tmp]
            subprocess.run(cmd, check=True, capture_output=True)
            schedule = json.loads(plan.read_text())
            t = schedule["timeline"]
            metrics = work / "metrics.jsonl"
            subprocess.run([exe / "train", "--quiet", "--data", data, "--steps", str(a.steps),
                            "--metrics", metrics, "--force"] + train, check=True)
            rows = [json.loads(line) for line in metrics.read_text().splitlines()]
            times = [b["elapsed_s"] - p["elapsed_s"] for p, b in zip(rows, rows[1:])][5:]
            measured, fastest = statistics.median(times), min(times)
            host = schedule.get("host_arena", {}).get("bytes", 0)
            if label == "1/4":
                quarter_host = host
            stored = schedule.get("storage_arena", {}).get("bytes", 0)
            print(f"| {label} | {schedule['arena']['bytes'] / 2**20:.1f} MiB "
                  f"| {host / 2**20:.1f} MiB | {stored / 2**20:.1f} MiB "
                  f"| {t['predicted_step_seconds'] * 1e3:.1f} ms "
                  f"| {t['lower_bound_seconds'] * 1e3:.1f} ms ({t['binding']}) "
                  f"| {measured * 1e3:.1f} ms | {measured / t['predicted_step_seconds']:.2f} "
                  f"| {measured / t['lower_bound_seconds']:.2f} "
                  f"| {fastest * 1e3:.1f} ms | {fastest / t['predicted_step_seconds']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
