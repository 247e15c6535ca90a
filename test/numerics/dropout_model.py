#!/usr/bin/env python3
"""Writes a small model whose forward draws dropout masks in training, for
the budget sweep: OUT/model.onnx (x -> 3 x (Gemm, Tanh, Dropout 0.3) ->
Gemm -> cross-entropy loss), OUT/x.npy and OUT/y.npy. Seeded, so the files
are the same on every run.

usage: dropout_model.py OUT
"""
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    width, batch, classes = 32, 8, 10
    inits, nodes = [], []
    inits.append(numpy_helper.from_array(np.array(0.3, np.float32), "ratio"))
    inits.append(numpy_helper.from_array(np.array(True), "training"))
    h = "x"
    fan_in = 16
    for i in range(3):
        w = (rng.standard_normal((fan_in, width)) / np.sqrt(fan_in)).astype(np.float32)
        b = np.zeros(width, np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes += [
            helper.make_node("Gemm", [h, f"w{i}", f"b{i}"], [f"g{i}"], name=f"fc{i}"),
            helper.make_node("Tanh", [f"g{i}"], [f"t{i}"], name=f"tanh{i}"),
            helper.make_node("Dropout", [f"t{i}", "ratio", "training"], [f"d{i}"],
                             name=f"drop{i}"),
        ]
        h, fan_in = f"d{i}", width
    w = (rng.standard_normal((width, classes)) / np.sqrt(width)).astype(np.float32)
    inits.append(numpy_helper.from_array(w, "head"))
    nodes += [
        helper.make_node("MatMul", [h, "head"], ["logits"], name="head"),
        helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "y"], ["loss"], name="loss"),
    ]
    graph = helper.make_graph(
        nodes, "dropout_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 16]),
         helper.make_tensor_value_info("y", TensorProto.INT64, [batch])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, out / "model.onnx")
    np.save(out / "x.npy", rng.standard_normal((batch, 16)).astype(np.float32))
    np.save(out / "y.npy", rng.integers(0, classes, batch).astype(np.int64))


if __name__ == "__main__":
    main()
