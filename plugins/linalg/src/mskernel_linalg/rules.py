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

- ``(Q, R) = qr(A)``, ``A`` of shape ``m × n`` with ``m ≥ n`` (Walter and Lehmann, "Algorithmic
  differentiation of linear algebra functions with application in optimum experimental
  design", 2012): with ``C = Qᵀ dA R⁻¹`` and ``Ω`` the skew-symmetric matrix with the strictly
  lower triangle of ``C``, ``dR = (C - Ω) R``, ``dQ = dA R⁻¹ - Q (C - Ω)``;
  ``Ā = (Q̄ + Q sym(M)) R⁻ᵀ`` with ``M = R R̄ᵀ - Q̄ᵀ Q`` and ``sym`` copying the lower triangle
  onto the upper.  For ``m < n``, ``A = [X Y]`` with a square ``X = Q R₁``: ``Y = Q R₂``
  gives ``Ȳ = Q R̄₂`` and ``X`` takes ``Q̄ + Y R̄₂ᵀ`` in the square rule;
- ``(s, U, Vᵀ) = svd(A)`` (Townsend, "Differentiating the singular value decomposition",
  2016), ``k`` singular values: with ``F[i, j] = 1 / (s[j]² - s[i]²)`` off the diagonal and
  ``dP = Uᵀ dA V``, ``ds = diag(dP)``, ``dU = U (F ∘ (dP S + S dPᵀ)) + (I - U Uᵀ) dA V S⁻¹``,
  ``dV = V (F ∘ (S dP + dPᵀ S)) + (I - V Vᵀ) dAᵀ U S⁻¹``;
  ``Ā = U (diag(s̄) + (F ∘ (Uᵀ Ū - Ūᵀ U)) S + S (F ∘ (Vᵀ V̄ - V̄ᵀ V))) Vᵀ
  + (I - U Uᵀ) Ū S⁻¹ Vᵀ + U S⁻¹ V̄ᵀ (I - V Vᵀ)``.

``qr`` with ``complete=True`` and ``m > n`` and ``svd`` with ``full_matrices=True`` and
``m ≠ n`` have no derivative (the extra columns are not unique): their rules say so, as
PyTorch's do.  ``svd``'s rules assume distinct, non-zero singular values.

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

from .ops import CHOLESKY, EIGH, INVERSE, QR, SLOGDET, SOLVE, SVD


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
        diag = _diag(gw)
        inner = diag if inner is None else F.add(inner, diag)
    if inner is None:
        return (None,)
    return (_sym(_mm(v, inner, _t(v))),)


def _eigh_jvp(primals, tangents, outputs):
    (w, v), (da,) = outputs, tangents
    m = _mm(_t(v), _sym(da), v)
    dw = F.diagonal(m, 0, -2, -1)
    return dw, _mm(v, F.multiply(_gaps(w), m))


def _diag(d: Any) -> Any:
    """The matrices with ``d``'s last axis on their diagonals."""
    return F.multiply(F.expand_dims(d, -2), F.eye(d.shape[-1], dtype=d.dtype))


def _or_zeros(g: Optional[Any], like: Any) -> Any:
    return F.zeros_like(like) if g is None else g


def _unique_factors(op: str, a: Any, extra: bool) -> None:
    if extra:
        raise ValueError(f"{op}: no derivative for {a.shape[-2]} × {a.shape[-1]} matrices with "
                         "complete factors (their extra columns are not unique); use the "
                         "reduced factorization")


def _tril_sym(m: Any) -> Any:
    """``m``'s lower triangle copied onto its upper one."""
    return F.add(F.tril(m), _t(F.tril(m, -1)))


def _qr_square_vjp(q: Any, r: Any, gq: Any, gr: Any) -> Any:
    m = F.subtract(_mm(r, _t(gr)), _mm(_t(gq), q))
    return _t(_solve(r, _t(F.add(gq, _mm(q, _tril_sym(m))))))  # (Q̄ + Q sym(M)) R⁻ᵀ


def _qr_vjp(primals, outputs, cotangents, *, complete):
    (a,), (q, r), (gq, gr) = primals, outputs, cotangents
    m, n = a.shape[-2:]
    _unique_factors(QR, a, complete and m > n)
    gq, gr = _or_zeros(gq, q), _or_zeros(gr, r)
    if m >= n:
        return (_qr_square_vjp(q, r, gq, gr),)
    y, gr1, gr2 = a[..., m:], gr[..., :m], gr[..., m:]
    gx = _qr_square_vjp(q, r[..., :m], F.add(gq, _mm(y, _t(gr2))), gr1)
    return (F.concat([gx, _mm(q, gr2)], -1),)


def _qr_square_jvp(q: Any, r: Any, da: Any) -> tuple[Any, Any]:
    c = _t(_solve(_t(r), _t(_mm(_t(q), da))))  # Qᵀ dA R⁻¹
    skew = F.subtract(F.tril(c, -1), _t(F.tril(c, -1)))
    upper = F.subtract(c, skew)  # dR R⁻¹
    return F.subtract(_t(_solve(_t(r), _t(da))), _mm(q, upper)), _mm(upper, r)


def _qr_jvp(primals, tangents, outputs, *, complete):
    (a,), (da,), (q, r) = primals, tangents, outputs
    m, n = a.shape[-2:]
    _unique_factors(QR, a, complete and m > n)
    if m >= n:
        return _qr_square_jvp(q, r, da)
    dq, dr1 = _qr_square_jvp(q, r[..., :m], da[..., :m])
    dr2 = _mm(_t(q), F.subtract(da[..., m:], _mm(dq, r[..., m:])))
    return dq, F.concat([dr1, dr2], -1)


def _svd_vjp(primals, outputs, cotangents, *, full_matrices):
    (a,), (s, u, vh), (gs, gu, gvh) = primals, outputs, cotangents
    m, n = a.shape[-2:]
    _unique_factors(SVD, a, full_matrices and m != n)
    v, k = _t(vh), s.shape[-1]
    inner = _diag(_or_zeros(gs, s))
    gaps = _gaps(F.square(s))
    row, column = F.expand_dims(s, -2), F.expand_dims(s, -1)  # right and left products by S
    out = None
    if gu is not None:
        j = F.multiply(gaps, F.subtract(_mm(_t(u), gu), _mm(_t(gu), u)))
        inner = F.add(inner, F.multiply(j, row))
        if m > k:
            out = _mm(F.divide(F.subtract(gu, _mm(u, _t(u), gu)), row), vh)
    if gvh is not None:
        gv = _t(gvh)
        kk = F.multiply(gaps, F.subtract(_mm(_t(v), gv), _mm(_t(gv), v)))
        inner = F.add(inner, F.multiply(column, kk))
        if n > k:
            extra = _mm(u, F.divide(F.subtract(_t(gv), _mm(_t(gv), v, vh)), column))
            out = extra if out is None else F.add(out, extra)
    ga = _mm(u, inner, vh)
    return (ga if out is None else F.add(ga, out),)


def _svd_jvp(primals, tangents, outputs, *, full_matrices):
    (a,), (da,), (s, u, vh) = primals, tangents, outputs
    m, n = a.shape[-2:]
    _unique_factors(SVD, a, full_matrices and m != n)
    v, k = _t(vh), s.shape[-1]
    dp = _mm(_t(u), da, v)
    gaps = _gaps(F.square(s))
    row, column = F.expand_dims(s, -2), F.expand_dims(s, -1)
    du = _mm(u, F.multiply(gaps, F.add(F.multiply(dp, row), F.multiply(column, _t(dp)))))
    dv = _mm(v, F.multiply(gaps, F.add(F.multiply(column, dp), F.multiply(_t(dp), row))))
    if m > k:
        du = F.add(du, F.divide(F.subtract(_mm(da, v), _mm(u, dp)), row))
    if n > k:
        dv = F.add(dv, F.divide(F.subtract(_mm(_t(da), u), _mm(v, _t(dp))), row))
    return F.diagonal(dp, 0, -2, -1), du, _t(dv)


def _batch_rule(op: str) -> Any:
    def rule(args, batched, **attrs):
        size = next(a.shape[0] for a, b in zip(args, batched) if b)
        operands = [a if b else F.broadcast_to(a, (size, *a.shape)) for a, b in zip(args, batched)]
        out = apply(op, *operands, **attrs)
        return out if isinstance(out, tuple) else (out,)

    return rule


#: ``(kind, op, rule)`` as given to ``rules.register``.
RULES = (
    *(("batch", op, _batch_rule(op)) for op in (INVERSE, SOLVE, SLOGDET, CHOLESKY, EIGH, QR, SVD)),
    ("vjp", INVERSE, _inverse_vjp), ("jvp", INVERSE, _inverse_jvp),
    ("vjp", SOLVE, _solve_vjp), ("jvp", SOLVE, _solve_jvp),
    ("vjp", SLOGDET, _slogdet_vjp), ("jvp", SLOGDET, _slogdet_jvp),
    ("vjp", CHOLESKY, _cholesky_vjp), ("jvp", CHOLESKY, _cholesky_jvp),
    ("vjp", EIGH, _eigh_vjp), ("jvp", EIGH, _eigh_jvp),
    ("vjp", QR, _qr_vjp), ("jvp", QR, _qr_jvp),
    ("vjp", SVD, _svd_vjp), ("jvp", SVD, _svd_jvp),
)
