"""What the planner's bit-identity checks (bf16_fetches.py, device_updates.py,
shared_fetches.py) share: compile a model with hmcc, its schedule dumped,
train the program, and read back each step's metrics and the planned ops.
"""
import json
import subprocess
import sys
from pathlib import Path


def run(who, cmd):
    """Runs `cmd`; on failure exits naming `who`, the command and its stderr."""
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{who}: {' '.join(map(str, cmd))} failed:\n{p.stderr}")


def compile_and_train(who, hmcc, model, out, name, hmcc_args, steps, train_args):
    """Compiles `model` into out/name (out/name.json its schedule), trains it
    `steps` steps with `train_args`, and returns the (loss, lr, grad_norm) of
    each step and the ops of the plan's first function."""
    out = Path(out)
    exe, plan, log = out / name, out / f"{name}.json", out / f"{name}.jsonl"
    run(who, [hmcc, model, "-o", exe, "--force", "--dump-schedule", plan] + list(hmcc_args))
    run(who, [exe / "train", "--state", exe / "state", "--quiet", "--steps", steps,
              "--metrics", log, "--force"] + list(train_args))
    metrics = [(r["loss"], r["lr"], r["grad_norm"]) for r in map(json.loads, open(log))]
    return metrics, json.load(open(plan))["functions"][0]["ops"]
