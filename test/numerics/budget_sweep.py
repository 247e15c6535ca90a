#!/usr/bin/env python3
"""The budget sweep of the memory planner.

Compiles MODEL unconstrained, learns the smallest --vram that fits from the
error a 1-byte budget gives, then compiles it at budgets from the unplanned
arena down to that smallest one (six in all), trains each for STEPS steps
and requires, for every budget:
  - the planned arena within the budget (from --dump-schedule);
  - loss, learning rate and gradient norm bit-identical to the
    unconstrained program's at every step (the metrics print floats exactly
    as the runtime had them);
that one byte less than the smallest budget fails at compile time, naming
it; the same at the smallest --vram with --ram one byte below that plan's
host arena and --nvme (a folder of OUTDIR): optimizer states spill to the
storage tier, which the program's file uses, and every arena is within its
budget (and again with --chunk-size, the stored states updated chunk by
chunk); with --params-in-storage, again with --ram short of a quarter of the
host parameters' bytes besides: every state and some parameters in storage
(tiny models cannot: storage moves whole pages); and that checkpoints do not
depend on the plan: the programs at the smallest budget, without storage,
with states in storage and with parameters there too, resumed from the unplanned
program's checkpoint of step STEPS/2, go on bit-identically; and the
unplanned program with its largest matrix split in two pieces, the first
rows on the device and the rest on the host (--host-params NAME:ROWS), the
same losses, with checkpoints both ways between it and the unplanned
program. Prints one line per budget and a closing verdict.

usage: budget_sweep.py HMCC MODEL OUTDIR STEPS [--params-in-storage] TRAIN-ARG...
"""
import json
import re
import subprocess
import sys
from pathlib import Path


def run(cmd, expect_ok=True):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if expect_ok and p.returncode != 0:
        sys.exit(f"budget_sweep: {' '.join(map(str, cmd))} failed:\n{p.stderr}")
    return p


def compile_and_train(hmcc, model, out, tag, budget, steps, train_args, extra=()):
    exe, plan = out / tag, out / f"{tag}.json"
    cmd = [hmcc, model, "-o", exe, "--force", "--dump-schedule", plan]
    if budget is not None:
        cmd += ["--vram", str(budget)]
    run(cmd + list(extra))
    metrics = out / f"{tag}.jsonl"
    run([exe / "train", "--quiet", "--steps", str(steps), "--metrics", metrics, "--force"]
        + train_args)
    schedule = json.loads(plan.read_text())
    rows = [json.loads(line) for line in metrics.read_text().splitlines()]
    stages = schedule.get("recompute", {}).get("stages", [])
    recomputed = sum(s["decision"] == "recompute" for s in stages)
    light = sum(s["decision"] == "keep light" for s in stages)
    params = [t for t in schedule["persistent"] if t["kind"] == "param"]
    host = sum(t["tier"] == "host" for t in params)
    plan = (f"{recomputed} of {len(stages)} stages recomputed, {light} kept light, "
            f"{host} of {len(params)} parameters on the host")
    return schedule["arena"]["bytes"], rows, plan, light


def main():
    hmcc, model, out, steps = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
    train_args = sys.argv[5:]
    params_in_storage = "--params-in-storage" in train_args
    if params_in_storage:
        train_args.remove("--params-in-storage")
    out.mkdir(parents=True, exist_ok=True)

    unplanned, reference, _, _ = compile_and_train(hmcc, model, out, "free", None, steps,
                                                   train_args)
    half, checkpoint = steps // 2, out / "free-checkpoint"
    run([out / "free" / "train", "--quiet", "--steps", str(half), "--save", checkpoint,
         "--force"] + train_args)
    p = run([hmcc, model, "--vram", "1"], expect_ok=False)
    m = re.search(r"the smallest budget that fits is --vram (\d+) ", p.stderr)
    if p.returncode == 0 or not m:
        sys.exit(f"budget_sweep: a 1-byte budget did not name the smallest:\n{p.stderr}")
    smallest = int(m.group(1))
    print(f"unplanned arena {unplanned} B, smallest budget {smallest} B "
          f"({100.0 * smallest / unplanned:.1f}%)")

    budgets = [unplanned] + [smallest + (unplanned - smallest) * k // 5 for k in (4, 3, 2, 1, 0)]
    failures = 0
    keys = ("loss", "lr", "grad_norm")

    def same_as_reference(rows):
        return len(rows) == len(reference) and all(
            a[k] == b[k] for a, b in zip(rows, reference) for k in keys)

    def outcome(fits, rows, same):
        return (f"arenas {'fit' if fits else 'OVER BUDGET'}, {len(rows)} steps "
                f"{'bit-identical' if same else 'DIFFER'}")

    light_budgets = 0
    for i, budget in enumerate(budgets):
        arena, rows, plan, light = compile_and_train(hmcc, model, out, f"b{i}", budget, steps,
                                                     train_args)
        same = same_as_reference(rows)
        fits = arena <= budget
        failures += not (same and fits)
        light_budgets += light > 0
        print(f"--vram {budget}: arena {arena} B {'fits' if fits else 'OVER BUDGET'}, {plan}, "
              f"{len(rows)} steps {'bit-identical' if same else 'DIFFER'}")
    print(f"stages kept light at {light_budgets} of {len(budgets)} budgets")

    # A parameter in pieces: the largest matrix that can split, about the
    # last half of its rows homed on the host and the rest on the device;
    # the same losses, and checkpoints both ways between it and the
    # unplanned program.
    free_plan = json.loads((out / "free.json").read_text())

    def splits(dims):
        """The counts of last rows a matrix may home apart, as plan-tiers
        allows them: pieces of 4096 elements or more and whole 256-element
        blocks where the matrix could have 8-bit moments."""
        rows, inner = dims[0], 1
        for d in dims[1:]:
            inner *= d
        big = rows * inner >= 4096
        return [last for last in range(1, rows)
                if not big or ((rows - last) * inner % 256 == 0
                               and min(last, rows - last) * inner >= 4096)]

    matrices = sorted(((t["bytes"], t["name"], [int(d) for d in t["type"][7:-1].split("x")[:-1]])
                       for t in free_plan["persistent"]
                       if t["kind"] == "param" and t["type"].count("x") >= 2), reverse=True)
    whole_bytes, name, dims = next(m for m in matrices if splits(m[2]))
    last = min(splits(dims), key=lambda n: abs(n - dims[0] // 2))
    split_args = ["--host-params", f"{name}:{last}"]
    arena, rows, _, _ = compile_and_train(hmcc, model, out, "pieces", None, steps, train_args,
                                       split_args)
    schedule = json.loads((out / "pieces.json").read_text())
    pieces = [t for t in schedule["persistent"] if t.get("whole") == name]
    placed = ([t["tier"] for t in pieces] == ["device", "host"]
              and sum(t["bytes"] for t in pieces) == whole_bytes)
    same = same_as_reference(rows)
    failures += not (same and placed)
    print(f"--host-params {name}:{last}: in pieces {'device and host' if placed else 'WRONG'}, "
          f"{len(rows)} steps {'bit-identical' if same else 'DIFFER'}")
    run([out / "pieces" / "train", "--quiet", "--steps", str(half), "--save",
         out / "pieces-checkpoint", "--force"] + train_args)
    for tag, ckpt in [("pieces", checkpoint), ("free", out / "pieces-checkpoint")]:
        resumed = out / f"{tag}-from-pieces.jsonl"
        run([out / tag / "train", "--quiet", "--steps", str(steps), "--resume", ckpt,
             "--metrics", resumed, "--force"] + train_args)
        rows = [json.loads(line) for line in resumed.read_text().splitlines()]
        same = len(rows) == steps - half and all(
            a[k] == b[k] for a, b in zip(rows, reference[half:]) for k in keys)
        failures += not same
        what = ("in pieces: resumed from the unplanned program's" if tag == "pieces"
                else "unplanned: resumed from the pieces program's")
        print(f"{what} step {half}, {len(rows)} steps {'bit-identical' if same else 'DIFFER'}")

    # The smallest budget again, with the host arena one byte too small:
    # optimizer states spill to storage.
    host = json.loads((out / f"b{len(budgets) - 1}.json").read_text()).get("host_arena")
    storage_args = []
    if host:
        ram, nvme = host["bytes"] - 1, out / "nvme"
        nvme.mkdir(exist_ok=True)
        storage_args = ["--nvme", str(nvme)]
        arena, rows, plan, _ = compile_and_train(
            hmcc, model, out, "spill", smallest, steps, train_args + storage_args,
            ["--ram", str(ram), "--nvme", f"{nvme}:1G"])
        schedule = json.loads((out / "spill.json").read_text())
        stored = sum(t["tier"] == "storage" for t in schedule["persistent"])
        fits = (arena <= smallest and schedule["host_arena"]["bytes"] <= ram
                and stored > 0 and "storage_arena" in schedule)
        same = same_as_reference(rows)
        failures += not (same and fits)
        print(f"--vram {smallest} --ram {ram}: {stored} optimizer states in storage, "
              f"{outcome(fits, rows, same)}")

        # The same with updates of stored states chunk by chunk (--chunk-size
        # 4K, the smallest: 1024 elements): smaller staging buffers, the same values.
        arena, rows, plan, _ = compile_and_train(
            hmcc, model, out, "chunks", smallest, steps, train_args + storage_args,
            ["--ram", str(ram), "--nvme", f"{nvme}:1G", "--chunk-size", "4K"])
        schedule = json.loads((out / "chunks.json").read_text())
        chunks = sum(1 for f in schedule["functions"] for op in f["ops"]
                     if "chunk" in op and op["op"] != "hm.stage")
        fits = arena <= smallest and schedule["host_arena"]["bytes"] <= ram
        same = same_as_reference(rows)
        # Every stored state over one chunk's slice (4 KiB) is updated in chunks.
        larger = any(t["tier"] == "storage" and t["bytes"] > 4096 for t in schedule["persistent"])
        failures += not (same and fits and (chunks > 0 or not larger))
        print(f"--vram {smallest} --ram {ram} --chunk-size 4K: {chunks} chunk updates, "
              f"{outcome(fits, rows, same)}")

    if host and params_in_storage:
        # The host arena also short of a quarter of the parameters' bytes: every
        # state in storage, then parameters too; updates in chunks of about
        # a 64th of the parameters' bytes (a power of two, at least 4 KiB)
        # keep the staging small without making thousands of updates.
        smallest_plan = json.loads((out / f"b{len(budgets) - 1}.json").read_text())
        on_host = [t for t in smallest_plan["persistent"] if t["tier"] == "host"]
        params_bytes = sum(t["bytes"] for t in on_host if t["kind"] == "param")
        states_bytes = sum(t["bytes"] for t in on_host if t["kind"] == "state")
        ram_params = host["bytes"] - states_bytes - params_bytes // 4
        chunk_kib = max(4, 1 << max(0, (params_bytes // 64 // 1024).bit_length() - 1))
        arena, rows, plan, _ = compile_and_train(
            hmcc, model, out, "params", smallest, steps, train_args + storage_args,
            ["--ram", str(ram_params), "--nvme", f"{nvme}:1G", "--chunk-size", f"{chunk_kib}K"])
        schedule = json.loads((out / "params.json").read_text())
        stored = [t for t in schedule["persistent"] if t["tier"] == "storage"]
        stored_params = sum(t["kind"] == "param" for t in stored)
        fits = (arena <= smallest and schedule["host_arena"]["bytes"] <= ram_params
                and stored_params > 0 and all(t["tier"] != "host" for t in schedule["persistent"]
                                              if t["kind"] == "state"))
        same = same_as_reference(rows)
        failures += not (same and fits)
        print(f"--vram {smallest} --ram {ram_params} --chunk-size {chunk_kib}K: {stored_params} "
              f"parameters in storage, {outcome(fits, rows, same)}")

    for tag, args in [(f"b{len(budgets) - 1}", []), ("spill", storage_args),
                      ("params", storage_args)]:
        if tag != f"b{len(budgets) - 1}" and not host:
            continue
        if tag == "params" and not params_in_storage:
            continue
        resumed = out / f"{tag}-resumed.jsonl"
        run([out / tag / "train", "--quiet", "--steps", str(steps), "--resume",
             checkpoint, "--metrics", resumed, "--force"] + train_args + args)
        rows = [json.loads(line) for line in resumed.read_text().splitlines()]
        same = len(rows) == steps - half and all(
            a[k] == b[k] for a, b in zip(rows, reference[half:]) for k in keys)
        failures += not same
        where = {"spill": " with storage", "params": " with parameters in storage"}.get(tag, "")
        print(f"--vram {smallest}{where}: resumed from the unplanned "
              f"program's step {half}, {len(rows)} steps {'bit-identical' if same else 'DIFFER'}")

    p = run([hmcc, model, "--vram", str(smallest - 1)], expect_ok=False)
    named = f"the smallest budget that fits is --vram {smallest} " in p.stderr
    if p.returncode == 0 or not named:
        failures += 1
        print(f"--vram {smallest - 1}: NOT REFUSED AS EXPECTED: {p.stderr.strip()}")
    else:
        print(f"--vram {smallest - 1}: refused, naming --vram {smallest}")
    print("sweep: " + ("PASS" if failures == 0 else f"FAIL ({failures})"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
