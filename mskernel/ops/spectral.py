"""The discrete Fourier transform along one axis: ``fft``, with NumPy's ``numpy.fft`` semantics.

``fft(x, axis=-1, n=None, norm="backward", inverse=False, real=False)`` is four transforms:

- complex to complex (``real=False``): ``numpy.fft.fft``, or ``ifft`` when ``inverse``;
- real to half spectrum (``real=True``): ``numpy.fft.rfft`` of a floating input, giving the
  ``n // 2 + 1`` non-negative frequencies (complex128 for float64, complex64 otherwise);
- half spectrum to real (``real=True, inverse=True``): ``numpy.fft.irfft`` of a complex input,
  giving ``n`` real values (``n`` defaults to ``2 * (m - 1)`` for ``m`` input values; the
  imaginary parts of the zero and, for even ``n``, Nyquist terms are ignored).

``n`` is the transform length: the input is cut or zero-padded along ``axis`` to ``n`` (to
``n // 2 + 1`` for the half-spectrum input).  ``norm`` scales as NumPy's: ``"backward"`` by
``1/n`` on the inverse, ``"forward"`` by ``1/n`` on the forward, ``"ortho"`` by ``1/sqrt(n)``
on both.  It is a primitive (see :mod:`.primitives`); the n-d transforms are compositions.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import numpy as np

from ..errors import InferError
from ..ir.dtypes import dtype as to_dtype
from ..ir.types import TensorType
from .registry import Attr, OpDef
from .rules import normalize_axis, require_kind, tensor, with_dim
from .samples import OpSample, SampleFn, accumulation_tolerance, random_array

NORMS = ("backward", "ortho", "forward")
_REAL_OF = {"complex64": "float32", "complex128": "float64"}


def transform_length(size: int, n: Optional[int], inverse: bool, real: bool) -> int:
    """The transform length ``n`` of an axis of ``size`` input values (its default filled)."""
    return n if n is not None else 2 * (size - 1) if real and inverse else size


def _fft_infer(x: TensorType, *, axis: int, n: Optional[int], norm: str, inverse: bool,
               real: bool) -> TensorType:
    x = tensor(x, "x")
    if x.rank == 0:
        raise InferError(f"expects an input of rank >= 1, got {x}")
    if norm not in NORMS:
        raise InferError(f"norm must be one of {', '.join(NORMS)}, got {norm!r}")
    if real and not inverse:
        require_kind(x, "f")
        out = to_dtype("complex128" if x.dtype.name == "float64" else "complex64")
    else:
        require_kind(x, "c", "a complex")
        out = to_dtype(_REAL_OF[x.dtype.name]) if real else x.dtype
    a = normalize_axis(axis, x.rank)
    length = transform_length(x.shape[a], n, inverse, real)
    if length < 1:
        raise InferError(f"transform length n={length} along axis {axis} of {x} must be >= 1")
    return TensorType(out, with_dim(x.shape, a, length // 2 + 1 if real and not inverse
                                    else length))


def _fft(x: np.ndarray, *, axis: int, n: Optional[int], norm: str, inverse: bool,
         real: bool) -> np.ndarray:
    name = ("i" if inverse else "") + ("rfft" if real else "fft")
    return getattr(np.fft, name)(x, n=n, axis=axis, norm=norm)


OPS: list[OpDef] = [
    OpDef("fft", ("x",), _fft_infer, _fft,
          attrs=(Attr("axis", "int", -1), Attr("n", "int?", None), Attr("norm", "str", "backward"),
                 Attr("inverse", "bool", False), Attr("real", "bool", False)),
          doc="discrete Fourier transform along an axis (fft, ifft, rfft, irfft as numpy.fft)"),
]

# --- samples: each transform, each norm, lengths cut and padded, odd and even n, an inner
# axis, batches with a size-0 dimension, and length 1.

_CASES: tuple[tuple[tuple[int, ...], dict[str, Any]], ...] = (
    ((8,), {}), ((3, 7), {"norm": "ortho"}), ((4, 5), {"axis": 0, "norm": "forward"}),
    ((2, 6), {"n": 9}), ((2, 9), {"n": 4, "norm": "ortho"}), ((0, 4), {}), ((3, 1), {}),
)


def _fft_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for inverse, real in ((False, False), (True, False), (False, True), (True, True)):
        for i, (shape, attrs) in enumerate(_CASES):
            if real and inverse and shape[-1] == 1 and "n" not in attrs:
                attrs = {**attrs, "n": 1}  # the default 2 * (1 - 1) is no transform
            dt = ("float64" if i % 2 else "float32") if real and not inverse else \
                ("complex128" if i % 2 else "complex64")
            yield OpSample("fft", (random_array(rng, shape, dt),),
                           {**attrs, "inverse": inverse, "real": real}, dtypes=(dt,),
                           **accumulation_tolerance(dt))


SAMPLES: dict[str, SampleFn] = {"fft": _fft_samples}
