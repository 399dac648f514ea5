"""Signal processing: ``DFT``, ``STFT`` and ``MelWeightMatrix`` (the window functions are
ONNX functions).

ONNX holds complex signals as a trailing axis of 2 (real, imaginary).  A DFT of static
length ``L`` is a product with cosine and sine matrices built at import time:
``Re Y = Re x · C + Im x · S`` and ``Im Y = Im x · C - Re x · S`` (signs flipped and divided
by ``L`` for the inverse), ``onesided`` keeps the first ``L // 2 + 1`` frequencies, and the
inverse of a one-sided spectrum (irfft) weighs the mirrored frequencies twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from mskernel_sdk import Value

from ..protos import element_dtype
from .common import axis as normalize_axis, check_table, dtype, move_axis, rank, shape

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]


def _complex_parts(ctx: "NodeContext", x: Value) -> tuple[Value, Optional[Value]]:
    """The real and imaginary parts of an ONNX signal ``[..., 1 or 2]`` (``None``: real)."""
    if shape(x)[-1] == 1:
        return ctx.op("squeeze", x, axes=(-1,)), None
    re, im = ctx.op("split", x, axis=-1, sizes=(1, 1))
    return ctx.op("squeeze", re, axes=(-1,)), ctx.op("squeeze", im, axes=(-1,))


def _fit(ctx: "NodeContext", v: Value, length: int) -> Value:
    """``v`` cut or zero-padded to ``length`` along its last axis (as NumPy's fft ``n``)."""
    n = shape(v)[-1]
    if n > length:
        return ctx.op("slice", v, starts=(0,), stops=(length,), axes=(-1,))
    if n < length:
        pads = (0, 0) * (rank(v) - 1) + (0, length - n)
        return ctx.op("pad", v, pads=pads)
    return v


def dft(ctx: "NodeContext", re: Value, im: Optional[Value], length: int, inverse: bool,
        onesided: bool) -> tuple[Value, Value]:
    """The DFT along the last axis of ``re`` (and ``im``): real and imaginary parts."""
    dt = dtype(re)
    irfft = inverse and onesided
    n_in = length // 2 + 1 if irfft else length
    re = _fit(ctx, re, n_in)
    im = None if im is None else _fit(ctx, im, n_in)
    n_out = length // 2 + 1 if onesided and not inverse else length
    check_table(ctx, (n_in, n_out), "the DFT matrix")
    j = np.arange(n_in)[:, None]
    k = np.arange(n_out)[None, :]
    angle = 2 * np.pi * ((j * k) % length) / length
    cos, sin = np.cos(angle), np.sin(angle)
    if irfft:  # mirrored frequencies count twice; the real signal is all there is
        weight = np.full(n_in, 2.0)
        weight[0] = 1.0
        if length % 2 == 0:
            weight[-1] = 1.0
        cos, sin = cos * weight[:, None] / length, sin * weight[:, None] / length
        out = ctx.op("matmul", re, ctx.constant(cos, dt))
        if im is not None:
            out = ctx.op("sub", out, ctx.op("matmul", im, ctx.constant(sin, dt)))
        return out, None  # type: ignore[return-value]
    sign = 1.0 if inverse else -1.0
    scale = 1.0 / length if inverse else 1.0
    c, s = ctx.constant(cos * scale, dt), ctx.constant(sign * sin * scale, dt)
    # (re + i im)(cos + i s) = (re cos - im s) + i (im cos + re s)
    out_re = ctx.op("matmul", re, c)
    out_im = ctx.op("matmul", re, s)
    if im is not None:
        out_re = ctx.op("sub", out_re, ctx.op("matmul", im, s))
        out_im = ctx.op("add", out_im, ctx.op("matmul", im, c))
    return out_re, out_im


def _stack_parts(ctx: "NodeContext", re: Value, im: Optional[Value]) -> Value:
    if im is None:
        return ctx.op("expand_dims", re, axes=(-1,))
    return ctx.op("stack", re, im, axis=-1)


def _dft(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    a = ctx.attr("axis", 1) if ctx.version < 20 else int(ctx.scalar(2, -2))
    a = normalize_axis(ctx, a, rank(x))
    if a == rank(x) - 1:
        ctx.fail("axis must not be the last axis (which holds the real and imaginary parts)")
    inverse, onesided = bool(ctx.attr("inverse", 0)), bool(ctx.attr("onesided", 0))
    default = 2 * (shape(x)[a] - 1) if inverse and onesided else shape(x)[a]
    length = int(ctx.scalar(1, default))
    re, im = _complex_parts(ctx, x)
    re = move_axis(ctx, re, a, -1)
    im = None if im is None else move_axis(ctx, im, a, -1)
    out_re, out_im = dft(ctx, re, im, length, inverse, onesided)
    out_re = move_axis(ctx, out_re, -1, a)
    out_im = None if out_im is None else move_axis(ctx, out_im, -1, a)
    return _stack_parts(ctx, out_re, out_im)


def _stft(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    step = int(ctx.scalar(1))
    window = ctx.optional(2)
    length = int(ctx.scalar(3, shape(window)[0] if window is not None else shape(x)[-2]))
    signal = shape(x)[-2]
    frames = 1 + (signal - length) // step
    if frames < 1:
        ctx.fail(f"a frame of {length} does not fit a signal of {signal}")
    check_table(ctx, (frames, length), "the STFT frame table")
    re, im = _complex_parts(ctx, x)  # [batch, signal]
    positions = ctx.constant(np.arange(frames)[:, None] * step + np.arange(length)[None, :])
    re = ctx.op("gather", re, positions, axis=1)  # [batch, frames, length]
    im = None if im is None else ctx.op("gather", im, positions, axis=1)
    if window is not None:
        re = ctx.op("mul", re, window)
        im = None if im is None else ctx.op("mul", im, window)
    out_re, out_im = dft(ctx, re, im, length, False, bool(ctx.attr("onesided", 1)))
    return _stack_parts(ctx, out_re, out_im)


def _mel_weight_matrix(ctx: "NodeContext") -> Value:
    """The triangular mel filter bank, computed at import time as ONNX's reference does."""
    bins, length = int(ctx.scalar(0)), int(ctx.scalar(1))
    rate, low, high = ctx.scalar(2), ctx.scalar(3), ctx.scalar(4)
    check_table(ctx, (length // 2 + 1, bins), "the mel weight matrix")
    to_mel = lambda f: 2595 * np.log10(1 + f / 700)  # noqa: E731
    step = (to_mel(high) - to_mel(low)) / (bins + 2)
    mel = np.arange(bins + 2) * step + to_mel(low)
    edges = (((length + 1) * (700 * (np.power(10, mel / 2595) - 1))) // rate).astype(int)
    out = np.zeros((length // 2 + 1, bins))
    for i in range(bins):
        lo, mid, hi = edges[i], edges[i + 1], edges[i + 2]
        if mid == lo:
            out[mid, i] = 1
        else:
            out[lo:mid + 1, i] = (np.arange(lo, mid + 1) - lo) / (mid - lo)
        if hi > mid:
            out[mid:hi, i] = (hi - np.arange(mid, hi)) / (hi - mid)
    return ctx.constant(out, element_dtype(ctx.attr("output_datatype", 1)))


OPS: dict[str, Handler] = {"DFT": _dft, "STFT": _stft, "MelWeightMatrix": _mel_weight_matrix}
