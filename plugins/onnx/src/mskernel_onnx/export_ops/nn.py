"""Softmax and the normalisations → ONNX.  Normalisations return their statistics as extra
outputs; ONNX ops are used where they give everything the graph reads
(``LayerNormalization`` from opset 17, ``GroupNormalization`` from 21 when its statistics are
unused, ``BatchNormalization`` in inference mode), composites of reductions otherwise.
float16 and bfloat16 compute in float32, as the reference does."""

from __future__ import annotations

from typing import Callable

import numpy as np

from mskernel_sdk import DType, Node, dtype as to_dtype

from ..export import Context
from .reduction import moments

_NARROW = ("float16", "bfloat16")


def _softmax(op_type: str) -> Callable[..., str]:
    def translate(ctx: Context, node: Node, x: str) -> str:
        t = ctx.in_type()
        axis = node.attrs["axis"] % t.rank
        if t.dtype.name in _NARROW:
            return ctx.cast(ctx.op(op_type, ctx.cast(x, "float32"), axis=axis), t.dtype)
        return ctx.typed(op_type, x, dt=t.dtype, axis=axis)
    return translate


def _widened(ctx: Context, names: tuple[str, ...], dt: DType) -> tuple[DType, list[str]]:
    if dt.name in _NARROW:
        return to_dtype("float32"), [ctx.cast(n, "float32") for n in names]
    return dt, list(names)


def _rounded(ctx: Context, names: list[str], compute: DType, dt: DType) -> list[str]:
    return [ctx.convert(n, compute, dt) for n in names]


def _per_channel(ctx: Context, v: str, rank: int) -> str:
    return ctx.op("Reshape", v, ctx.ints([-1] + [1] * (rank - 2)))


def _batch_norm(ctx: Context, node: Node, x: str, scale: str, bias: str, mean: str,
                var: str) -> list[str]:
    t = ctx.in_type()
    eps, training = node.attrs["eps"], node.attrs["training"]
    if not training and t.dtype.name != "bfloat16":
        y = ctx.op("BatchNormalization", x, scale, bias, mean, var, epsilon=eps)
        return [y, mean, var]
    compute, (xc, sc, bc, mc, vc) = _widened(ctx, (x, scale, bias, mean, var), t.dtype)
    if training:
        axes = [0, *range(2, t.rank)]
        batch_mean, batch_var = moments(ctx, xc, axes, t.shape, compute)
        mc = ctx.op("Reshape", batch_mean, ctx.ints([-1]))
        vc = ctx.op("Reshape", batch_var, ctx.ints([-1]))
    eps_c = ctx.const(np.asarray(eps), compute)
    rstd = ctx.op("Div", ctx.const(np.ones(()), compute), ctx.op("Sqrt", ctx.op("Add", vc, eps_c)))
    gain = _per_channel(ctx, ctx.op("Mul", rstd, sc), t.rank)
    centred = ctx.op("Sub", xc, _per_channel(ctx, mc, t.rank))
    y = ctx.op("Add", ctx.op("Mul", centred, gain), _per_channel(ctx, bc, t.rank))
    return _rounded(ctx, [y, mc, vc], compute, t.dtype)


def _normalized(ctx: Context, xc: str, axes: list[int], shape: tuple[int, ...], eps: float,
                compute: DType) -> tuple[str, str, str]:
    mean, var = moments(ctx, xc, axes, shape, compute)
    rstd = ctx.op("Div", ctx.const(np.ones(()), compute),
                  ctx.op("Sqrt", ctx.op("Add", var, ctx.const(np.asarray(eps), compute))))
    return ctx.op("Mul", ctx.op("Sub", xc, mean), rstd), mean, rstd


def _layer_norm(ctx: Context, node: Node, x: str, scale: str, bias: str) -> list[str]:
    t = ctx.in_type()
    axis = node.attrs["axis"] % t.rank
    eps = node.attrs["eps"]
    if ctx.opset >= 17 and t.dtype.name != "float64":  # its statistics are float32 at most
        if not (ctx.used(1) or ctx.used(2)):
            y = ctx.op("LayerNormalization", x, scale, bias, axis=axis, epsilon=eps,
                       stash_type=1)
            return [y, "", ""]  # nothing reads the statistics
        y, mean, rstd = ctx.op("LayerNormalization", x, scale, bias, outputs=3, axis=axis,
                               epsilon=eps, stash_type=1)
        return [y, *(ctx.convert(stat, "float32", t.dtype) for stat in (mean, rstd))]
    compute, (xc, sc, bc) = _widened(ctx, (x, scale, bias), t.dtype)
    normed, mean, rstd = _normalized(ctx, xc, list(range(axis, t.rank)), t.shape, eps, compute)
    y = ctx.op("Add", ctx.op("Mul", normed, sc), bc)
    return _rounded(ctx, [y, mean, rstd], compute, t.dtype)


def _group_norm(ctx: Context, node: Node, x: str, scale: str, bias: str) -> list[str]:
    t = ctx.in_type()
    groups, eps = node.attrs["num_groups"], node.attrs["eps"]
    if ctx.opset >= 21 and not (ctx.used(1) or ctx.used(2)):
        y = ctx.typed("GroupNormalization", x, scale, bias, dt=t.dtype, num_groups=groups,
                      epsilon=eps, stash_type=1)
        return [y, "", ""]  # nothing reads the statistics
    compute, (xc, sc, bc) = _widened(ctx, (x, scale, bias), t.dtype)
    grouped_shape = (t.shape[0], groups, int(np.prod(t.shape[1:])) // groups if groups else 0)
    grouped = ctx.op("Reshape", xc, ctx.ints(grouped_shape))
    normed, mean, rstd = _normalized(ctx, grouped, [2], grouped_shape, eps, compute)
    y = ctx.op("Reshape", normed, ctx.ints(t.shape))
    y = ctx.op("Add", ctx.op("Mul", y, _per_channel(ctx, sc, t.rank)),
               _per_channel(ctx, bc, t.rank))
    stats = [ctx.op("Reshape", s, ctx.ints([t.shape[0], groups])) for s in (mean, rstd)]
    return _rounded(ctx, [y, *stats], compute, t.dtype)


TRANSLATORS = {
    "softmax": _softmax("Softmax"), "log_softmax": _softmax("LogSoftmax"),
    "batch_norm": _batch_norm, "layer_norm": _layer_norm, "group_norm": _group_norm,
}
