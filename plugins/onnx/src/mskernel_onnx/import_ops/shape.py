"""Shape ONNX ops: reshaping, slicing, joining, padding and making tensors.

Shapes are static, so every shape-valued input (``Reshape``'s target, ``Slice``'s bounds,
``Pad``'s widths ...) must be known at import time; ``Shape`` and ``Size`` are constants.
Where an ONNX parameter moved from an attribute to an input (``Split``'s sizes at opset 13,
``Slice``'s bounds at opset 10, ``Pad``'s widths at opset 11) both forms are read.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from mskernel_sdk import Value

from ..protos import element_dtype
from .common import (
    INT64_MAX, axes, axis, broadcast, check_table, dtype, optional_attr_or_input, rank, scalar,
    shape,
)

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]


def _reshape(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    target = list(ctx.attr("shape") if ctx.version < 5 else ctx.ints(1))
    if not ctx.attr("allowzero", 0):
        for i, d in enumerate(target):
            if d == 0:
                if i >= rank(x):
                    ctx.fail(f"shape {target} copies dim {i} (a 0), but the input has rank "
                             f"{rank(x)}")
                target[i] = shape(x)[i]
    return ctx.op("reshape", x, shape=tuple(target))


def _shape(ctx: "NodeContext") -> Value:
    dims = shape(ctx.input(0))
    n = len(dims)
    start = min(max(ctx.attr("start", 0) + (n if ctx.attr("start", 0) < 0 else 0), 0), n)
    end = ctx.attr("end", n)
    end = min(max(end + (n if end < 0 else 0), 0), n)
    return ctx.constant(np.array(dims[start:end], np.int64))


def _size(ctx: "NodeContext") -> Value:
    return ctx.constant(np.array(math.prod(shape(ctx.input(0))), np.int64))


def _flatten(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    a = ctx.attr("axis", 1)
    a = a + rank(x) if a < 0 else a
    if not 0 <= a <= rank(x):
        ctx.fail(f"axis {ctx.attr('axis', 1)} is out of range for rank {rank(x)}")
    dims = shape(x)
    return ctx.op("reshape", x, shape=(math.prod(dims[:a]), math.prod(dims[a:])))


def _squeeze(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    found = optional_attr_or_input(ctx, "axes", 1, since=13)
    if found is None:
        return ctx.op("squeeze", x)
    return ctx.op("squeeze", x, axes=axes(ctx, found, rank(x)))


def _unsqueeze(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    found = optional_attr_or_input(ctx, "axes", 1, since=13)
    if not found:
        ctx.fail("axes are required")
    out_rank = rank(x) + len(found)
    return ctx.op("expand_dims", x, axes=tuple(sorted(axes(ctx, found, out_rank))))


def _transpose(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    perm = ctx.attr("perm", None)
    return ctx.op("transpose", x, perm=None if perm is None else tuple(perm))


def _concat(ctx: "NodeContext") -> Value:
    values = ctx.inputs()
    return ctx.op("concat", *values, axis=axis(ctx, ctx.attr("axis"), rank(values[0])))


def _split(ctx: "NodeContext") -> tuple[Value, ...]:
    x = ctx.input(0)
    a = axis(ctx, ctx.attr("axis", 0), rank(x))
    dim = shape(x)[a]
    sizes = optional_attr_or_input(ctx, "split", 1, since=13)
    if sizes is None:
        parts = ctx.attr("num_outputs", len(ctx.node.output))
        chunk = -(-dim // parts)
        sizes = tuple(min(chunk, dim - i * chunk) for i in range(parts))
    if sum(sizes) != dim:
        ctx.fail(f"split sizes {list(sizes)} do not add up to dim {dim} of axis {a}")
    return ctx.op("split", x, axis=a, sizes=tuple(sizes))


def _slice(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    if ctx.version < 10:
        starts, ends = ctx.attr("starts"), ctx.attr("ends")
        found_axes, steps = ctx.attr("axes", None), None
    else:
        starts, ends = ctx.ints(1), ctx.ints(2)
        found_axes, steps = ctx.ints(3, None), ctx.ints(4, None)
    if found_axes is None:
        found_axes = tuple(range(len(starts)))
    if not len(starts) == len(ends) == len(found_axes) == len(steps or starts):
        ctx.fail("starts, ends, axes and steps must have one entry per sliced axis")
    if steps is not None and 0 in steps:
        ctx.fail("steps must not be 0")
    clamp = lambda v: int(min(max(v, -(2**63)), INT64_MAX))  # noqa: E731
    return ctx.op("slice", x, starts=tuple(map(clamp, starts)), stops=tuple(map(clamp, ends)),
                  steps=None if steps is None else tuple(steps),
                  axes=axes(ctx, found_axes, rank(x)))


def _expand(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    target = ctx.ints(1)
    dims = shape(x)
    n = max(len(dims), len(target))
    a = (1,) * (n - len(dims)) + dims
    b = (1,) * (n - len(target)) + tuple(target)
    out = []
    for p, q in zip(a, b):
        if p != q and 1 not in (p, q):
            ctx.fail(f"input shape {list(dims)} cannot be expanded to {list(target)}")
        out.append(q if p == 1 else p)
    return broadcast(ctx, x, out)


def _tile(ctx: "NodeContext") -> Value:
    return ctx.op("tile", ctx.input(0), reps=ctx.ints(1))


def _pad(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    n = rank(x)
    if ctx.version < 11:
        pads, value = ctx.attr("pads" if ctx.version >= 2 else "paddings"), ctx.attr("value", 0.0)
        which = tuple(range(n))
    else:
        pads = ctx.ints(1)
        value = ctx.scalar(2, 0) if ctx.has(2) else 0
        which = axes(ctx, ctx.ints(3, tuple(range(n))), n)
    if len(pads) != 2 * len(which):
        ctx.fail(f"pads {list(pads)} need a begin and an end for each of the {len(which)} axes")
    widths = [(0, 0)] * n
    for i, a in enumerate(which):
        widths[a] = (int(pads[i]), int(pads[i + len(which)]))
    mode = ctx.attr("mode", "constant")
    if mode == "wrap":
        return _wrap_pad(ctx, x, widths)
    if mode not in ("constant", "reflect", "edge"):
        ctx.fail(f"mode {mode!r} is not one of constant, reflect, edge, wrap")
    flat = tuple(v for pair in widths for v in pair)
    if mode == "constant" and not dtype(x).is_floating and value != int(value):
        ctx.fail(f"constant_value {value} does not fit {dtype(x)}")
    return ctx.op("pad", x, pads=flat, mode=mode, value=float(value))


def _wrap_pad(ctx: "NodeContext", x: Value, widths: list[tuple[int, int]]) -> Value:
    """Circular padding: each axis extended by copies of its other end."""
    for a, (lo, hi) in enumerate(widths):
        dim = shape(x)[a]
        if lo < 0 or hi < 0:
            x = ctx.op("slice", x, starts=(max(-lo, 0),), stops=(dim - max(-hi, 0),), axes=(a,))
            lo, hi, dim = max(lo, 0), max(hi, 0), shape(x)[a]
        if not (lo or hi):
            continue
        reps = -(-(lo + hi) // dim) + 1 if dim else 0
        tiled = ctx.op("concat", *([x] * (2 * reps + 1)), axis=a)
        start = reps * dim - lo
        x = ctx.op("slice", tiled, starts=(start,), stops=(start + dim + lo + hi,), axes=(a,))
    return x


def _constant_of_shape(ctx: "NodeContext") -> Value:
    dims = ctx.ints(0)
    value = ctx.attr("value", None)
    fill = np.zeros((), np.float32) if value is None else np.asarray(value).reshape(())
    return broadcast(ctx, ctx.constant(fill, element_dtype(_tensor_type(ctx, "value", 1))),
                     dims)


def _tensor_type(ctx: "NodeContext", name: str, default: int) -> int:
    proto = ctx.attrs.get(name)
    return proto.t.data_type if proto is not None else default


def _constant(ctx: "NodeContext") -> Value:
    for name, kind in (("value_float", np.float32), ("value_floats", np.float32),
                       ("value_int", np.int64), ("value_ints", np.int64)):
        if name in ctx.attrs:
            return ctx.constant(np.asarray(ctx.attr(name), kind))
    if "value" in ctx.attrs:
        return ctx.constant(ctx.attr("value"), element_dtype(ctx.attrs["value"].t.data_type))
    found = ", ".join(ctx.attrs) or "none"
    ctx.fail(f"only tensor, float and int values are supported (attributes: {found})")


def _eye_like(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    dt = element_dtype(ctx.attr("dtype")) if "dtype" in ctx.attrs else dtype(x)
    rows, cols = shape(x)
    check_table(ctx, (rows, cols), "EyeLike's matrix")
    return ctx.constant(np.eye(rows, cols, ctx.attr("k", 0)), dt)


def _range(ctx: "NodeContext") -> Value:
    start, limit, delta = ctx.input(0), ctx.scalar(1), ctx.scalar(2)
    first, step = ctx.scalar(0), delta
    if step == 0:
        ctx.fail("delta must not be 0")
    n = max(math.ceil((limit - first) / step), 0)
    dt = dtype(start)
    counts = ctx.op("iota", shape=(n,), axis=0, dtype=dt) if n else ctx.constant(
        np.zeros(0), dt)
    return ctx.op("add", ctx.op("mul", counts, ctx.input(2)), start)


def _trilu(ctx: "NodeContext") -> Value:
    k = ctx.scalar(1, 0)
    return ctx.op("triu" if ctx.attr("upper", 1) else "tril", ctx.input(0), k=int(k))


def _depth_to_space(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    b = ctx.attr("blocksize")
    n, c, h, w = shape(x)
    if ctx.attr("mode", "DCR") == "DCR":
        y = ctx.op("reshape", x, shape=(n, b, b, c // (b * b), h, w))
        y = ctx.op("transpose", y, perm=(0, 3, 4, 1, 5, 2))
    else:
        y = ctx.op("reshape", x, shape=(n, c // (b * b), b, b, h, w))
        y = ctx.op("transpose", y, perm=(0, 1, 4, 2, 5, 3))
    return ctx.op("reshape", y, shape=(n, c // (b * b), h * b, w * b))


def _space_to_depth(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    b = ctx.attr("blocksize")
    n, c, h, w = shape(x)
    y = ctx.op("reshape", x, shape=(n, c, h // b, b, w // b, b))
    y = ctx.op("transpose", y, perm=(0, 3, 5, 1, 2, 4))
    return ctx.op("reshape", y, shape=(n, c * b * b, h // b, w // b))


def _reverse_sequence(ctx: "NodeContext") -> Value:
    """Reverse the first ``sequence_lens[b]`` steps of each batch entry: a gather along the
    time axis at ``len - 1 - t`` where ``t < len``."""
    x, lens = ctx.input(0), ctx.input(1)
    batch_axis, time_axis = ctx.attr("batch_axis", 1), ctx.attr("time_axis", 0)
    dims = shape(x)
    steps = ctx.op("iota", shape=dims, axis=time_axis, dtype="int64")
    lens_shape = [1] * len(dims)
    lens_shape[batch_axis] = dims[batch_axis]
    lengths = ctx.op("reshape", ctx.op("cast", lens, dtype="int64"), shape=tuple(lens_shape))
    flipped = ctx.op("sub", ctx.op("sub", lengths, scalar(ctx, 1, "int64")), steps)
    index = ctx.op("where", ctx.op("less", steps, lengths), flipped, steps)
    return ctx.op("take_along_axis", x, index, axis=time_axis)


def _compress(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    keep = np.flatnonzero(np.asarray(ctx.const(1)).astype(bool))
    a: Optional[int] = ctx.attr("axis", None)
    if a is None:
        x, a = ctx.op("reshape", x, shape=(-1,)), 0
    a = axis(ctx, a, rank(x))
    if keep.size and keep[-1] >= shape(x)[a]:
        ctx.fail(f"condition is longer than dim {shape(x)[a]} of axis {a}")
    return ctx.op("gather", x, ctx.constant(keep.astype(np.int64)), axis=a)


OPS: dict[str, Handler] = {
    "Reshape": _reshape, "Shape": _shape, "Size": _size, "Flatten": _flatten,
    "Squeeze": _squeeze, "Unsqueeze": _unsqueeze, "Transpose": _transpose, "Concat": _concat,
    "Split": _split, "Slice": _slice, "Expand": _expand, "Tile": _tile, "Pad": _pad,
    "ConstantOfShape": _constant_of_shape, "Constant": _constant, "EyeLike": _eye_like,
    "Range": _range, "Trilu": _trilu, "DepthToSpace": _depth_to_space,
    "SpaceToDepth": _space_to_depth, "ReverseSequence": _reverse_sequence,
    "Compress": _compress,
}
