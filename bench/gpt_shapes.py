#!/usr/bin/env python3
"""Writes a GPT-2-style training graph of any size as ONNX, for planning.

The weights are external data in one file that is created sparse (its size
set, nothing written), so a 1.3 B-parameter model costs no disk and no time:
planning needs shapes only and hmcc never reads the weights unless it
writes an initial state (-o). The graph is what torch.onnx.export writes for
a nanoGPT block (pre-norm, fused QKV, causal softmax attention, GELU(erf)
MLP, tied-free LM head, cross-entropy), built with onnx.helper directly.

usage: gpt_shapes.py OUT_DIR [--layers 24] [--width 2048] [--heads 16]
                     [--vocab 50304] [--batch 8] [--seq 1024]
The defaults are the 1.3 B configuration of the planning benchmarks.
"""
import argparse
import math
import os
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, weights_name):
        self.nodes, self.inits, self.offset = [], [], 0
        self.weights_name = weights_name
        self.count = 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def weight(self, name, shape):
        """A float32 initializer stored as external data at the next offset."""
        t = TensorProto()
        t.name, t.data_type = name, TensorProto.FLOAT
        t.dims.extend(shape)
        t.data_location = TensorProto.EXTERNAL
        nbytes = 4 * math.prod(shape)
        for k, v in (("location", self.weights_name), ("offset", str(self.offset)),
                     ("length", str(nbytes))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.offset += nbytes
        self.inits.append(t)
        return name

    def const(self, value, dtype=np.int64):
        """A constant: a Constant node, as torch.onnx.export writes scalars
        and shapes (a float initializer the loss depends on would be a
        trainable parameter)."""
        name = self.name("const")
        self.nodes.append(helper.make_node(
            "Constant", [], [name], name=name,
            value=numpy_helper.from_array(np.array(value, dtype), name)))
        return name

    def op(self, kind, inputs, **attrs):
        out = self.name(kind.lower())
        self.nodes.append(helper.make_node(kind, inputs, [out], name=out, **attrs))
        return out


def block(b, x, i, a):
    B, T, C, H = a.batch, a.seq, a.width, a.heads
    p = f"h{i}."
    h = b.op("LayerNormalization", [x, b.weight(p + "ln1.weight", [C]),
                                    b.weight(p + "ln1.bias", [C])], axis=-1, epsilon=1e-5)
    qkv = b.op("Add", [b.op("MatMul", [h, b.weight(p + "attn.c_attn.weight", [C, 3 * C])]),
                       b.weight(p + "attn.c_attn.bias", [3 * C])])
    q, k, v = (b.name("split") for _ in range(3))
    b.nodes.append(helper.make_node("Split", [qkv, b.const([C, C, C])], [q, k, v], axis=2,
                                    name=b.name("split")))
    heads = b.const([B, T, H, C // H])
    q, k, v = (b.op("Transpose", [b.op("Reshape", [t, heads])], perm=[0, 2, 1, 3])
               for t in (q, k, v))
    att = b.op("MatMul", [q, b.op("Transpose", [k], perm=[0, 1, 3, 2])])
    att = b.op("Mul", [att, b.const(1.0 / math.sqrt(C // H), np.float32)])
    att = b.op("Where", [a.mask, b.const(float("-inf"), np.float32), att])
    att = b.op("Softmax", [att], axis=-1)
    y = b.op("Transpose", [b.op("MatMul", [att, v])], perm=[0, 2, 1, 3])
    y = b.op("Reshape", [y, b.const([B, T, C])])
    y = b.op("Add", [b.op("MatMul", [y, b.weight(p + "attn.c_proj.weight", [C, C])]),
                     b.weight(p + "attn.c_proj.bias", [C])])
    x = b.op("Add", [x, y])
    h = b.op("LayerNormalization", [x, b.weight(p + "ln2.weight", [C]),
                                    b.weight(p + "ln2.bias", [C])], axis=-1, epsilon=1e-5)
    h = b.op("Add", [b.op("MatMul", [h, b.weight(p + "mlp.c_fc.weight", [C, 4 * C])]),
                     b.weight(p + "mlp.c_fc.bias", [4 * C])])
    gelu = b.op("Mul", [b.op("Mul", [h, b.op("Add", [b.op("Erf", [
        b.op("Div", [h, b.const(math.sqrt(2.0), np.float32)])]), b.const(1.0, np.float32)])]),
        b.const(0.5, np.float32)])
    h = b.op("Add", [b.op("MatMul", [gelu, b.weight(p + "mlp.c_proj.weight", [4 * C, C])]),
                     b.weight(p + "mlp.c_proj.bias", [C])])
    return b.op("Add", [x, h])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    for name, default in (("layers", 24), ("width", 2048), ("heads", 16), ("vocab", 50304),
                          ("batch", 8), ("seq", 1024)):
        ap.add_argument("--" + name, type=int, default=default)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    b = Builder("weights.bin")
    B, T, C = a.batch, a.seq, a.width
    # The causal mask, built in the graph from constants (folded at import).
    ones = b.op("ConstantOfShape", [b.const([T, T])],
                value=numpy_helper.from_array(np.array([1.0], np.float32)))
    a.mask = b.op("Equal", [b.op("Trilu", [ones], upper=0), b.const(0.0, np.float32)])

    tok = b.op("Gather", [b.weight("wte.weight", [a.vocab, C]), "idx"])
    pos = b.op("Gather", [b.weight("wpe.weight", [T, C]), b.const(np.arange(T))])
    x = b.op("Add", [tok, pos])
    for i in range(a.layers):
        x = block(b, x, i, a)
    x = b.op("LayerNormalization", [x, b.weight("ln_f.weight", [C]),
                                    b.weight("ln_f.bias", [C])], axis=-1, epsilon=1e-5)
    logits = b.op("MatMul", [x, b.weight("lm_head.weight", [C, a.vocab])])
    logits = b.op("Reshape", [logits, b.const([B * T, a.vocab])])
    targets = b.op("Reshape", ["targets", b.const([B * T])])
    b.nodes.append(helper.make_node("SoftmaxCrossEntropyLoss", [logits, targets], ["loss"],
                                    name="loss"))
    graph = helper.make_graph(
        b.nodes, f"gpt_{a.layers}x{C}",
        [helper.make_tensor_value_info("idx", TensorProto.INT64, [B, T]),
         helper.make_tensor_value_info("targets", TensorProto.INT64, [B, T])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, out / "model.onnx")
    with open(out / "weights.bin", "wb") as f:  # sparse: the size, no data
        f.truncate(b.offset)
    params = b.offset // 4
    print(f"{out / 'model.onnx'}: {a.layers} layers, width {C}, {a.heads} heads, vocab "
          f"{a.vocab}, batch {B}x{T}: {params / 1e9:.2f} B parameters "
          f"({b.offset / 2**30:.1f} GiB of weights, not written)")


if __name__ == "__main__":
    main()
