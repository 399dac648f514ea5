"""The functions ``mskernel.ops`` takes from this plugin, in MindSpore's (and PyTorch's)
argument conventions.  Each applies a ``linalg.*`` op (:mod:`mskernel_linalg.ops`) or is made
of them, so each is differentiable and runs under ``@jit``.  Integer inputs compute in
float32; leading axes are a batch (broadcast between ``solve``'s operands)."""

from __future__ import annotations

from typing import Any

import numpy as np
from mskernel import ops as F
from mskernel_sdk import Tensor, apply

from .ops import CHOLESKY, EIGH, INVERSE, QR, SLOGDET, SOLVE, SVD

__all__ = ["cholesky", "det", "eigh", "inverse", "lstsq", "qr", "slogdet", "solve", "svd"]


def _matrix(x: Any) -> Tensor:
    t = F.asarray(x)
    return t if t.dtype.is_floating else F.astype(t, "float32")


def inverse(input: Any) -> Tensor:
    """The inverse of a square matrix (MindSpore's ``ops.inverse``; ``ops.inv`` is the
    elementwise reciprocal there)."""
    return apply(INVERSE, _matrix(input))


def solve(a: Any, b: Any) -> Tensor:
    """``x`` with ``a @ x = b``, for ``b`` a matrix ``[..., n, k]`` or a vector ``[..., n]``;
    the batch axes of ``a`` and ``b`` broadcast."""
    ta = _matrix(a)
    tb = F.astype(b, ta.dtype)
    vector = tb.ndim == ta.ndim - 1
    if vector:
        tb = F.expand_dims(tb, -1)
    batch = np.broadcast_shapes(ta.shape[:-2], tb.shape[:-2])
    x = apply(SOLVE, F.broadcast_to(ta, batch + ta.shape[-2:]),
              F.broadcast_to(tb, batch + tb.shape[-2:]))
    return F.squeeze(x, -1) if vector else x


def slogdet(input: Any) -> tuple[Tensor, Tensor]:
    """``(sign, log|det|)`` of a square matrix, without overflow."""
    return apply(SLOGDET, _matrix(input))


def det(input: Any) -> Tensor:
    """The determinant of a square matrix, ``sign * exp(log|det|)``."""
    sign, log = slogdet(input)
    return F.multiply(sign, F.exp(log))


def cholesky(input_x: Any, upper: bool = False) -> Tensor:
    """The Cholesky factor of a symmetric positive-definite matrix: lower ``l`` with
    ``a = l @ lᵀ``, or its transpose with ``upper``."""
    lower = apply(CHOLESKY, _matrix(input_x))
    return F.swapaxes(lower, -1, -2) if upper else lower


def eigh(a: Any, UPLO: str = "L") -> tuple[Tensor, Tensor]:
    """``(eigenvalues, eigenvectors)`` of a symmetric matrix: ascending values, orthonormal
    vectors as columns; ``UPLO`` says which triangle of ``a`` is read."""
    if UPLO not in ("L", "U"):
        raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    t = _matrix(a)
    return apply(EIGH, t if UPLO == "L" else F.swapaxes(t, -1, -2))


def qr(input: Any, mode: str = "reduced") -> tuple[Tensor, Tensor]:
    """``(Q, R)`` with ``input = Q @ R``, orthonormal columns in ``Q`` and an upper-triangular
    ``R``: ``Q`` is ``[..., m, min(m, n)]`` (``mode="reduced"``) or ``[..., m, m]``
    (``"complete"``, not differentiable when ``m > n``)."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    return apply(QR, _matrix(input), complete=mode == "complete")


def svd(input: Any, full_matrices: bool = False, compute_uv: bool = True) -> Any:
    """MindSpore's ``ops.svd``: ``(s, u, v)`` with ``input = u @ diag(s) @ vᵀ`` and ``s``
    descending (``v``, not PyTorch's ``vh``), or ``s`` alone unless ``compute_uv``; with
    ``full_matrices`` ``u`` and ``v`` are square (not differentiable for a non-square input)."""
    s, u, vh = apply(SVD, _matrix(input), full_matrices=full_matrices)
    return (s, u, F.swapaxes(vh, -1, -2)) if compute_uv else s


def lstsq(input: Any, A: Any) -> Tensor:
    """MindSpore's ``lstsq(input, A)``: the ``x`` minimising ``||input @ x - A||`` for a
    full-column-rank ``input [m, n]`` (``m >= n``) and ``A [m, k]``, from the normal equations
    ``(inputᵀ input) x = inputᵀ A`` through Cholesky (they square the condition number: for
    an ill-conditioned ``input`` prefer a QR-based solver)."""
    x = _matrix(input)
    rhs = F.astype(A, x.dtype)
    vector = rhs.ndim == x.ndim - 1
    if vector:
        rhs = F.expand_dims(rhs, -1)
    xt = F.swapaxes(x, -1, -2)
    lower = cholesky(F.matmul(xt, x))
    y = solve(lower, F.matmul(xt, rhs))
    out = solve(F.swapaxes(lower, -1, -2), y)
    return F.squeeze(out, -1) if vector else out
