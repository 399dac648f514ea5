"""Derivatives of the shape ops.

Every op here is linear, so its JVP is the op applied to the tangent (``pad`` fills with 0:
the fill value is a constant) and its VJP the transpose: reshaping back, summing what was
repeated or broadcast, and sending each element of the cotangent back to the position it was
copied from.  That covers ``slice`` with any steps, negative ones included, and ``pad`` in its
``reflect`` and ``edge`` modes, where one input element lands in several output positions:
for each axis a static table of source positions drives a ``scatter``-add.  The creation ops
(``constant``, ``full``, ``iota``) take no tensor and have no derivative.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from mskernel_sdk import Tensor

from . import _ops as ops
from ._ops import Grads, RuleTable

rules = RuleTable()

for _op in ("reshape", "squeeze", "expand_dims", "transpose", "broadcast_to", "split", "slice",
            "tile", "flip", "repeat", "tril", "triu"):
    rules.jvp(_op)(ops.linear_jvp(_op))


@rules.vjp("reshape", "squeeze", "expand_dims")
def _reshape_vjp(primals, outputs, cotangents, **attrs) -> Grads:
    return (ops.reshape(cotangents[0], shape=primals[0].shape),)


@rules.vjp("transpose")
def _transpose_vjp(primals, outputs, cotangents, *, perm) -> Grads:
    rank = primals[0].ndim
    order = tuple(reversed(range(rank))) if perm is None else tuple(a % rank for a in perm)
    return (ops.transpose(cotangents[0], perm=ops.inverse_permutation(order)),)


@rules.vjp("broadcast_to")
def _broadcast_to_vjp(primals, outputs, cotangents, *, shape) -> Grads:
    return (ops.sum_to_shape(cotangents[0], primals[0].shape),)


@rules.vjp("flip")
def _flip_vjp(primals, outputs, cotangents, *, axes) -> Grads:
    return (ops.flip(cotangents[0], axes=axes),)


@rules.vjp("tril")
def _tril_vjp(primals, outputs, cotangents, *, k) -> Grads:
    return (ops.tril(cotangents[0], k=k),)


@rules.vjp("triu")
def _triu_vjp(primals, outputs, cotangents, *, k) -> Grads:
    return (ops.triu(cotangents[0], k=k),)


# -- joining and splitting --------------------------------------------------------------------


def _materialized(tangents: Sequence[Optional[Tensor]],
                  primals: Sequence[Tensor]) -> list[Tensor]:
    return [ops.materialize(t, x) for t, x in zip(tangents, primals)]


@rules.vjp("concat")
def _concat_vjp(primals, outputs, cotangents, *, axis) -> Grads:
    if len(primals) == 1:
        return cotangents
    ax = axis % primals[0].ndim
    return ops.split(cotangents[0], axis=ax, sizes=tuple(x.shape[ax] for x in primals))


@rules.jvp("concat")
def _concat_jvp(primals, tangents, outputs, *, axis) -> Grads:
    return (ops.concat(*_materialized(tangents, primals), axis=axis),)


@rules.vjp("stack")
def _stack_vjp(primals, outputs, cotangents, *, axis) -> Grads:
    pieces = ops.split(cotangents[0], axis=axis, sizes=(1,) * len(primals))
    return tuple(ops.reshape(p, shape=x.shape) for p, x in zip(pieces, primals))


@rules.jvp("stack")
def _stack_jvp(primals, tangents, outputs, *, axis) -> Grads:
    return (ops.stack(*_materialized(tangents, primals), axis=axis),)


@rules.vjp("split")
def _split_vjp(primals, outputs, cotangents, *, axis, sizes) -> Grads:
    return (ops.concat(*_materialized(cotangents, outputs), axis=axis),)


# -- repeating --------------------------------------------------------------------------------


@rules.vjp("tile")
def _tile_vjp(primals, outputs, cotangents, *, reps) -> Grads:
    (x,), (g,) = primals, cotangents
    rank = max(len(reps), x.ndim)
    reps = (1,) * (rank - len(reps)) + tuple(reps)
    dims = (1,) * (rank - x.ndim) + x.shape
    blocks = ops.reshape(g, shape=tuple(v for r, d in zip(reps, dims) for v in (r, d)))
    summed = ops.sum(blocks, axes=tuple(range(0, 2 * rank, 2)))
    return (ops.reshape(summed, shape=x.shape),)


@rules.vjp("repeat")
def _repeat_vjp(primals, outputs, cotangents, *, repeats, axis) -> Grads:
    (x,), (g,) = primals, cotangents
    if axis is None:
        copies = ops.reshape(g, shape=(x.size, repeats))
        return (ops.reshape(ops.sum(copies, axes=(1,)), shape=x.shape),)
    ax = axis % x.ndim
    copies = ops.reshape(g, shape=x.shape[:ax + 1] + (repeats,) + x.shape[ax + 1:])
    return (ops.sum(copies, axes=(ax + 1,)),)


# -- selecting and filling --------------------------------------------------------------------


def _send_back(g: Tensor, sources: dict[int, np.ndarray], shape: Sequence[int]) -> Tensor:
    """The transpose of reading ``x[..., sources[axis], ...]`` along each listed axis of an
    ``x`` of ``shape``: each element of ``g`` is added where it was read from."""
    for axis, positions in sources.items():
        if not np.array_equal(positions, np.arange(shape[axis])):
            g = ops.scatter_add_static(g, axis, positions, shape[axis])
    return g


@rules.vjp("slice")
def _slice_vjp(primals, outputs, cotangents, *, starts, stops, steps, axes) -> Grads:
    (x,), (g,) = primals, cotangents
    axes = range(x.ndim) if axes is None else [a % x.ndim for a in axes]
    steps = (1,) * len(starts) if steps is None else steps
    sources = {axis: np.arange(x.shape[axis])[start:stop:step]
               for axis, start, stop, step in zip(axes, starts, stops, steps)}
    return (_send_back(g, sources, x.shape),)


@rules.vjp("pad")
def _pad_vjp(primals, outputs, cotangents, *, pads, mode, value) -> Grads:
    (x,), (g,) = primals, cotangents
    if mode == "constant":  # the transpose crops what was added and zero-fills what was cropped
        return (ops.pad(g, pads=tuple(-p for p in pads)),)
    sources = {}
    for axis, (size, lo, hi) in enumerate(zip(x.shape, pads[0::2], pads[1::2])):
        kept = np.arange(max(-lo, 0), size - max(-hi, 0))
        sources[axis] = np.pad(kept, (max(lo, 0), max(hi, 0)), mode=mode) if kept.size else kept
    return (_send_back(g, sources, x.shape),)


@rules.jvp("pad")
def _pad_jvp(primals, tangents, outputs, *, pads, mode, value) -> Grads:
    return (ops.pad(tangents[0], pads=pads, mode=mode),)


VJP = rules.vjps
JVP = rules.jvps
NONDIFFERENTIABLE = frozenset({"constant", "full", "iota"})
