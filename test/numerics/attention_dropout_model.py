#!/usr/bin/env python3
"""Writes a one-layer causal self-attention model whose attention
probabilities go through Dropout(0.2) in training, as torch.onnx.export
writes nn.MultiheadAttention-style code: OUT/model.onnx (x -> Q, K, V
projections -> heads -> Q K^T * scale -> causal Where -> Softmax -> Dropout
-> times V -> output projection -> cross-entropy against y), OUT/x.npy and
OUT/y.npy. Seeded, so the files are the same on every run.

usage: attention_dropout_model.py OUT
"""
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(11)
    B, T, C, H, classes = 2, 16, 32, 4, 10
    D = C // H
    inits, nodes = [], []

    def const(name, value, dtype):
        nodes.append(helper.make_node("Constant", [], [name], name=name,
                                      value=numpy_helper.from_array(np.array(value, dtype), name)))
        return name

    for w in ("wq", "wk", "wv", "wo"):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal((C, C)) / np.sqrt(C)).astype(np.float32), w))
    inits.append(numpy_helper.from_array(
        (rng.standard_normal((C, classes)) / np.sqrt(C)).astype(np.float32), "head"))
    heads = const("heads", [B, T, H, D], np.int64)
    for n in ("q", "k", "v"):
        nodes += [helper.make_node("MatMul", ["x", "w" + n], [n + "p"], name=n + "_proj"),
                  helper.make_node("Reshape", [n + "p", heads], [n + "4"], name=n + "_heads")]
    nodes += [
        helper.make_node("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3], name="q_t"),
        helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1], name="k_t"),
        helper.make_node("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3], name="v_t"),
        helper.make_node("MatMul", ["qt", "kt"], ["s"], name="scores"),
        helper.make_node("Mul", ["s", const("scale", 1.0 / np.sqrt(D), np.float32)], ["ss"],
                         name="scale_mul"),
        helper.make_node("Where", [const("causal", np.triu(np.ones((T, T), bool), 1), bool),
                                   const("ninf", -np.inf, np.float32), "ss"], ["sm"],
                         name="mask"),
        helper.make_node("Softmax", ["sm"], ["p"], axis=-1, name="softmax"),
        helper.make_node("Dropout", ["p", const("ratio", 0.2, np.float32),
                                     const("training", True, bool)], ["pd"], name="attn_drop"),
        helper.make_node("MatMul", ["pd", "vt"], ["o"], name="pv"),
        helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3], name="o_t"),
        helper.make_node("Reshape", ["ot", const("flat", [B, T, C], np.int64)], ["y3"],
                         name="merge"),
        helper.make_node("MatMul", ["y3", "wo"], ["proj"], name="out_proj"),
        helper.make_node("MatMul", ["proj", "head"], ["logits3"], name="head"),
        helper.make_node("Reshape", ["logits3", const("rows", [B * T, classes], np.int64)],
                         ["logits"], name="rows"),
        helper.make_node("Reshape", ["y", const("ys", [B * T], np.int64)], ["yf"], name="ys"),
        helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "yf"], ["loss"], name="loss"),
    ]
    graph = helper.make_graph(
        nodes, "attention_dropout",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, T, C]),
         helper.make_tensor_value_info("y", TensorProto.INT64, [B, T])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, out / "model.onnx")
    np.save(out / "x.npy", rng.standard_normal((B, T, C)).astype(np.float32))
    np.save(out / "y.npy", rng.integers(0, classes, (B, T)).astype(np.int64))


if __name__ == "__main__":
    main()
