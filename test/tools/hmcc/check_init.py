"""Checks the parameters of a checkpoint written right after train --init:
rank >= 2 normal with std 0.02, norm gains 1, other vectors 0.

With --exact SEED, each rank >= 2 parameter is also drawn here as the runtime
draws it (splitmix64 keyed by the FNV-1a hash of its name and the seed,
Box-Muller on element j's two draws, in double, rounded to float32) and must
match element by element, to one float32 ulp (NumPy's log and cos may round
the last double bit differently from the C library's).

usage: check_init.py CHECKPOINT [--exact SEED]"""
import json
import sys

import numpy as np

M64 = (1 << 64) - 1


def mix64(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def splitmix(s, j):
    """Output j (an array) of the splitmix64 stream seeded with s."""
    return mix64(np.uint64(s) + (j + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15))


def drawn(name, seed, n):
    key = 1469598103934665603
    for c in name.encode():
        key = ((key ^ c) * 1099511628211) & M64
    key = int(splitmix(seed, np.array([key], np.uint64))[0])
    j = np.arange(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        u1 = ((splitmix(key, np.uint64(2) * j) >> np.uint64(11)) + np.uint64(1)).astype(np.float64) * 2.0**-53
        u2 = (splitmix(key, np.uint64(2) * j + np.uint64(1)) >> np.uint64(11)).astype(np.float64) * 2.0**-53
    return (0.02 * np.sqrt(-2.0 * np.log(u1)) * np.cos(6.283185307179586 * u2)).astype(np.float32)


ck = sys.argv[1]
exact = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--exact" else None
manifest = json.load(open(f"{ck}/manifest.json"))
blob = open(f"{ck}/tensors.bin", "rb").read()
checked = matched = 0
for t in manifest["tensors"]:
    if t["kind"] != "param":
        continue
    v32 = np.frombuffer(blob, np.float32, t["bytes"] // 4, t["offset"])
    v = v32.astype(np.float64)
    name = t["name"].lower()
    if len(t["shape"]) >= 2:
        assert abs(v.std() - 0.02) < 0.002 and abs(v.mean()) < 0.002, (t["name"], v.mean(), v.std())
        if exact is not None:
            ref = drawn(t["name"], exact, v32.size)
            ulps = np.abs(v32.view(np.int32).astype(np.int64) - ref.view(np.int32).astype(np.int64))
            assert ulps.max() <= 1, (t["name"], int(np.argmax(ulps)), int(ulps.max()))
            matched += 1
    elif len(t["shape"]) == 1 and name.endswith(("weight", "scale", "gamma")):
        assert np.all(np.abs(v - 1) < 1e-6), t["name"]
    else:
        assert np.all(np.abs(v) < 1e-6), t["name"]
    checked += 1
print(f"init ok: {checked} parameters" + (f", {matched} drawn as here" if exact is not None else ""))
