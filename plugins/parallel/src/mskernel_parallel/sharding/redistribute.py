"""Redistribution: the collectives that take a tensor from one layout to another.

:func:`plan` lists the steps, cheapest first by construction:

1. partial values are reduced — by a ``reduce_scatter`` onto a dimension the target splits
   over the same axis (each rank receives only its block), else by an ``all_reduce``;
2. an axis the target no longer uses on a dimension is moved by an ``all_to_all`` to the
   dimension where the target wants it, else removed by an ``all_gather``;
3. an axis the target adds is a local ``slice`` of each rank's own block (no
   communication).

A dimension split over axes ``(a, b)`` can only lose ``b`` first (its blocks along ``b`` are
contiguous within ``a``'s), and gain axes at its end, so steps 2 and 3 work innermost first.
:func:`emit` appends the steps to a graph as the collective ops of :mod:`..ops` and core
``slice``/``transpose`` ops; :func:`step_bytes` is what one rank sends for a step (the cost
model's input).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from mskernel_sdk import GraphBuilder, Value

from .. import ops
from .layout import Mesh, TensorLayout


@dataclass(frozen=True)
class Step:
    """One redistribution step: ``kind`` over mesh ``axis``, on dimension ``dim`` (for an
    all_to_all, ``dim`` is split and ``source`` concatenated)."""

    kind: str  # "all_reduce", "reduce_scatter", "all_to_all", "all_gather", "slice"
    axis: str
    dim: int = -1
    source: int = -1
    reduction: str = "sum"


def plan(src: TensorLayout, dst: TensorLayout) -> list[Step]:
    """The steps from ``src`` to ``dst`` (``dst`` without partial values)."""
    state = [list(d) for d in src.dims]
    steps: list[Step] = []
    for axis, reduction in src.partial:
        used = {a for d in state for a in d}
        target = next((j for j, want in enumerate(dst.dims) if axis not in used
                       and tuple(state[j]) + (axis,) == want[:len(state[j]) + 1]), None)
        if target is None:
            steps.append(Step("all_reduce", axis, reduction=reduction))
        else:
            steps.append(Step("reduce_scatter", axis, target, reduction=reduction))
            state[target].append(axis)
    for i in range(len(state)):
        while tuple(state[i]) != dst.dims[i][:len(state[i])]:
            axis = state[i].pop()
            to = next((j for j, want in enumerate(dst.dims) if j != i
                       and tuple(state[j]) + (axis,) == want[:len(state[j]) + 1]), None)
            if to is None:
                steps.append(Step("all_gather", axis, i))
            else:
                steps.append(Step("all_to_all", axis, to, source=i))
                state[to].append(axis)
    for j, want in enumerate(dst.dims):
        while len(state[j]) < len(want):
            axis = want[len(state[j])]
            steps.append(Step("slice", axis, j))
            state[j].append(axis)
    return steps


def group_name(mesh: Mesh, axis: str) -> str:
    """The process group of the ranks along ``axis`` (the world when the axis spans it)."""
    if mesh.axis_size(axis) == mesh.size:
        return "world"
    return f"mesh{'x'.join(map(str, mesh.shape))}.{axis}"


def step_bytes(step: Step, local_bytes: float, mesh: Mesh) -> float:
    """Bytes one rank sends in ``step``, for an operand of ``local_bytes`` (ring
    algorithms: an all-reduce sends ``2 (n-1)/n`` of it, an all-gather ``n-1`` blocks, a
    reduce-scatter and an all-to-all ``(n-1)/n``)."""
    n = mesh.axis_size(step.axis)
    return {"all_reduce": 2 * (n - 1) / n * local_bytes,
            "reduce_scatter": (n - 1) / n * local_bytes,
            "all_to_all": (n - 1) / n * local_bytes,
            "all_gather": (n - 1) * local_bytes,
            "slice": 0.0}[step.kind]


def _moved(b: GraphBuilder, x: Value, dim: int, run: Callable[[Value], Value]) -> Value:
    """``run`` (a collective along axis 0) applied along ``dim``."""
    if dim == 0:
        return run(x)
    rank = len(x.type.shape)
    perm = (dim,) + tuple(i for i in range(rank) if i != dim)
    back = tuple(perm.index(i) for i in range(rank))
    return b.op("transpose", run(b.op("transpose", x, perm=perm)), perm=back)


class Emitter:
    """Appends redistributions to ``builder``, threading the state token ``token``, for
    the rank ``rank`` of ``mesh``."""

    def __init__(self, builder: GraphBuilder, token: Value, mesh: Mesh, rank: int) -> None:
        self.b, self.token, self.mesh, self.rank = builder, token, mesh, rank
        self.steps: list[tuple[Step, int]] = []  # (step, bytes of the operand) for reports

    def _collective(self, op: str, x: Value, axis: str, **attrs: Any) -> Value:
        value, self.token = self.b.op(op, x, self.token, group=group_name(self.mesh, axis),
                                      group_size=self.mesh.axis_size(axis), **attrs)
        return value

    def __call__(self, x: Value, src: TensorLayout, dst: TensorLayout) -> Value:
        for step in plan(src, dst):
            if self.mesh.axis_size(step.axis) == 1:  # one rank along it: nothing moves
                continue
            self.steps.append((step, x.type.nbytes))
            x = self._step(x, step)
        return x

    def _step(self, x: Value, step: Step) -> Value:
        axis = step.axis
        if step.kind == "all_reduce":
            return self._collective(ops.ALL_REDUCE, x, axis, reduction=step.reduction)
        if step.kind == "reduce_scatter":
            return _moved(self.b, x, step.dim, lambda v: self._collective(
                ops.REDUCE_SCATTER, v, axis, reduction=step.reduction))
        if step.kind == "all_gather":
            return _moved(self.b, x, step.dim, lambda v: self._collective(ops.ALL_GATHER, v,
                                                                          axis))
        if step.kind == "all_to_all":
            return self._collective(ops.ALL_TO_ALL, x, axis, split_axis=step.dim,
                                    concat_axis=step.source)
        n = x.type.shape[step.dim] // self.mesh.axis_size(axis)
        start = self.mesh.coords(self.rank)[axis] * n
        return self.b.op("slice", x, starts=(start,), stops=(start + n,), axes=(step.dim,))

