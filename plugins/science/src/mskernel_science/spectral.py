"""``mskernel.ops.fft``, ``ifft``, ``rfft`` and ``irfft``: ``numpy.fft``'s signatures over the
core op ``fft`` (``norm=None`` is ``"backward"``).  Real inputs to the complex transforms, and
integer inputs to :func:`rfft`, are cast first (complex128/float64 kept, else 64/32 bits)."""

from __future__ import annotations

from typing import Any, Optional

import mskernel
from mskernel import Tensor, ops


def _transform(x: Any, n: Optional[int], axis: int, norm: Optional[str], inverse: bool,
               real: bool) -> Tensor:
    t = x if isinstance(x, Tensor) else Tensor(x)
    if real and not inverse:
        t = t if t.dtype in (mskernel.float32, mskernel.float64) else ops.cast(t, mskernel.float32)
    elif not t.dtype.is_complex:
        t = ops.cast(t, mskernel.complex128 if t.dtype == mskernel.float64 else mskernel.complex64)
    return ops.apply("fft", t, axis=axis, n=n, norm=norm or "backward", inverse=inverse, real=real)


def fft(x: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Tensor:
    """The discrete Fourier transform along ``axis``, cut or zero-padded to ``n``."""
    return _transform(x, n, axis, norm, False, False)


def ifft(x: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Tensor:
    """The inverse of :func:`fft`."""
    return _transform(x, n, axis, norm, True, False)


def rfft(x: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Tensor:
    """The ``n // 2 + 1`` non-negative frequency terms of the transform of a real input."""
    return _transform(x, n, axis, norm, False, True)


def irfft(x: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Tensor:
    """The inverse of :func:`rfft`: ``n`` (default ``2 * (m - 1)``) real values."""
    return _transform(x, n, axis, norm, True, True)


FUNCTIONS = ("fft", "ifft", "rfft", "irfft")
