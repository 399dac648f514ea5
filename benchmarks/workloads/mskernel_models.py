"""The anchor workloads in mskernel, written as a user of its ``nn`` plugin would: cells and
layers from ``mskernel.nn``, ``nn.CrossEntropyLoss`` / ``nn.MSELoss``, ``nn.Momentum`` and
``nn.TrainOneStepCell(nn.WithLossCell(net, loss), optimizer)``.  Eager mode (PyNative) calls
the cells directly; graph mode compiles the whole training step — forward, loss, backward,
update — with ``mskernel.jit`` (the network alone for inference).

The layers are those of :mod:`.torch_models`, attribute for attribute; :func:`torch_names`
maps the parameters whose names differ (batch norm's and layer norm's).  Execution goes to
the default device — the ``cpu`` backend when mskernel-cpu is installed, else the reference
backend — and :func:`placement` says which backend ran which ops.
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from typing import Any, Callable

import mskernel
import numpy as np
from mskernel import nn
from mskernel.runtime.executor import resolve_backends
from mskernel.runtime.partition import partition

from .spec import (CLASSES, D_FF, D_MODEL, HEADS, LEARNING_RATE, MOMENTUM,
                    RESNET_BLOCKS, WEIGHT_SEED, Workload)


class LeNet5(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid", has_bias=True)
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid", has_bias=True)
        self.fc1 = nn.Dense(16 * 5 * 5, 120, activation="relu")
        self.fc2 = nn.Dense(120, 84, activation="relu")
        self.fc3 = nn.Dense(84, CLASSES)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.flatten = nn.Flatten()

    def construct(self, x: Any) -> Any:
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        return self.fc3(self.fc2(self.fc1(self.flatten(x))))


def mlp(workload: Workload) -> nn.Cell:
    layers: list[nn.Cell] = []
    for fan_in, fan_out in pairwise(workload.mlp_sizes):
        layers += [nn.Dense(fan_in, fan_out), nn.ReLU()]
    return nn.SequentialCell(layers[:-1])


def conv3x3(c_in: int, c_out: int, stride: int) -> nn.Cell:
    return nn.Conv2d(c_in, c_out, 3, stride, pad_mode="pad", padding=1)


class BasicBlock(nn.Cell):
    def __init__(self, c_in: int, c_out: int, stride: int) -> None:
        super().__init__()
        self.conv1 = conv3x3(c_in, c_out, stride)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = conv3x3(c_out, c_out, 1)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.relu = nn.ReLU()
        self.shortcut = None
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.SequentialCell(
                nn.Conv2d(c_in, c_out, 1, stride, pad_mode="valid"), nn.BatchNorm2d(c_out))

    def construct(self, x: Any) -> Any:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + (x if self.shortcut is None else self.shortcut(x)))


class ResNetSmall(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = conv3x3(3, 16, 1)
        self.bn = nn.BatchNorm2d(16)
        self.relu = nn.ReLU()
        self.blocks = nn.SequentialCell([BasicBlock(*block) for block in RESNET_BLOCKS])
        self.fc = nn.Dense(RESNET_BLOCKS[-1][1], CLASSES)

    def construct(self, x: Any) -> Any:
        x = self.blocks(self.relu(self.bn(self.conv(x))))
        return self.fc(x.mean((2, 3)))


def transformer() -> nn.Cell:
    return nn.TransformerEncoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, batch_first=True)


_MODELS: dict[str, Callable[[Workload], nn.Cell]] = {
    "lenet5": lambda w: LeNet5(), "inference_lenet": lambda w: LeNet5(), "mlp": mlp,
    "resnet_small": lambda w: ResNetSmall(), "transformer": lambda w: transformer()}

#: mskernel's names of normalisation parameters → PyTorch's
_TORCH_SUFFIXES = {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean",
                   "moving_variance": "running_var"}


def build_model(workload: Workload) -> nn.Cell:
    mskernel.random.set_seed(WEIGHT_SEED)
    return _MODELS[workload.name](workload)


def torch_names(net: nn.Cell) -> dict[str, str]:
    """``{mskernel parameter name: PyTorch parameter name}`` where the two differ."""
    names = {}
    for name, _ in net.parameters_and_names():
        head, _, last = name.rpartition(".")
        if last in _TORCH_SUFFIXES:
            names[name] = f"{head}.{_TORCH_SUFFIXES[last]}" if head else _TORCH_SUFFIXES[last]
    return names


def step_cell(workload: Workload, net: nn.Cell) -> nn.Cell:
    """What one step runs: the training step cell, or the network in inference mode."""
    if not workload.training:
        return net.set_train(False)
    loss = nn.MSELoss() if workload.name == "transformer" else nn.CrossEntropyLoss()
    optimizer = nn.Momentum(net.trainable_params(), LEARNING_RATE, MOMENTUM)
    return nn.TrainOneStepCell(nn.WithLossCell(net, loss), optimizer).set_train(True)


def make_step(workload: Workload, cell: nn.Cell, graph: bool) -> Callable[[], Any]:
    """One step of :func:`step_cell`'s ``cell`` on the workload's batch: the loss as a float,
    or the logits as a NumPy array.  ``graph``: compile it with ``mskernel.jit``."""
    run = mskernel.jit(cell) if graph else cell
    x, y = (mskernel.Tensor(a) for a in workload.batch_arrays())
    if not workload.training:
        return lambda: run(x).numpy()
    return lambda: float(run(x, y))


def placement(workload: Workload, cell: nn.Cell, graph: bool) -> dict[str, Any]:
    """Which backend runs how many ops of one step, and the ops left to a fallback backend.

    Graph mode: the placement of the compiled step's optimised graph.  Eager mode runs the
    traced step's ops one by one, each placed alone; their placement is the same as that of
    the traced, unoptimised graph."""
    arrays = workload.batch_arrays() if workload.training else workload.batch_arrays()[:1]
    lowered = mskernel.jit(cell).lower(*(mskernel.Tensor(a) for a in arrays))
    placed = lowered.optimized_graph if graph else lowered.graph
    plan = partition(placed, resolve_backends([lowered.backend]), "allow")
    return {"device": lowered.backend,
            "backends": dict(Counter(p.backend for p in plan.placements)),
            "fallback_ops": sorted({p.node.op for p in plan.fallbacks})}


def describe() -> dict[str, Any]:
    info: dict[str, Any] = {"version": mskernel.__version__, "numpy": np.__version__}
    try:
        import mskernel_cpu
    except ImportError:
        return info
    return info | {"mskernel_cpu_threads": mskernel_cpu.get_num_threads()}
