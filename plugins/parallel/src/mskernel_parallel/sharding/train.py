"""Training a sharded loss: each rank holds its blocks of the parameters, differentiates its
graph and updates its blocks.

The objective the ranks differentiate is the sum over ranks of what each computes (the
convention of the collectives' derivative rules, :mod:`..rules`).  The loss is whole on every
rank, so each rank seeds its cotangent with ``1 / ranks``; a parameter's gradient is then
summed over the mesh axes that do *not* split it — where the ranks hold copies, each copy
received the part of the gradient that flowed through its rank — and the axes that split it
need nothing: each block's gradient is complete on its rank.  Data parallelism is the case of
parameters copied over ``dp``.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from mskernel_sdk import Tensor, apply

import mskernel

from .. import groups, ops
from .layout import Mesh, TensorLayout, assemble
from .partition import describe
from .program import ShardedProgram, ensure_groups
from .redistribute import group_name


def reduce_gradient(grad: Tensor, layout: TensorLayout) -> Tensor:
    """``grad`` summed over the mesh axes that do not split its parameter."""
    mesh = layout.mesh
    split = {a for d in layout.dims for a in d}
    for axis in mesh.names:
        if axis not in split and mesh.axis_size(axis) > 1:
            grad = apply(ops.ALL_REDUCE, grad, group=group_name(mesh, axis),
                         group_size=mesh.axis_size(axis), reduction="sum")
    return grad


class ShardedSGD:
    """Plain SGD on a sharded loss: ``step(*batch)`` returns the loss (whole) and updates
    this rank's parameter blocks; :meth:`parameters` gathers them whole."""

    def __init__(self, loss_fn: Any, *example: Any, learning_rate: float,
                 mesh: Optional[Mesh] = None) -> None:
        self.program = ShardedProgram(loss_fn, *example, mesh=mesh)
        self.learning_rate = learning_rate
        layouts = self.program.input_layouts
        self.param_layouts = layouts[self.program.num_args:]
        whole = [p.numpy() for p in self.program.parameters]
        self.blocks = [Tensor(layout.shard(w, self.program.rank))
                       for w, layout in zip(whole, self.param_layouts)]
        if self.program.mesh.size > 1:
            ensure_groups(self.program.mesh)

    def step(self, *batch: Any) -> float:
        program, n = self.program, self.program.mesh.size
        local = program.local_arguments(*batch)[:program.num_args]

        def objective(*params: Tensor) -> Tensor:
            return program(*local, *params) * (1.0 / n)

        positions = tuple(range(len(self.blocks)))
        loss, grads = mskernel.value_and_grad(objective, grad_position=positions)(*self.blocks)
        self.blocks = [Tensor(p.numpy() - self.learning_rate * reduce_gradient(g, layout).numpy())
                       for p, g, layout in zip(self.blocks, grads, self.param_layouts)]
        return float(loss.numpy()) * n

    def describe(self) -> str:
        """The plan: every op's strategy and the collectives of this rank's graph."""
        return describe(self.program.partition)

    def parameters(self) -> list[np.ndarray]:
        """Every parameter whole (each rank gathers every block: call on every rank)."""
        out = []
        world = groups.world()
        for block, layout, p in zip(self.blocks, self.param_layouts, self.program.parameters):
            parts = world.all_gather(block.numpy()[None])
            out.append(assemble(list(parts), layout, p.shape))
        return out
