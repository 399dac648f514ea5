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
from .propagate import Assignment
from .redistribute import group_name
from .search import AutoParallel


def _unsplit(layout: TensorLayout) -> list[str]:
    split = {a for d in layout.dims for a in d}
    return [a for a in layout.mesh.names if a not in split]


def reduce_gradient(grad: Tensor, layout: TensorLayout, skip: Optional[str] = None) -> Tensor:
    """``grad`` summed over the mesh axes that do not split its parameter (but ``skip``)."""
    mesh = layout.mesh
    for axis in _unsplit(layout):
        if axis != skip and mesh.axis_size(axis) > 1:
            grad = apply(ops.ALL_REDUCE, grad, group=group_name(mesh, axis),
                         group_size=mesh.axis_size(axis), reduction="sum")
    return grad


def _collective(op: str, x: np.ndarray, mesh: Mesh, axis: str, **attrs: Any) -> np.ndarray:
    return apply(op, Tensor(x), group=group_name(mesh, axis), group_size=mesh.axis_size(axis),
                 **attrs).numpy()


class _ShardedState:
    """ZeRO-1 (MindSpore's ``enable_parallel_optimizer``) for one parameter block copied over
    mesh ``axis``: the momentum holds only this rank's slice of the flattened block; the
    gradient is reduce-scattered over ``axis`` (each rank receives the sum of its slice),
    the slice updated, and the updated slices all-gathered back into the block."""

    def __init__(self, block: np.ndarray, mesh: Mesh, axis: str) -> None:
        self.mesh, self.axis, self.shape = mesh, axis, block.shape
        n = mesh.axis_size(axis)
        self.padded = -(-block.size // n) * n
        self.slice = self.padded // n
        self.start = mesh.coords(groups.world().rank)[axis] * self.slice
        self.velocity = np.zeros(self.slice, block.dtype)

    def update(self, block: np.ndarray, grad: np.ndarray, lr: float, momentum: float) -> np.ndarray:
        flat = np.zeros(self.padded, grad.dtype)
        flat[:grad.size] = grad.reshape(-1)
        mine = _collective(ops.REDUCE_SCATTER, flat, self.mesh, self.axis, reduction="sum")
        self.velocity = momentum * self.velocity + mine
        values = np.zeros(self.padded, block.dtype)
        values[:block.size] = block.reshape(-1)
        updated = values[self.start:self.start + self.slice] - lr * self.velocity
        whole = _collective(ops.ALL_GATHER, updated, self.mesh, self.axis)
        return whole[:block.size].reshape(self.shape)


class ShardedSGD:
    """SGD (with ``momentum``) on a sharded loss: ``step(*batch)`` returns the loss (whole)
    and updates this rank's blocks of the parameters the loss uses (``trained``);
    :meth:`parameters` gathers them whole.  ``shard_optimizer=True`` (ZeRO-1) keeps the
    momentum of a parameter copied over several ranks split over them
    (:class:`_ShardedState`).  Other tensors the loss captures are constants, sharded alike.  The
    strategies are the loss function's own (``mskernel.shard``), those of ``plan``, an
    :class:`~.search.AutoParallel` of the same function, or ``strategies`` (node index →
    strategy, on ``mesh``)."""

    def __init__(self, loss_fn: Any, *example: Any, learning_rate: float,
                 mesh: Optional[Mesh] = None, plan: Optional[AutoParallel] = None,
                 strategies: Optional[dict[int, Assignment]] = None, momentum: float = 0.0,
                 shard_optimizer: bool = False) -> None:
        fixed = strategies
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
        self.momentum = momentum
        self._velocity = [np.zeros_like(b.numpy()) for b in self.blocks]
        self._sharded: dict[int, _ShardedState] = {}
        if shard_optimizer:
            mesh = self.program.mesh
            for k, (block, layout) in enumerate(zip(self.blocks, self.param_layouts)):
                copied = [a for a in _unsplit(layout) if mesh.axis_size(a) > 1]
                if copied:
                    self._sharded[k] = _ShardedState(block.numpy(), mesh, copied[0])
                    self._velocity[k] = np.zeros(0, block.numpy().dtype)

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
        for k, (i, g, layout) in enumerate(zip(self._trained, grads, self.param_layouts)):
            block = self._blocks[i].numpy()
            state = self._sharded.get(k)
            if state is not None:
                grad = reduce_gradient(g, layout, skip=state.axis).numpy()
                block = state.update(block, grad, self.learning_rate, self.momentum)
            else:
                self._velocity[k] = self.momentum * self._velocity[k] + reduce_gradient(
                    g, layout).numpy()
                block = block - self.learning_rate * self._velocity[k]
            self._blocks[i] = Tensor(block)
        return float(loss.numpy()) * n

    def optimizer_bytes(self) -> int:
        """Bytes of optimizer state (momentum) this rank holds."""
        return sum(v.nbytes for v in self._velocity) + sum(
            s.velocity.nbytes for s in self._sharded.values())

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
