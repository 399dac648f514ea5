"""The models every export is checked on: the anchor workloads (LeNet-5, the MLP,
resnet_small, the transformer encoder layer, from ``benchmarks/workloads``) at small batch
sizes, a jitted function with a tensor-dependent ``if`` and ``while``, and a cell whose
branches and loop read its parameters."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

import mskernel
from mskernel import nn
from workloads import mskernel_models as anchors
from workloads.spec import D_FF, WORKLOADS

#: name → (builder, input shape, the longest reduction in the model)
ANCHORS: dict[str, tuple[Callable[[], Any], tuple[int, ...], int]] = {
    "lenet": (anchors.LeNet5, (2, 1, 32, 32), 400),
    "mlp": (lambda: anchors.mlp(WORKLOADS["mlp_b128"]), (4, 784), 1024),
    "resnet_small": (anchors.ResNetSmall, (2, 3, 32, 32), 32 * 32 * 2),
    "transformer": (anchors.transformer, (2, 16, 256), D_FF),
}


def build(name: str) -> Any:
    """The anchor model ``name`` with its weights seeded, in inference mode."""
    mskernel.random.set_seed(0)
    return ANCHORS[name][0]().set_train(False)


def example(name: str, rng: np.random.Generator) -> np.ndarray:
    return rng.standard_normal(ANCHORS[name][1]).astype(np.float32)


def float32_tolerance(name: str, expected: np.ndarray) -> dict[str, float]:
    """float32 rounding grown over the model's longest reduction, relative to the size of
    its outputs."""
    scale = float(np.abs(expected).max()) or 1.0
    return {"rtol": 1e-5, "atol": 8 * np.finfo(np.float32).eps * math.sqrt(ANCHORS[name][2])
            * scale}


@mskernel.jit
def branchy(x, n):
    """A tensor-dependent ``if`` and a ``while`` whose trip count is an input."""
    y = x * 2
    if y.sum() > 0:
        y = y + 1
    else:
        y = y - 1
    i = 0
    while i < n:
        y = y * 0.5 + x
        i += 1
    return y, i


class Gate(nn.Cell):
    """Parameters read inside a tensor-dependent ``if`` and a ``while``."""

    def __init__(self) -> None:
        super().__init__()
        mskernel.random.set_seed(0)
        self.fc = nn.Dense(4, 4)
        self.scale = mskernel.Parameter(np.full(4, 2.0, np.float32), name="scale")

    def construct(self, x: Any) -> Any:
        y = self.fc(x)
        if y.sum() > 0:
            y = y * self.scale
        else:
            y = y - self.scale
        k = 0
        while k < 3:
            y = y + self.fc(y) * 0.1
            k += 1
        return y
