#!/usr/bin/env python3
"""Shared device copies of host parameters change no value.

Compiles MODEL three times: unplanned; with every parameter on the host
(--host-params all) under the cpu profile, whose link reads a parameter
again faster than the ops between its readers run (each reader keeps its own
fetch); and the same under PROFILE, a slow link, where plan-overlap shares
one device copy between a parameter's readers. Trains each STEPS steps and
requires loss, learning rate and gradient norm identical at every step, and
fewer fetches of parameters (copies to the device that read one, from
--dump-schedule) in the shared program. Prints the fetch counts and a
verdict.

usage: shared_fetches.py HMCC MODEL PROFILE OUTDIR STEPS TRAIN-ARG...
"""
import sys
from pathlib import Path

from planned_runs import compile_and_train


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__.strip().splitlines()[-1])
    hmcc, model, profile, out, steps = sys.argv[1:6]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    metrics, fetches = {}, {}
    for tag, extra in (("plain", []), ("each", ["--host-params", "all"]),
                       ("shared", ["--host-params", "all", "--device-profile", profile])):
        metrics[tag], ops = compile_and_train("shared_fetches", hmcc, model, out, tag, extra,
                                              steps, sys.argv[6:])
        fetches[tag] = sum(1 for o in ops if o["stream"] == "host_to_device" and
                           any(r["tensor"].startswith("param:") for r in o["reads"]))
    print(f"fetches of parameters: {fetches['each']} each reader its own, "
          f"{fetches['shared']} shared")
    same = all(len(m) == int(steps) and m == metrics["plain"] for m in metrics.values())
    print(f"{steps} steps {'bit-identical' if same else 'DIFFER'}")
    ok = same and 0 < fetches["shared"] < fetches["each"]
    print("shared fetches:", "PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
