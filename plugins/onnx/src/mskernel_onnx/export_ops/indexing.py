"""Indexing ops → ONNX.  ONNX indices are int32 or int64 (others are cast to int64);
``take_along_axis`` broadcasts its operands first (``GatherElements`` does not), and
``one_hot`` compares against ``0..depth-1`` because ONNX's ``OneHot`` wraps negative indices
where mskernel gives an all-off row."""

from __future__ import annotations

import numpy as np

from mskernel_sdk import Node

from ..export import Context

#: the opset from which ONNX scatter ops take each ``reduction``
_REDUCTION_OPSET = {"none": 13, "add": 16, "mul": 16, "max": 18, "min": 18}


def indices64(ctx: Context, i: int, name: str) -> str:
    dt = ctx.in_type(i).dtype
    return name if dt.name in ("int32", "int64") else ctx.cast(name, "int64")


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
    return ctx.op("GatherND", x, ctx.cast(indices, "int64") if ctx.in_type(1).dtype.name !=
                  "int64" else indices)


def _reduction(ctx: Context, node: Node) -> str:
    reduce = node.attrs["reduce"]
    ctx.need_opset(_REDUCTION_OPSET[reduce], f"reduce='{reduce}'")
    return reduce


def _scatter(ctx: Context, node: Node, x: str, indices: str, updates: str) -> str:
    reduce = _reduction(ctx, node)
    dt = ctx.in_type(0).dtype
    if dt.is_complex and reduce != "none":
        ctx.fail("ONNX has no complex arithmetic")
    axis = node.attrs["axis"] % ctx.in_type(0).rank
    return ctx.typed("ScatterElements", x, indices64(ctx, 1, indices), updates, dt=dt,
                     widen=(0, 2), axis=axis,
                     reduction=None if reduce == "none" else reduce)


def _scatter_nd(ctx: Context, node: Node, x: str, indices: str, updates: str) -> str:
    reduce = _reduction(ctx, node)
    dt = ctx.in_type(0).dtype
    if dt.is_complex and reduce != "none":
        ctx.fail("ONNX has no complex arithmetic")
    idx = ctx.cast(indices, "int64") if ctx.in_type(1).dtype.name != "int64" else indices
    return ctx.typed("ScatterND", x, idx, updates, dt=dt, widen=(0, 2),
                     reduction=None if reduce == "none" else reduce)


def _one_hot(ctx: Context, node: Node, indices: str) -> str:
    it = ctx.in_type(0)
    out = ctx.out_type()
    axis = node.attrs["axis"] % out.rank
    depth = node.attrs["depth"]
    positions = np.arange(depth, dtype=np.int64).reshape(
        [depth if i == axis else 1 for i in range(out.rank)])
    ids = ctx.op("Unsqueeze", ctx.cast(indices, "int64") if it.dtype.name != "int64" else
                 indices, ctx.ints([axis]))
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
