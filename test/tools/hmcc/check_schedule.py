#!/usr/bin/env python3
"""Checks a --dump-schedule JSON file against the rules its format promises.

  check_schedule.py FILE.json

Prints one summary line per function; exits 1 with a line per broken rule:
every interval lies inside its arena (the device's, or the host's for
tier "host"); persistent tensors of one arena do not overlap;
every op's live_bytes is at most the arena and at most the function's
peak_bytes, which one op reaches; a function's flops and traffic_bytes are
the sums over its ops.
"""
import json
import sys


def main():
    d = json.load(open(sys.argv[1]))
    errors = []
    arena = d["arena"]["bytes"]
    size = {"device": arena, "host": d.get("host_arena", {}).get("bytes", 0)}
    if d.get("format") != "hmcc-schedule-1":
        errors.append("format is %r" % d.get("format"))
    for tier in size:
        spans = sorted((p["offset"], p["offset"] + p["bytes"], p["name"])
                       for p in d["persistent"] if p["tier"] == tier)
        for (b0, e0, n0), (b1, e1, n1) in zip(spans, spans[1:]):
            if b1 < e0:
                errors.append("persistent %s overlaps %s" % (n0, n1))
        for b, e, n in spans:
            if e > size[tier]:
                errors.append("persistent %s ends at %d, beyond the %s arena" % (n, e, tier))
    for f in d["functions"]:
        for op in f["ops"]:
            for t in op["reads"] + op["writes"]:
                if "offset" in t and t["offset"] + t["bytes"] > size[t.get("tier", "device")]:
                    errors.append("%s op %d: %s beyond the arena" % (f["name"], op["index"], t["tensor"]))
            if op["live_bytes"] > min(arena, f["peak_bytes"]):
                errors.append("%s op %d: live_bytes %d" % (f["name"], op["index"], op["live_bytes"]))
        if f["ops"] and max(op["live_bytes"] for op in f["ops"]) != f["peak_bytes"]:
            errors.append("%s: no op reaches peak_bytes" % f["name"])
        if not 0 <= f["activation_peak_bytes"] <= f["peak_bytes"]:
            errors.append("%s: activation_peak_bytes %d outside [0, peak_bytes]"
                          % (f["name"], f["activation_peak_bytes"]))
        for key in ("flops", "traffic_bytes"):
            if sum(op[key] for op in f["ops"]) != f[key]:
                errors.append("%s: %s is not the sum over its ops" % (f["name"], key))
        print("%s: %d ops, peak %d of %d arena bytes" % (f["name"], len(f["ops"]), f["peak_bytes"], arena))
    for e in errors:
        print("error:", e)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
