"""Reductions → ONNX.  ``axes=()`` reduces nothing (ONNX would read an empty axes list as
"every axis"); ``var``/``std`` are composites dividing by ``max(n - correction, 0)``; ``all``
and ``any`` count the elements that are false / true; floating reductions of float16 and
bfloat16 compute in float32, as the reference accumulates in a wider type."""

from __future__ import annotations

import math
from typing import Callable, Optional, Sequence

import numpy as np

from mskernel_sdk import DType, Node, dtype as to_dtype

from ..export import Context


def reduction_axes(ctx: Context, axes: Optional[Sequence[int]], rank: int) -> list[int]:
    return list(range(rank)) if axes is None else sorted({a % rank for a in axes})


def reduce(ctx: Context, op_type: str, x: str, axes: Sequence[int], keepdims: bool,
           dt: DType) -> str:
    """``op_type`` (a ReduceXxx op) over ``axes`` (a non-empty list), axes given as an input
    where the opset says so (ReduceSum from 13, the others from 18)."""
    as_input = op_type == "ReduceSum" or ctx.opset >= 18
    if as_input:
        return ctx.typed(op_type, x, ctx.ints(axes), dt=dt, widen=(0,), keepdims=int(keepdims))
    return ctx.typed(op_type, x, dt=dt, axes=list(axes), keepdims=int(keepdims))


def _plain(op_type: str, *, widen_floats: bool = False) -> Callable[..., str]:
    def translate(ctx: Context, node: Node, x: str) -> str:
        t = ctx.in_type()
        axes = reduction_axes(ctx, node.attrs["axes"], t.rank)
        if not axes:
            return ctx.op("Identity", x)
        if widen_floats and t.dtype.name in ("float16", "bfloat16"):
            f32 = to_dtype("float32")
            out = reduce(ctx, op_type, ctx.cast(x, f32), axes, node.attrs["keepdims"], f32)
            return ctx.cast(out, t.dtype)
        return reduce(ctx, op_type, x, axes, node.attrs["keepdims"], t.dtype)
    return translate


def _mean(ctx: Context, node: Node, x: str) -> str:
    """ReduceMean, except over no elements, where ONNX Runtime gives 0 and the mean is NaN
    (a sum divided by the count)."""
    t = ctx.in_type()
    axes = reduction_axes(ctx, node.attrs["axes"], t.rank)
    if not axes or math.prod(t.shape[a] for a in axes):
        return _plain("ReduceMean", widen_floats=True)(ctx, node, x)
    dt = t.dtype
    total = _plain("ReduceSum", widen_floats=True)(ctx, node, x)
    return ctx.op("Div", total, ctx.const(np.zeros(()), dt))


def moments(ctx: Context, x: str, axes: Sequence[int], shape: Sequence[int], dt: DType,
            correction: int = 0) -> tuple[str, str]:
    """The mean and the variance (divided by ``max(n - correction, 0)``) of ``x`` over
    ``axes``, both keeping the reduced axes as size 1."""
    count = math.prod(shape[a] for a in axes)
    total = reduce(ctx, "ReduceSum", x, axes, True, dt)
    mean = ctx.op("Div", total, ctx.const(np.asarray(float(count)), dt))
    deviation = ctx.op("Sub", x, mean)
    squares = reduce(ctx, "ReduceSum", ctx.op("Mul", deviation, deviation), axes, True, dt)
    divisor = ctx.const(np.asarray(float(max(count - correction, 0))), dt)
    return mean, ctx.op("Div", squares, divisor)


def _spread(root: bool) -> Callable[..., str]:
    def translate(ctx: Context, node: Node, x: str) -> str:
        t = ctx.in_type()
        axes = reduction_axes(ctx, node.attrs["axes"], t.rank)
        dt = t.dtype
        compute = to_dtype("float32") if dt.name in ("float16", "bfloat16") else dt
        xc = ctx.convert(x, dt, compute)
        if not axes:  # the variance of each element alone
            var = ctx.op("Div", ctx.op("Sub", xc, xc), ctx.const(
                np.asarray(float(max(1 - node.attrs["correction"], 0))), compute))
        else:
            _, var = moments(ctx, xc, axes, t.shape, compute, node.attrs["correction"])
            if not node.attrs["keepdims"]:
                var = ctx.op("Squeeze", var, ctx.ints(axes))
        out = ctx.typed("Sqrt", var, dt=compute) if root else var
        return ctx.convert(out, compute, dt)
    return translate


def _count(wanted: bool) -> Callable[..., str]:
    """``all``: no element is false; ``any``: some element is true (empty sets included)."""

    def translate(ctx: Context, node: Node, x: str) -> str:
        t = ctx.in_type()
        axes = reduction_axes(ctx, node.attrs["axes"], t.rank)
        if not axes:
            return ctx.op("Identity", x)
        counted = x if wanted else ctx.op("Not", x)
        hits = reduce(ctx, "ReduceSum", ctx.cast(counted, "int64"), axes,
                      node.attrs["keepdims"], to_dtype("int64"))
        zero = ctx.const(np.zeros((), np.int64), "int64")
        return ctx.op("Greater", hits, zero) if wanted else ctx.op("Equal", hits, zero)
    return translate


def _arg(op_type: str) -> Callable[..., str]:
    def translate(ctx: Context, node: Node, x: str) -> str:
        t = ctx.in_type()
        axis, keepdims = node.attrs["axis"], node.attrs["keepdims"]
        if axis is None:
            flat = ctx.op("Reshape", x, ctx.ints([-1]))
            found = ctx.typed(op_type, flat, dt=t.dtype, widen=(0,), result=to_dtype("int64"),
                              axis=0, keepdims=0)
            return ctx.op("Reshape", found, ctx.ints(ctx.out_type().shape))
        return ctx.typed(op_type, x, dt=t.dtype, result=to_dtype("int64"),
                         axis=axis % t.rank, keepdims=int(keepdims))
    return translate


TRANSLATORS = {
    "sum": _plain("ReduceSum"), "prod": _plain("ReduceProd"),
    "mean": _mean, "var": _spread(False),
    "std": _spread(True), "max": _plain("ReduceMax"), "min": _plain("ReduceMin"),
    "logsumexp": _plain("ReduceLogSumExp", widen_floats=True),
    "all": _count(False), "any": _count(True),
    "argmax": _arg("ArgMax"), "argmin": _arg("ArgMin"),
}
