"""What derivative rules are written with: the core ops under short names, and the few
structural helpers every family needs.

Every helper applies core ops through :func:`mskernel_sdk.apply` — never through
the promotion layer — so a rule is exact about dtypes: operands must already share a dtype,
and constants are made in the dtype of the tensor they meet (:func:`scalar`, :func:`constant`).
Because rules only apply ops, they work on concrete and traced tensors alike, and the ops they
apply are recorded by any enclosing tape: that is how higher derivatives come about.  A rule
must therefore never read a tensor's values (``.numpy()``, ``bool(t)``); shapes and dtypes are
static and free to use.

Rule signatures (the contract of ``mskernel-autodiff``):

- ``vjp(primals, outputs, cotangents, **attrs) -> tuple[Tensor | None, ...]``: one cotangent
  per input; ``cotangents`` has one entry per output, ``None`` meaning zero.
- ``jvp(primals, tangents, outputs, **attrs) -> tuple[Tensor | None, ...]``: one tangent per
  output; ``None`` tangents (in and out) mean zero.

Complex numbers follow JAX's convention: a VJP is the transpose of the JVP under the pairing
``<a, b> = Re(sum(a * b))`` (no conjugation), so holomorphic ops have the same formulas as their
real versions (``mul``: ``g * y``), and ``grad(lambda z: abs(z)**2)(z) == 2 * conj(z)``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence

import numpy as np

from mskernel import int64
from mskernel_sdk import DType, Tensor, apply, as_storage, normalize_axes, reduced_shape

Grads = tuple[Optional[Tensor], ...]
VjpRule = Callable[..., Grads]
JvpRule = Callable[..., Grads]


def _single(op: str, *args: Tensor, **attrs: Any) -> Tensor:
    """Apply a core op with one output."""
    out = apply(op, *args, **attrs)
    assert isinstance(out, Tensor), f"op '{op}' has several outputs"
    return out


def _op(name: str) -> Callable[..., Any]:
    def fn(*args: Tensor, **attrs: Any) -> Any:
        return apply(name, *args, **attrs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Apply the core op ``{name}`` (operands must already share a dtype)."
    return fn


def _ops(*names: str) -> tuple[Callable[..., Any], ...]:
    return tuple(_op(name) for name in names)


# Names follow the core ops; a few shadow Python builtins inside this module only.
(neg, abs, sign, square, reciprocal, rsqrt, exp, log, sin, cos, tan, cosh, sinh, tanh, sigmoid,
 erf, conj, real, imag) = _ops(
    "neg", "abs", "sign", "square", "reciprocal", "rsqrt", "exp", "log", "sin", "cos", "tan",
    "cosh", "sinh", "tanh", "sigmoid", "erf", "conj", "real", "imag")
(add, sub, mul, div, pow, floor_divide, equal, not_equal, less, less_equal, greater,
 greater_equal, logical_and, where, cast) = _ops(
    "add", "sub", "mul", "div", "pow", "floor_divide", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "logical_and", "where", "cast")
sum, mean, argmax, argsort, cumsum, cumprod, cummax = _ops(
    "sum", "mean", "argmax", "argsort", "cumsum", "cumprod", "cummax")
broadcast_to, concat, stack, split, slice, pad, flip, tril, triu = _ops(
    "broadcast_to", "concat", "stack", "split", "slice", "pad", "flip", "tril", "triu")
gather, take_along_axis, gather_nd, scatter, scatter_nd, embedding = _ops(
    "gather", "take_along_axis", "gather_nd", "scatter", "scatter_nd", "embedding")
matmul, einsum, conv, conv_transpose, fft, max_pool_grad = _ops(
    "matmul", "einsum", "conv", "conv_transpose", "fft", "max_pool_grad")


def reshape(t: Tensor, shape: Sequence[int]) -> Tensor:
    """``t`` with a new shape (no ``-1``); ``t`` itself when the shape is unchanged."""
    shape = tuple(shape)
    if t.shape == shape:
        return t
    return _single("reshape", t, shape=shape)


def transpose(t: Tensor, perm: Sequence[int]) -> Tensor:
    """``t`` with its axes permuted; ``t`` itself for the identity permutation."""
    perm = tuple(perm)
    if perm == tuple(range(t.ndim)):
        return t
    return _single("transpose", t, perm=perm)


# -- constants --------------------------------------------------------------------------------


def full(shape: Sequence[int], value: float, dtype: DType) -> Tensor:
    return _single("full", shape=tuple(shape), value=float(value), dtype=dtype)


def scalar(value: float, like: Tensor) -> Tensor:
    """A 0-d tensor of ``like``'s dtype (it broadcasts against anything)."""
    return full((), value, like.dtype)


def zeros(shape: Sequence[int], dtype: DType) -> Tensor:
    return full(shape, 0.0, dtype)


def zeros_like(t: Tensor) -> Tensor:
    return zeros(t.shape, t.dtype)


def ones_like(t: Tensor) -> Tensor:
    return full(t.shape, 1.0, t.dtype)


def constant(value: Any, dtype: DType) -> Tensor:
    """A constant tensor holding ``value`` (a NumPy array or scalar, complex allowed)."""
    stored = as_storage(np.asarray(value), dtype)
    return _single("constant", value=stored, dtype=dtype)


def index_constant(value: Any) -> Tensor:
    """An int64 constant, for index tables computed from static shapes."""
    return constant(np.asarray(value, np.int64), int64)


def iota(shape: Sequence[int], axis: int, dtype: DType = int64) -> Tensor:
    return _single("iota", shape=tuple(shape), axis=axis, dtype=dtype)


def as_dtype_of(t: Tensor, like: Tensor) -> Tensor:
    """``t`` cast to ``like``'s dtype (a no-op when it has it already)."""
    return t if t.dtype is like.dtype else cast(t, dtype=like.dtype)


def mask(condition: Tensor, like: Tensor) -> Tensor:
    """A bool tensor as 0/1 values of ``like``'s dtype."""
    return cast(condition, dtype=like.dtype)


def select(condition: Tensor, value: Tensor) -> Tensor:
    """``value`` where ``condition`` holds, zero elsewhere (never multiplies, so an infinite or
    NaN ``value`` outside ``condition`` does not leak)."""
    return where(condition, value, scalar(0.0, value))


# -- zeros as None ----------------------------------------------------------------------------


def materialize(t: Optional[Tensor], like: Tensor) -> Tensor:
    """``t``, or zeros shaped and typed as ``like`` when ``t`` is ``None`` (a zero)."""
    return zeros_like(like) if t is None else t


def add_all(*terms: Optional[Tensor]) -> Optional[Tensor]:
    """The sum of the terms that are not ``None``; ``None`` when all are."""
    present = [t for t in terms if t is not None]
    if not present:
        return None
    total = present[0]
    for t in present[1:]:
        total = add(total, t)
    return total


def scaled(t: Optional[Tensor], factor: Tensor) -> Optional[Tensor]:
    """``t * factor``, keeping ``None`` (zero) as ``None``."""
    return None if t is None else mul(t, factor)


# -- broadcasting -----------------------------------------------------------------------------


def sum_to_shape(g: Tensor, shape: Sequence[int]) -> Tensor:
    """Reduce a cotangent of a broadcast result back to an operand of ``shape``: sum the
    leading axes the operand lacks and the axes where it has size 1."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and g.shape[lead + i] != 1)
    summed = sum(g, axes=axes, keepdims=True) if axes else g
    return reshape(summed, shape=shape)


def broadcast_as(t: Tensor, shape: Sequence[int]) -> Tensor:
    """``t`` broadcast to ``shape`` (returned as is when it has that shape)."""
    shape = tuple(shape)
    return t if t.shape == shape else broadcast_to(t, shape=shape)


def reduction_axes(x: Tensor, axes: Optional[Sequence[int]]) -> tuple[int, ...]:
    """A reduction's ``axes`` attribute normalised for ``x`` (``None``: every axis)."""
    return normalize_axes(axes, x.ndim)


def kept(r: Tensor, x: Tensor, axes: tuple[int, ...]) -> Tensor:
    """A reduction's result ``r`` reshaped with the reduced ``axes`` of ``x`` as size 1, so it
    broadcasts against ``x`` (whether or not the op kept them)."""
    return reshape(r, shape=reduced_shape(x.shape, axes, True))


def count(x: Tensor, axes: tuple[int, ...]) -> int:
    """How many elements of ``x`` one reduction over ``axes`` combines."""
    return math.prod(x.shape[a] for a in axes)


def swap_last_two(t: Tensor) -> Tensor:
    perm = tuple(range(t.ndim - 2)) + (t.ndim - 1, t.ndim - 2)
    return transpose(t, perm=perm)


def inverse_permutation(perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort(perm))


def shift(t: Tensor, axis: int, by: int, fill: float) -> Tensor:
    """``t`` moved ``by`` positions along ``axis`` (toward the end when positive), the vacated
    positions set to ``fill`` and the shape kept."""
    if by >= t.shape[axis] or -by >= t.shape[axis]:
        return full(t.shape, fill, t.dtype)
    pads = [0] * (2 * t.ndim)
    pads[2 * axis], pads[2 * axis + 1] = by, -by
    return pad(t, pads=tuple(pads), value=float(fill))


def per_channel(v: Tensor, ndim: int) -> Tensor:
    """A ``[C]`` vector shaped ``[1, C, 1, ...]`` to broadcast against ``[N, C, ...]``."""
    return reshape(v, shape=(1, v.shape[0]) + (1,) * (ndim - 2))


def scatter_add_along(g: Tensor, axis: int, indices: Tensor, size: int) -> Tensor:
    """The transpose of ``take_along_axis``: ``g`` summed into a zero tensor whose ``axis`` has
    ``size`` entries, each element landing where ``indices`` (shaped as ``g``) points."""
    target = zeros(g.shape[:axis] + (size,) + g.shape[axis + 1:], g.dtype)
    return scatter(target, indices, g, axis=axis, reduce="add")


def scatter_add_static(g: Tensor, axis: int, positions: np.ndarray, size: int) -> Tensor:
    """The transpose of ``gather(x, positions, axis)`` for a 1-D static index array: the slices
    of ``g`` along ``axis`` summed into the positions they were read from."""
    along = [1] * g.ndim
    along[axis] = len(positions)
    indices = broadcast_as(reshape(index_constant(positions), shape=tuple(along)), g.shape)
    return scatter_add_along(g, axis, indices, size)


# -- rule building blocks ---------------------------------------------------------------------


def linear_jvp(op: str) -> JvpRule:
    """The JVP of an op that is linear in its one tensor input: the op applied to the
    tangent, with the same attributes."""

    def jvp(primals: tuple[Tensor, ...], tangents: tuple[Optional[Tensor], ...],
            outputs: tuple[Tensor, ...], **attrs: Any) -> Grads:
        out = apply(op, tangents[0], **attrs)
        return out if isinstance(out, tuple) else (out,)

    jvp.__name__ = jvp.__qualname__ = f"{op}_jvp"
    return jvp


class RuleTable:
    """The VJP, JVP or batching rules of one op family, filled by decorators::

        rules = RuleTable()

        @rules.vjp("exp")
        def _exp_vjp(primals, outputs, cotangents): ...
    """

    def __init__(self) -> None:
        self.vjps: dict[str, VjpRule] = {}
        self.jvps: dict[str, JvpRule] = {}
        self.batches: dict[str, Callable[..., Any]] = {}

    def vjp(self, *ops: str) -> Callable[[VjpRule], VjpRule]:
        return self._register(self.vjps, ops)

    def jvp(self, *ops: str) -> Callable[[JvpRule], JvpRule]:
        return self._register(self.jvps, ops)

    def batch(self, *ops: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        return self._register(self.batches, ops)

    @staticmethod
    def _register(table: dict[str, Callable[..., Any]],
                  ops: tuple[str, ...]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def decorate(rule: Callable[..., Any]) -> Callable[..., Any]:
            for op in ops:
                if op in table:
                    raise ValueError(f"two rules for op {op!r}")
                table[op] = rule
            return rule

        return decorate
