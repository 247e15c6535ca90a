#!/usr/bin/env python3
"""Parameters fetched in bf16 change no value.

With --precision bf16, compiles MODEL with every parameter on the host
(--host-params all) fetched as it is (--bf16-fetches never) and in bf16
(--bf16-fetches always: rounded once a step on the host, half the bytes
over the link), the latter also with bf16 storage of what only GEMMs read
and with every update on the device; trains each STEPS steps beside the
unplanned program and requires loss, learning rate and gradient norm
identical at every step. In the plans (--dump-schedule): the bf16 ones round
parameters on the host (tg.cast on the host optimizer stream) and copy fewer
bytes to the device than the plan without. Prints a line per configuration
and a verdict.

usage: bf16_fetches.py HMCC MODEL OUTDIR STEPS TRAIN-ARG...
"""
import sys
from pathlib import Path

from planned_runs import compile_and_train


CONFIGS = (
    ("plain", []),
    ("fp32 fetches", ["--host-params", "all", "--bf16-fetches", "never"]),
    ("bf16 fetches", ["--host-params", "all", "--bf16-fetches", "always"]),
    ("bf16 fetches, bf16 storage",
     ["--host-params", "all", "--bf16-fetches", "always", "--bf16-storage=always"]),
    ("bf16 fetches, device updates",
     ["--host-params", "all", "--bf16-fetches", "always", "--device-updates", "all"]),
)


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__.strip().splitlines()[-1])
    hmcc, model, out, steps = sys.argv[1:5]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    metrics, fetched, rounded = {}, {}, {}
    for k, (tag, args) in enumerate(CONFIGS):
        metrics[tag], ops = compile_and_train(
            "bf16_fetches", hmcc, model, out, f"c{k}",
            ["--precision", "bf16", "--optimizer", "adamw"] + args, steps, sys.argv[5:])
        fetched[tag] = sum(o["writes"][0]["bytes"] for o in ops
                           if o["stream"] == "host_to_device" and o["op"] == "tg.identity")
        rounded[tag] = sum(o["stream"] == "host_optimizer" and o["op"] == "tg.cast" for o in ops)
    failures = 0
    for tag, _ in CONFIGS[1:]:
        same = len(metrics[tag]) == int(steps) and metrics[tag] == metrics["plain"]
        bf16 = "bf16" in tag
        ok = same and (rounded[tag] > 0 if bf16 else rounded[tag] == 0)
        if bf16 and "device" not in tag:
            ok = ok and fetched[tag] < fetched["fp32 fetches"]
        failures += not ok
        print(f"{tag}: {rounded[tag]} parameters rounded on the host, {fetched[tag]} bytes "
              f"fetched ({fetched['fp32 fetches']} in fp32), {steps} steps "
              f"{'bit-identical' if same else 'DIFFER'}")
    print("bf16 fetches:", "PASS" if failures == 0 else f"FAIL ({failures})")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
