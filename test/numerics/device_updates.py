#!/usr/bin/env python3
"""Updates on the device of parameters homed on the host change no value.

For each of --optimizer adamw8bit (whole updates) and adamw with
--chunk-size 4K (updates chunk by chunk), compiles MODEL unplanned, with
every parameter on the host updated there (--host-params all), and the same
with every update on the device (--device-updates all: the parameter and its
states staged to device buffers and back). Trains each STEPS steps and
requires loss, learning rate and gradient norm identical at every step; in
the device-updates plan (--dump-schedule) no op on the host optimizer
stream, no gradient copied to the host, and as many copies in to the device
staging buffers as out of them. Prints a line per optimizer and a verdict.

usage: device_updates.py HMCC MODEL OUTDIR STEPS TRAIN-ARG...
"""
import sys
from collections import Counter
from pathlib import Path

from planned_runs import compile_and_train


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__.strip().splitlines()[-1])
    hmcc, model, out, steps = sys.argv[1:5]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    failures = 0
    for optimizer, extra in (("adamw8bit", []), ("adamw", ["--chunk-size", "4K"])):
        metrics, plans = {}, {}
        for tag, args in (("plain", []), ("host", ["--host-params", "all"]),
                          ("device", ["--host-params", "all", "--device-updates", "all"])):
            metrics[tag], plans[tag] = compile_and_train(
                "device_updates", hmcc, model, out, f"{optimizer}-{tag}",
                ["--optimizer", optimizer] + extra + args, steps, sys.argv[5:])
        ops = plans["device"]
        streams = Counter(o["stream"] for o in ops if o["op"] == "hm.stage")
        updates = [o for o in ops if o["op"].endswith("_update")]
        on_host = sum(o["stream"] == "host_optimizer" for o in ops)
        copies = sum(o["stream"] == "device_to_host" and o["op"] == "tg.identity" for o in ops)
        chunked = sum("chunk" in o for o in updates)
        same = all(len(m) == int(steps) and m == metrics["plain"] for m in metrics.values())
        ok = (same and on_host == 0 and copies == 0 and streams["host_to_device"] > 0 and
              streams["host_to_device"] == streams["device_to_host"] and
              (chunked > 0) == bool(extra))
        failures += not ok
        print(f"{optimizer}{' in chunks' if extra else ''}: {len(updates)} updates on the "
              f"device ({chunked} of them chunks), {streams['host_to_device']} copies in and "
              f"{streams['device_to_host']} out, {on_host} ops on the host optimizer, "
              f"{copies} gradients to the host, {steps} steps "
              f"{'bit-identical' if same else 'DIFFER'}")
    print("device updates:", "PASS" if failures == 0 else f"FAIL ({failures})")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
