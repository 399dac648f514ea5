"""Derivatives of the sorting and scanning ops.

``sort``, ``topk``, ``cummax`` and ``cummin`` pick input elements: their JVPs pick the same
elements of the tangent and their VJPs scatter the cotangent back to where each came from.
``sort`` uses the same stable order as ``argsort``; ``topk`` its own index output; the running
extremes the position where the current extreme was last attained (ties go to the latest
index, as PyTorch's ``cummax``/``cummin`` indices).

``cumsum`` is linear: its VJP is the scan run the other way.  ``cumprod``'s derivatives use no
division, so zeros in the input are exact at every order: by the product rule the tangent
obeys the linear recurrence ``dy[i] = x[i] * dy[i-1] + t[i] * y_excl[i]`` (``y_excl``: the
exclusive product), and the cotangent of ``x[k]`` is ``y_excl[k] * s[k]`` with
``s[k] = g[k] + x[k+1] * s[k+1]`` — recurrences evaluated in ``log2(n)`` doubling steps of
elementwise ops (a Hillis–Steele scan), as JAX differentiates through its associative scan.
"""

from __future__ import annotations

from mskernel_sdk import Tensor

from . import _ops as ops
from ._ops import Grads, RuleTable

rules = RuleTable()

# -- picking ----------------------------------------------------------------------------------


def _picked_vjp(g: Tensor, x: Tensor, indices: Tensor, axis: int) -> Tensor:
    return ops.scatter_add_along(g, axis, indices, x.shape[axis])


@rules.vjp("sort")
def _sort_vjp(primals, outputs, cotangents, *, axis, descending) -> Grads:
    (x,), (g,) = primals, cotangents
    order = ops.argsort(x, axis=axis, descending=descending)
    return (_picked_vjp(g, x, order, axis % x.ndim),)


@rules.jvp("sort")
def _sort_jvp(primals, tangents, outputs, *, axis, descending) -> Grads:
    order = ops.argsort(primals[0], axis=axis, descending=descending)
    return (ops.take_along_axis(tangents[0], order, axis=axis),)


@rules.vjp("topk")
def _topk_vjp(primals, outputs, cotangents, *, k, axis, largest, sorted) -> Grads:
    (x,), (_, indices), (g, _) = primals, outputs, cotangents
    return (_picked_vjp(ops.materialize(g, outputs[0]), x, indices, axis % x.ndim),)


@rules.jvp("topk")
def _topk_jvp(primals, tangents, outputs, *, k, axis, largest, sorted) -> Grads:
    return ops.take_along_axis(tangents[0], outputs[1], axis=axis), None


def _running_source(x: Tensor, y: Tensor, axis: int) -> Tensor:
    """For each position, the index along ``axis`` where the running extreme ``y`` was last
    attained: the latest position up to it where ``x`` equals ``y``."""
    positions = ops.iota(x.shape, axis)
    attained = ops.where(ops.equal(x, y), positions, ops.zeros(x.shape, positions.dtype))
    return ops.cummax(attained, axis=axis)


@rules.vjp("cummax", "cummin")
def _running_extreme_vjp(primals, outputs, cotangents, *, axis) -> Grads:
    (x,), (y,), (g,) = primals, outputs, cotangents
    ax = axis % x.ndim
    return (_picked_vjp(g, x, _running_source(x, y, ax), ax),)


@rules.jvp("cummax", "cummin")
def _running_extreme_jvp(primals, tangents, outputs, *, axis) -> Grads:
    (x,), (t,), (y,) = primals, tangents, outputs
    ax = axis % x.ndim
    return (ops.take_along_axis(t, _running_source(x, y, ax), axis=ax),)


# -- scans ------------------------------------------------------------------------------------


@rules.vjp("cumsum")
def _cumsum_vjp(primals, outputs, cotangents, *, axis, reverse, exclusive) -> Grads:
    return (ops.cumsum(cotangents[0], axis=axis, reverse=not reverse, exclusive=exclusive),)


rules.jvp("cumsum")(ops.linear_jvp("cumsum"))


def _step(reverse: bool) -> int:
    """The direction a scan runs along its axis: +1 toward the end, -1 from the end."""
    return -1 if reverse else 1


def _recurrence(a: Tensor, b: Tensor, axis: int, reverse: bool) -> Tensor:
    """``h[i] = a[i] * h[i-1] + b[i]`` with ``h[-1] = 0``, ``i`` running along ``axis`` in the
    scan's direction.  Each doubling step composes every element's affine map with that of the
    element ``span`` before it (vacated positions hold the identity map, a = 1 and b = 0)."""
    span = 1
    while span < a.shape[axis]:
        by = span * _step(reverse)
        b = ops.add(b, ops.mul(a, ops.shift(b, axis, by, 0.0)))
        a = ops.mul(a, ops.shift(a, axis, by, 1.0))
        span *= 2
    return b


def _cumprod_inclusive_jvp(x: Tensor, t: Tensor, axis: int, reverse: bool) -> Tensor:
    before = ops.cumprod(x, axis=axis, reverse=reverse, exclusive=True)
    return _recurrence(x, ops.mul(t, before), axis, reverse)


def _cumprod_inclusive_vjp(x: Tensor, g: Tensor, axis: int, reverse: bool) -> Tensor:
    before = ops.cumprod(x, axis=axis, reverse=reverse, exclusive=True)
    following = ops.shift(x, axis, -_step(reverse), 1.0)  # x[k+1] in the scan's direction
    return ops.mul(before, _recurrence(following, g, axis, not reverse))


@rules.vjp("cumprod")
def _cumprod_vjp(primals, outputs, cotangents, *, axis, reverse, exclusive) -> Grads:
    (x,), (g,) = primals, cotangents
    ax = axis % x.ndim
    if exclusive:  # y_excl[i] = y[i-1]: the cotangent of y[i] is that of y_excl[i+1]
        g = ops.shift(g, ax, -_step(reverse), 0.0)
    return (_cumprod_inclusive_vjp(x, g, ax, reverse),)


@rules.jvp("cumprod")
def _cumprod_jvp(primals, tangents, outputs, *, axis, reverse, exclusive) -> Grads:
    (x,), (t,) = primals, tangents
    ax = axis % x.ndim
    dy = _cumprod_inclusive_jvp(x, t, ax, reverse)
    return (ops.shift(dy, ax, _step(reverse), 0.0) if exclusive else dy,)


VJP = rules.vjps
JVP = rules.jvps
NONDIFFERENTIABLE = frozenset({"argsort"})
