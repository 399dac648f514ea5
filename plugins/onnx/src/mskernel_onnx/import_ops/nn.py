"""Neural-network ONNX ops: convolution, pooling, normalisation, softmax, ``Gemm``/``MatMul``,
``Dropout``.

Window geometry: ONNX lists pads as all begins then all ends (``[b1, b2, e1, e2]``), the core
as ``(lo, hi)`` pairs per spatial dim; ``auto_pad`` (``SAME_UPPER``/``SAME_LOWER``/``VALID``) is
resolved into explicit pads from the static input shape.  Pooling with ``ceil_mode`` follows
PyTorch's rule (a window starting past the padded input is dropped), as ONNX's reference does.
Where the core op lacks a parameter (``AveragePool``/``LpPool`` dilations, ``MaxPool``'s
``Indices`` output) the pool is computed from window sums (a depthwise convolution with a
kernel of ones) or from a table of window positions built at import time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from mskernel_sdk import Value

from .common import axis, broadcast, cast, check_table, dtype, rank, scalar, shape

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]


# --- window geometry ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """Kernel, strides, dilations and (lo, hi) pads per spatial dim, and the output size."""

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads: tuple[tuple[int, int], ...]
    out: tuple[int, ...]

    @property
    def flat_pads(self) -> tuple[int, ...]:
        return tuple(v for pair in self.pads for v in pair)

    @property
    def extended_pads(self) -> tuple[tuple[int, int], ...]:
        """Pads with ``hi`` grown so that a plain (floor) window count gives :attr:`out`
        (what ``ceil_mode`` adds)."""
        return tuple((lo, max(hi, (o - 1) * s + d * (k - 1) + 1 - lo - n))
                     for (lo, hi), o, s, d, k, n in zip(self.pads, self.out, self.strides,
                                                        self.dilations, self.kernel,
                                                        self.sizes))

    sizes: tuple[int, ...] = ()


def window(ctx: "NodeContext", x: Value, kernel: tuple[int, ...],
           ceil_mode: bool = False) -> Window:
    sizes = shape(x)[2:]
    n = len(sizes)
    strides = tuple(ctx.attr("strides", (1,) * n))
    dilations = tuple(ctx.attr("dilations", (1,) * n))
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    if len(kernel) != n or len(strides) != n or len(dilations) != n:
        ctx.fail(f"kernel {list(kernel)}, strides {list(strides)} and dilations "
                 f"{list(dilations)} need one entry per spatial dim of {list(shape(x))}")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = []
        for size, k, s, d in zip(sizes, kernel, strides, dilations):
            total = max((-(-size // s) - 1) * s + d * (k - 1) + 1 - size, 0)
            small = total // 2
            pads.append((small, total - small) if auto_pad == "SAME_UPPER" else
                        (total - small, small))
    elif auto_pad == "VALID":
        pads = [(0, 0)] * n
    else:
        flat = tuple(ctx.attr("pads", (0,) * (2 * n)))
        if len(flat) != 2 * n:
            ctx.fail(f"pads {list(flat)} need a begin and an end per spatial dim")
        pads = list(zip(flat[:n], flat[n:]))
    out = []
    for size, k, s, d, (lo, hi) in zip(sizes, kernel, strides, dilations, pads):
        span = size + lo + hi - d * (k - 1) - 1
        count = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (count - 1) * s >= size + lo:
            count -= 1
        if count < 1:
            ctx.fail(f"the window {list(kernel)} does not fit the input {list(shape(x))}")
        out.append(count)
    return Window(tuple(kernel), strides, dilations, tuple(pads), tuple(out), tuple(sizes))


def _kernel(ctx: "NodeContext", x: Value) -> tuple[int, ...]:
    found = ctx.attr("kernel_shape", None)
    return tuple(found) if found is not None else shape(x)[2:]


def _channel_shaped(ctx: "NodeContext", v: Value, n: int) -> Value:
    """A per-channel vector ``[C]`` shaped ``[1, C, 1, ...]`` for an input of rank ``n``."""
    return ctx.op("reshape", v, shape=(1, shape(v)[0]) + (1,) * (n - 2))


# --- convolution -------------------------------------------------------------------------------


def _conv(ctx: "NodeContext") -> Value:
    x, w = ctx.input(0), ctx.input(1)
    geo = window(ctx, x, tuple(ctx.attr("kernel_shape", shape(w)[2:])))
    y = ctx.op("conv", x, w, stride=geo.strides, padding=geo.flat_pads, dilation=geo.dilations,
               groups=ctx.attr("group", 1))
    if ctx.has(2):
        y = ctx.op("add", y, _channel_shaped(ctx, ctx.input(2), rank(y)))
    return y


def _conv_transpose(ctx: "NodeContext") -> Value:
    x, w = ctx.input(0), ctx.input(1)
    sizes = shape(x)[2:]
    n = len(sizes)
    kernel = tuple(ctx.attr("kernel_shape", shape(w)[2:]))
    strides = tuple(ctx.attr("strides", (1,) * n))
    dilations = tuple(ctx.attr("dilations", (1,) * n))
    extra = list(ctx.attr("output_padding", (0,) * n))
    full = [(i - 1) * s + d * (k - 1) + 1 + e
            for i, s, d, k, e in zip(sizes, strides, dilations, kernel, extra)]
    target = ctx.attr("output_shape", None)
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    if target is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        wanted = list(target)[-n:] if target is not None else [i * s for i, s in
                                                                  zip(sizes, strides)]
        pads = []
        for f, want in zip(full, wanted):
            total = f - want
            if total < 0:  # the output is larger than the full convolution: pad at the end
                pads.append((0, 0))
                continue
            small = total // 2
            pads.append((total - small, small) if auto_pad != "SAME_UPPER" and target is None
                        or auto_pad == "SAME_LOWER" else (small, total - small))
        extra = [max(want - f, 0) + e for f, want, e in zip(full, wanted, extra)]
    elif auto_pad == "VALID":
        pads = [(0, 0)] * n
    else:
        flat = tuple(ctx.attr("pads", (0,) * (2 * n)))
        pads = list(zip(flat[:n], flat[n:]))
    y = ctx.op("conv_transpose", x, w, stride=strides,
               padding=tuple(v for pair in pads for v in pair), output_padding=tuple(extra),
               dilation=dilations, groups=ctx.attr("group", 1))
    if ctx.has(2):
        y = ctx.op("add", y, _channel_shaped(ctx, ctx.input(2), rank(y)))
    return y


# --- pooling -----------------------------------------------------------------------------------


def window_sum(ctx: "NodeContext", x: Value, geo: Window) -> Value:
    """The sum over each (dilated) window, zero outside the input: a depthwise convolution
    with a kernel of ones."""
    channels = shape(x)[1]
    check_table(ctx, (channels, *geo.kernel), "the window-sum kernel")
    ones = ctx.constant(np.ones((channels, 1, *geo.kernel)), dtype(x))
    pads = tuple(v for pair in geo.extended_pads for v in pair)
    return ctx.op("conv", x, ones, stride=geo.strides, padding=pads, dilation=geo.dilations,
                  groups=channels)


def _counts(ctx: "NodeContext", x: Value, geo: Window, include_pad: bool) -> Value:
    """How many elements each window averages over (a known value: shapes are static)."""
    dims = shape(x)
    check_table(ctx, [d + lo + hi for d, (lo, hi) in zip(dims[2:], geo.pads)], "the pool's "
                "divisor mask")
    if include_pad:
        mask = np.ones((1, 1) + tuple(d + lo + hi for d, (lo, hi) in zip(dims[2:], geo.pads)))
        inner = Window(geo.kernel, geo.strides, geo.dilations,
                       tuple((0, 0) for _ in geo.pads), geo.out,
                       tuple(m for m in mask.shape[2:]))
    else:
        mask = np.ones((1, 1) + dims[2:])
        inner = geo
    count = window_sum(ctx, ctx.constant(mask, dtype(x)), inner)
    return ctx.op("maximum", count, scalar(ctx, 1, x))


def _average_pool(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    ceil_mode = bool(ctx.attr("ceil_mode", 0))
    geo = window(ctx, x, _kernel(ctx, x), ceil_mode)
    include_pad = bool(ctx.attr("count_include_pad", 0))
    if all(d == 1 for d in geo.dilations):
        return ctx.op("avg_pool", x, kernel=geo.kernel, stride=geo.strides,
                      padding=geo.flat_pads, ceil_mode=ceil_mode,
                      count_include_pad=include_pad)
    return ctx.op("div", window_sum(ctx, x, geo), _counts(ctx, x, geo, include_pad))


def _lp_pool(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    geo = window(ctx, x, _kernel(ctx, x), bool(ctx.attr("ceil_mode", 0)))
    p = float(ctx.attr("p", 2))
    powered = ctx.op("pow", ctx.op("abs", x), scalar(ctx, p, x))
    return ctx.op("pow", window_sum(ctx, powered, geo), scalar(ctx, 1 / p, x))


def _max_pool(ctx: "NodeContext") -> list[Value]:
    x = ctx.input(0)
    ceil_mode = bool(ctx.attr("ceil_mode", 0))
    geo = window(ctx, x, _kernel(ctx, x), ceil_mode)
    if len(ctx.node.output) > 1 and ctx.node.output[1]:
        return _max_pool_with_indices(ctx, x, geo)
    return [ctx.op("max_pool", x, kernel=geo.kernel, stride=geo.strides,
                   padding=geo.flat_pads, dilation=geo.dilations, ceil_mode=ceil_mode)]


def _window_positions(geo: Window) -> np.ndarray:
    """``[*out, *kernel]`` flat positions in the input of every window element (-1 for
    padding): the window table a pool gathers through."""
    grids = []
    for o, k, s, d, (lo, _) in zip(geo.out, geo.kernel, geo.strides, geo.dilations, geo.pads):
        grids.append(np.arange(o)[:, None] * s - lo + np.arange(k)[None, :] * d)
    n = len(grids)
    flat = np.zeros(geo.out + geo.kernel, np.int64)
    inside = np.ones(geo.out + geo.kernel, bool)
    stride = 1
    for i in reversed(range(n)):
        view = [1] * (2 * n)
        view[i], view[n + i] = geo.out[i], geo.kernel[i]
        coord = grids[i].reshape(view)
        inside &= (coord >= 0) & (coord < geo.sizes[i])
        flat = flat + coord * stride
        stride *= geo.sizes[i]
    return np.where(inside, flat, -1)


def _max_pool_with_indices(ctx: "NodeContext", x: Value, geo: Window) -> list[Value]:
    """Values and flat input indices (``storage_order`` 0: row-major over N, C and the
    spatial dims) by gathering each window through its position table."""
    n, c = shape(x)[:2]
    spatial = int(np.prod(geo.sizes))
    check_table(ctx, geo.out + geo.kernel, "the MaxPool window table")
    table = _window_positions(geo).reshape(int(np.prod(geo.out)), -1)
    flat = ctx.op("reshape", x, shape=(n, c, spatial))
    lowest = -np.inf if dtype(x).is_floating else np.iinfo(dtype(x).storage).min
    padded = ctx.op("concat", flat, broadcast(ctx, scalar(ctx, lowest, x), (n, c, 1)), axis=2)
    gather_at = np.where(table < 0, spatial, table)
    windows = ctx.op("gather", padded, ctx.constant(gather_at), axis=2)
    best = ctx.op("argmax", windows, axis=3, keepdims=True)
    values = ctx.op("reshape", ctx.op("take_along_axis", windows, best, axis=3),
                    shape=(n, c, *geo.out))
    position = ctx.op("take_along_axis", broadcast(ctx, ctx.constant(gather_at),
                                                   (n, c, *table.shape)), best, axis=3)
    if ctx.attr("storage_order", 0):
        h, w = geo.sizes[-2:]
        position = ctx.op("add", ctx.op("mul", ctx.op("remainder", position,
                                                      scalar(ctx, w, "int64")),
                                        scalar(ctx, h, "int64")),
                          ctx.op("floor_divide", position, scalar(ctx, w, "int64")))
    base = ctx.op("mul", ctx.op("iota", shape=(n, c, 1, 1), axis=1, dtype="int64"),
                  scalar(ctx, spatial, "int64"))
    base = ctx.op("add", base, ctx.op("mul", ctx.op("iota", shape=(n, c, 1, 1), axis=0,
                                                    dtype="int64"),
                                      scalar(ctx, c * spatial, "int64")))
    indices = ctx.op("reshape", ctx.op("add", position, base), shape=(n, c, *geo.out))
    return [values, indices]


def _max_unpool(ctx: "NodeContext") -> Value:
    """Scatter the values to their flat indices.  Indices refer to the shape MaxPool's input
    had (from kernel, strides and pads); a different ``output_shape`` keeps each value's
    coordinates, as ONNX's reference does."""
    x, idx = ctx.input(0), ctx.input(1)
    kernel = tuple(ctx.attr("kernel_shape"))
    k = len(kernel)
    strides = tuple(ctx.attr("strides", (1,) * k))
    flat_pads = tuple(ctx.attr("pads", (0,) * (2 * k)))
    pooled = shape(x)[:2] + tuple((i - 1) * s + kk - lo - hi for i, s, kk, lo, hi in
                                  zip(shape(x)[2:], strides, kernel, flat_pads[:k],
                                      flat_pads[k:]))
    out = tuple(ctx.ints(2)) if ctx.has(2) else pooled
    index = cast(ctx, ctx.op("reshape", idx, shape=(-1,)), "int64")
    if out != pooled:  # re-ravel: coordinates in the pooled input's shape, flat in out's
        rest, moved = index, None
        stride = 1
        for d_in, d_out in zip(reversed(pooled), reversed(out)):
            coord = ctx.op("remainder", rest, scalar(ctx, d_in, "int64"))
            rest = ctx.op("floor_divide", rest, scalar(ctx, d_in, "int64"))
            term = ctx.op("mul", coord, scalar(ctx, stride, "int64"))
            moved = term if moved is None else ctx.op("add", moved, term)
            stride *= d_out
        index = moved
    zeros = broadcast(ctx, scalar(ctx, 0, x), (int(np.prod(out)),))
    flat_idx = ctx.op("reshape", index, shape=(-1, 1))
    updates = ctx.op("reshape", x, shape=(-1,))
    return ctx.op("reshape", ctx.op("scatter_nd", zeros, flat_idx, updates), shape=out)


def global_pool(op: str) -> Handler:
    def handler(ctx: "NodeContext") -> Value:
        x = ctx.input(0)
        spatial = tuple(range(2, rank(x)))
        return ctx.op(op, x, axes=spatial, keepdims=True)
    return handler


# --- normalisation -----------------------------------------------------------------------------


def _batch_norm(ctx: "NodeContext") -> list[Value]:
    x, scale, bias, mean, var = (ctx.input(i) for i in range(5))
    eps = ctx.attr("epsilon", 1e-5)
    training = ctx.version >= 14 and bool(ctx.attr("training_mode", 0))
    if not training:
        return [ctx.op("batch_norm", x, scale, bias, mean, var, eps=eps)[0]]
    y, batch_mean, batch_var = ctx.op("batch_norm", x, scale, bias, mean, var, eps=eps,
                                      training=True)
    momentum = ctx.attr("momentum", 0.9)
    keep, take = scalar(ctx, momentum, mean), scalar(ctx, 1 - momentum, mean)
    running = [ctx.op("add", ctx.op("mul", old, keep), ctx.op("mul", new, take))
               for old, new in ((mean, batch_mean), (var, batch_var))]
    return [y, *running]


def _instance_norm(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    return ctx.op("group_norm", x, ctx.input(1), ctx.input(2), num_groups=shape(x)[1],
                  eps=ctx.attr("epsilon", 1e-5))[0]


def _layer_norm(ctx: "NodeContext") -> list[Value]:
    x = ctx.input(0)
    a = axis(ctx, ctx.attr("axis", -1), rank(x))
    normalized = shape(x)[a:]
    scale = broadcast(ctx, ctx.input(1), normalized)
    bias = (broadcast(ctx, ctx.input(2), normalized) if ctx.has(2)
            else broadcast(ctx, scalar(ctx, 0, x), normalized))
    y, mean, rstd = ctx.op("layer_norm", x, scale, bias, axis=a, eps=ctx.attr("epsilon", 1e-5))
    stats = tuple(shape(x)[:a]) + (1,) * (rank(x) - a)
    return [y, ctx.op("reshape", mean, shape=stats), ctx.op("reshape", rstd, shape=stats)]


def _group_norm(ctx: "NodeContext") -> object:
    if ctx.version < 21:  # scale and bias per group: ONNX's function says how
        return ctx.expand(ctx.session.schema_function(ctx))
    x = ctx.input(0)
    return ctx.op("group_norm", x, ctx.input(1), ctx.input(2),
                  num_groups=ctx.attr("num_groups"), eps=ctx.attr("epsilon", 1e-5))[0]


def _lp_normalization(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    a = axis(ctx, ctx.attr("axis", -1), rank(x))
    p = ctx.attr("p", 2)
    if p == 1:
        norm = ctx.op("sum", ctx.op("abs", x), axes=(a,), keepdims=True)
    elif p == 2:
        norm = ctx.op("sqrt", ctx.op("sum", ctx.op("square", x), axes=(a,), keepdims=True))
    else:
        ctx.fail(f"p must be 1 or 2, got {p}")
    zero = ctx.op("equal", norm, scalar(ctx, 0, norm))
    return ctx.op("div", x, ctx.op("where", zero, scalar(ctx, 1, norm), norm))


def _lrn(ctx: "NodeContext") -> Value:
    """Local response normalisation across channels: the window sum of squares comes from an
    average pool over the channel axis."""
    x = ctx.input(0)
    size = ctx.attr("size")
    alpha, beta, bias = ctx.attr("alpha", 1e-4), ctx.attr("beta", 0.75), ctx.attr("bias", 1.0)
    dims = shape(x)
    rest = int(np.prod(dims[2:]))
    squares = ctx.op("reshape", ctx.op("square", x), shape=(dims[0], 1, dims[1], rest))
    lo = (size - 1) // 2
    mean = ctx.op("avg_pool", squares, kernel=(size, 1), stride=(1, 1),
                  padding=(lo, size - 1 - lo, 0, 0), count_include_pad=True)
    total = ctx.op("reshape", mean, shape=dims)
    base = ctx.op("add", scalar(ctx, bias, x), ctx.op("mul", total, scalar(ctx, alpha, x)))
    return ctx.op("div", x, ctx.op("pow", base, scalar(ctx, beta, x)))


def softmax(op: str) -> Handler:
    """``Softmax``/``LogSoftmax``: one axis from opset 13, the input coerced to 2-D at
    ``axis`` before."""
    def handler(ctx: "NodeContext") -> Value:
        x = ctx.input(0)
        if ctx.version >= 13:
            return ctx.op(op, x, axis=axis(ctx, ctx.attr("axis", -1), rank(x)))
        a = axis(ctx, ctx.attr("axis", 1), rank(x))
        dims = shape(x)
        flat = ctx.op("reshape", x, shape=(math.prod(dims[:a]), math.prod(dims[a:])))
        return ctx.op("reshape", ctx.op(op, flat, axis=1), shape=dims)
    return handler


# --- linear algebra and dropout ----------------------------------------------------------------


def _gemm(ctx: "NodeContext") -> Value:
    a, b = ctx.input(0), ctx.input(1)
    if ctx.attr("transA", 0):
        a = ctx.op("transpose", a)
    if ctx.attr("transB", 0):
        b = ctx.op("transpose", b)
    y = ctx.op("matmul", a, b)
    alpha, beta = ctx.attr("alpha", 1.0), ctx.attr("beta", 1.0)
    if alpha != 1.0:
        y = ctx.op("mul", y, scalar(ctx, alpha, y))
    if ctx.has(2):
        c = ctx.input(2)
        if beta != 1.0:
            c = ctx.op("mul", c, scalar(ctx, beta, c))
        y = ctx.op("add", y, c)
    return y


def _matmul(ctx: "NodeContext") -> Value:
    return ctx.op("matmul", ctx.input(0), ctx.input(1))


def _einsum(ctx: "NodeContext") -> Value:
    return ctx.op("einsum", *ctx.inputs(), equation=ctx.attr("equation").replace(" ", ""))


def _dropout(ctx: "NodeContext") -> list[Value]:
    x = ctx.input(0)
    if ctx.version >= 12:
        ratio = float(ctx.scalar(1, 0.5))
        training = bool(ctx.scalar(2, False))
    else:
        ratio, training = ctx.attr("ratio", 0.5), False
    if not training or ratio == 0:
        return [x, broadcast(ctx, ctx.constant(np.array(True)), shape(x))]
    key = ctx.op("random_key", seed=int(ctx.attr("seed", 0)))
    keep = ctx.op("random_bernoulli", key, p=1 - ratio, shape=shape(x))
    scaled = ctx.op("div", x, scalar(ctx, 1 - ratio, x))
    return [ctx.op("where", keep, scaled, scalar(ctx, 0, x)), keep]


OPS: dict[str, Handler] = {
    "Conv": _conv, "ConvTranspose": _conv_transpose, "AveragePool": _average_pool,
    "MaxPool": _max_pool, "LpPool": _lp_pool, "MaxUnpool": _max_unpool,
    "GlobalAveragePool": global_pool("mean"), "GlobalMaxPool": global_pool("max"),
    "BatchNormalization": _batch_norm, "InstanceNormalization": _instance_norm,
    "LayerNormalization": _layer_norm, "GroupNormalization": _group_norm,
    "LpNormalization": _lp_normalization, "LRN": _lrn,
    "Softmax": softmax("softmax"), "LogSoftmax": softmax("log_softmax"),
    "Gemm": _gemm, "MatMul": _matmul, "Einsum": _einsum, "Dropout": _dropout,
}
