"""Derivatives of the indexing ops, with respect to the data (``x``, ``updates``, ``table``) —
never the integer indices.

Reads (``gather``, ``take_along_axis``, ``gather_nd``, ``embedding``) are linear: their JVP
reads the tangent, their VJP adds each cotangent element back where it was read (repeated
indices accumulate).  Scatters depend on ``reduce``:

- ``"none"``: an element of ``x`` that some update overwrites gets no gradient, and of several
  updates landing on one element only the one that wins (the last in row-major order, as the
  op defines) gets its gradient.
- ``"add"``: the gradient passes to ``x`` and is read back for each update.
- ``"mul"``: each factor gets the product of the others; zeros among the updates are handled
  (one zero: only it gets a gradient; two or more: none do) as PyTorch does.
- ``"max"``/``"min"``: the gradient is split evenly between ``x`` and the updates equal to the
  result, as PyTorch's ``scatter_reduce`` does.

``scatter`` and ``scatter_nd`` share these rules through an *addressing*: how an update
position reads from and writes to an ``x``-shaped tensor.
"""

from __future__ import annotations

from typing import Optional

from mskernel import int64
from mskernel_sdk import Tensor

from . import _ops as ops
from ._ops import Grads, RuleTable

rules = RuleTable()

# -- reads ------------------------------------------------------------------------------------


def _gather_vjp_of(g: Tensor, x: Tensor, indices: Tensor, axis: int) -> Tensor:
    """The transpose of ``gather(x, indices, axis)``: ``g``'s slices added at ``indices``."""
    ax = axis % x.ndim
    before, after = x.shape[:ax], x.shape[ax + 1:]
    rows = ops.reshape(g, shape=before + (indices.size,) + after)
    along = ops.reshape(indices, shape=(1,) * len(before) + (indices.size,) + (1,) * len(after))
    return ops.scatter_add_along(rows, ax, ops.broadcast_as(along, rows.shape), x.shape[ax])


@rules.vjp("gather")
def _gather_vjp(primals, outputs, cotangents, *, axis) -> Grads:
    (x, indices), (g,) = primals, cotangents
    return _gather_vjp_of(g, x, indices, axis), None


@rules.jvp("gather")
def _gather_jvp(primals, tangents, outputs, *, axis) -> Grads:
    return (ops.gather(tangents[0], primals[1], axis=axis),)


@rules.vjp("embedding")
def _embedding_vjp(primals, outputs, cotangents) -> Grads:
    (table, ids), (g,) = primals, cotangents
    return _gather_vjp_of(g, table, ids, 0), None


@rules.jvp("embedding")
def _embedding_jvp(primals, tangents, outputs) -> Grads:
    return (ops.embedding(tangents[0], primals[1]),)


@rules.vjp("take_along_axis")
def _take_along_axis_vjp(primals, outputs, cotangents, *, axis) -> Grads:
    (x, indices), (y,), (g,) = primals, outputs, cotangents
    ax = axis % x.ndim
    summed = ops.scatter_add_along(g, ax, ops.broadcast_as(indices, y.shape), x.shape[ax])
    return ops.sum_to_shape(summed, x.shape), None


@rules.jvp("take_along_axis")
def _take_along_axis_jvp(primals, tangents, outputs, *, axis) -> Grads:
    return (ops.take_along_axis(tangents[0], primals[1], axis=axis),)


@rules.vjp("gather_nd")
def _gather_nd_vjp(primals, outputs, cotangents) -> Grads:
    (x, indices), (g,) = primals, cotangents
    return ops.scatter_nd(ops.zeros_like(x), indices, g, reduce="add"), None


@rules.jvp("gather_nd")
def _gather_nd_jvp(primals, tangents, outputs) -> Grads:
    return (ops.gather_nd(tangents[0], primals[1]),)


# -- scatters ---------------------------------------------------------------------------------


class _AlongAxis:
    """``scatter``'s addressing: update ``p`` goes to ``x[p with p[axis] = indices[p]]``."""

    def __init__(self, indices: Tensor, axis: int) -> None:
        self.indices, self.axis = indices, axis % indices.ndim

    def read(self, t: Tensor) -> Tensor:
        """The element of the ``x``-shaped ``t`` each update lands on (updates' shape)."""
        stops = list(self.indices.shape)
        stops[self.axis] = t.shape[self.axis]
        if tuple(stops) != t.shape:  # indices may cover only part of x outside the axis
            t = ops.slice(t, starts=(0,) * t.ndim, stops=tuple(stops))
        return ops.take_along_axis(t, self.indices, axis=self.axis)

    def write(self, base: Tensor, values: Tensor, reduce: str) -> Tensor:
        return ops.scatter(base, self.indices, values, axis=self.axis, reduce=reduce)


class _ByTuples:
    """``scatter_nd``'s addressing: update ``i...`` goes to ``x[indices[i..., :]]``."""

    def __init__(self, indices: Tensor) -> None:
        self.indices = indices

    def read(self, t: Tensor) -> Tensor:
        return ops.gather_nd(t, self.indices)

    def write(self, base: Tensor, values: Tensor, reduce: str) -> Tensor:
        return ops.scatter_nd(base, self.indices, values, reduce=reduce)


Addressing = _AlongAxis | _ByTuples


def _winners(at: Addressing, x: Tensor, updates: Tensor) -> Tensor:
    """Where an update is the one that lands (the last of those sharing its target)."""
    ids = ops.reshape(ops.iota((updates.size,), 0), shape=updates.shape)
    last = at.write(ops.full(x.shape, -1.0, int64), ids, "none")
    return ops.equal(at.read(last), ids)


def _others_product(at: Addressing, x: Tensor, updates: Tensor) -> Tensor:
    """d out[t] / d updates[p] for ``reduce="mul"``: ``x[t]`` times the other updates landing
    on ``t`` (one zero among them: nonzero only at that zero; two: zero everywhere)."""
    zero = ops.equal(updates, ops.scalar(0.0, updates))
    safe = ops.where(zero, ops.scalar(1.0, updates), updates)
    zeros_at = at.read(at.write(ops.zeros_like(x), ops.mask(zero, x), "add"))
    product = at.read(at.write(x, safe, "mul"))
    no_zero = ops.equal(zeros_at, ops.scalar(0.0, x))
    one_zero = ops.equal(zeros_at, ops.scalar(1.0, x))
    return ops.where(zero, ops.select(one_zero, product),
                     ops.select(no_zero, ops.div(product, safe)))


def _extreme_shares(at: Addressing, x: Tensor, updates: Tensor,
                    out: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """For ``reduce="max"``/``"min"``: masks of ``x`` and of the updates equal to the result,
    and the number of such equal values at each element."""
    x_hits = ops.mask(ops.equal(x, out), x)
    u_hits = ops.mask(ops.equal(updates, at.read(out)), updates)
    return x_hits, u_hits, ops.add(x_hits, at.write(ops.zeros_like(x), u_hits, "add"))


def _scatter_vjp(at: Addressing, reduce: str, x: Tensor, updates: Tensor, out: Tensor,
                 g: Tensor) -> tuple[Tensor, Tensor]:
    if reduce == "none":
        return (at.write(g, ops.zeros_like(updates), "none"),
                ops.select(_winners(at, x, updates), at.read(g)))
    if reduce == "add":
        return g, at.read(g)
    if reduce == "mul":
        return (ops.mul(g, at.write(ops.ones_like(x), updates, "mul")),
                ops.mul(at.read(g), _others_product(at, x, updates)))
    x_hits, u_hits, counts = _extreme_shares(at, x, updates, out)
    share = ops.div(g, counts)
    return ops.mul(x_hits, share), ops.mul(u_hits, at.read(share))


def _scatter_jvp(at: Addressing, reduce: str, x: Tensor, updates: Tensor, out: Tensor,
                 tx: Optional[Tensor], tu: Optional[Tensor]) -> Optional[Tensor]:
    if reduce in ("none", "add"):
        return at.write(ops.materialize(tx, x), ops.materialize(tu, updates), reduce)
    if reduce == "mul":
        from_x = ops.scaled(tx, at.write(ops.ones_like(x), updates, "mul"))
        from_u = None if tu is None else at.write(
            ops.zeros_like(x), ops.mul(tu, _others_product(at, x, updates)), "add")
        return ops.add_all(from_x, from_u)
    x_hits, u_hits, counts = _extreme_shares(at, x, updates, out)
    from_u = None if tu is None else at.write(ops.zeros_like(x), ops.mul(u_hits, tu), "add")
    total = ops.add_all(ops.scaled(tx, x_hits), from_u)
    return None if total is None else ops.div(total, counts)


@rules.vjp("scatter")
def _scatter_vjp_rule(primals, outputs, cotangents, *, axis, reduce) -> Grads:
    x, indices, updates = primals
    g_x, g_u = _scatter_vjp(_AlongAxis(indices, axis), reduce, x, updates, outputs[0],
                            cotangents[0])
    return g_x, None, g_u


@rules.jvp("scatter")
def _scatter_jvp_rule(primals, tangents, outputs, *, axis, reduce) -> Grads:
    x, indices, updates = primals
    return (_scatter_jvp(_AlongAxis(indices, axis), reduce, x, updates, outputs[0],
                         tangents[0], tangents[2]),)


@rules.vjp("scatter_nd")
def _scatter_nd_vjp_rule(primals, outputs, cotangents, *, reduce) -> Grads:
    x, indices, updates = primals
    g_x, g_u = _scatter_vjp(_ByTuples(indices), reduce, x, updates, outputs[0], cotangents[0])
    return g_x, None, g_u


@rules.jvp("scatter_nd")
def _scatter_nd_jvp_rule(primals, tangents, outputs, *, reduce) -> Grads:
    x, indices, updates = primals
    return (_scatter_jvp(_ByTuples(indices), reduce, x, updates, outputs[0], tangents[0],
                         tangents[2]),)


VJP = rules.vjps
JVP = rules.jvps
NONDIFFERENTIABLE = frozenset({"one_hot"})

