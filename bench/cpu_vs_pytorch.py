#!/usr/bin/env python3
"""Tokens/s of hmcc's compiled CPU training program against PyTorch eager, in one run.

    /usr/bin/python3 bench/cpu_vs_pytorch.py [--threads T] [--steps N] [--build DIR] [--append FILE]
                                             [--trace FILE.json]

The model is the GPT-2-style decoder of test/fixtures/generate.py with 6
layers, width 256, 8 heads, context 256, batch 8 (vocabulary 256), the same
initial weights for both, AdamW (lr 1e-3, weight decay 0.01) on the same
fixed batch, the same thread count. Each side runs N steps after 3 warm-up
steps; the figure is tokens (B*T) per second over the timed steps. Needs
PyTorch 1.13 (python3-torch) and a built hmcc (make build). With --append
the result is added to docs/benchmarks.md as a dated table row; with --trace
hmcc's first three steps are traced op by op (train --trace, for Perfetto) and
the time per op kind is printed.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "fixtures"))
import generate  # noqa: E402  (the fixture generator's model definitions)

B, T, VOCAB, LAYERS, WIDTH, HEADS = 8, 256, 256, 6, 256, 8


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def make_model():
    torch.manual_seed(0)
    model = generate.GPT2(vocab=VOCAB, block_size=T, n_embd=WIDTH, n_head=HEADS, n_layer=LAYERS)
    generate.init_transformer(model, std=0.02)
    g = torch.Generator().manual_seed(5)
    idx = torch.randint(0, VOCAB, (B, T), generator=g, dtype=torch.int64)
    targets = torch.randint(0, VOCAB, (B, T), generator=g, dtype=torch.int64)
    return model, idx, targets


def bench_pytorch(model, idx, targets, steps, threads):
    torch.set_num_threads(threads)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, foreach=False)
    losses = []
    for i in range(steps + 3):
        if i == 3:
            start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = model(idx, targets)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    elapsed = time.perf_counter() - start
    return steps * B * T / elapsed, losses


def bench_hmcc(model, idx, targets, steps, threads, build, work, trace=None):
    onnx_path = os.path.join(work, "model.onnx")
    generate.export_onnx(model, {"idx": idx, "targets": targets}, onnx_path)
    out = os.path.join(work, "hmcc")
    subprocess.run([os.path.join(build, "bin", "hmcc"), onnx_path, "-o", out, "--optimizer", "adamw",
                    "--lr", "1e-3", "--weight-decay", "0.01"], check=True)
    np.save(os.path.join(work, "idx.npy"), idx.numpy())
    np.save(os.path.join(work, "targets.npy"), targets.numpy())
    metrics = os.path.join(work, "metrics.jsonl")
    subprocess.run([os.path.join(out, "train"), "--quiet", "--threads", str(threads),
                    "--steps", str(steps + 3), "--metrics", metrics,
                    "--feed", "idx=" + os.path.join(work, "idx.npy"),
                    "--feed", "targets=" + os.path.join(work, "targets.npy")]
                   + (["--trace", trace, "--trace-steps", "3", "--force"] if trace else []), check=True)
    rows = [json.loads(l) for l in open(metrics) if l.strip()]
    elapsed = rows[-1]["elapsed_s"] - rows[2]["elapsed_s"]
    return steps * B * T / elapsed, [r["loss"] for r in rows]


def print_op_times(trace):
    """Time per op kind over the traced steps after the first, largest first."""
    events = json.load(open(trace))["traceEvents"]
    ops = [e for e in events if e.get("tid") == 2 and e.get("ph") == "X" and e["args"]["step"] > 1]
    steps = len({e["args"]["step"] for e in ops})
    total = sum(e["dur"] for e in ops)
    by_kind = {}
    for e in ops:
        kind = e["name"].split(" ")[0]
        by_kind[kind] = by_kind.get(kind, 0.0) + e["dur"]
    print("hmcc time per step by op (%s, %d steps):" % (trace, steps))
    for kind, us in sorted(by_kind.items(), key=lambda kv: -kv[1])[:12]:
        print("  %-34s %8.2f ms  %5.1f%%" % (kind, us / steps / 1e3, 100.0 * us / total))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--append", metavar="FILE")
    ap.add_argument("--trace", metavar="FILE.json")
    args = ap.parse_args()
    generate.setup_determinism()
    torch.use_deterministic_algorithms(False)
    model, idx, targets = make_model()
    with tempfile.TemporaryDirectory() as work:
        hm_tps, hm_losses = bench_hmcc(model, idx, targets, args.steps, args.threads, args.build, work,
                                       args.trace)
    pt_tps, pt_losses = bench_pytorch(model, idx, targets, args.steps, args.threads)
    params = sum(p.numel() for p in model.parameters())
    worst = max(abs(a - b) / abs(b) for a, b in zip(hm_losses, pt_losses))
    ratio = hm_tps / pt_tps
    print("model: GPT-2-style, %d layers, width %d, %d heads, T=%d, B=%d, %.2f M parameters"
          % (LAYERS, WIDTH, HEADS, T, B, params / 1e6))
    print("threads %d, %d timed steps" % (args.threads, args.steps))
    print("hmcc CPU      %8.0f tokens/s" % hm_tps)
    print("PyTorch eager %8.0f tokens/s  (torch %s)" % (pt_tps, torch.__version__))
    print("ratio hmcc / PyTorch: %.2fx; loss curves agree to %.1e (relative)" % (ratio, worst))
    if args.trace:
        print_op_times(args.trace)
    if args.append:
        row = "| %s | %s, %d threads | %.0f | %.0f | %.2fx | %.1e |\n" % (
            datetime.date.today().isoformat(), cpu_name(), args.threads, hm_tps, pt_tps, ratio, worst)
        with open(args.append, "a") as f:
            f.write(row)


if __name__ == "__main__":
    main()
