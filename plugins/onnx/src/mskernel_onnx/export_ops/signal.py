"""``fft`` → ONNX ``DFT`` (opset 17 and later), in DFT's layout: a complex tensor is a real
tensor with a trailing dimension of 2 (real, imaginary), a real signal one with a trailing 1
(see :func:`mskernel_onnx.export.complex_pairs`).

The signal is first cut or zero-padded to the transform length (NumPy's ``n``), so ``DFT``
always transforms a whole axis; a leading batch axis of 1 is added around it, since ``DFT``
counts the signal axes after a batch axis.  ``rfft`` is ``DFT`` with ``onesided``.

Inverses run the forward ``DFT``: ``ifft(x) = conj(DFT(conj(x))) / n``, which keeps float64
exact on runtimes whose inverse ``DFT`` is less accurate (ONNX Runtime 1.32's is off by ~1e-8
at lengths that are not powers of two).  ``irfft`` transforms the conjugate of the full
Hermitian spectrum (the conjugates of the given ``n // 2 + 1`` bins, then bins
``n - n // 2 - 1 .. 1`` reversed) and keeps the real part: the imaginary parts of the zero
and Nyquist bins drop out, as in NumPy.  ``norm``'s factor is one ``Mul`` (with the final
conjugation folded in)."""

from __future__ import annotations

import math

import numpy as np

from mskernel_sdk import DType, Node, dtype as to_dtype

from ..export import Context, pair_dtype
from .elementwise import TRANSLATORS as ELEMENTWISE, unary


def _fit(ctx: Context, x: str, shape: tuple[int, ...], axis: int, length: int, dt: DType) -> str:
    """``x`` (``shape``, in the pair layout) cut or zero-padded to ``length`` along ``axis``."""
    size = shape[axis]
    if size > length:
        return ctx.op("Slice", x, ctx.ints([0]), ctx.ints([length]), ctx.ints([axis]))
    if size < length:
        pads = [0] * (2 * len(shape))
        pads[len(shape) + axis] = length - size
        return ctx.op("Pad", x, ctx.ints(pads), ctx.const(np.zeros(()), dt))
    return x


def _dft(ctx: Context, x: str, length: int, axis: int, *, onesided: bool) -> str:
    """The forward ``DFT`` along ``axis``, unscaled."""
    if ctx.opset < 20:
        return ctx.op("DFT", x, ctx.scalar_int(length), axis=axis, onesided=int(onesided))
    return ctx.op("DFT", x, ctx.scalar_int(length), ctx.scalar_int(axis),
                  onesided=int(onesided))


def _scale(norm: str, inverse: bool, length: int) -> float:
    """``norm``'s factor on the unscaled sum, forward or inverse."""
    return {"backward": 1.0 / length if inverse else 1.0, "ortho": 1 / math.sqrt(length),
            "forward": 1.0 if inverse else 1.0 / length}[norm]


def _fft(ctx: Context, node: Node, x: str) -> str:
    if ctx.opset < 17:
        ctx.fail("ONNX's DFT exists from opset 17")
    t = ctx.in_type(0)
    axis, n, norm = node.attrs["axis"] % t.rank, node.attrs["n"], node.attrs["norm"]
    inverse, real = node.attrs["inverse"], node.attrs["real"]
    dt = pair_dtype(t.dtype)
    conjugate = ctx.const(np.array([1.0, -1.0]), dt)
    batched = ctx.op("Unsqueeze", x, ctx.ints([0]))
    if real and not inverse:
        signal = ctx.op("Unsqueeze", batched, ctx.ints([-1]))
        shape, length = (1, *t.shape, 1), n or t.shape[axis]
    else:
        signal, shape = batched, (1, *t.shape, 2)
        length = n or (2 * (t.shape[axis] - 1) if real else t.shape[axis])
    at = axis + 1
    scale = _scale(norm, inverse, length)
    if real and inverse:  # the conjugate of the full spectrum: conj(bins 0..h-1), bins n-h..1
        half = length // 2 + 1
        signal = _fit(ctx, signal, shape, at, half, dt)
        parts = [ctx.op("Mul", signal, conjugate)]
        if length - half > 0:
            parts.append(ctx.op("Slice", signal, ctx.ints([length - half]), ctx.ints([0]),
                                ctx.ints([at]), ctx.ints([-1])))
        signal = parts[0] if len(parts) == 1 else ctx.op("Concat", *parts, axis=at)
        spectrum = _dft(ctx, signal, length, at, onesided=False)
        result = ctx.op("Squeeze", ctx.op("Slice", spectrum, ctx.ints([0]), ctx.ints([1]),
                                          ctx.ints([-1])), ctx.ints([0, -1]))
        factor = np.asarray(scale)
    else:
        signal = _fit(ctx, signal, shape, at, length, dt)
        if inverse:
            signal = ctx.op("Mul", signal, conjugate)
        result = ctx.op("Squeeze", _dft(ctx, signal, length, at, onesided=real), ctx.ints([0]))
        factor = np.array([scale, -scale]) if inverse else np.asarray(scale)
    if np.any(factor != 1.0):
        result = ctx.op("Mul", result, ctx.const(factor, dt))
    return result


def _real(ctx: Context, node: Node, x: str) -> str:
    return _part(ctx, x, 0)


def _imag(ctx: Context, node: Node, x: str) -> str:
    return _part(ctx, x, 1)


def _part(ctx: Context, x: str, which: int) -> str:
    t = ctx.in_type(0)
    if not t.dtype.is_complex:
        return x if which == 0 else ctx.op("Expand", ctx.const(np.zeros(()), t.dtype),
                                           ctx.ints(t.shape))
    return ctx.op("Squeeze", ctx.op("Slice", x, ctx.ints([which]), ctx.ints([which + 1]),
                                    ctx.ints([-1])), ctx.ints([-1]))


def _conj(ctx: Context, node: Node, x: str) -> str:
    t = ctx.in_type(0)
    if not t.dtype.is_complex:
        return x
    return ctx.op("Mul", x, ctx.const(np.array([1.0, -1.0]), pair_dtype(t.dtype)))


def _abs(ctx: Context, node: Node, x: str) -> str:
    """``|z|`` as the norm of the pair (``ReduceL2`` over the trailing axis)."""
    t = ctx.in_type(0)
    if not t.dtype.is_complex:
        return unary("Abs")(ctx, node, x)
    if ctx.opset < 18:
        return ctx.op("ReduceL2", x, axes=[-1], keepdims=0)
    return ctx.op("ReduceL2", x, ctx.ints([-1]), keepdims=0)


def _cast(ctx: Context, node: Node, x: str) -> str:
    """Casts to, from and between complex dtypes in the pair layout: a real value gains a zero
    imaginary part, a complex one cast to a real dtype keeps its real part (NumPy's cast)."""
    src, dst = ctx.in_type(0).dtype, to_dtype(node.attrs["dtype"])
    if not src.is_complex and not dst.is_complex:
        return ELEMENTWISE["cast"](ctx, node, x)
    if not src.is_complex:
        rank = ctx.in_type(0).rank + 1
        value = ctx.op("Unsqueeze", ctx.convert(x, src, pair_dtype(dst)), ctx.ints([-1]))
        return ctx.op("Pad", value, ctx.ints([0] * (2 * rank - 1) + [1]))
    if not dst.is_complex:
        return ctx.convert(_part(ctx, x, 0), pair_dtype(src), dst)
    return ctx.convert(x, pair_dtype(src), pair_dtype(dst))


TRANSLATORS = {"fft": _fft, "real": _real, "imag": _imag, "conj": _conj, "abs": _abs,
               "cast": _cast}
#: the ops whose translations read complex values in the pair layout
COMPLEX_OPS = frozenset(TRANSLATORS) | {"constant", "iota"}
