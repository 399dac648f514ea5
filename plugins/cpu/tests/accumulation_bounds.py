"""Tolerances of graphs that multiply, sum and add biases (the GEMM fusion and transpose
folding tests): bounds that hold whatever order the kernels sum in, on any machine."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from mskernel.ir import GraphBuilder, tensor_type
from mskernel.ir.graph import Graph, Node
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import tolerance_for_reduction


#: Ops a graph's products pass through on their way out: activations (slope at most 1.13,
#: GELU's steepest) and sign changes.
_PASS_THROUGH = {"relu": 1.13, "sigmoid": 1.13, "tanh": 1.13, "gelu": 1.13, "silu": 1.13,
                 "neg": 1.0}


def _terms(node: Node) -> int:
    """The terms one output element of ``node`` sums (1: an addition, 0: none)."""
    shapes = [v.type.shape for v in node.inputs]
    if node.op == "matmul":
        return shapes[0][-1]
    if node.op == "conv":
        return shapes[1][1] * math.prod(shapes[1][2:])
    if node.op == "sum":
        axes = node.attrs["axes"]
        return math.prod(shapes[0] if axes is None else [shapes[0][a] for a in axes])
    return 1 if node.op in ("add", "sub") else 0


def accumulation_tolerances(graph: Graph, arrays: Sequence[np.ndarray]) -> list[tuple[float, Any]]:
    """``(rtol, atol)`` of each output of a graph of products, sums, bias adds, reshapes,
    transposes and activations, computed in any order by any kernels (fused or not) against
    the reference: :func:`~mskernel.testing.tolerance_for_reduction` over every term the
    graph sums, the magnitudes being the graph's linear part (activations dropped, signs
    ignored) run in float64 on the inputs' absolute values."""
    b = GraphBuilder("magnitudes")
    env = {v: b.input(tensor_type("f64", v.type.shape)) for v in graph.inputs}
    length, slope = 0, 1.0
    for node in graph.nodes:
        inputs = [env[v] for v in node.inputs]
        if node.op in _PASS_THROUGH:
            env[node.output] = inputs[0]
            slope *= _PASS_THROUGH[node.op]
            continue
        env[node.output] = b.op("add" if node.op == "sub" else node.op, *inputs, **node.attrs)
        length += _terms(node)
    magnitudes = run_graph(b.build([env[v] for v in graph.outputs]),
                           [np.abs(np.asarray(a, np.float64)) for a in arrays])
    return [tolerance_for_reduction(v.type.dtype, length, slope * m)
            for v, m in zip(graph.outputs, magnitudes)]
