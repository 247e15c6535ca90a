#!/usr/bin/env python3
"""Writes seed inputs for the runtime's fuzz targets (test/fuzz/runtime/).

  make_seeds.py OUT_DIR

creates OUT_DIR/npy, OUT_DIR/tokens and OUT_DIR/checkpoint, each holding a
few small valid inputs (and a few near misses) in the layout its target
reads: npy_fuzz takes an .npy file; tokens_fuzz a knob byte then a token
file; checkpoint_fuzz manifest.json, a NUL, then tensors.bin, for the
program in checkpoint_fuzz.cpp (params w float32[2, 3], b float32[3], state
w.m float32[2, 3], model "fuzz", optimizer adamw). Standard library only.
"""
import os
import struct
import sys
import zlib


def npy(descr, shape, payload, major=1, minor=0):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    prefix = 10 if major == 1 else 12
    total = (prefix + len(d) + 1 + 63) // 64 * 64
    hlen = total - prefix
    head = b"\x93NUMPY" + bytes([major, minor])
    head += struct.pack("<H" if major == 1 else "<I", hlen)
    return head + (d + " " * (hlen - len(d) - 1) + "\n").encode() + payload


def llmc(tokens, magic, version, width):
    header = struct.pack("<3i", magic, version, len(tokens)) + bytes(1024 - 12)
    return header + struct.pack("<%d%s" % (len(tokens), "H" if width == 2 else "I"), *tokens)


def identity(model, tensors):
    """FNV-1a 64 over the byte string runtime/io/checkpoint.cpp documents."""
    h = 0xCBF29CE484222325

    def add(b):
        nonlocal h
        for c in b:
            h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF

    def u64(v):
        add(struct.pack("<Q", v))

    def s(v):
        u64(len(v.encode()))
        add(v.encode())

    s("hmrt-program-identity-1")
    s(model)
    u64(len(tensors))
    for kind, name, dtype, shape in sorted(tensors, key=lambda t: (t[0], t[1].encode())):
        u64(kind)
        s(name)
        s(dtype)
        u64(len(shape))
        for d in shape:
            u64(d)
    return "%016x" % h


def checkpoint(step, recorded=True, version=2):
    tensors = [(0, "w", "float32", [2, 3]), (0, "b", "float32", [3]), (1, "w.m", "float32", [2, 3])]
    values = {"w": [0.5 * i for i in range(6)], "b": [1.0, -2.0, 3.0], "w.m": [0.0] * 6}
    data, lines, at = b"", [], 0
    for kind, name, dtype, shape in tensors:
        raw = struct.pack("<%df" % len(values[name]), *values[name])
        at = (len(data) + 63) // 64 * 64
        data += bytes(at - len(data)) + raw
        lines.append('{"name": "%s", "kind": "%s", "dtype": "%s", "shape": [%s], "offset": %d, '
                     '"bytes": %d, "crc32": %d}' % (name, "state" if kind else "param", dtype,
                                                   ", ".join(map(str, shape)), at, len(raw),
                                                   zlib.crc32(raw)))
    text = '{\n  "format": "hmrt-checkpoint",\n  "format_version": %d,\n  "model": "fuzz",\n' % version
    text += '  "program_identity": "%s",\n' % identity("fuzz", tensors)
    if recorded:
        text += ('  "program_abi_version": 3,\n  "optimizer": "adamw",\n  "hyperparams": {"lr": '
                 '0.00100000005, "beta1": 0, "beta2": 0, "eps": 0, "weight_decay": 0, "momentum": 0, '
                 '"clip_norm": 0, "min_lr": 0, "lr_schedule": "constant", "warmup_steps": 0, '
                 '"decay_steps": 0},\n')
    else:
        text += '  "program_abi_version": null,\n  "optimizer": null,\n  "hyperparams": null,\n'
    text += ('  "step": %d,\n  "data_position": %d,\n  "seed": 1,\n  "data_file": "tensors.bin",\n'
             '  "data_bytes": %d,\n  "tensors": [\n    %s\n  ],\n  ' % (step, step, len(data),
                                                                     ",\n    ".join(lines)))
    text += '"manifest_crc32": %d\n}\n' % zlib.crc32(text.encode())
    return text.encode() + b"\0" + data


def main():
    out = sys.argv[1]
    seeds = {
        "npy": {
            "f32_2x3.npy": npy("<f4", [2, 3], struct.pack("<6f", *range(6))),
            "i64_scalar.npy": npy("<i8", [], struct.pack("<q", -7)),
            "bool.npy": npy("|b1", [3], b"\x01\x00\x01"),
            "u2_v2.npy": npy("<u2", [2], struct.pack("<2H", 1, 65535), major=2),
            "f2_v3.npy": npy("<f2", [1, 1], b"\x00\x3c", major=3),
            "empty.npy": npy("<f8", [0, 4], b""),
            "v1_1.npy": npy("<f4", [1], b"\x00\x00\x80\x3f", minor=1),
        },
        "tokens": {
            "raw_u16": b"\x00" + struct.pack("<20H", *[(3 * i + 1) % 8 for i in range(20)]),
            "raw_u32_vocab": b"\x82" + struct.pack("<12I", *range(100000, 100012)),
            "llmc_gpt2": b"\x14" + llmc(list(range(40)), 20240520, 1, 2),
            "llmc_llama3": b"\x00" + llmc(list(range(200000, 200020)), 20240801, 7, 4),
            "odd": b"\x01\x01\x02\x03",
        },
        "checkpoint": {
            "step3": checkpoint(3),
            "initial_state": checkpoint(0, recorded=False),
            "format1": checkpoint(3, version=1),
        },
    }
    for target, files in seeds.items():
        os.makedirs(os.path.join(out, target), exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(out, target, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
