"""Derivatives of ``fft``.

Every transform is linear, so its JVP is the transform of the tangent.  The VJPs are
transposes under the pairing ``Re(sum(a * b))`` (see :mod:`._ops`), with the cut or
zero-padding to the transform length ``n`` transposed by padding or cutting back:

- complex to complex: the DFT matrix is symmetric, so the VJP is the same transform of the
  cotangent;
- ``rfft`` keeps the ``m = n // 2 + 1`` non-negative frequencies of a real signal.  Its
  transpose is ``Re(F[:m]^T g)``, an ``irfft`` of ``conj(g)`` — but ``irfft`` counts each
  frequency strictly between 0 and the Nyquist frequency twice (once for its negative
  twin), so ``g`` is weighted by ``1 / w`` with ``w = (1, 2, ..., 2, 1 if n is even)``;
- ``irfft`` reads the half spectrum with those weights ``w``, so its transpose is ``w *
  conj(rfft(g))``.
The transposed transform scales as the forward one did, so ``norm`` becomes its dual
(``"backward"`` and ``"forward"`` swap).
"""

from __future__ import annotations

import numpy as np

from mskernel_sdk import Tensor

from . import _ops as ops
from ._ops import Grads, RuleTable

rules = RuleTable()
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _resize(t: Tensor, axis: int, size: int) -> Tensor:
    """``t`` cut or zero-padded at the end of ``axis`` to ``size`` entries."""
    if t.shape[axis] == size:
        return t
    pads = [0] * (2 * t.ndim)
    pads[2 * axis + 1] = size - t.shape[axis]
    return ops.pad(t, pads=tuple(pads))


def _hermitian_weights(n: int, axis: int, like: Tensor, inverse: bool) -> Tensor:
    """How often ``irfft`` of length ``n`` counts each of the ``n // 2 + 1`` frequencies (or
    its reciprocal when ``inverse``), shaped to broadcast along ``axis`` of ``like``."""
    w = np.full(n // 2 + 1, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return ops.constant((1 / w if inverse else w).reshape((-1,) + (1,) * (like.ndim - axis - 1)),
                        like.dtype)


@rules.vjp("fft")
def _fft_vjp(primals, outputs, cotangents, *, axis, n, norm, inverse, real) -> Grads:
    (x,), (g,) = primals, cotangents
    a = axis % x.ndim
    if not real:
        return (_resize(ops.fft(g, axis=a, n=None, norm=norm, inverse=inverse, real=False), a,
                        x.shape[a]),)
    if not inverse:
        length = x.shape[a] if n is None else n
        weighted = ops.mul(ops.conj(g), _hermitian_weights(length, a, g, inverse=True))
        back = ops.fft(weighted, axis=a, n=length, norm=_DUAL[norm], inverse=True, real=True)
        return (ops.as_dtype_of(_resize(back, a, x.shape[a]), x),)  # float16 x: float32 back
    length = g.shape[a]
    spectrum = ops.conj(ops.fft(g, axis=a, n=None, norm=_DUAL[norm], inverse=False, real=True))
    weighted = ops.mul(spectrum, _hermitian_weights(length, a, spectrum, inverse=False))
    return (_resize(weighted, a, x.shape[a]),)


rules.jvp("fft")(ops.linear_jvp("fft"))

VJP = rules.vjps
JVP = rules.jvps
NONDIFFERENTIABLE: frozenset[str] = frozenset()
