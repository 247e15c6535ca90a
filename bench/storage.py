#!/usr/bin/env python3
"""The storage tier's sequential throughput next to dd's, on one file system.

  bench/storage.py BUILD DIR [--rounds N]

In DIR (a folder on the file system to measure, e.g. the NVMe a run would
spill to), each round runs, back to back:
  - dd if=/dev/zero of=DIR/... bs=1M count=1024 oflag=direct   (write)
  - dd if=DIR/... of=/dev/null bs=1M iflag=direct               (read)
  - BUILD/runtime/hmrt-measure --storage DIR: the runtime's own storage tier
    (the file a program's storage arena lives in, O_DIRECT and io_uring
    where it can), 1 GiB written then read in 64 MiB copies from a host
    buffer, as plan-staging's copies move optimizer states.
Prints each round and the best of each, with the store's share of dd's
(goal: at least 90% each way). dd's file is removed after each round; the
store's is anonymous.
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

GIB = 1 << 30


def dd(args):
    p = subprocess.run(["dd"] + args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"storage.py: dd {' '.join(args)} failed:\n{p.stderr}")
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.99 s, 1.1 GB/s"
    m = re.search(r"(\d+) bytes .* copied, ([0-9.]+) s", p.stderr)
    return int(m.group(1)) / float(m.group(2))


def store(measure, folder):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "profile.json"
        p = subprocess.run([measure, "-o", out, "--storage", folder], capture_output=True,
                           text=True)
        if p.returncode != 0:
            sys.exit(f"storage.py: hmrt-measure failed:\n{p.stderr}")
        notices = [l for l in p.stderr.splitlines() if l.startswith("hmrt:")]
        links = json.loads(out.read_text())["links"]
        return links["storage_write"], links["storage_read"], notices


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("dir")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    measure = Path(a.build) / "runtime" / "hmrt-measure"
    folder = Path(a.dir)
    target = folder / "storage-bench-dd.bin"
    best = {"dd write": 0, "dd read": 0, "store write": 0, "store read": 0}
    notices = set()
    print(f"{'round':>5} {'dd write':>10} {'dd read':>10} {'store write':>12} {'store read':>11}  (GB/s)")
    for r in range(1, a.rounds + 1):
        try:
            w = dd(["if=/dev/zero", f"of={target}", "bs=1M", f"count={GIB >> 20}", "oflag=direct"])
            rd = dd([f"if={target}", "of=/dev/null", "bs=1M", "iflag=direct"])
        finally:
            target.unlink(missing_ok=True)
        sw, sr, n = store(measure, folder)
        notices.update(n)
        for k, v in zip(best, (w, rd, sw, sr)):
            best[k] = max(best[k], v)
        print(f"{r:>5} {w / 1e9:>10.2f} {rd / 1e9:>10.2f} {sw / 1e9:>12.2f} {sr / 1e9:>11.2f}")
    for line in sorted(notices):
        print(line)
    print(f"best: write {best['store write'] / 1e9:.2f} GB/s against dd's "
          f"{best['dd write'] / 1e9:.2f} ({100 * best['store write'] / best['dd write']:.0f}%), "
          f"read {best['store read'] / 1e9:.2f} GB/s against dd's {best['dd read'] / 1e9:.2f} "
          f"({100 * best['store read'] / best['dd read']:.0f}%)")


if __name__ == "__main__":
    main()
