#!/usr/bin/env python3
"""Checks a `train --trace` file.

  check_trace.py TRACE.json MODEL.cpp

Every traced step (thread 1) contains one event for each op the generated
program names (kStepOps in MODEL.cpp, or kForwardOps for an --eval trace),
each with a non-negative duration, on the track of its stream (threads 2 to
7: compute, host_to_device, device_to_host, host_optimizer, storage_read,
storage_write; a name ending " [stream S]" is on S's, without that ending).
The ops of one track run in program order without overlap; tracks may
overlap one another. Prints a line per step and the events per stream;
exits 1 with a line per broken rule.
"""
import json
import re
import sys


STREAMS = ["compute", "host_to_device", "device_to_host", "host_optimizer",
           "storage_read", "storage_write"]


def op_names(cpp, array):
    """(name, track) of each op, the stream's ending taken off the name."""
    body = re.search(r"%s\[\] = \{\n(.*?)\};" % array, open(cpp).read(), re.S).group(1)
    out = []
    for line in body.splitlines():
        if not line.strip().startswith('"'):
            continue
        name = json.loads(line.strip().rstrip(","))
        m = re.match(r"(.*) \[stream (\w+)\]$", name)
        out.append((m.group(1), 2 + STREAMS.index(m.group(2))) if m else (name, 2))
    return out


def main():
    events = json.load(open(sys.argv[1]))["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    steps = [e for e in spans if e["tid"] == 1 and e["name"] != "inputs"]
    ops = sorted((e for e in spans if 2 <= e["tid"] < 2 + len(STREAMS)),
                 key=lambda e: e["args"]["op"])
    forward = steps and steps[0]["name"] == "forward"
    names = op_names(sys.argv[2], "kForwardOps" if forward else "kStepOps")
    errors = []
    for st in steps:
        step = st["args"].get("step", 0)
        mine = [e for e in ops if e["args"]["step"] == step]
        if [(e["name"], e["tid"]) for e in mine] != names:
            errors.append("%s: ops %s, expected %s" % (st["name"], [e["name"] for e in mine][:5], names[:5]))
        for tid in range(2, 2 + len(STREAMS)):
            end = st["ts"]
            for e in (e for e in mine if e["tid"] == tid):
                if e["dur"] < 0 or e["ts"] < end - 1e-3:
                    errors.append("%s: op %s overlaps or goes back" % (st["name"], e["name"]))
                end = e["ts"] + e["dur"]
            if end > st["ts"] + st["dur"] + 1e-3:
                errors.append("%s: ops end after the step" % st["name"])
        per = {s: sum(e["tid"] == 2 + k for e in mine) for k, s in enumerate(STREAMS)}
        print("%s: %d ops (%s)" % (st["name"], len(mine),
                                   ", ".join("%s %d" % (s, n) for s, n in per.items() if n)))
    for e in errors:
        print("error:", e)
    sys.exit(1 if errors or not steps else 0)


if __name__ == "__main__":
    main()
