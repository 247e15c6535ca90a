#!/usr/bin/env python3
"""rename_graph.py IN.onnx OUT.onnx NAME: IN with its graph renamed NAME."""
import sys

import onnx

model = onnx.load(sys.argv[1])
model.graph.name = sys.argv[3]
onnx.save(model, sys.argv[2])
