"""Indexing ops → ONNX.  ONNX indices are int32 or int64 (others are cast to int64);
``take_along_axis`` broadcasts its operands first (``GatherElements`` does not), and
``one_hot`` compares against ``0..depth-1`` because ONNX's ``OneHot`` wraps negative indices
where mskernel gives an all-off row.  Scatter reductions before the opset that has them
(add/mul 16, max/min 18) compare each index with every position it could address and reduce
the updates that land there: ``indices.size * x.shape[axis]`` elements for ``scatter``,
``updates.size * prod(x.shape[:k])`` for ``scatter_nd``."""

from __future__ import annotations

from typing import Callable

import numpy as np

from mskernel_sdk import DType, Node, dtype as to_dtype

from ..export import Context
from .reduction import reduce as reduce_axes
from .sorting import highest, lowest

#: the opset from which ONNX scatter ops take each ``reduction``
_REDUCTION_OPSET = {"none": 13, "add": 16, "mul": 16, "max": 18, "min": 18}


def indices64(ctx: Context, i: int, name: str) -> str:
    """Input ``i`` as ONNX indices: int32 and int64 as they are, others as int64."""
    dt = ctx.in_type(i).dtype
    return name if dt.name in ("int32", "int64") else ctx.cast(name, "int64")


def as_int64(ctx: Context, i: int, name: str) -> str:
    return ctx.convert(name, ctx.in_type(i).dtype, "int64")


def _gather(ctx: Context, node: Node, x: str, indices: str) -> str:
    axis = node.attrs["axis"] % ctx.in_type(0).rank
    return ctx.op("Gather", x, indices64(ctx, 1, indices), axis=axis)


def _take_along_axis(ctx: Context, node: Node, x: str, indices: str) -> str:
    xt, it = ctx.in_type(0), ctx.in_type(1)
    axis = node.attrs["axis"] % xt.rank
    out = ctx.out_type().shape
    index_shape = out
    data_shape = out[:axis] + (xt.shape[axis],) + out[axis + 1:]
    indices = indices64(ctx, 1, indices)
    if it.shape != index_shape:
        indices = ctx.op("Expand", indices, ctx.ints(index_shape))
    if xt.shape != data_shape:
        x = ctx.op("Expand", x, ctx.ints(data_shape))
    return ctx.op("GatherElements", x, indices, axis=axis)


def _gather_nd(ctx: Context, node: Node, x: str, indices: str) -> str:
    return ctx.op("GatherND", x, as_int64(ctx, 1, indices))


#: reduce → (the ReduceXxx op, the elementwise op combining with x, the identity)
_COMBINE: dict[str, tuple[str, str, Callable[[np.dtype], np.ndarray]]] = {
    "add": ("ReduceSum", "Add", lambda dt: np.zeros((), dt)),
    "mul": ("ReduceProd", "Mul", lambda dt: np.ones((), dt)),
    "max": ("ReduceMax", "Max", lowest), "min": ("ReduceMin", "Min", highest),
}


def _native(ctx: Context, node: Node) -> bool:
    """Whether the opset has the node's scatter reduction (else the comparison composite)."""
    reduce = node.attrs["reduce"]
    return ctx.opset >= _REDUCTION_OPSET[reduce]


def _compute_type(ctx: Context, node: Node) -> DType:
    """The type the comparison composite of a scatter reduction computes in."""
    dt = ctx.in_type(0).dtype
    if dt.name in ("float16", "bfloat16"):
        return to_dtype("float32")
    reduce_op, combine_op, _ = _COMBINE[node.attrs["reduce"]]
    return ctx.compute_type(("Where", "Pad", reduce_op, combine_op), dt)


def _combined(ctx: Context, node: Node, x: str, hit: str, updates: str, axis: int,
              layout: Callable[[str], str]) -> str:
    """``x`` combined with the updates reduced where ``hit``: ``hit`` and ``updates``
    broadcast to ``[..., positions, ...]`` with the positions at ``axis + 1``; ``layout``
    turns the reduced tensor into ``x``'s shape (identity elements where nothing lands)."""
    dt = ctx.in_type(0).dtype
    compute = _compute_type(ctx, node)
    reduce_op, combine_op, identity = _COMBINE[node.attrs["reduce"]]
    fill = ctx.const(identity(compute.storage), compute)
    masked = ctx.op("Where", hit, ctx.convert(updates, dt, compute), fill)
    reduced = layout(reduce_axes(ctx, reduce_op, masked, [axis], False, compute))
    total = ctx.op(combine_op, ctx.convert(x, dt, compute), reduced)
    return ctx.convert(total, compute, dt)


def _scatter_composite(ctx: Context, node: Node, x: str, indices: str, updates: str) -> str:
    xt, it = ctx.in_type(0), ctx.in_type(1)
    rank, axis = xt.rank, node.attrs["axis"] % xt.rank
    size = xt.shape[axis]
    positions = np.arange(size, dtype=np.int64).reshape((1,) * rank + (size,))
    hit = ctx.op("Equal", ctx.op("Unsqueeze", as_int64(ctx, 1, indices), ctx.ints([rank])),
                 ctx.const(positions, "int64"))
    spread = ctx.op("Unsqueeze", updates, ctx.ints([rank]))

    def layout(reduced: str) -> str:  # [*I without axis, size] -> x's shape
        perm = [*range(axis), rank - 1, *range(axis, rank - 1)]
        moved = ctx.op("Transpose", reduced, perm=perm)
        grow = [0 if d == axis else xt.shape[d] - it.shape[d] for d in range(rank)]
        if not any(grow):
            return moved
        compute = _compute_type(ctx, node)
        fill = ctx.const(_COMBINE[node.attrs["reduce"]][2](compute.storage), compute)
        return ctx.op("Pad", moved, ctx.ints([0] * rank + grow), fill)

    return _combined(ctx, node, x, hit, spread, axis, layout)


def _scatter(ctx: Context, node: Node, x: str, indices: str, updates: str) -> str:
    if not _native(ctx, node):
        return _scatter_composite(ctx, node, x, indices, updates)
    reduce = node.attrs["reduce"]
    dt = ctx.in_type(0).dtype
    axis = node.attrs["axis"] % ctx.in_type(0).rank
    return ctx.typed("ScatterElements", x, indices64(ctx, 1, indices), updates, dt=dt,
                     widen=(0, 2), axis=axis,
                     reduction=None if reduce == "none" else reduce)


def _scatter_nd_composite(ctx: Context, node: Node, x: str, indices: str, updates: str
                          ) -> str:
    xt, it = ctx.in_type(0), ctx.in_type(1)
    k = it.shape[-1]
    rows = int(np.prod(xt.shape[:k]))
    count = int(np.prod(it.shape[:-1]))
    tail = list(xt.shape[k:])
    strides = np.cumprod((1,) + xt.shape[1:k][::-1])[::-1].astype(np.int64)
    row = reduce_axes(ctx, "ReduceSum", ctx.op("Mul", as_int64(ctx, 1, indices),
                                               ctx.const(strides, "int64")),
                      [it.rank - 1], False, to_dtype("int64"))
    flat_rows = ctx.op("Reshape", row, ctx.ints([count] + [1] * (len(tail) + 1)))
    positions = np.arange(rows, dtype=np.int64).reshape([1, rows] + [1] * len(tail))
    hit = ctx.op("Equal", flat_rows, ctx.const(positions, "int64"))
    spread = ctx.op("Reshape", updates, ctx.ints([count, 1] + tail))
    return _combined(ctx, node, x, hit, spread, 0,
                     lambda reduced: ctx.op("Reshape", reduced, ctx.ints(xt.shape)))


def _scatter_nd(ctx: Context, node: Node, x: str, indices: str, updates: str) -> str:
    if not _native(ctx, node):
        return _scatter_nd_composite(ctx, node, x, indices, updates)
    reduce = node.attrs["reduce"]
    dt = ctx.in_type(0).dtype
    idx = as_int64(ctx, 1, indices)
    return ctx.typed("ScatterND", x, idx, updates, dt=dt, widen=(0, 2),
                     reduction=None if reduce == "none" else reduce)


def _one_hot(ctx: Context, node: Node, indices: str) -> str:
    out = ctx.out_type()
    axis = node.attrs["axis"] % out.rank
    depth = node.attrs["depth"]
    positions = np.arange(depth, dtype=np.int64).reshape(
        [depth if i == axis else 1 for i in range(out.rank)])
    ids = ctx.op("Unsqueeze", as_int64(ctx, 0, indices), ctx.ints([axis]))
    hot = ctx.op("Equal", ids, ctx.const(positions, "int64"))
    on = ctx.const(np.asarray(node.attrs["on_value"]), out.dtype)
    off = ctx.const(np.asarray(node.attrs["off_value"]), out.dtype)
    return ctx.typed("Where", hot, on, off, dt=out.dtype, widen=(1, 2))


def _embedding(ctx: Context, node: Node, table: str, ids: str) -> str:
    return ctx.op("Gather", table, indices64(ctx, 1, ids), axis=0)


TRANSLATORS = {
    "gather": _gather, "take_along_axis": _take_along_axis, "gather_nd": _gather_nd,
    "scatter": _scatter, "scatter_nd": _scatter_nd, "one_hot": _one_hot,
    "embedding": _embedding,
}
