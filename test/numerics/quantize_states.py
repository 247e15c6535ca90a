#!/usr/bin/env python3
"""--quantize-states auto against 8-bit AdamW compiled whole.

  quantize_states.py HMCC MODEL OUTDIR STEPS TRAIN-ARG...

Compiles MODEL with --optimizer adamw8bit (every parameter of 4096 elements
or more with 8-bit moments: the independent reference, whose numerics
test/numerics/adamw8bit.test checks against bitsandbytes' rule), then with
--optimizer adamw --host-params all --quantize-states auto at three host
budgets read from the dumps:
  - the fp32 plan's host arena: nothing is quantized, and the losses equal
    the fp32 program's;
  - the host arena of the all-8-bit plan: plan-quantize must turn every
    such parameter's moments 8-bit, and the losses equal the reference's;
  - one byte under the host arena that plan then has, with --nvme: the rest
    goes to storage, 8-bit states are staged from there, and the losses
    still equal the reference's.
Each budget's host arena must be within it. Then --vram with --recompute
none: at the all-8-bit program's arena with every parameter on the device,
plan-quantize-device must turn every such parameter's moments 8-bit and
plan-tiers move nothing; the losses equal the reference's. Prints a line per
case and a verdict.
"""
import json
import subprocess
import sys
from pathlib import Path


def run(cmd):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"quantize_states: {' '.join(map(str, cmd))} failed:\n{p.stderr}")
    return p


def build(hmcc, model, out, tag, args):
    run([hmcc, model, "-o", out / tag, "--force", "--dump-schedule", out / f"{tag}.json"] + args)
    return json.loads((out / f"{tag}.json").read_text())


def train(out, tag, steps, args):
    metrics = out / f"{tag}.jsonl"
    run([out / tag / "train", "--quiet", "--steps", steps, "--metrics", metrics, "--force"] + args)
    return [json.loads(line)["loss"] for line in metrics.read_text().splitlines()]


def main():
    hmcc, model, out, steps = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4]
    args = sys.argv[5:]
    out.mkdir(parents=True, exist_ok=True)
    fp32 = build(hmcc, model, out, "fp32", ["--host-params", "all"])
    q8 = build(hmcc, model, out, "q8", ["--host-params", "all", "--optimizer", "adamw8bit"])
    reference = {"fp32": train(out, "fp32", steps, args), "q8": train(out, "q8", steps, args)}
    nvme = out / "nvme"
    nvme.mkdir(exist_ok=True)
    # The spill budget is one byte under the "all" plan's own host arena
    # (placed from fp32 updates made 8-bit, its holds may differ from q8's).
    cases = [("fp32", fp32["host_arena"]["bytes"], [], "fp32"),
             ("all", q8["host_arena"]["bytes"], [], "q8"),
             ("spill", None, ["--nvme", f"{nvme}:1G"], "q8")]
    failures = 0
    all_host = None
    for tag, ram, extra, ref in cases:
        ram = all_host - 1 if ram is None else ram
        plan = build(hmcc, model, out, tag, ["--host-params", "all", "--quantize-states", "auto",
                                             "--ram", str(ram)] + extra)
        if tag == "all":
            all_host = plan["host_arena"]["bytes"]
        quantized = sum(t["name"].endswith(".exp_avg_absmax") for t in plan["persistent"])
        stored = sum(t["tier"] == "storage" for t in plan["persistent"])
        losses = train(out, tag, steps, args + (["--nvme", str(nvme)] if extra else []))
        fits = plan["host_arena"]["bytes"] <= ram
        same = losses == reference[ref]
        failures += not (fits and same)
        print(f"--ram {ram}: {quantized} parameters with 8-bit moments, {stored} states in "
              f"storage, host arena {'fits' if fits else 'OVER BUDGET'}, {len(losses)} losses "
              f"{'equal to ' + ref if same else 'DIFFER from ' + ref}")
    # The device budget: the arena of the all-8-bit program with every
    # parameter on the device and nothing recomputed. fp32 moments cannot
    # fit there, so plan-quantize-device must make every such parameter's
    # moments 8-bit (and plan-tiers then moves nothing).
    vram = build(hmcc, model, out, "q8-device", ["--optimizer", "adamw8bit"])["arena"]["bytes"]
    plan = build(hmcc, model, out, "device", ["--quantize-states", "auto", "--vram", str(vram),
                                              "--recompute", "none"])
    quantized = sum(t["name"].endswith(".exp_avg_absmax") for t in plan["persistent"])
    host = sum(t["tier"] == "host" for t in plan["persistent"])
    losses = train(out, "device", steps, args)
    fits = plan["arena"]["bytes"] <= vram
    same = losses == reference["q8"]
    failures += not (fits and same and host == 0)
    print(f"--vram {vram}: {quantized} parameters with 8-bit moments, {host} tensors on the host, "
          f"arena {'fits' if fits else 'OVER BUDGET'}, {len(losses)} losses "
          f"{'equal to q8' if same else 'DIFFER from q8'}")
    print("quantize: " + ("PASS" if failures == 0 else f"FAIL ({failures})"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
