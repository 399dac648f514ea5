"""The ``linalg.*`` ops: defined once (shapes, dtypes, NumPy reference semantics), run on the
host by LAPACK through ``numpy.linalg`` (:data:`HOST_KERNELS`), beside whichever backend runs
the rest of a graph.  Every op takes stacks of matrices: leading axes are a batch.

- ``linalg.inverse(a: f[..., n, n]) -> f[..., n, n]``;
- ``linalg.solve(a: f[..., n, n], b: f[..., n, k]) -> f[..., n, k]``, ``a @ x = b``;
- ``linalg.slogdet(a: f[..., n, n]) -> (sign f[...], log|det| f[...])``;
- ``linalg.cholesky(a: f[..., n, n]) -> f[..., n, n]``, the lower factor ``l`` of a symmetric
  positive-definite ``a = l @ l.T`` (the lower triangle of ``a`` is read);
- ``linalg.eigh(a: f[..., n, n]) -> (w f[..., n], v f[..., n, n])``, the ascending eigenvalues
  and orthonormal eigenvectors (columns) of a symmetric ``a`` (its lower triangle is read);
- ``linalg.qr(a: f[..., m, n], complete=False) -> (q f[..., m, k], r f[..., k, n])``, ``a = q @ r``
  with orthonormal columns in ``q`` and an upper-triangular ``r``; ``k = min(m, n)``, or ``m``
  when ``complete``;
- ``linalg.svd(a: f[..., m, n], full_matrices=False) -> (s f[..., k], u f[..., m, k],
  vh f[..., k, n])``, ``a = u @ diag(s) @ vh`` with descending ``s``; ``u`` is ``[..., m, m]`` and
  ``vh`` ``[..., n, n]`` when ``full_matrices``.

A singular matrix gives what LAPACK gives (``inf``/``nan`` entries for ``inverse`` and
``solve``, ``sign = 0`` for ``slogdet``); a matrix that is not positive definite is an error
naming ``linalg.cholesky``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mskernel_sdk import (
    Attr, HostKernel, InferError, OpDef, TensorType, require_kind, require_tensor,
)

INVERSE, SOLVE, SLOGDET = "linalg.inverse", "linalg.solve", "linalg.slogdet"
CHOLESKY, EIGH = "linalg.cholesky", "linalg.eigh"
QR, SVD = "linalg.qr", "linalg.svd"
FLOATS = ("float32", "float64")


def _matrix(a: Any, what: str = "a") -> TensorType:
    t = require_tensor(a, what)
    require_kind(t, "f", "a floating-point matrix")
    if t.rank < 2:
        raise InferError(f"{what} must be a matrix or a stack of them [..., m, n], got {t}")
    return t


def _square(a: Any, what: str = "a") -> TensorType:
    t = _matrix(a, what)
    if t.shape[-1] != t.shape[-2]:
        raise InferError(f"{what} must be a square matrix or a stack of them [..., n, n], "
                         f"got {t}")
    return t


def _infer_solve(a: Any, b: Any) -> TensorType:
    ta, tb = _square(a), require_tensor(b, "b")
    if tb.dtype != ta.dtype or tb.rank != ta.rank or tb.shape[:-1] != ta.shape[:-1]:
        raise InferError(f"b must be [..., n, k] of a's dtype and batch for a {ta}, got {tb}")
    return tb


def _vector(t: TensorType) -> TensorType:
    return t.with_shape(t.shape[:-1])


def _batch_scalar(t: TensorType) -> TensorType:
    return t.with_shape(t.shape[:-2])


def _cholesky(a: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.cholesky(np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2))
    except np.linalg.LinAlgError:
        raise ValueError("linalg.cholesky: the matrix is not positive definite") from None


def _slogdet(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sign, log = np.linalg.slogdet(a)
    return sign.astype(a.dtype), log.astype(a.dtype)


def _eigh(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w, v = np.linalg.eigh(a, UPLO="L")
    return w.astype(a.dtype), v.astype(a.dtype)


def _factors(t: TensorType, *shapes: tuple[int, int]) -> tuple[TensorType, ...]:
    return tuple(t.with_shape(t.shape[:-2] + shape) for shape in shapes)


def _infer_qr(a: Any, complete: bool = False) -> tuple[TensorType, ...]:
    t = _matrix(a)
    m, n = t.shape[-2:]
    k = m if complete else min(m, n)
    return _factors(t, (m, k), (k, n))


def _qr(a: np.ndarray, complete: bool = False) -> tuple[np.ndarray, np.ndarray]:
    q, r = np.linalg.qr(a, mode="complete" if complete else "reduced")
    return q.astype(a.dtype), r.astype(a.dtype)


def _infer_svd(a: Any, full_matrices: bool = False) -> tuple[TensorType, ...]:
    t = _matrix(a)
    m, n = t.shape[-2:]
    k = min(m, n)
    u, vh = ((m, m), (n, n)) if full_matrices else ((m, k), (k, n))
    return (t.with_shape(t.shape[:-2] + (k,)), *_factors(t, u, vh))


def _svd(a: np.ndarray, full_matrices: bool = False) -> tuple[np.ndarray, ...]:
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return s.astype(a.dtype), u.astype(a.dtype), vh.astype(a.dtype)


def _same(a: Any) -> TensorType:
    return _square(a)


def _inverse(a: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        try:
            return np.linalg.inv(a)
        except np.linalg.LinAlgError:  # singular: what LAPACK's division by a zero pivot gives
            return np.full_like(a, np.inf)


def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        return np.full_like(b, np.inf)


_OWNER = "mskernel-linalg"

OPS: list[OpDef] = [
    OpDef(INVERSE, ("a",), _same, _inverse, owner=_OWNER, doc="the inverse of a square matrix"),
    OpDef(SOLVE, ("a", "b"), _infer_solve, _solve, owner=_OWNER, doc="x with a @ x = b"),
    OpDef(SLOGDET, ("a",), lambda a: (_batch_scalar(_square(a)),) * 2, _slogdet, owner=_OWNER,
          doc="(sign, log|det|) of a square matrix"),
    OpDef(CHOLESKY, ("a",), _same, _cholesky, owner=_OWNER,
          doc="the lower Cholesky factor of a symmetric positive-definite matrix"),
    OpDef(EIGH, ("a",), lambda a: (_vector(_square(a)), _square(a)), _eigh, owner=_OWNER,
          doc="ascending eigenvalues and orthonormal eigenvectors of a symmetric matrix"),
    OpDef(QR, ("a",), _infer_qr, _qr, attrs=(Attr("complete", "bool", False),), owner=_OWNER,
          doc="the QR decomposition: orthonormal columns q, upper-triangular r, a = q @ r"),
    OpDef(SVD, ("a",), _infer_svd, _svd, attrs=(Attr("full_matrices", "bool", False),),
          owner=_OWNER, doc="singular values (descending) and vectors: a = u @ diag(s) @ vh"),
]

#: LAPACK through ``numpy.linalg``: the reference semantics are the host kernels.
HOST_KERNELS: dict[str, HostKernel] = {
    op.name: HostKernel(op.reference, dtypes=FLOATS) for op in OPS
}
