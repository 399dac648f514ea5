"""``mskernel.ops``' discrete Fourier transforms under ``numpy.fft``'s and MindSpore's names and
conventions (``norm=None`` is ``"backward"``; MindSpore's ``dim`` is NumPy's ``axis``/``axes``):

- 1-D, the core op ``fft``: ``fft``, ``ifft``, ``rfft``, ``irfft`` (``x, n, axis, norm``);
- n-D, compositions of the 1-D op over the axes (``x, s, axes, norm``): ``fft2``, ``ifft2``,
  ``fftn``, ``ifftn``, ``rfft2``, ``irfft2``, ``rfftn``, ``irfftn``.  A separable transform is
  the 1-D one along each axis in turn, each scaled by its own normalisation, so the composition
  is exact, and its derivatives, batching and export are the 1-D op's.  The real transforms
  take the last of ``axes`` as the half-spectrum axis, as NumPy does: ``rfftn`` is ``rfft``
  there, then ``fft`` along the others; ``irfftn`` is ``ifft`` along the others, then
  ``irfft`` there (``s[-1]`` real values, default ``2 * (m - 1)``).

Real inputs to the complex transforms, and integer inputs to the real ones, are cast first
(complex128/float64 kept, else 64/32 bits)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mskernel
from mskernel import Tensor, ops

Axes = Sequence[int] | None


def _transform(x: Any, n: int | None, axis: int, norm: str | None, inverse: bool,
               real: bool) -> Tensor:
    t = x if isinstance(x, Tensor) else Tensor(x)
    if real and not inverse:
        t = t if t.dtype in (mskernel.float32, mskernel.float64) else ops.cast(t, mskernel.float32)
    elif not t.dtype.is_complex:
        t = ops.cast(t, mskernel.complex128 if t.dtype == mskernel.float64 else mskernel.complex64)
    return ops.apply("fft", t, axis=axis, n=n, norm=norm or "backward", inverse=inverse, real=real)


def fft(x: Any, n: int | None = None, axis: int = -1, norm: str | None = None, *,
        dim: int | None = None) -> Tensor:
    """The discrete Fourier transform along ``axis`` (or ``dim``), cut or zero-padded to ``n``."""
    return _transform(x, n, axis if dim is None else dim, norm, False, False)


def ifft(x: Any, n: int | None = None, axis: int = -1, norm: str | None = None, *,
         dim: int | None = None) -> Tensor:
    """The inverse of :func:`fft`."""
    return _transform(x, n, axis if dim is None else dim, norm, True, False)


def rfft(x: Any, n: int | None = None, axis: int = -1, norm: str | None = None, *,
         dim: int | None = None) -> Tensor:
    """The ``n // 2 + 1`` non-negative frequency terms of the transform of a real input."""
    return _transform(x, n, axis if dim is None else dim, norm, False, True)


def irfft(x: Any, n: int | None = None, axis: int = -1, norm: str | None = None, *,
          dim: int | None = None) -> Tensor:
    """The inverse of :func:`rfft`: ``n`` (default ``2 * (m - 1)``) real values."""
    return _transform(x, n, axis if dim is None else dim, norm, True, True)


def _plan(name: str, x: Any, s: Sequence[int] | None, axes: Axes,
          dim: Axes) -> tuple[Tensor, list[int], list[int | None]]:
    """The tensor, the axes and the length along each (``None``: the input's), as NumPy
    resolves them: ``axes`` default to the last ``len(s)`` axes, or to all axes."""
    t = x if isinstance(x, Tensor) else Tensor(x)
    axes = dim if dim is not None else axes
    if axes is None:
        axes = range(-len(s), 0) if s is not None else range(len(t.shape))
    axes = [int(a) for a in axes]
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{name}: s={tuple(s)} and axes={tuple(axes)} must have the same "
                         f"length (input shape {tuple(t.shape)})")
    if not axes:
        raise ValueError(f"{name}: no axes to transform (input shape {tuple(t.shape)})")
    return t, axes, list(s) if s is not None else [None] * len(axes)


def fftn(x: Any, s: Sequence[int] | None = None, axes: Axes = None, norm: str | None = None,
         *, dim: Axes = None) -> Tensor:
    """The n-D discrete Fourier transform over ``axes`` (all by default), each cut or
    zero-padded to its length in ``s``."""
    t, axes, lengths = _plan("fftn", x, s, axes, dim)
    for axis, n in zip(axes, lengths):
        t = fft(t, n, axis, norm)
    return t


def ifftn(x: Any, s: Sequence[int] | None = None, axes: Axes = None, norm: str | None = None,
          *, dim: Axes = None) -> Tensor:
    """The inverse of :func:`fftn`."""
    t, axes, lengths = _plan("ifftn", x, s, axes, dim)
    for axis, n in zip(axes, lengths):
        t = ifft(t, n, axis, norm)
    return t


def rfftn(x: Any, s: Sequence[int] | None = None, axes: Axes = None, norm: str | None = None,
          *, dim: Axes = None) -> Tensor:
    """The n-D transform of a real input, the last axis halved (``s[-1] // 2 + 1`` terms)."""
    t, axes, lengths = _plan("rfftn", x, s, axes, dim)
    t = rfft(t, lengths[-1], axes[-1], norm)
    for axis, n in zip(axes[:-1], lengths[:-1]):
        t = fft(t, n, axis, norm)
    return t


def irfftn(x: Any, s: Sequence[int] | None = None, axes: Axes = None, norm: str | None = None,
           *, dim: Axes = None) -> Tensor:
    """The inverse of :func:`rfftn`: real values, ``s[-1]`` (default ``2 * (m - 1)``) along
    the last axis."""
    t, axes, lengths = _plan("irfftn", x, s, axes, dim)
    for axis, n in zip(axes[:-1], lengths[:-1]):
        t = ifft(t, n, axis, norm)
    return irfft(t, lengths[-1], axes[-1], norm)


def fft2(x: Any, s: Sequence[int] | None = None, axes: Axes = (-2, -1), norm: str | None = None,
         *, dim: Axes = None) -> Tensor:
    """:func:`fftn` over the last two axes."""
    return fftn(x, s, axes, norm, dim=dim)


def ifft2(x: Any, s: Sequence[int] | None = None, axes: Axes = (-2, -1), norm: str | None = None,
          *, dim: Axes = None) -> Tensor:
    """:func:`ifftn` over the last two axes."""
    return ifftn(x, s, axes, norm, dim=dim)


def rfft2(x: Any, s: Sequence[int] | None = None, axes: Axes = (-2, -1), norm: str | None = None,
          *, dim: Axes = None) -> Tensor:
    """:func:`rfftn` over the last two axes."""
    return rfftn(x, s, axes, norm, dim=dim)


def irfft2(x: Any, s: Sequence[int] | None = None, axes: Axes = (-2, -1),
           norm: str | None = None, *, dim: Axes = None) -> Tensor:
    """:func:`irfftn` over the last two axes."""
    return irfftn(x, s, axes, norm, dim=dim)

