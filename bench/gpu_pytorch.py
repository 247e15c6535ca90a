#!/usr/bin/env python3
"""PyTorch's side of the GPU check (bench/gpu-check.sh): the same GPT that
bench/gpt_shapes.py writes for hmcc (pre-norm blocks, fused QKV, causal
attention, GELU(erf) MLP of 4x width, untied LM head, cross-entropy), trained
a few steps on one GPU in the configurations of ../shared/design.md's anchors:

  eager       bf16 autocast, fused AdamW, everything on the GPU
  checkpoint  the same with activation checkpointing per block
  fsdp2       FSDP2 (fully_shard per block and the model) with CPUOffloadPolicy,
              bf16 parameters for compute (MixedPrecisionPolicy), checkpointing
              per block, fused CPU AdamW: PyTorch's strongest offload setup

usage: gpu_pytorch.py --mode eager|checkpoint|fsdp2 [--steps 6] [--layers 24]
                      [--width 2048] [--heads 16] [--vocab 50304] [--batch 8]
                      [--seq 1024] [--device cuda] [--kernel-times]
Prints one JSON object: mode, step_s (median of the steps after the first
two), tokens_per_s, peak_gib (torch.cuda.max_memory_allocated), loss (the
last), params; or, when the mode fails (no GPU, out of memory, an API this
PyTorch lacks), mode and error.  Each mode runs in a process of its own, so
that peaks and caches do not carry over.

--kernel-times profiles two more steps (torch.profiler) and adds
kernel_seconds: the GPU time per step of PyTorch's kernels by the kind of
work hmcc's device profile names (matmul, attention, norm, softmax,
optimizer, reduction, data, elementwise; kernels matched by name, the rest
"other"), and top_kernels: the ten longest, with their seconds per step:
what PyTorch's kernels reach on this GPU, kind by kind, beside hmcc's.
"""
import re
import argparse
import json
import math
import os
import statistics
import sys
import time


def build_model(torch, a):
    import torch.utils.checkpoint  # noqa: F401 (a submodule: not loaded with torch)

    nn = torch.nn
    F = torch.nn.functional

    def attention(q, k, v):
        if hasattr(F, "scaled_dot_product_attention"):  # PyTorch 2
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        t = q.shape[2]  # PyTorch 1.x (a smoke test on the build machine)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        mask = torch.ones(t, t, dtype=torch.bool, device=q.device).tril()
        return s.masked_fill(~mask, float("-inf")).softmax(-1) @ v

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(a.width)
            self.qkv = nn.Linear(a.width, 3 * a.width)
            self.proj = nn.Linear(a.width, a.width)
            self.ln2 = nn.LayerNorm(a.width)
            self.up = nn.Linear(a.width, 4 * a.width)
            self.down = nn.Linear(4 * a.width, a.width)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
            shape = (b, t, a.heads, c // a.heads)
            q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
            y = attention(q, k, v)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
            return x + self.down(F.gelu(self.up(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(a.vocab, a.width)
            self.wpe = nn.Embedding(a.seq, a.width)
            self.blocks = nn.ModuleList(Block() for _ in range(a.layers))
            self.ln_f = nn.LayerNorm(a.width)
            self.head = nn.Linear(a.width, a.vocab, bias=False)
            self.checkpoint = False

        def forward(self, idx, targets):
            pos = torch.arange(idx.shape[1], device=idx.device)
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.blocks:
                if self.checkpoint:
                    x = torch.utils.checkpoint.checkpoint(blk, x, use_reentrant=False)
                else:
                    x = blk(x)
            logits = self.head(self.ln_f(x))
            return F.cross_entropy(logits.float().view(-1, a.vocab), targets.view(-1))

    return GPT()


# Kernel names to the kinds of hmcc's device profile, first match wins.
KERNEL_KINDS = [
    ("attention", r"flash|fmha|attention|sdpa"),
    ("matmul", r"gemm|xmma|cutlass|cublas|sm90_|sm80_|nvjet|matmul"),
    ("norm", r"layer_norm|layernorm|rms_norm"),
    ("softmax", r"softmax|cross_entropy|nll_loss|log_softmax"),
    ("optimizer", r"adam|multi_tensor|foreach|fused_sgd"),
    ("reduction", r"reduce|sum_kernel|norm_kernel"),
    ("data", r"copy|cat_|catarray|index|embedding|gather|scatter|transpose|fill"),
    ("elementwise", r"elementwise|vectorized|gelu|unrolled|pointwise|add|mul"),
]


def kind_of(name):
    low = name.lower()
    for kind, pattern in KERNEL_KINDS:
        if re.search(pattern, low):
            return kind
    return "other"


def kernel_times(torch, step, steps, on_gpu):
    """GPU time per step by kind over `steps` profiled steps (CPU time of
    the ops when there is no GPU: a smoke test of this code)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CUDA] if on_gpu else [ProfilerActivity.CPU]
    with profile(activities=activities) as prof:
        for _ in range(steps):
            step()
    kinds, names = {}, {}
    for e in prof.key_averages():
        if on_gpu:
            us = getattr(e, "self_device_time_total", None)
            if us is None:
                us = getattr(e, "self_cuda_time_total", 0)
        else:
            us = e.self_cpu_time_total
        if not us:
            continue
        sec = us / 1e6 / steps
        kind = kind_of(e.key)
        kinds[kind] = kinds.get(kind, 0.0) + sec
        names[e.key] = names.get(e.key, 0.0) + sec
    top = sorted(names.items(), key=lambda kv: -kv[1])[:10]
    return ({k: round(v, 6) for k, v in sorted(kinds.items())},
            [[n[:120], round(v, 6)] for n, v in top])


def run(a):
    import torch

    dev = torch.device(a.device)
    if dev.type == "cuda" and dev.index is None:
        dev = torch.device("cuda", 0)  # FSDP2 wants an index
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("no CUDA device visible to PyTorch")
    torch.manual_seed(0)
    model = build_model(torch, a)
    params = sum(p.numel() for p in model.parameters())
    model.checkpoint = a.mode in ("checkpoint", "fsdp2")
    if a.mode == "fsdp2":
        import torch.distributed as dist
        from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, fully_shard

        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29517")
        dist.init_process_group("nccl" if dev.type == "cuda" else "gloo", rank=0, world_size=1)
        if dev.type == "cuda":
            torch.cuda.set_device(dev)
        policy = dict(offload_policy=CPUOffloadPolicy(),
                      mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                                     reduce_dtype=torch.float32))
        for blk in model.blocks:
            fully_shard(blk, **policy)
        fully_shard(model, **policy)
        # The parameters stay on the host: AdamW runs there, fused.
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        autocast = None
    else:
        model.to(dev)
        fused = {"fused": True} if dev.type == "cuda" else {}  # (PyTorch 1.x: no fused AdamW)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, **fused)
        autocast = torch.bfloat16
    gen = torch.Generator().manual_seed(1)
    idx = torch.randint(0, a.vocab, (a.batch, a.seq), generator=gen).to(dev)
    targets = torch.randint(0, a.vocab, (a.batch, a.seq), generator=gen).to(dev)
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    def step():
        if autocast is not None:
            with torch.autocast(dev.type, dtype=autocast):
                out = model(idx, targets)
        else:
            out = model(idx, targets)
        out.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        return out

    times, loss = [], float("nan")
    for _ in range(a.steps):
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        t0 = time.perf_counter()
        out = step()
        times.append(time.perf_counter() - t0)
        loss = float(out.detach())
    step_s = statistics.median(times[2:] if len(times) > 2 else times)
    peak = torch.cuda.max_memory_allocated(dev) / 2**30 if dev.type == "cuda" else float("nan")
    result = {"mode": a.mode, "step_s": step_s, "tokens_per_s": a.batch * a.seq / step_s,
              "peak_gib": peak, "loss": loss, "params": params, "steps": a.steps}
    if a.kernel_times:
        result["kernel_seconds"], result["top_kernels"] = kernel_times(
            torch, step, 2, dev.type == "cuda")
    if a.mode == "fsdp2":
        import torch.distributed as dist
        dist.destroy_process_group()
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mode", required=True, choices=["eager", "checkpoint", "fsdp2"])
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--layers", type=int, default=24)
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--vocab", type=int, default=50304)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--device", default="cuda")
    p.add_argument("--kernel-times", action="store_true",
                   help="profile two more steps: GPU time per step by kind of kernel")
    a = p.parse_args()
    try:
        result = run(a)
    except Exception as e:  # one line for the table, whatever failed
        result = {"mode": a.mode, "error": f"{type(e).__name__}: {e}".splitlines()[0][:200]}
    print(json.dumps(result))
    return 0 if "error" not in result else 1


if __name__ == "__main__":
    sys.exit(main())
