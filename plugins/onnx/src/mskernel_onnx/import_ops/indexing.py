"""Indexing ONNX ops: ``Gather*``, ``Scatter*``, ``OneHot``, ``TopK``, ``Hardmax``,
cumulative ops, and the ops whose output shape depends on their data (``NonZero``,
``Unique``).

ONNX indices may be negative (counting from the end); the core's may not, so every index
operand goes through :func:`~.common.normalize_indices`.  ``NonZero`` and ``Unique`` need
their input's values at import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from mskernel_sdk import Value

from .common import (
    axis, cast, dtype, move_axis, normalize_indices, rank, scalar, shape, to_int64,
)

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]
_REDUCTIONS = {"none": "none", "add": "add", "mul": "mul", "max": "max", "min": "min"}


def _gather(ctx: "NodeContext") -> Value:
    x, idx = ctx.input(0), ctx.input(1)
    a = axis(ctx, ctx.attr("axis", 0), rank(x))
    return ctx.op("gather", x, normalize_indices(ctx, idx, shape(x)[a]), axis=a)


def _gather_elements(ctx: "NodeContext") -> Value:
    x, idx = ctx.input(0), ctx.input(1)
    a = axis(ctx, ctx.attr("axis", 0), rank(x))
    return ctx.op("take_along_axis", x, normalize_indices(ctx, idx, shape(x)[a]), axis=a)


def _nd_indices(ctx: "NodeContext", x: Value, idx: Value, batch: int) -> tuple[Value, Value]:
    """``x`` and ``idx`` with ``batch`` leading batch dims folded into the index tuples:
    ``x`` reshaped to ``[B, ...]`` and each index tuple prefixed by its batch number."""
    k = shape(idx)[-1]
    sizes = ctx.constant(np.array(shape(x)[batch:batch + k], np.int64))
    idx = normalize_indices(ctx, idx, sizes)
    if not batch:
        return x, idx
    b = int(np.prod(shape(x)[:batch]))
    inner = shape(idx)[batch:-1]
    x = ctx.op("reshape", x, shape=(b, *shape(x)[batch:]))
    idx = ctx.op("reshape", idx, shape=(b, *inner, k))
    number = ctx.op("iota", shape=(b, *inner, 1), axis=0, dtype="int64")
    return x, ctx.op("concat", number, idx, axis=-1)


def _gather_nd(ctx: "NodeContext") -> Value:
    x, idx = ctx.input(0), ctx.input(1)
    batch = ctx.attr("batch_dims", 0)
    flat_x, flat_idx = _nd_indices(ctx, x, idx, batch)
    out = ctx.op("gather_nd", flat_x, flat_idx)
    return ctx.op("reshape", out, shape=(*shape(idx)[:-1], *shape(x)[batch + shape(idx)[-1]:]))


def _reduction(ctx: "NodeContext") -> str:
    found = ctx.attr("reduction", "none")
    if found not in _REDUCTIONS:
        ctx.fail(f"reduction {found!r} is not one of {', '.join(_REDUCTIONS)}")
    return _REDUCTIONS[found]


def _scatter_elements(ctx: "NodeContext") -> Value:
    x, idx, updates = ctx.input(0), ctx.input(1), ctx.input(2)
    a = axis(ctx, ctx.attr("axis", 0), rank(x))
    return ctx.op("scatter", x, normalize_indices(ctx, idx, shape(x)[a]), updates, axis=a,
                  reduce=_reduction(ctx))


def _scatter_nd(ctx: "NodeContext") -> Value:
    x, idx, updates = ctx.input(0), ctx.input(1), ctx.input(2)
    _, idx = _nd_indices(ctx, x, idx, 0)
    return ctx.op("scatter_nd", x, idx, updates, reduce=_reduction(ctx))


def _one_hot(ctx: "NodeContext") -> Value:
    indices, values = ctx.input(0), ctx.input(2)
    depth = int(ctx.scalar(1))
    idx = normalize_indices(ctx, cast(ctx, indices, "int64") if dtype(indices).is_floating
                            else indices, depth)
    out_rank = rank(indices) + 1
    a = axis(ctx, ctx.attr("axis", -1), out_rank)
    hot = ctx.op("one_hot", idx, depth=depth, axis=a, dtype="bool")
    off, on = ctx.op("split", values, axis=0, sizes=(1, 1))
    off, on = ctx.op("reshape", off, shape=()), ctx.op("reshape", on, shape=())
    return ctx.op("where", hot, on, off)


def _top_k(ctx: "NodeContext") -> tuple[Value, Value]:
    x = ctx.input(0)
    k = ctx.attr("k") if ctx.version < 10 else int(ctx.scalar(1))
    a = axis(ctx, ctx.attr("axis", -1), rank(x))
    return ctx.op("topk", x, k=k, axis=a, largest=bool(ctx.attr("largest", 1)),
                  sorted=bool(ctx.attr("sorted", 1)))


def _hardmax(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    a = axis(ctx, ctx.attr("axis", -1 if ctx.version >= 13 else 1), rank(x))
    if ctx.version < 13:  # the input is coerced to 2-D at axis
        dims = shape(x)
        flat = ctx.op("reshape", x, shape=(int(np.prod(dims[:a])), int(np.prod(dims[a:]))))
        hot = ctx.op("one_hot", ctx.op("argmax", flat, axis=1), depth=shape(flat)[1],
                     axis=1, dtype=dtype(x))
        return ctx.op("reshape", hot, shape=dims)
    return ctx.op("one_hot", ctx.op("argmax", x, axis=a), depth=shape(x)[a], axis=a,
                  dtype=dtype(x))


def cumulative(op: str) -> Handler:
    def handler(ctx: "NodeContext") -> Value:
        x = ctx.input(0)
        a = axis(ctx, int(ctx.scalar(1)), rank(x))
        return ctx.op(op, x, axis=a, reverse=bool(ctx.attr("reverse", 0)),
                      exclusive=bool(ctx.attr("exclusive", 0)))
    return handler


def _non_zero(ctx: "NodeContext") -> Value:
    data = np.asarray(ctx.const(0))
    return ctx.constant(np.array(np.nonzero(data), np.int64).reshape(data.ndim, -1))


def _unique(ctx: "NodeContext") -> list[Value]:
    """Y, indices, inverse_indices and counts, in first-occurrence order unless sorted."""
    x = ctx.input(0)
    data = np.asarray(ctx.const(0))
    a = ctx.attr("axis", None)
    if a is not None:
        a = axis(ctx, a, data.ndim)
    values, first, inverse, counts = np.unique(
        data, return_index=True, return_inverse=True, return_counts=True, axis=a)
    inverse = inverse.reshape(-1)
    if not ctx.attr("sorted", 1):
        order = np.argsort(first, kind="stable")
        rank_of = np.empty_like(order)
        rank_of[order] = np.arange(len(order))
        values = np.take(values, order, axis=0 if a is None else a)
        first, counts, inverse = first[order], counts[order], rank_of[inverse]
    as_int = lambda v: ctx.constant(np.asarray(v, np.int64))  # noqa: E731
    return [ctx.constant(values, dtype(x)), as_int(first), as_int(inverse), as_int(counts)]


def _tensor_scatter(ctx: "NodeContext") -> Value:
    """``TensorScatter``: write ``update`` into the cache along ``axis`` at each batch entry's
    write index (``mode='linear'``) or modulo the axis length (``'circular'``)."""
    cache, update = ctx.input(0), ctx.input(1)
    dims = shape(cache)
    a = axis(ctx, ctx.attr("axis", -2), len(dims))
    if a == 0:
        ctx.fail("axis must not be the batch axis 0")
    steps = shape(update)[a]
    cache_t = move_axis(ctx, cache, a, 1)
    update_t = move_axis(ctx, update, a, 1)
    batch = dims[0]
    start = (to_int64(ctx, ctx.input(2)) if ctx.has(2)
             else ctx.constant(np.zeros(batch, np.int64)))
    offsets = ctx.op("iota", shape=(batch, steps), axis=1, dtype="int64")
    where = ctx.op("add", ctx.op("reshape", start, shape=(batch, 1)), offsets)
    if ctx.attr("mode", "linear") == "circular":
        where = ctx.op("remainder", where, scalar(ctx, dims[a], "int64"))
    rows = ctx.op("iota", shape=(batch, steps), axis=0, dtype="int64")
    idx = ctx.op("stack", rows, where, axis=-1)
    out = ctx.op("scatter_nd", cache_t, idx, update_t)
    return move_axis(ctx, out, 1, a)


OPS: dict[str, Handler] = {
    "Gather": _gather, "GatherElements": _gather_elements, "GatherND": _gather_nd,
    "ScatterElements": _scatter_elements, "Scatter": _scatter_elements,
    "ScatterND": _scatter_nd, "OneHot": _one_hot, "TopK": _top_k, "Hardmax": _hardmax,
    "CumSum": cumulative("cumsum"), "CumProd": cumulative("cumprod"), "NonZero": _non_zero,
    "Unique": _unique, "TensorScatter": _tensor_scatter,
}
