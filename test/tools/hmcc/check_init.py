"""Checks the parameters of a checkpoint written right after train --init:
rank >= 2 normal with std 0.02, norm gains 1, other vectors 0."""
import json
import sys

import numpy as np

ck = sys.argv[1]
manifest = json.load(open(f"{ck}/manifest.json"))
blob = open(f"{ck}/tensors.bin", "rb").read()
checked = 0
for t in manifest["tensors"]:
    if t["kind"] != "param":
        continue
    v = np.frombuffer(blob, np.float32, t["bytes"] // 4, t["offset"]).astype(np.float64)
    name = t["name"].lower()
    if len(t["shape"]) >= 2:
        assert abs(v.std() - 0.02) < 0.002 and abs(v.mean()) < 0.002, (t["name"], v.mean(), v.std())
    elif len(t["shape"]) == 1 and name.endswith(("weight", "scale", "gamma")):
        assert np.all(np.abs(v - 1) < 1e-6), t["name"]
    else:
        assert np.all(np.abs(v) < 1e-6), t["name"]
    checked += 1
print(f"init ok: {checked} parameters")
