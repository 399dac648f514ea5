"""Convolution and pooling → ONNX.  ``padding`` pairs ``(lo0, hi0, lo1, hi1, ...)`` become
ONNX's ``[lo0, lo1, ..., hi0, hi1, ...]``.  PyTorch's ``ceil_mode`` (a last window must
start inside the input or its low padding) is written as explicit padding: max pooling pads
with the lowest value, average pooling divides window sums by the reference's divisors.
Adaptive pooling reshapes an axis its output size divides, else gathers each window as the
reference does."""

from __future__ import annotations

import math
from typing import Callable, Optional, Sequence

import numpy as np

from mskernel_sdk import DType, Node, dtype as to_dtype

from ..export import Context
from .sorting import lowest


def onnx_pads(padding: Optional[Sequence[int]], n: int) -> list[int]:
    pairs = list(zip(padding[0::2], padding[1::2])) if padding else [(0, 0)] * n
    return [lo for lo, _ in pairs] + [hi for _, hi in pairs]


def _ones(values: Optional[Sequence[int]], n: int) -> list[int]:
    return list(values) if values is not None else [1] * n


def _conv(ctx: Context, node: Node, x: str, w: str) -> str:
    t = ctx.in_type()
    n = t.rank - 2
    a = node.attrs
    return ctx.typed("Conv", x, w, dt=t.dtype, kernel_shape=list(ctx.in_type(1).shape[2:]),
                     strides=_ones(a["stride"], n), pads=onnx_pads(a["padding"], n),
                     dilations=_ones(a["dilation"], n), group=a["groups"])


def _conv_transpose(ctx: Context, node: Node, x: str, w: str) -> str:
    """``ConvTranspose``.  ONNX Runtime takes an ``output_padding`` below the stride only
    (PyTorch: below the stride or the dilation); the positions it adds at the high end have
    no input under them, so a larger one is written as less cropping plus zero padding."""
    t = ctx.in_type()
    n = t.rank - 2
    a = node.attrs
    stride = _ones(a["stride"], n)
    extra = list(a["output_padding"] or [0] * n)
    pads = onnx_pads(a["padding"], n)
    grow = [0] * n
    if any(o >= s for o, s in zip(extra, stride)):
        highs = pads[n:]
        grow = [max(o - hi, 0) for o, hi in zip(extra, highs)]
        pads = pads[:n] + [max(hi - o, 0) for o, hi in zip(extra, highs)]
        extra = [0] * n
    out = ctx.typed("ConvTranspose", x, w, dt=t.dtype,
                    kernel_shape=list(ctx.in_type(1).shape[2:]), strides=stride, pads=pads,
                    output_padding=extra, dilations=_ones(a["dilation"], n), group=a["groups"])
    if any(grow):
        zero = ctx.const(np.zeros(()), t.dtype)
        out = ctx.op("Pad", out, ctx.ints([0] * (n + 2) + [0, 0] + grow), zero)
    return out


def _window_padding(ctx: Context, kernel: Sequence[int], stride: Sequence[int],
                    dilation: Sequence[int], padding: Optional[Sequence[int]]
                    ) -> list[tuple[int, int]]:
    """The (lo, hi) padding that gives the node's output size without ceil_mode: the high
    side is extended to hold the last window, as the reference pads."""
    t, out = ctx.in_type(), ctx.out_type()
    n = t.rank - 2
    pairs = list(zip(padding[0::2], padding[1::2])) if padding else [(0, 0)] * n
    result = []
    for size, o, k, s, d, (lo, hi) in zip(t.shape[2:], out.shape[2:], kernel, stride, dilation,
                                          pairs):
        extent = d * (k - 1) + 1
        result.append((lo, max(hi, (o - 1) * s + extent - size - lo)))
    return result


def _pool_window(node: Node) -> tuple[list[int], list[int]]:
    """A pooling node's kernel and strides (the kernel where it gives none)."""
    kernel = list(node.attrs["kernel"])
    return kernel, list(node.attrs["stride"] or kernel)


def _max_pool(ctx: Context, node: Node, x: str) -> str:
    t = ctx.in_type()
    a = node.attrs
    kernel, stride = _pool_window(node)
    dilation = _ones(a["dilation"], t.rank - 2)
    compute = ctx.compute_type("MaxPool", t.dtype)
    xc = ctx.convert(x, t.dtype, compute)
    pairs = _window_padding(ctx, kernel, stride, dilation, a["padding"])
    if any(lo or hi for lo, hi in pairs):  # explicit: ONNX limits pads to below the kernel
        pads = ctx.ints([0, 0] + [lo for lo, _ in pairs] + [0, 0] + [hi for _, hi in pairs])
        xc = ctx.op("Pad", xc, pads, ctx.const(lowest(t.dtype.storage), compute))
    out = ctx.op("MaxPool", xc, kernel_shape=kernel, strides=stride, dilations=dilation)
    return ctx.convert(out, compute, t.dtype)


def _avg_pool(ctx: Context, node: Node, x: str) -> str:
    t = ctx.in_type()
    n = t.rank - 2
    a = node.attrs
    kernel, stride = _pool_window(node)
    compute = to_dtype("float32") if t.dtype.name in ("float16", "bfloat16") else \
        ctx.compute_type("AveragePool", t.dtype)
    xc = ctx.convert(x, t.dtype, compute)
    if not a["ceil_mode"]:
        out = ctx.op("AveragePool", xc, kernel_shape=kernel, strides=stride,
                     pads=onnx_pads(a["padding"], n),
                     count_include_pad=int(a["count_include_pad"]))
    else:
        pairs = _window_padding(ctx, kernel, stride, [1] * n, a["padding"])
        pads = ctx.ints([0, 0] + [lo for lo, _ in pairs] + [0, 0] + [hi for _, hi in pairs])
        padded = ctx.op("Pad", xc, pads, ctx.const(np.zeros(()), compute))
        means = ctx.op("AveragePool", padded, kernel_shape=kernel, strides=stride)
        sums = ctx.op("Mul", means, ctx.const(np.asarray(float(math.prod(kernel))), compute))
        out = ctx.op("Div", sums, ctx.const(_divisors(ctx, kernel, stride, a), compute))
    return ctx.convert(out, compute, t.dtype)


def _divisors(ctx: Context, kernel: Sequence[int], stride: Sequence[int], a: dict) -> np.ndarray:
    """PyTorch's divisor of each ceil-mode window (as the reference's ``avg_divisors``)."""
    t, out = ctx.in_type(), ctx.out_type()
    n = t.rank - 2
    padding = a["padding"]
    pairs = list(zip(padding[0::2], padding[1::2])) if padding else [(0, 0)] * n
    counts = np.ones((), np.float64)
    for size, o, k, s, (lo, hi) in zip(t.shape[2:], out.shape[2:], kernel, stride, pairs):
        start = np.arange(o) * s - lo
        end = np.minimum(start + k, size + hi)
        if not a["count_include_pad"]:
            start, end = np.maximum(start, 0), np.minimum(end, size)
        counts = np.multiply.outer(counts, np.maximum(end - start, 1))
    return counts


def _adaptive(op_type: str, mean: bool) -> Callable[..., str]:
    def translate(ctx: Context, node: Node, x: str) -> str:
        t = ctx.in_type()
        dt = t.dtype
        compute = to_dtype("float32") if dt.name in ("float16", "bfloat16") and mean else dt
        compute = ctx.compute_type(op_type, compute)
        xc = ctx.convert(x, dt, compute)
        shape = list(t.shape)
        for axis, out in enumerate(node.attrs["output_size"], start=2):
            xc = _adaptive_axis(ctx, xc, shape, axis, out, op_type, mean, compute)
            shape[axis] = out
        return ctx.convert(xc, compute, dt)
    return translate


def _adaptive_axis(ctx: Context, x: str, shape: list[int], axis: int, out: int, op_type: str,
                   mean: bool, dt: DType) -> str:
    size = shape[axis]
    if size == out:
        return x
    reduce_axes = ctx.ints([axis + 1])
    as_input = op_type == "ReduceSum" or ctx.opset >= 18
    reduce = (lambda v: ctx.op(op_type, v, reduce_axes, keepdims=0)) if as_input else \
        (lambda v: ctx.op(op_type, v, axes=[axis + 1], keepdims=0))
    if size % out == 0:  # equal windows: split the axis in two and reduce the inner one
        split = shape[:axis] + [out, size // out] + shape[axis + 1:]
        reduced = reduce(ctx.op("Reshape", x, ctx.ints(split)))
        return ctx.op("Div", reduced, ctx.const(np.asarray(size // out), dt)) if mean else reduced
    i = np.arange(out)
    start, end = i * size // out, -(-(i + 1) * size // out)
    offsets = start[:, None] + np.arange(int((end - start).max()))
    index = np.minimum(offsets, end[:, None] - 1)  # past a window's end: its last element
    taken = ctx.op("Gather", x, ctx.ints(index.reshape(-1)), axis=axis)
    windows = shape[:axis] + list(index.shape) + shape[axis + 1:]
    taken = ctx.op("Reshape", taken, ctx.ints(windows))
    if not mean:
        return reduce(taken)
    trailing = (1,) * (len(shape) - axis - 1)
    valid = (offsets < end[:, None]).reshape(index.shape + trailing)
    masked = ctx.op("Where", ctx.const(valid, "bool"), taken, ctx.const(np.zeros(()), dt))
    counts = (end - start).reshape((out,) + trailing).astype(np.float64)
    return ctx.op("Div", reduce(masked), ctx.const(counts, dt))


TRANSLATORS = {
    "conv": _conv, "conv_transpose": _conv_transpose, "max_pool": _max_pool,
    "avg_pool": _avg_pool, "adaptive_avg_pool": _adaptive("ReduceSum", True),
    "adaptive_max_pool": _adaptive("ReduceMax", False),
}
