"""The cost model: what a propagated plan costs each device, without the devices.

Per device: compute time (matmul FLOPs of each op's blocks at ``flops`` per second, other
ops' bytes at ``bandwidth``), communication time of every redistribution step by the α–β
model (``alpha`` seconds per collective plus the bytes it sends over ``link`` bytes per
second, :func:`.redistribute.step_bytes`) and the bytes of parameters held, checked against
``memory``.  The defaults are one accelerator of a current cluster (an A100-class device on
a 100 GB/s link); the search only compares plans, so the ratios matter more than the units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from mskernel_sdk import TensorType

from .propagate import Propagation
from .redistribute import Step, plan, step_bytes


@dataclass(frozen=True)
class Device:
    flops: float = 100e12          # matmul FLOP/s
    bandwidth: float = 1.5e12      # memory bytes/s for other ops
    link: float = 100e9            # collective bytes/s per device
    alpha: float = 10e-6           # seconds per collective
    memory: float = 80e9           # bytes per device


@dataclass
class Cost:
    """A plan's predicted costs per device."""

    compute_s: float = 0.0
    comm_s: float = 0.0
    comm_bytes: float = 0.0
    param_bytes: float = 0.0
    collectives: list[tuple[str, Step, float]] = field(default_factory=list)

    @property
    def time_s(self) -> float:
        return self.compute_s + self.comm_s

    def fits(self, device: Device) -> bool:
        return self.param_bytes <= device.memory


def _bytes(t: Any, splits: tuple[int, ...]) -> float:
    return t.nbytes / math.prod(splits) if splits else float(t.nbytes)


def cost(prop: Propagation, device: Device = Device(), parameters: int = 0,
         training: bool = True) -> Cost:
    """The costs of ``prop``'s plan; the last ``parameters`` graph inputs are parameters.
    ``training``: a training step — the backward pass costs twice the forward's compute and
    once more its redistributions (each collective's transpose), and each parameter's
    gradient is all-reduced over the mesh axes that do not split it."""
    mesh, out = prop.mesh, Cost()
    first_param = len(prop.graph.inputs) - parameters
    for v, layout in list(zip(prop.graph.inputs, prop.input_layouts))[first_param:]:
        local = _bytes(v.type, layout.splits())
        out.param_bytes += local
        splitting = {a for d in layout.dims for a in d}
        for axis in mesh.names:
            if training and axis not in splitting and mesh.axis_size(axis) > 1:
                step = Step("all_reduce", axis)
                sent = step_bytes(step, local, mesh)
                out.comm_bytes += sent
                out.comm_s += device.alpha + sent / device.link
                out.collectives.append((f"gradient of {v.name or 'a parameter'}", step, sent))
    for index, node in enumerate(prop.graph.nodes):
        if index in prop.constraints:
            wants = [prop.constraints[index]]
            ins = node.inputs[:1]
        else:
            strategy = prop.strategies[index]
            ins = [v for v in node.inputs if isinstance(v.type, TensorType)]
            wants = [strategy.input_layout(i, mesh) for i in range(len(ins))]
            split = strategy.splits(mesh)
            if node.op == "matmul" or node.op == "einsum":
                letters = {c for ls in strategy.sharding.inputs for c in ls if c}
                sizes = {c: n for ls, v in zip(strategy.sharding.inputs, ins)
                         for c, n in zip(ls, v.type.shape) if c}
                out.compute_s += 2 * math.prod(sizes[c] / split.get(c, 1)
                                               for c in letters) / device.flops
            else:
                moved = sum(_bytes(v.type, want.splits()) for v, want in zip(ins, wants))
                out.compute_s += moved / device.bandwidth
        for v, want in zip(ins, wants):
            have = prop.produced(v)
            if have == want:
                continue
            local = _bytes(v.type, have.splits())
            for step in plan(have, want):
                n = mesh.axis_size(step.axis)
                if n == 1 or step.kind == "slice":
                    continue
                times = 2 if training else 1  # forward, and its transpose backward
                sent = step_bytes(step, local, mesh)
                out.comm_bytes += times * sent
                out.comm_s += times * (device.alpha + sent / device.link)
                out.collectives.append((node.op, step, sent))
                if step.kind in ("all_gather",):
                    local *= n
                elif step.kind in ("reduce_scatter",):
                    local /= n
    if training:
        out.compute_s *= 3
    return out
