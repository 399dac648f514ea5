"""Discrete Fourier transforms along one axis, ``numpy.fft``'s :func:`fft`, :func:`ifft`,
:func:`rfft` and :func:`irfft` over the core op ``fft``.  ``norm=None`` is ``"backward"``;
real inputs to the complex transforms, and integer inputs to :func:`rfft`, are cast first."""

from __future__ import annotations

from typing import Any, Optional

from ...ir.dtypes import complex64, complex128, float32, float64
from ..tensor import Tensor
from ._core import _op, asarray, astype


def _transform(x: Any, n: Optional[int], axis: int, norm: Optional[str], inverse: bool,
               real: bool) -> Tensor:
    t = asarray(x)
    if real and not inverse:
        t = t if t.dtype in (float32, float64) else astype(t, float32)
    elif not t.dtype.is_complex:
        t = astype(t, complex128 if t.dtype == float64 else complex64)
    return _op("fft", t, axis=axis, n=n, norm=norm or "backward", inverse=inverse, real=real)


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
