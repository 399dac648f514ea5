"""Quantisation: ``QuantizeLinear``/``DequantizeLinear`` (per tensor, per axis and blocked),
``QLinearMatMul``, ``QLinearConv``, ``MatMulInteger``, ``ConvInteger``.

Integer products are computed exactly (in int32 for matmul, in float64 for convolution, whose
sums of products of 8-bit values stay far below 2**53) and requantised as ONNX specifies:
round half to even, add the zero point, saturate to the output type.  8-, 4- and 2-bit
float types are not mskernel dtypes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from mskernel_sdk import DType, Value, dtype as to_dtype

from ..protos import element_dtype
from .common import axis as normalize_axis, cast, dtype, rank, scalar, shape
from .nn import window

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]


def _along(ctx: "NodeContext", param: Value, like: Value, a: int, block: int) -> Value:
    """A scale or zero point shaped to broadcast against ``like``: a scalar as it is, a
    vector along axis ``a``, a blocked tensor repeated ``block`` times along ``a``."""
    if rank(param) == 0 or (rank(param) == 1 and shape(param)[0] == 1 and not block):
        return ctx.op("reshape", param, shape=())
    a = normalize_axis(ctx, a, rank(like))
    if block:
        repeated = ctx.op("repeat", param, repeats=block, axis=a)
        if shape(repeated)[a] != shape(like)[a]:
            repeated = ctx.op("slice", repeated, starts=(0,), stops=(shape(like)[a],), axes=(a,))
        return repeated
    view = [1] * rank(like)
    view[a] = shape(param)[0]
    return ctx.op("reshape", param, shape=tuple(view))


def saturate(ctx: "NodeContext", v: Value, dt: DType) -> Value:
    """Round half to even, clamp to ``dt``'s range, cast."""
    info = np.iinfo(dt.storage)
    v = ctx.op("round", v)
    v = ctx.op("minimum", ctx.op("maximum", v, scalar(ctx, info.min, v)),
               scalar(ctx, info.max, v))
    return cast(ctx, v, dt)


def _quantize(ctx: "NodeContext") -> Value:
    x, scale = ctx.input(0), ctx.input(1)
    a, block = ctx.attr("axis", 1), ctx.attr("block_size", 0)
    zp = ctx.optional(2)
    if zp is not None:
        out = dtype(zp)
    elif ctx.attr("output_dtype", 0):
        out = element_dtype(ctx.attr("output_dtype"))
    else:
        out = to_dtype("uint8")
    if not out.is_integer:
        ctx.fail(f"quantising to {out} is not supported")
    work = element_dtype(ctx.attr("precision")) if ctx.attr("precision", 0) else dtype(x)
    q = ctx.op("div", cast(ctx, x, work), cast(ctx, _along(ctx, scale, x, a, block), work))
    q = ctx.op("round", q)
    if zp is not None:
        q = ctx.op("add", q, cast(ctx, _along(ctx, zp, x, a, block), work))
    return saturate(ctx, q, out)


def dequantized(ctx: "NodeContext", x: Value, scale: Value, zp: Optional[Value], a: int = 1,
                block: int = 0, work: str = "float32") -> Value:
    """``(x - zero_point) * scale`` computed in ``work``."""
    v = cast(ctx, x, work)
    if zp is not None:
        v = ctx.op("sub", v, cast(ctx, _along(ctx, zp, x, a, block), work))
    return ctx.op("mul", v, cast(ctx, _along(ctx, scale, x, a, block), work))


def _dequantize(ctx: "NodeContext") -> Value:
    x, scale = ctx.input(0), ctx.input(1)
    out = element_dtype(ctx.attr("output_dtype")) if ctx.attr("output_dtype", 0) else dtype(scale)
    y = dequantized(ctx, x, scale, ctx.optional(2), ctx.attr("axis", 1), ctx.attr("block_size", 0))
    return cast(ctx, y, out)


def _centred(ctx: "NodeContext", x: Value, zp: Optional[Value], work: str,
             channel_axis: Optional[int] = None) -> Value:
    v = cast(ctx, x, work)
    if zp is None:
        return v
    if channel_axis is not None and rank(zp) == 1 and shape(zp)[0] > 1:
        zp = _along(ctx, zp, x, channel_axis, 0)
    else:
        zp = ctx.op("reshape", zp, shape=()) if rank(zp) else zp
    return ctx.op("sub", v, cast(ctx, zp, work))


def _matmul_integer(ctx: "NodeContext") -> Value:
    a = _centred(ctx, ctx.input(0), ctx.optional(2), "int32")
    b = _centred(ctx, ctx.input(1), ctx.optional(3), "int32", channel_axis=-1)
    return ctx.op("matmul", a, b)


def _integer_conv(ctx: "NodeContext", x: Value, w: Value) -> Value:
    geo = window(ctx, x, tuple(ctx.attr("kernel_shape", shape(w)[2:])))
    return ctx.op("conv", x, w, stride=geo.strides, padding=geo.flat_pads,
                  dilation=geo.dilations, groups=ctx.attr("group", 1))


def _conv_integer(ctx: "NodeContext") -> Value:
    x = _centred(ctx, ctx.input(0), ctx.optional(2), "float64")
    w = _centred(ctx, ctx.input(1), ctx.optional(3), "float64", channel_axis=0)
    return cast(ctx, _integer_conv(ctx, x, w), "int32")


def _requantized(ctx: "NodeContext", acc: Value, a_scale: Value, b_scale: Value,
                 y_scale: Value, y_zp: Optional[Value], out: DType, channel_axis: int) -> Value:
    """``acc * (a_scale * b_scale / y_scale) + y_zp``, saturated to ``out``."""
    work = dtype(acc)
    ratio = ctx.op("div", ctx.op("mul", cast(ctx, ctx.op("reshape", a_scale, shape=()), work),
                                 cast(ctx, _along(ctx, b_scale, acc, channel_axis, 0), work)),
                   cast(ctx, ctx.op("reshape", y_scale, shape=()), work))
    v = ctx.op("mul", acc, ratio)
    if y_zp is not None:
        v = ctx.op("add", v, cast(ctx, ctx.op("reshape", y_zp, shape=()), work))
    return saturate(ctx, v, out)


def _qlinear_matmul(ctx: "NodeContext") -> Value:
    a = _centred(ctx, ctx.input(0), ctx.optional(2), "int32")
    b = _centred(ctx, ctx.input(3), ctx.optional(5), "int32", channel_axis=-1)
    acc = cast(ctx, ctx.op("matmul", a, b), "float64")
    y_zp = ctx.optional(7)
    out = dtype(y_zp) if y_zp is not None else dtype(ctx.input(0))
    return _requantized(ctx, acc, ctx.input(1), ctx.input(4), ctx.input(6), y_zp, out, -1)


def _qlinear_conv(ctx: "NodeContext") -> Value:
    x = _centred(ctx, ctx.input(0), ctx.optional(2), "float64")
    w = _centred(ctx, ctx.input(3), ctx.optional(5), "float64", channel_axis=0)
    acc = _integer_conv(ctx, x, w)
    if ctx.has(8):
        bias = cast(ctx, ctx.input(8), "float64")
        acc = ctx.op("add", acc, ctx.op("reshape", bias, shape=(1, -1) + (1,) * (rank(acc) - 2)))
    y_zp = ctx.optional(7)
    out = dtype(y_zp) if y_zp is not None else dtype(ctx.input(0))
    return _requantized(ctx, acc, ctx.input(1), ctx.input(4), ctx.input(6), y_zp, out, 1)


OPS: dict[str, Handler] = {
    "QuantizeLinear": _quantize, "DequantizeLinear": _dequantize,
    "MatMulInteger": _matmul_integer, "ConvInteger": _conv_integer,
    "QLinearMatMul": _qlinear_matmul, "QLinearConv": _qlinear_conv,
}
