"""Shape ops → ONNX.  Shapes are static in the IR, so every shape, axis and index list is a
constant and Python's slice rules are resolved at export time."""

from __future__ import annotations

from typing import Callable

import numpy as np

from mskernel_sdk import Node

from ..export import Context

INT64_MIN = -(2**63)


def _constant(ctx: Context, node: Node) -> str:
    return ctx.const(node.attrs["value"], ctx.out_type().dtype)


def _full(ctx: Context, node: Node) -> str:
    t = ctx.out_type()
    return ctx.op("Expand", ctx.const(np.asarray(node.attrs["value"]), t.dtype), ctx.ints(t.shape))


def _iota(ctx: Context, node: Node) -> str:
    t = ctx.out_type()
    axis = node.attrs["axis"] % len(t.shape)
    column = tuple(-1 if i == axis else 1 for i in range(t.rank))
    if t.dtype.is_complex:  # no ONNX op makes complex numbers: the values, as pairs
        values = np.broadcast_to(np.arange(t.shape[axis]).reshape(column), t.shape)
        return ctx.const(values, t.dtype)
    line = ctx.op("Range", ctx.scalar_int(0), ctx.scalar_int(t.shape[axis]), ctx.scalar_int(1))
    line = ctx.convert(line, "int64", t.dtype)
    return ctx.op("Expand", reshape(ctx, line, column), ctx.ints(t.shape))


def _reshape(ctx: Context, node: Node, x: str) -> str:
    return reshape(ctx, x, ctx.out_type().shape)


def reshape(ctx: Context, x: str, shape: tuple[int, ...]) -> str:
    """``x`` reshaped to ``shape``; a 0 in ``shape`` is a size (ONNX reads it as "copy the
    input's" unless ``allowzero``, from opset 14; before, a tensor of no elements is a
    constant)."""
    if 0 not in shape:
        return ctx.op("Reshape", x, ctx.ints(shape))
    if ctx.opset >= 14:
        return ctx.op("Reshape", x, ctx.ints(shape), allowzero=1)
    return ctx.const(np.zeros(shape), ctx.out_type().dtype)


def _transpose(ctx: Context, node: Node, x: str) -> str:
    rank = ctx.in_type().rank
    perm = node.attrs["perm"]
    perm = list(reversed(range(rank))) if perm is None else [p % rank for p in perm]
    if perm == sorted(perm):
        return ctx.op("Identity", x)
    return ctx.op("Transpose", x, perm=perm)


def _broadcast_to(ctx: Context, node: Node, x: str) -> str:
    return ctx.op("Expand", x, ctx.ints(node.attrs["shape"]))


def _concat(ctx: Context, node: Node, *xs: str) -> str:
    return ctx.op("Concat", *xs, axis=node.attrs["axis"] % ctx.out_type().rank)


def _stack(ctx: Context, node: Node, *xs: str) -> str:
    axis = node.attrs["axis"] % ctx.out_type().rank
    rows = [ctx.op("Unsqueeze", x, ctx.ints([axis])) for x in xs]
    return ctx.op("Concat", *rows, axis=axis) if len(rows) > 1 else rows[0]


def _split(ctx: Context, node: Node, x: str) -> list[str]:
    rank = ctx.in_type().rank
    axis = node.attrs["axis"] % rank
    sizes = node.attrs["sizes"]
    if len(sizes) == 1:
        return [ctx.op("Identity", x)]
    return ctx.op("Split", x, ctx.ints(sizes), outputs=len(sizes), axis=axis)


def python_slice(start: int, stop: int, step: int, size: int) -> tuple[int, int]:
    """Python's slice bounds, resolved for an axis of ``size``, as ONNX Slice reads them: a
    negative step's "before the first element" is ``INT64_MIN`` (-1 would count from the
    end)."""
    first, last, _ = slice(start, stop, step).indices(size)
    if step < 0 and last < 0:
        last = INT64_MIN
    return first, last


def _slice(ctx: Context, node: Node, x: str) -> str:
    shape = ctx.in_type().shape
    rank = len(shape)
    axes = node.attrs["axes"]
    axes = list(range(rank)) if axes is None else [a % rank for a in axes]
    steps = node.attrs["steps"] or (1,) * len(axes)
    starts, stops = [], []
    for axis, start, stop, step in zip(axes, node.attrs["starts"], node.attrs["stops"], steps):
        first, last = python_slice(start, stop, step, shape[axis])
        starts.append(first)
        stops.append(last)
    return ctx.op("Slice", x, ctx.ints(starts), ctx.ints(stops), ctx.ints(axes),
                  ctx.ints(steps))


def _squeeze(ctx: Context, node: Node, x: str) -> str:
    shape = ctx.in_type().shape
    axes = node.attrs["axes"]
    axes = [i for i, d in enumerate(shape) if d == 1] if axes is None else \
        sorted(a % len(shape) for a in axes)
    if not axes:
        return ctx.op("Identity", x)
    return ctx.op("Squeeze", x, ctx.ints(axes))


def _expand_dims(ctx: Context, node: Node, x: str) -> str:
    rank = ctx.out_type().rank
    if not node.attrs["axes"]:
        return ctx.op("Identity", x)
    return ctx.op("Unsqueeze", x, ctx.ints(sorted(a % rank for a in node.attrs["axes"])))


def _tile(ctx: Context, node: Node, x: str) -> str:
    shape = ctx.in_type().shape
    reps = list(node.attrs["reps"])
    rank = max(len(reps), len(shape))
    if len(shape) < rank:
        x = reshape(ctx, x, (1,) * (rank - len(shape)) + tuple(shape))
    return ctx.op("Tile", x, ctx.ints([1] * (rank - len(reps)) + reps))


def _flip(ctx: Context, node: Node, x: str) -> str:
    rank = ctx.in_type().rank
    axes = node.attrs["axes"]
    axes = list(range(rank)) if axes is None else sorted({a % rank for a in axes})
    if not axes:
        return ctx.op("Identity", x)
    return ctx.op("Slice", x, ctx.ints([-1] * len(axes)), ctx.ints([INT64_MIN] * len(axes)),
                  ctx.ints(axes), ctx.ints([-1] * len(axes)))


def _repeat(ctx: Context, node: Node, x: str) -> str:
    """Each element ``repeats`` times: a new axis after ``axis``, expanded, then merged."""
    shape = ctx.in_type().shape
    repeats, axis = node.attrs["repeats"], node.attrs["axis"]
    if axis is None:
        shape = (int(np.prod(shape)),)
        x, axis = reshape(ctx, x, shape), 0
    axis %= len(shape)
    spread = ctx.op("Unsqueeze", x, ctx.ints([axis + 1]))
    wide = list(shape[:axis + 1]) + [repeats] + list(shape[axis + 1:])
    return reshape(ctx, ctx.op("Expand", spread, ctx.ints(wide)), ctx.out_type().shape)


def _pad(ctx: Context, node: Node, x: str) -> str:
    """Negative pads crop first (a Slice); then ``constant`` pads with ONNX Pad, and
    ``reflect``/``edge`` with Pad where ONNX's modes agree with NumPy's (a reflection
    shorter than the axis), else by gathering the rows NumPy would copy."""
    shape = ctx.in_type().shape
    pads = node.attrs["pads"]
    mode = node.attrs["mode"]
    widths = list(zip(pads[0::2], pads[1::2]))
    if any(lo < 0 or hi < 0 for lo, hi in widths):
        axes = [i for i, (lo, hi) in enumerate(widths) if lo < 0 or hi < 0]
        starts = [max(-widths[i][0], 0) for i in axes]
        stops = [shape[i] - max(-widths[i][1], 0) for i in axes]
        x = ctx.op("Slice", x, ctx.ints(starts), ctx.ints(stops), ctx.ints(axes))
        shape = tuple(d + min(lo, 0) + min(hi, 0) for d, (lo, hi) in zip(shape, widths))
        widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    if not any(lo or hi for lo, hi in widths):
        return ctx.op("Identity", x)
    onnx_pads = ctx.ints([lo for lo, _ in widths] + [hi for _, hi in widths])
    dt = ctx.in_type().dtype
    if mode == "constant":
        return ctx.typed("Pad", x, onnx_pads, ctx.const(np.asarray(node.attrs["value"]), dt),
                         dt=dt, widen=(0, 2), mode="constant")
    fits = all(lo < d and hi < d for d, (lo, hi) in zip(shape, widths) if lo or hi)
    if fits:
        return ctx.typed("Pad", x, onnx_pads, dt=dt, widen=(0,), mode=mode)
    for axis, (lo, hi) in enumerate(widths):
        if lo or hi:
            rows = np.pad(np.arange(shape[axis]), (lo, hi), mode=mode)
            x = ctx.op("Gather", x, ctx.ints(rows), axis=axis)
    return x


def _triangle(upper: int) -> Callable[..., str]:
    def translate(ctx: Context, node: Node, x: str) -> str:
        t = ctx.in_type()
        k = node.attrs["k"]
        if ctx.opset >= 14 and ctx.accepts("Trilu", t.dtype):
            return ctx.op("Trilu", x, ctx.scalar_int(k), upper=upper)
        rows, cols = t.shape[-2:]
        keep = np.triu(np.ones((rows, cols), bool), k) if upper else \
            np.tril(np.ones((rows, cols), bool), k)
        zero = ctx.const(np.zeros(()), t.dtype)
        return ctx.typed("Where", ctx.const(keep, "bool"), x, zero, dt=t.dtype, widen=(1, 2))
    return translate


TRANSLATORS = {
    "constant": _constant, "full": _full, "iota": _iota, "reshape": _reshape,
    "transpose": _transpose, "broadcast_to": _broadcast_to, "concat": _concat, "stack": _stack,
    "split": _split, "slice": _slice, "squeeze": _squeeze, "expand_dims": _expand_dims,
    "tile": _tile, "flip": _flip, "repeat": _repeat, "pad": _pad, "tril": _triangle(0),
    "triu": _triangle(1),
}
