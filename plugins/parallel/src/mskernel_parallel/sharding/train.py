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
from mskernel_sdk import Parameter, Tensor, apply

import mskernel

from .. import groups, ops
from ..errors import ShardingError
from .layout import Mesh, TensorLayout, assemble
from .partition import describe
from .program import ShardedProgram, ensure_groups
from .redistribute import group_name
from .search import AutoParallel


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
    this rank's blocks of the parameters the loss uses (``trained``); :meth:`parameters`
    gathers them whole.  Other tensors the loss captures are constants, sharded alike.  The
    strategies are the loss function's own (``mskernel.shard``), or those of ``plan``, an
    :class:`~.search.AutoParallel` of the same function."""

    def __init__(self, loss_fn: Any, *example: Any, learning_rate: float,
                 mesh: Optional[Mesh] = None, plan: Optional[AutoParallel] = None) -> None:
        fixed = None
        if plan is not None:
            mesh, fixed = plan.mesh, plan.strategies
        self.program = ShardedProgram(loss_fn, *example, mesh=mesh, fixed=fixed)
        self.learning_rate = learning_rate
        captured = self.program.parameters
        layouts = self.program.input_layouts[self.program.num_args:]
        self._blocks = [Tensor(layout.shard(t.numpy(), self.program.rank))
                        for t, layout in zip(captured, layouts)]
        self._trained = [i for i, t in enumerate(captured) if isinstance(t, Parameter)]
        #: the parameters trained, and their layouts
        self.trained: list[Parameter] = [captured[i] for i in self._trained]
        self.param_layouts = [layouts[i] for i in self._trained]
        if self.program.mesh.size > 1:
            ensure_groups(self.program.mesh)

    @property
    def blocks(self) -> list[Tensor]:
        """This rank's blocks of ``trained``."""
        return [self._blocks[i] for i in self._trained]

    def step(self, *batch: Any) -> float:
        program, n = self.program, self.program.mesh.size
        local = program.local_arguments(*batch)[:program.num_args]
        captured = list(self._blocks)

        def objective(*params: Tensor) -> Tensor:
            for i, p in zip(self._trained, params):
                captured[i] = p
            return program(*local, *captured) * (1.0 / n)

        positions = tuple(range(len(self._trained)))
        loss, grads = mskernel.value_and_grad(objective, grad_position=positions)(*self.blocks)
        for i, g, layout in zip(self._trained, grads, self.param_layouts):
            update = self.learning_rate * reduce_gradient(g, layout).numpy()
            self._blocks[i] = Tensor(self._blocks[i].numpy() - update)
        return float(loss.numpy()) * n

    def describe(self) -> str:
        """The plan: every op's strategy and the collectives of this rank's graph."""
        return describe(self.program.partition)

    def load(self, whole: dict[str, np.ndarray]) -> None:
        """Set the trained parameters from whole tensors by name (each rank keeps its
        blocks)."""
        missing = [p.name for p in self.trained if p.name not in whole]
        if missing:
            raise ShardingError(f"no values for the parameters {missing}")
        for i, p, layout in zip(self._trained, self.trained, self.param_layouts):
            value = np.asarray(whole[p.name])
            if value.shape != tuple(p.shape):
                raise ShardingError(f"{p.name!r} has shape {list(p.shape)}; the value given has "
                                    f"{list(value.shape)}")
            dtype = self._blocks[i].numpy().dtype
            self._blocks[i] = Tensor(layout.shard(value.astype(dtype), self.program.rank))

    def parameters(self) -> list[np.ndarray]:
        """Every trained parameter whole (each rank gathers every block: call on every
        rank)."""
        out = []
        world = groups.world()
        for block, layout, p in zip(self.blocks, self.param_layouts, self.trained):
            parts = world.all_gather(block.numpy()[None])
            out.append(assemble(list(parts), layout, p.shape))
        return out
