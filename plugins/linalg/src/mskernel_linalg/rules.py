"""The derivative rules of the ``linalg.*`` ops, registered through the core's
``mskernel_register_rules`` hook (read by mskernel-autodiff; this plugin never imports it).
Every rule is written with the ops themselves and ``mskernel.ops``, so it runs eagerly and
under ``@jit`` and can be differentiated again.  ``Aᵀ`` swaps the last two axes.

The results are the standard matrix-calculus ones (Giles, "An extended collection of matrix
derivative results for forward and reverse mode algorithmic differentiation", 2008):

- ``Y = A⁻¹``: ``dY = -Y dA Y``; ``Ā = -Yᵀ Ȳ Yᵀ``;
- ``X = A⁻¹ B``: ``dX = A⁻¹ (dB - dA X)``; ``B̄ = A⁻ᵀ X̄``, ``Ā = -B̄ Xᵀ``;
- ``(s, l) = slogdet(A)``: ``dl = tr(A⁻¹ dA)``, ``ds = 0``; ``Ā = l̄ A⁻ᵀ``;
- ``L = cholesky(A)`` (Murray, "Differentiation of the Cholesky decomposition", 2016):
  ``dL = L Φ(L⁻¹ dA L⁻ᵀ)``; ``Ā = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹``, with ``Φ`` the lower triangle with the
  diagonal halved;
- ``(w, V) = eigh(A)``: with ``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal and 0 on it,
  ``dw = diag(Vᵀ dA V)``, ``dV = V (F ∘ Vᵀ dA V)``; ``Ā = V (diag(w̄) + F ∘ Vᵀ V̄) Vᵀ``.

``cholesky`` and ``eigh`` take a symmetric matrix, so their tangents are symmetrised first and
their cotangents are symmetric (the derivative within symmetric matrices, as PyTorch gives);
``eigh``'s rules assume distinct eigenvalues (a repeated one makes ``F`` infinite).

Batching (``vmap``'s ``"batch"`` rules) is free: every op takes leading batch axes, so the
rule brings the unbatched operands to the batch and applies the op as it is.
"""

from __future__ import annotations

from typing import Any, Optional

from mskernel import ops as F
from mskernel_sdk import apply

from .ops import CHOLESKY, EIGH, INVERSE, SLOGDET, SOLVE


def _t(x: Any) -> Any:
    return F.swapaxes(x, -1, -2)


def _mm(*xs: Any) -> Any:
    out = xs[0]
    for x in xs[1:]:
        out = F.matmul(out, x)
    return out


def _solve(a: Any, b: Any) -> Any:
    return apply(SOLVE, a, b)


def _sym(x: Any) -> Any:
    return F.multiply(F.add(x, _t(x)), 0.5)


def _phi(x: Any) -> Any:
    """The lower triangle of ``x`` with its diagonal halved."""
    return F.subtract(F.tril(x), F.multiply(_diag_part(x), 0.5))


def _diag_part(x: Any) -> Any:
    return F.multiply(x, F.eye(x.shape[-1], dtype=x.dtype))


def _inverse_vjp(primals, outputs, cotangents):
    (y,), (g,) = outputs, cotangents
    return (F.negative(_mm(_t(y), g, _t(y))),)


def _inverse_jvp(primals, tangents, outputs):
    (y,), (da,) = outputs, tangents
    return (F.negative(_mm(y, da, y)),)


def _solve_vjp(primals, outputs, cotangents):
    (a, _), (x,), (g,) = primals, outputs, cotangents
    gb = _solve(_t(a), g)
    return F.negative(_mm(gb, _t(x))), gb


def _solve_jvp(primals, tangents, outputs):
    (a, _), (da, db), (x,) = primals, tangents, outputs
    rhs = db if da is None else (F.negative(_mm(da, x)) if db is None else
                                 F.subtract(db, _mm(da, x)))
    return (_solve(a, rhs),)


def _slogdet_vjp(primals, outputs, cotangents):
    (a,), (_, gl) = primals, cotangents
    if gl is None:
        return (None,)
    return (F.multiply(F.expand_dims(gl, (-1, -2)), _t(apply(INVERSE, a))),)


def _slogdet_jvp(primals, tangents, outputs):
    (a,), (da,) = primals, tangents
    return None, F.sum(F.multiply(_t(apply(INVERSE, a)), da), (-1, -2))


def _cholesky_vjp(primals, outputs, cotangents):
    (lower,), (g,) = outputs, cotangents
    p = _phi(_mm(_t(lower), g))
    left = _solve(_t(lower), p)  # L⁻ᵀ P
    return (_sym(_t(_solve(_t(lower), _t(left)))),)  # (L⁻ᵀ P) L⁻¹


def _cholesky_jvp(primals, tangents, outputs):
    (lower,), (da,) = outputs, tangents
    half = _solve(lower, _sym(da))  # L⁻¹ dA
    return (_mm(lower, _phi(_t(_solve(lower, _t(half))))),)  # L Φ(L⁻¹ dA L⁻ᵀ)


def _gaps(w: Any) -> Any:
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it."""
    gaps = F.subtract(F.expand_dims(w, -2), F.expand_dims(w, -1))
    off = F.subtract(1.0, F.eye(w.shape[-1], dtype=w.dtype))
    return F.multiply(off, F.divide(1.0, F.add(gaps, F.subtract(1.0, off))))


def _eigh_vjp(primals, outputs, cotangents):
    (w, v), (gw, gv) = outputs, cotangents
    inner: Optional[Any] = None
    if gv is not None:
        inner = F.multiply(_gaps(w), _mm(_t(v), gv))
    if gw is not None:
        diag = F.multiply(F.expand_dims(gw, -2), F.eye(w.shape[-1], dtype=w.dtype))
        inner = diag if inner is None else F.add(inner, diag)
    if inner is None:
        return (None,)
    return (_sym(_mm(v, inner, _t(v))),)


def _eigh_jvp(primals, tangents, outputs):
    (w, v), (da,) = outputs, tangents
    m = _mm(_t(v), _sym(da), v)
    dw = F.diagonal(m, 0, -2, -1)
    return dw, _mm(v, F.multiply(_gaps(w), m))


def _batch_rule(op: str) -> Any:
    def rule(args, batched, **attrs):
        size = next(a.shape[0] for a, b in zip(args, batched) if b)
        operands = [a if b else F.broadcast_to(a, (size, *a.shape)) for a, b in zip(args, batched)]
        out = apply(op, *operands, **attrs)
        return out if isinstance(out, tuple) else (out,)

    return rule


#: ``(kind, op, rule)`` as given to ``rules.register``.
RULES = (
    *(("batch", op, _batch_rule(op)) for op in (INVERSE, SOLVE, SLOGDET, CHOLESKY, EIGH)),
    ("vjp", INVERSE, _inverse_vjp), ("jvp", INVERSE, _inverse_jvp),
    ("vjp", SOLVE, _solve_vjp), ("jvp", SOLVE, _solve_jvp),
    ("vjp", SLOGDET, _slogdet_vjp), ("jvp", SLOGDET, _slogdet_jvp),
    ("vjp", CHOLESKY, _cholesky_vjp), ("jvp", CHOLESKY, _cholesky_jvp),
    ("vjp", EIGH, _eigh_vjp), ("jvp", EIGH, _eigh_jvp),
)
