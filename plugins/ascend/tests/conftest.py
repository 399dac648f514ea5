"""Shared graphs of the Ascend plugin's tests."""

from __future__ import annotations

import numpy as np
import pytest
from mskernel_sdk import Graph, GraphBuilder, tensor_type


def conv_net() -> Graph:
    """conv + bias + relu → conv + relu → flatten → dense (matmul + bias) → exp → sum."""
    b = GraphBuilder("conv_net")
    x = b.input(tensor_type("f32", (2, 3, 8, 8)), "x")
    w1 = b.input(tensor_type("f32", (5, 3, 3, 3)), "w1")
    b1 = b.input(tensor_type("f32", (5,)), "b1")
    w2 = b.input(tensor_type("f32", (4, 5, 3, 3)), "w2")
    wd = b.input(tensor_type("f32", (144, 10)), "wd")
    bd = b.input(tensor_type("f32", (10,)), "bd")
    y = b.op("relu", b.op("add", b.op("conv", x, w1, padding=(1, 1, 1, 1)),
                          b.op("reshape", b1, shape=(5, 1, 1))))
    y = b.op("relu", b.op("conv", y, w2))
    logits = b.op("add", b.op("matmul", b.op("reshape", y, shape=(2, 144)), wd), bd)
    return b.build([b.op("sum", b.op("exp", b.op("mul", logits, logits)), axes=(1,))])


def arguments(graph: Graph, seed: int = 0, scale: float = 0.3) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(scale * rng.standard_normal(v.type.shape)).astype(np.float32) for v in graph.inputs]


@pytest.fixture
def net() -> Graph:
    return conv_net()
