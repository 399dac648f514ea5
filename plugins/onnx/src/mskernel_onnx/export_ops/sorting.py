"""Sorting and scans → ONNX.  ``TopK`` breaks ties by the lower index, so ``sort``,
``argsort`` and ``topk`` (all stable) are ``TopK`` over the axis; ``topk(sorted=False)``
reorders its picks by index.  ``cumsum`` is ``CumSum``; ``cumprod``, ``cummax`` and
``cummin``, which ONNX lacks, reduce a triangular mask of the axis (``n**2`` elements per
line)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from mskernel_sdk import Node, dtype as to_dtype

from ..export import Context
from .reduction import reduce


def _ordered(ctx: Context, x: str) -> tuple[str, str]:
    """``x`` in a type ``TopK`` takes (bool as uint8), and that type's name."""
    dt = ctx.in_type().dtype
    if dt.is_bool:
        return ctx.cast(x, "uint8"), "uint8"
    compute = ctx.compute_type("TopK", dt)
    return (ctx.cast(x, compute), compute.name) if compute is not dt else (x, dt.name)


def _top(ctx: Context, x: str, k: int, axis: int, largest: bool) -> tuple[str, str]:
    """Values (in the input's dtype) and int64 indices of ``TopK``."""
    dt = ctx.in_type().dtype
    ordered, compute = _ordered(ctx, x)
    values, indices = ctx.op("TopK", ordered, ctx.ints([k]), outputs=2, axis=axis,
                             largest=int(largest), sorted=1)
    return (ctx.cast(values, dt) if compute != dt.name else values), indices


def _sort(values: bool) -> Callable[..., str]:
    def translate(ctx: Context, node: Node, x: str) -> str:
        t = ctx.in_type()
        axis = node.attrs["axis"] % t.rank
        out = _top(ctx, x, t.shape[axis], axis, node.attrs["descending"])
        return out[0] if values else out[1]
    return translate


def _topk(ctx: Context, node: Node, x: str) -> list[str]:
    t = ctx.in_type()
    axis = node.attrs["axis"] % t.rank
    k = node.attrs["k"]
    values, indices = _top(ctx, x, k, axis, node.attrs["largest"])
    if not node.attrs["sorted"]:
        indices, order = ctx.op("TopK", indices, ctx.ints([k]), outputs=2, axis=axis,
                                largest=0, sorted=1)
        values = ctx.op("GatherElements", values, order, axis=axis)
    return [values, indices]


def _cumsum(ctx: Context, node: Node, x: str) -> str:
    t = ctx.in_type()
    axis = node.attrs["axis"] % t.rank
    return ctx.typed("CumSum", x, ctx.scalar_int(axis), dt=t.dtype, widen=(0,),
                     exclusive=int(node.attrs["exclusive"]), reverse=int(node.attrs["reverse"]))


def _masked_scan(op_type: str, identity: Callable[[np.dtype], np.ndarray]
                 ) -> Callable[..., str]:
    """Element ``i`` of the scan reduces the elements ``j`` of its line that the mask keeps:
    ``j <= i`` (``j >= i`` reversed; strictly, when exclusive), the identity elsewhere."""

    def translate(ctx: Context, node: Node, x: str) -> str:
        t = ctx.in_type()
        axis = node.attrs["axis"] % t.rank
        n = t.shape[axis]
        reverse = node.attrs.get("reverse", False)
        exclusive = node.attrs.get("exclusive", False)
        i, j = np.arange(n)[:, None], np.arange(n)[None, :]
        keep = (j >= i) if reverse else (j <= i)
        if exclusive:
            keep &= i != j
        # lines [..., i, j, ...]: the output position i, then the scanned elements j
        keep = keep.reshape((1,) * axis + (n, n) + (1,) * (t.rank - axis - 1))
        dt = t.dtype
        compute = to_dtype("uint8") if dt.is_bool else \
            to_dtype("float32") if dt.name in ("float16", "bfloat16") else \
            ctx.compute_type(op_type, dt)
        xc = ctx.convert(x, dt, compute)
        lines = ctx.op("Unsqueeze", xc, ctx.ints([axis]))
        fill = ctx.const(np.asarray(identity(compute.storage)), compute)
        masked = ctx.op("Where", ctx.const(keep, "bool"), lines, fill)
        out = reduce(ctx, op_type, masked, [axis + 1], False, compute)
        if op_type != "ReduceProd" and compute.is_floating:  # a NaN holds to the end
            seen = ctx.cast(ctx.op("IsNaN", xc), "int64")
            nan_so_far = ctx.op("Greater", ctx.op("CumSum", seen, ctx.scalar_int(axis)),
                                ctx.const(np.zeros((), np.int64), "int64"))
            out = ctx.op("Where", nan_so_far, ctx.const(np.asarray(np.nan), compute), out)
        return ctx.convert(out, compute, dt)

    return translate


def lowest(dt: np.dtype) -> np.ndarray:
    """The smallest value of NumPy dtype ``dt`` (-inf for floats)."""
    return np.asarray(-np.inf if dt.kind == "f" else np.iinfo(dt).min, dt)


def highest(dt: np.dtype) -> np.ndarray:
    """The largest value of NumPy dtype ``dt`` (inf for floats)."""
    return np.asarray(np.inf if dt.kind == "f" else np.iinfo(dt).max, dt)


TRANSLATORS = {
    "sort": _sort(True), "argsort": _sort(False), "topk": _topk, "cumsum": _cumsum,
    "cumprod": _masked_scan("ReduceProd", lambda dt: np.ones((), dt)),
    "cummax": _masked_scan("ReduceMax", lowest), "cummin": _masked_scan("ReduceMin", highest),
}
