"""Derivatives of the reductions.

- ``prod`` needs no division: the derivative of each factor is the product of the others,
  the exclusive products from the left times those from the right (as JAX), so zeros in the
  input — one or several — give exact first and higher derivatives.
- ``max``/``min`` split the gradient evenly between the elements equal to the extreme (as
  JAX and PyTorch's ``amax``/``amin``): the max of ``[1, 3, 3]`` has gradient
  ``[0, 0.5, 0.5]``.
- ``var``/``std`` divide by ``max(n - correction, 0)`` as the ops do; ``std``'s gradient is 0
  where ``std`` is 0 (PyTorch's convention), where the true derivative is infinite.
"""

from __future__ import annotations

import math
from typing import Callable

from mskernel_sdk import Tensor

from . import _ops as ops
from ._ops import Grads, RuleTable

rules = RuleTable()


def _spread(g: Tensor, x: Tensor, axes: tuple[int, ...]) -> Tensor:
    """A reduction's cotangent broadcast back over the reduced axes of ``x``."""
    return ops.broadcast_as(ops.kept(g, x, axes), x.shape)


def _weighted_rules(op: str, weights: Callable[..., Tensor]) -> None:
    """Rules of a reduction whose derivative w.r.t. each element is ``weights(x, y_kept, axes,
    **attrs)`` (``y_kept``: the result with reduced axes kept): the VJP spreads the cotangent
    and multiplies, the JVP multiplies the tangent and sums."""

    @rules.vjp(op)
    def vjp(primals, outputs, cotangents, *, axes, keepdims, **attrs) -> Grads:
        (x,), (y,), (g,) = primals, outputs, cotangents
        dims = ops.reduction_axes(x, axes)
        w = weights(x, ops.kept(y, x, dims), dims, **attrs)
        return (ops.mul(_spread(g, x, dims), w),)

    @rules.jvp(op)
    def jvp(primals, tangents, outputs, *, axes, keepdims, **attrs) -> Grads:
        (x,), (t,), (y,) = primals, tangents, outputs
        dims = ops.reduction_axes(x, axes)
        w = weights(x, ops.kept(y, x, dims), dims, **attrs)
        return (ops.sum(ops.mul(t, w), axes=dims, keepdims=keepdims),)


@rules.vjp("sum")
def _sum_vjp(primals, outputs, cotangents, *, axes, keepdims) -> Grads:
    (x,), (g,) = primals, cotangents
    return (_spread(g, x, ops.reduction_axes(x, axes)),)


@rules.jvp("sum")
def _sum_jvp(primals, tangents, outputs, *, axes, keepdims) -> Grads:
    return (ops.sum(tangents[0], axes=axes, keepdims=keepdims),)


@rules.vjp("mean")
def _mean_vjp(primals, outputs, cotangents, *, axes, keepdims) -> Grads:
    (x,), (g,) = primals, cotangents
    dims = ops.reduction_axes(x, axes)
    # An empty reduction leaves x (and its gradient) empty, so the factor is then immaterial.
    inverse = ops.scalar(1 / max(ops.count(x, dims), 1), g)
    return (ops.mul(_spread(g, x, dims), inverse),)


@rules.jvp("mean")
def _mean_jvp(primals, tangents, outputs, *, axes, keepdims) -> Grads:
    return (ops.mean(tangents[0], axes=axes, keepdims=keepdims),)


def _others_product(x: Tensor, dims: tuple[int, ...]) -> Tensor:
    """For each element, the product of the other elements of its reduction (no division)."""
    rest = tuple(a for a in range(x.ndim) if a not in dims)
    perm = rest + dims
    moved = ops.transpose(x, perm=perm)
    flat = ops.reshape(moved, shape=tuple(x.shape[a] for a in rest) + (ops.count(x, dims),))
    last = flat.ndim - 1
    left = ops.cumprod(flat, axis=last, exclusive=True)
    right = ops.cumprod(flat, axis=last, exclusive=True, reverse=True)
    others = ops.reshape(ops.mul(left, right), shape=moved.shape)
    return ops.transpose(others, perm=ops.inverse_permutation(perm))


_weighted_rules("prod", lambda x, y, dims: _others_product(x, dims))


def _extreme_share(x: Tensor, y: Tensor, dims: tuple[int, ...]) -> Tensor:
    """1/k on each of the k elements equal to the extreme ``y``, 0 elsewhere."""
    hits = ops.mask(ops.equal(x, y), x)
    return ops.div(hits, ops.sum(hits, axes=dims, keepdims=True))


_weighted_rules("max", _extreme_share)
_weighted_rules("min", _extreme_share)
_weighted_rules("logsumexp", lambda x, y, dims: ops.exp(ops.sub(x, y)))


def _variance_weights(x: Tensor, dims: tuple[int, ...], correction: int) -> Tensor:
    """d var / dx = 2 (x - mean) / max(n - correction, 0)."""
    divisor = max(ops.count(x, dims) - correction, 0)
    factor = 2 / divisor if divisor else math.inf
    centered = ops.sub(x, ops.mean(x, axes=dims, keepdims=True))
    return ops.mul(centered, ops.scalar(factor, x))


_weighted_rules("var", lambda x, y, dims, correction: _variance_weights(x, dims, correction))


def _std_weights(x: Tensor, y: Tensor, dims: tuple[int, ...], correction: int) -> Tensor:
    """d std / dx = (d var / dx) / (2 std), taken as 0 where std is 0."""
    positive = ops.not_equal(y, ops.scalar(0.0, y))
    safe = ops.where(positive, y, ops.scalar(1.0, y))
    half_inverse = ops.select(positive, ops.div(ops.scalar(0.5, y), safe))
    return ops.mul(_variance_weights(x, dims, correction), half_inverse)


_weighted_rules("std", _std_weights)


VJP = rules.vjps
JVP = rules.jvps
NONDIFFERENTIABLE = frozenset({"all", "any", "argmax", "argmin"})
