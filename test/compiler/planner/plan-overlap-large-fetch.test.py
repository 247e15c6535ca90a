"""Where the first fetch of the LM head (or of its bf16 copy) sits in a --dump-schedule file:
how many ops before the first op that reads the fetched copy, and whether
that is more than the 16 ops of one transformer layer's forward."""
import json
import sys

ops = json.load(open(sys.argv[1]))["functions"][0]["ops"]
# The parameter, or its bf16 copy rounded on the host (--bf16-fetches).
sources = {"param:lm_head.weight"} | {
    o["writes"][0]["tensor"] for o in ops if o["op"] == "tg.cast"
    and o["stream"] == "host_optimizer" and o["reads"][0]["tensor"] == "param:lm_head.weight"}
fetch = next((o for o in ops if o["stream"] == "host_to_device"
              and any(r["tensor"] in sources for r in o["reads"])), None)
if fetch is None:
    sys.exit("lm_head.weight: never fetched (not on the host in this plan)")
copy = fetch["writes"][0]["tensor"]
reader = next((o for o in ops if o["index"] > fetch["index"]
               and any(r["tensor"] == copy for r in o["reads"])), None)
if reader is None:
    sys.exit("lm_head.weight: its fetched copy is never read")
distance = reader["index"] - fetch["index"]
print(f"lm_head.weight: on the host, fetched {distance} ops before its first reader")
print("moved up: " + ("yes" if distance > 16 else "no"))
