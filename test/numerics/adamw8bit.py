#!/usr/bin/env python3
"""8-bit AdamW against fp32 AdamW on the GPT fixture.

    adamw8bit.py Q8_METRICS F32_METRICS Q8_STATE_DIR

Checks that the mean loss of the last 50 of the steps is within 2% of fp32
AdamW's, and that for every parameter whose moments are quantized (those of
4096 elements or more) the state bytes (codes and per-block absmax of both
moments) are at most 27% of the 8 bytes per element fp32 moments take.
"""
import json
import sys


def mean_last(path, n=50):
    losses = [json.loads(line)["loss"] for line in open(path) if line.strip()]
    return sum(losses[-n:]) / n, len(losses)


def main():
    q8, steps = mean_last(sys.argv[1])
    f32, _ = mean_last(sys.argv[2])
    rel = abs(q8 - f32) / f32
    print("mean loss of the last 50 of %d steps: 8-bit %.6f, fp32 %.6f, difference %.2f%%"
          % (steps, q8, f32, 100 * rel))
    manifest = json.load(open(sys.argv[3] + "/manifest.json"))
    params = {t["name"]: t for t in manifest["tensors"] if t["kind"] == "param"}
    quantized = {t["name"][: -len(".exp_avg")] for t in manifest["tensors"]
                 if t["kind"] == "state" and t["name"].endswith(".exp_avg") and t["dtype"] == "uint8"}
    # States are named <param>.<kind>: exp_avg, exp_avg_absmax, exp_avg_sq, ...
    state_bytes = sum(t["bytes"] for t in manifest["tensors"]
                      if t["kind"] == "state" and t["name"].rsplit(".", 1)[0] in quantized)
    fp32_bytes = sum(8 * params[p]["bytes"] // 4 for p in quantized)
    ratio = state_bytes / fp32_bytes if fp32_bytes else float("inf")
    print("quantized parameters: %d; their state bytes are %.1f%% of fp32's"
          % (len(quantized), 100 * ratio))
    ok = rel <= 0.02 and ratio <= 0.27 and quantized
    print("ok" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
