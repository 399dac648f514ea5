"""Derivatives of the elementwise ops.

Most unary ops are given by their derivative ``f'(x)`` (written with the input ``x`` and the
output ``y``): the JVP multiplies the tangent by it and the VJP the cotangent.  That holds for
complex inputs too, since the ops accepting them are holomorphic (see :mod:`._ops` for the
convention); ``abs``, ``sign``, ``real``, ``imag``, ``conj`` and ``cast`` are not, and have
rules of their own.  Binary ops are given by their two partial derivatives; VJPs reduce each
cotangent to its operand's shape, since operands broadcast.

Conventions at points where a derivative does not exist, chosen as PyTorch and JAX do:

- ``abs``, ``sign`` and ``relu`` have derivative 0 at 0; ``floor``, ``ceil``, ``round``,
  ``trunc`` and ``floor_divide`` are 0 everywhere.
- ``clip`` passes the gradient where ``min <= x <= max``, bounds included (PyTorch's clamp).
- ``maximum``/``minimum`` split the gradient evenly between equal operands.
- ``pow(x, y)``: ``d/dx`` is 0 where ``y == 0`` (also at ``x == 0``), and ``d/dy`` is 0 where
  ``x == 0`` (JAX's convention; the limit from the right where ``y > 0``).
- ``cast`` between inexact dtypes passes the gradient through (complex to real keeps the real
  part, real to complex takes the real part of the cotangent); to or from integers and bool
  there is none.
"""

from __future__ import annotations

import math
from typing import Callable, Optional

from mskernel_sdk import Tensor

from . import _ops as ops
from ._ops import Grads, RuleTable

rules = RuleTable()

# -- unary ops given by their derivative ------------------------------------------------------

Derivative = Callable[..., Tensor]  # (x, y, **attrs) -> dy/dx


def _digamma(x: Tensor) -> Tensor:
    """psi(x) = d/dx lgamma(x), from core ops: reflection below 1/2, the recurrence
    psi(z) = psi(z + 6) - sum 1/(z + k), then the asymptotic series (error below 1e-12)."""
    reflect = ops.less(x, ops.scalar(0.5, x))
    one = ops.scalar(1.0, x)
    z = ops.where(reflect, ops.sub(one, x), x)
    shifted = z
    recurrence = ops.reciprocal(z)
    for _ in range(5):
        shifted = ops.add(shifted, one)
        recurrence = ops.add(recurrence, ops.reciprocal(shifted))
    w = ops.add(shifted, one)
    inv2 = ops.reciprocal(ops.square(w))
    series = ops.scalar(0.0, x)
    for coefficient in (-1 / 12, 691 / 32760, -1 / 132, 1 / 240, -1 / 252, 1 / 120, -1 / 12):
        series = ops.mul(ops.add(series, ops.scalar(coefficient, x)), inv2)
    psi = ops.sub(ops.add(ops.sub(ops.log(w), ops.div(ops.scalar(0.5, x), w)), series),
                  recurrence)
    # psi(x) = psi(1 - x) - pi / tan(pi x); x is replaced where unused so tan stays finite.
    safe = ops.where(reflect, x, ops.scalar(0.25, x))
    cot = ops.div(ops.scalar(math.pi, x), ops.tan(ops.mul(ops.scalar(math.pi, x), safe)))
    return ops.where(reflect, ops.sub(psi, cot), psi)


def _gelu_derivative(x: Tensor, y: Tensor, *, approximate: str) -> Tensor:
    half = ops.scalar(0.5, x)
    if approximate == "tanh":
        c, k = math.sqrt(2 / math.pi), 0.044715
        x2 = ops.square(x)
        inner = ops.mul(ops.mul(ops.scalar(c, x), x), ops.add(ops.scalar(1.0, x),
                                                             ops.mul(ops.scalar(k, x), x2)))
        th = ops.tanh(inner)
        d_inner = ops.mul(ops.scalar(c, x), ops.add(ops.scalar(1.0, x),
                                                    ops.mul(ops.scalar(3 * k, x), x2)))
        sech2 = ops.sub(ops.scalar(1.0, x), ops.square(th))
        return ops.add(ops.mul(half, ops.add(ops.scalar(1.0, x), th)),
                       ops.mul(ops.mul(half, x), ops.mul(sech2, d_inner)))
    cdf = ops.mul(half, ops.add(ops.scalar(1.0, x),
                                ops.erf(ops.mul(x, ops.scalar(1 / math.sqrt(2), x)))))
    pdf = ops.mul(ops.exp(ops.mul(ops.square(x), ops.scalar(-0.5, x))),
                  ops.scalar(1 / math.sqrt(2 * math.pi), x))
    return ops.add(cdf, ops.mul(x, pdf))


def _silu_derivative(x: Tensor, y: Tensor) -> Tensor:
    s = ops.sigmoid(x)
    return ops.mul(s, ops.add(ops.scalar(1.0, x), ops.mul(x, ops.sub(ops.scalar(1.0, x), s))))


def _one_minus_square(t: Tensor) -> Tensor:
    return ops.sub(ops.scalar(1.0, t), ops.square(t))


def _one_plus_square(t: Tensor) -> Tensor:
    return ops.add(ops.scalar(1.0, t), ops.square(t))


_DERIVATIVES: dict[str, Derivative] = {
    "square": lambda x, y: ops.mul(x, ops.scalar(2.0, x)),
    "reciprocal": lambda x, y: ops.neg(ops.square(y)),
    "sqrt": lambda x, y: ops.div(ops.scalar(0.5, y), y),
    "rsqrt": lambda x, y: ops.mul(ops.scalar(-0.5, y), ops.mul(y, ops.square(y))),
    "exp": lambda x, y: y,
    "expm1": lambda x, y: ops.add(y, ops.scalar(1.0, y)),
    "log": lambda x, y: ops.reciprocal(x),
    "log1p": lambda x, y: ops.reciprocal(ops.add(x, ops.scalar(1.0, x))),
    "log2": lambda x, y: ops.reciprocal(ops.mul(x, ops.scalar(math.log(2), x))),
    "log10": lambda x, y: ops.reciprocal(ops.mul(x, ops.scalar(math.log(10), x))),
    "sin": lambda x, y: ops.cos(x),
    "cos": lambda x, y: ops.neg(ops.sin(x)),
    "tan": lambda x, y: _one_plus_square(y),
    "asin": lambda x, y: ops.rsqrt(_one_minus_square(x)),
    "acos": lambda x, y: ops.neg(ops.rsqrt(_one_minus_square(x))),
    "atan": lambda x, y: ops.reciprocal(_one_plus_square(x)),
    "sinh": lambda x, y: ops.cosh(x),
    "cosh": lambda x, y: ops.sinh(x),
    "tanh": lambda x, y: _one_minus_square(y),
    "asinh": lambda x, y: ops.rsqrt(_one_plus_square(x)),
    "acosh": lambda x, y: ops.rsqrt(ops.sub(ops.square(x), ops.scalar(1.0, x))),
    "atanh": lambda x, y: ops.reciprocal(_one_minus_square(x)),
    "erf": lambda x, y: ops.mul(ops.exp(ops.neg(ops.square(x))),
                                ops.scalar(2 / math.sqrt(math.pi), x)),
    "erfc": lambda x, y: ops.mul(ops.exp(ops.neg(ops.square(x))),
                                 ops.scalar(-2 / math.sqrt(math.pi), x)),
    "lgamma": lambda x, y: _digamma(x),
    "sigmoid": lambda x, y: ops.mul(y, ops.sub(ops.scalar(1.0, y), y)),
    "softplus": lambda x, y: ops.sigmoid(x),
    "relu": lambda x, y: ops.mask(ops.greater(x, ops.scalar(0.0, x)), x),
    "silu": _silu_derivative,
    "gelu": _gelu_derivative,
}


def _derivative_rules(op: str, derivative: Derivative) -> None:
    @rules.vjp(op)
    def vjp(primals: tuple[Tensor, ...], outputs: tuple[Tensor, ...],
            cotangents: tuple[Optional[Tensor], ...], **attrs: object) -> Grads:
        return (ops.mul(cotangents[0], derivative(primals[0], outputs[0], **attrs)),)

    @rules.jvp(op)
    def jvp(primals: tuple[Tensor, ...], tangents: tuple[Optional[Tensor], ...],
            outputs: tuple[Tensor, ...], **attrs: object) -> Grads:
        return (ops.mul(tangents[0], derivative(primals[0], outputs[0], **attrs)),)


for _name, _derivative in _DERIVATIVES.items():
    _derivative_rules(_name, _derivative)


# -- piecewise constant ops: derivative zero --------------------------------------------------

_ZERO_DERIVATIVE = ("floor", "ceil", "round", "trunc", "floor_divide")


@rules.vjp(*_ZERO_DERIVATIVE)
def _zero_vjp(primals, outputs, cotangents, **attrs) -> Grads:
    return (None,) * len(primals)


@rules.jvp(*_ZERO_DERIVATIVE)
def _zero_jvp(primals, tangents, outputs, **attrs) -> Grads:
    return (None,)


# -- linear and non-holomorphic unary ops -----------------------------------------------------


@rules.vjp("neg")
def _neg_vjp(primals, outputs, cotangents) -> Grads:
    return (ops.neg(cotangents[0]),)


@rules.jvp("neg")
def _neg_jvp(primals, tangents, outputs) -> Grads:
    return (ops.neg(tangents[0]),)


@rules.vjp("conj")
def _conj_vjp(primals, outputs, cotangents) -> Grads:
    return (ops.conj(cotangents[0]),)


@rules.jvp("conj")
def _conj_jvp(primals, tangents, outputs) -> Grads:
    return (ops.conj(tangents[0]),)


@rules.vjp("real")
def _real_vjp(primals, outputs, cotangents) -> Grads:
    return (ops.as_dtype_of(cotangents[0], primals[0]),)


@rules.jvp("real")
def _real_jvp(primals, tangents, outputs) -> Grads:
    return (ops.real(tangents[0]),)


@rules.vjp("imag")
def _imag_vjp(primals, outputs, cotangents) -> Grads:
    (x,) = primals
    if not x.dtype.is_complex:
        return (None,)  # the imaginary part of a real number is the constant 0
    minus_i = ops.constant(-1j, x.dtype)
    return (ops.mul(ops.as_dtype_of(cotangents[0], x), minus_i),)


@rules.jvp("imag")
def _imag_jvp(primals, tangents, outputs) -> Grads:
    return (ops.imag(tangents[0]) if primals[0].dtype.is_complex else None,)


def _abs_factor(x: Tensor) -> Tensor:
    """d|x|/dx as a multiplier: sign(x) for real x, conj(x / |x|) for complex (0 at 0)."""
    s = ops.sign(x)
    return ops.conj(s) if x.dtype.is_complex else s


@rules.vjp("abs")
def _abs_vjp(primals, outputs, cotangents) -> Grads:
    (x,) = primals
    return (ops.mul(ops.as_dtype_of(cotangents[0], x), _abs_factor(x)),)


@rules.jvp("abs")
def _abs_jvp(primals, tangents, outputs) -> Grads:
    (x,), (t,) = primals, tangents
    product = ops.mul(t, _abs_factor(x))
    return (ops.real(product) if x.dtype.is_complex else product,)


def _complex_sign_parts(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``sign(x)``, ``|x|`` with zeros replaced by 1 (as x's dtype) and the mask ``x != 0``."""
    magnitude = ops.abs(x)
    nonzero = ops.not_equal(magnitude, ops.scalar(0.0, magnitude))
    safe = ops.where(nonzero, magnitude, ops.scalar(1.0, magnitude))
    return ops.sign(x), ops.as_dtype_of(safe, x), nonzero


def _complex_sign_map(x: Tensor, v: Tensor, s_factor: Tensor) -> Tensor:
    """(v - s_factor * Re(s * v)) / |x|, zero where x == 0; with v the tangent and
    s_factor = sign(x) this is the JVP of sign, with v the cotangent and s_factor =
    conj(sign(x)) it is the VJP (its transpose)."""
    s, safe, nonzero = _complex_sign_parts(x)
    along = ops.as_dtype_of(ops.real(ops.mul(ops.conj(s_factor), v)), x)
    return ops.select(nonzero, ops.div(ops.sub(v, ops.mul(s_factor, along)), safe))


@rules.vjp("sign")
def _sign_vjp(primals, outputs, cotangents) -> Grads:
    (x,) = primals
    if not x.dtype.is_complex:
        return (None,)
    return (_complex_sign_map(x, cotangents[0], ops.conj(ops.sign(x))),)


@rules.jvp("sign")
def _sign_jvp(primals, tangents, outputs) -> Grads:
    (x,) = primals
    if not x.dtype.is_complex:
        return (None,)
    return (_complex_sign_map(x, tangents[0], ops.sign(x)),)


def _clip_mask(x: Tensor, lower: Optional[float], upper: Optional[float]) -> Optional[Tensor]:
    """Where ``clip`` passes the gradient: ``lower <= x <= upper`` (None: everywhere)."""
    inside = None
    if lower is not None:
        inside = ops.greater_equal(x, ops.scalar(lower, x))
    if upper is not None:
        below = ops.less_equal(x, ops.scalar(upper, x))
        inside = below if inside is None else ops.logical_and(inside, below)
    return inside


@rules.vjp("clip")
def _clip_vjp(primals, outputs, cotangents, *, min, max) -> Grads:
    inside = _clip_mask(primals[0], min, max)
    return (cotangents[0] if inside is None else ops.select(inside, cotangents[0]),)


@rules.jvp("clip")
def _clip_jvp(primals, tangents, outputs, *, min, max) -> Grads:
    inside = _clip_mask(primals[0], min, max)
    return (tangents[0] if inside is None else ops.select(inside, tangents[0]),)


@rules.vjp("cast")
def _cast_vjp(primals, outputs, cotangents, *, dtype) -> Grads:
    (x,), (g,) = primals, cotangents
    if not (x.dtype.is_inexact and dtype.is_inexact):
        return (None,)
    if g.dtype.is_complex and not x.dtype.is_complex:
        g = ops.real(g)
    return (ops.as_dtype_of(g, x),)


@rules.jvp("cast")
def _cast_jvp(primals, tangents, outputs, *, dtype) -> Grads:
    if not (primals[0].dtype.is_inexact and dtype.is_inexact):
        return (None,)
    return (ops.as_dtype_of(tangents[0], outputs[0]),)


# -- binary ops -------------------------------------------------------------------------------

Partial = Callable[[Tensor, Tensor, Tensor], Tensor]  # (x, y, out) -> d out / d operand


def _pow_dx(x: Tensor, y: Tensor, out: Tensor) -> Tensor:
    power = ops.pow(x, ops.sub(y, ops.scalar(1.0, y)))
    return ops.select(ops.not_equal(y, ops.scalar(0.0, y)), ops.mul(y, power))


def _pow_dy(x: Tensor, y: Tensor, out: Tensor) -> Tensor:
    nonzero = ops.not_equal(x, ops.scalar(0.0, x))
    safe = ops.where(nonzero, x, ops.scalar(1.0, x))
    return ops.select(nonzero, ops.mul(ops.log(safe), out))


def _atan2_norm(x: Tensor, y: Tensor) -> Tensor:
    return ops.add(ops.square(x), ops.square(y))


def _share_extreme(wins: Callable[..., Tensor], a: Tensor, b: Tensor) -> Tensor:
    """d max(a, b)/da (with ``wins = greater``) or d min(a, b)/da (``less``): 1 where ``a``
    wins, 1/2 on a tie, 0 where it loses."""
    half = ops.mul(ops.mask(ops.equal(a, b), a), ops.scalar(0.5, a))
    return ops.add(ops.mask(wins(a, b), a), half)


_PARTIALS: dict[str, tuple[Partial, Partial]] = {
    "mul": (lambda x, y, out: y, lambda x, y, out: x),
    "div": (lambda x, y, out: ops.reciprocal(y), lambda x, y, out: ops.neg(ops.div(out, y))),
    "pow": (_pow_dx, _pow_dy),
    "maximum": (lambda x, y, out: _share_extreme(ops.greater, x, y),
                lambda x, y, out: _share_extreme(ops.greater, y, x)),
    "minimum": (lambda x, y, out: _share_extreme(ops.less, x, y),
                lambda x, y, out: _share_extreme(ops.less, y, x)),
    "atan2": (lambda x, y, out: ops.div(y, _atan2_norm(x, y)),
              lambda x, y, out: ops.neg(ops.div(x, _atan2_norm(x, y)))),
    "remainder": (lambda x, y, out: ops.ones_like(out),
                  lambda x, y, out: ops.neg(ops.floor_divide(x, y))),
}


def _binary_rules(op: str, dx: Partial, dy: Partial) -> None:
    @rules.vjp(op)
    def vjp(primals, outputs, cotangents) -> Grads:
        (x, y), (out,), (g,) = primals, outputs, cotangents
        return (ops.sum_to_shape(ops.mul(g, dx(x, y, out)), x.shape),
                ops.sum_to_shape(ops.mul(g, dy(x, y, out)), y.shape))

    @rules.jvp(op)
    def jvp(primals, tangents, outputs) -> Grads:
        (x, y), (tx, ty), (out,) = primals, tangents, outputs
        total = ops.add_all(None if tx is None else ops.mul(tx, dx(x, y, out)),
                            None if ty is None else ops.mul(ty, dy(x, y, out)))
        return (ops.broadcast_as(total, out.shape),)


for _name, (_dx, _dy) in _PARTIALS.items():
    _binary_rules(_name, _dx, _dy)


def _sum_rules(op: str, y_sign: Callable[[Tensor], Tensor]) -> None:
    """``add`` and ``sub``: partials +1 and ``y_sign`` (identity or negation)."""

    @rules.vjp(op)
    def vjp(primals, outputs, cotangents) -> Grads:
        (x, y), (g,) = primals, cotangents
        return ops.sum_to_shape(g, x.shape), ops.sum_to_shape(y_sign(g), y.shape)

    @rules.jvp(op)
    def jvp(primals, tangents, outputs) -> Grads:
        (tx, ty), (out,) = tangents, outputs
        total = ops.add_all(tx, None if ty is None else y_sign(ty))
        return (ops.broadcast_as(total, out.shape),)


_sum_rules("add", lambda t: t)
_sum_rules("sub", ops.neg)


@rules.vjp("where")
def _where_vjp(primals, outputs, cotangents) -> Grads:
    (cond, x, y), (g,) = primals, cotangents
    zero = ops.scalar(0.0, g)
    return (None, ops.sum_to_shape(ops.where(cond, g, zero), x.shape),
            ops.sum_to_shape(ops.where(cond, zero, g), y.shape))


@rules.jvp("where")
def _where_jvp(primals, tangents, outputs) -> Grads:
    (cond, _, _), (_, tx, ty), (out,) = primals, tangents, outputs
    zero = ops.scalar(0.0, out)
    chosen = ops.where(cond, zero if tx is None else tx, zero if ty is None else ty)
    return (ops.broadcast_as(chosen, out.shape),)


VJP = rules.vjps
JVP = rules.jvps

#: Elementwise ops whose outputs are bool or integer: comparisons, predicates, logic, bits.
NONDIFFERENTIABLE = frozenset({
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "isnan", "isinf",
    "isfinite", "logical_not", "logical_and", "logical_or", "logical_xor", "bitwise_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
})
