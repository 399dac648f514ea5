"""``fft(x, axis, n, norm, inverse, real)``: ``numpy.fft``'s ``fft``/``ifft`` (complex), ``rfft``
(``real``: floating in, ``n // 2 + 1`` frequencies out) and ``irfft`` (``real`` and ``inverse``:
complex in, ``n`` reals out, default ``2 * (m - 1)``); the input cut or zero-padded to ``n``."""

from __future__ import annotations

from typing import Any, Iterator, Optional

import numpy as np

from ..errors import InferError
from ..ir.dtypes import dtype as to_dtype
from ..ir.types import TensorType
from .registry import Attr, OpDef
from .rules import normalize_axis, require_kind, tensor, with_dim
from .samples import OpSample, SampleFn, random_array

#: ``(rtol, atol)`` of an fft sample: every output sums ``n`` terms, in the backend's order.
_FFT_TOLERANCE = {"float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5),
                  "float64": (1e-12, 1e-13), "complex128": (1e-12, 1e-13)}


def _fft_infer(x: TensorType, *, axis: int, n: Optional[int], norm: str, inverse: bool,
               real: bool) -> TensorType:
    x = tensor(x, "x")
    if norm not in ("backward", "ortho", "forward") or x.rank == 0:
        raise InferError(f"expects rank >= 1 and norm backward, ortho or forward, got {x}, {norm!r}")
    require_kind(x, "f" if real and not inverse else "c")
    wide = x.dtype.name in ("float64", "complex128")
    out = to_dtype(("complex128" if wide else "complex64") if not inverse or not real else
                   "float64" if wide else "float32") if real else x.dtype
    a = normalize_axis(axis, x.rank)
    length = n if n is not None else 2 * (x.shape[a] - 1) if real and inverse else x.shape[a]
    if length < 1:
        raise InferError(f"transform length n={length} along axis {axis} of {x} must be >= 1")
    return TensorType(out, with_dim(x.shape, a, length // 2 + 1 if real and not inverse else length))


def _fft(x: np.ndarray, *, axis: int, n: Optional[int], norm: str, inverse: bool,
         real: bool) -> np.ndarray:
    return getattr(np.fft, ("i" if inverse else "") + ("rfft" if real else "fft"))(
        x, n=n, axis=axis, norm=norm)


OPS: list[OpDef] = [
    OpDef("fft", ("x",), _fft_infer, _fft,
          attrs=(Attr("axis", "int", -1), Attr("n", "int?", None), Attr("norm", "str", "backward"),
                 Attr("inverse", "bool", False), Attr("real", "bool", False)),
          doc="discrete Fourier transform along an axis (fft, ifft, rfft, irfft as numpy.fft)"),
]


def _fft_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    cases: list[tuple[tuple[int, ...], dict[str, Any]]] = [((8,), {}), ((3, 7), {"norm": "ortho"}), (
        (4, 5), {"axis": 0, "norm": "forward"}), ((2, 6), {"n": 9}), ((2, 9), {"n": 4, "norm": "ortho"}),
        ((0, 4), {}), ((3, 1), {"n": 1})]
    for inverse, real in ((False, False), (True, False), (False, True), (True, True)):
        for i, (shape, attrs) in enumerate(cases):
            dt = ("float" if real and not inverse else "complex") + \
                (("64", "128")[i % 2] if not real or inverse else ("32", "64")[i % 2])
            rtol, atol = _FFT_TOLERANCE[dt]
            yield OpSample("fft", (random_array(rng, shape, dt),), {**attrs, "inverse": inverse,
                           "real": real}, dtypes=(dt,), rtol=rtol, atol=atol)


SAMPLES: dict[str, SampleFn] = {"fft": _fft_samples}
