"""Derivatives of ``softmax``, ``log_softmax`` and the normalisations.

The normalisations share one derivation (:func:`_normalized_vjp`, :func:`_normalized_jvp`):
``xhat = (x - mean) * rstd`` with ``rstd = 1 / sqrt(var + eps)`` and the biased variance over
some axes.  Their statistics outputs are differentiable too — ``layer_norm``/``group_norm``'s
``mean`` and ``rstd`` and training ``batch_norm``'s ``mean`` and ``var`` are functions of
``x`` — so a loss that uses them (say, a running-average update) gets their contribution.

``batch_norm`` with ``training=False`` normalises with its ``mean``/``var`` inputs, which are
then differentiable (and returned unchanged: their outputs pass cotangents straight back);
with ``training=True`` those inputs are unused and get no gradient.
"""

from __future__ import annotations

import math
from typing import Optional

from mskernel_sdk import Tensor

from . import _ops as ops
from ._ops import Grads, RuleTable

rules = RuleTable()

# -- softmax ----------------------------------------------------------------------------------


@rules.vjp("softmax")
def _softmax_vjp(primals, outputs, cotangents, *, axis) -> Grads:
    (y,), (g,) = outputs, cotangents
    along = ops.sum(ops.mul(g, y), axes=(axis,), keepdims=True)
    return (ops.mul(y, ops.sub(g, along)),)


@rules.jvp("softmax")
def _softmax_jvp(primals, tangents, outputs, *, axis) -> Grads:
    (t,), (y,) = tangents, outputs
    along = ops.sum(ops.mul(t, y), axes=(axis,), keepdims=True)
    return (ops.mul(y, ops.sub(t, along)),)


@rules.vjp("log_softmax")
def _log_softmax_vjp(primals, outputs, cotangents, *, axis) -> Grads:
    (y,), (g,) = outputs, cotangents
    return (ops.sub(g, ops.mul(ops.exp(y), ops.sum(g, axes=(axis,), keepdims=True))),)


@rules.jvp("log_softmax")
def _log_softmax_jvp(primals, tangents, outputs, *, axis) -> Grads:
    (t,), (y,) = tangents, outputs
    return (ops.sub(t, ops.sum(ops.mul(t, ops.exp(y)), axes=(axis,), keepdims=True)),)


# -- the shared normalisation -----------------------------------------------------------------


class _Normalized:
    """``xhat = (x - mean) * rstd`` over ``axes`` of ``x``; ``mean`` and ``rstd`` have the
    reduced axes kept as size 1."""

    def __init__(self, x: Tensor, mean: Tensor, rstd: Tensor, axes: tuple[int, ...]) -> None:
        self.x, self.mean, self.rstd, self.axes = x, mean, rstd, axes
        self.xhat = ops.mul(ops.sub(x, mean), rstd)
        self.inverse_count = ops.scalar(1 / max(ops.count(x, axes), 1), x)

    def average(self, t: Tensor) -> Tensor:
        return ops.mean(t, axes=self.axes, keepdims=True)

    def spread(self, g: Tensor) -> Tensor:
        """A statistic's cotangent shared over the elements it averages: ``g / n``."""
        return ops.broadcast_as(ops.mul(g, self.inverse_count), self.x.shape)

    def vjp(self, g_xhat: Optional[Tensor], g_mean: Optional[Tensor],
            g_var: Optional[Tensor]) -> Tensor:
        """The cotangent of ``x`` from those of ``xhat``, ``mean`` and the variance."""
        terms: list[Optional[Tensor]] = []
        if g_xhat is not None:
            centered = ops.sub(g_xhat, self.average(g_xhat))
            along = ops.mul(self.xhat, self.average(ops.mul(g_xhat, self.xhat)))
            terms.append(ops.mul(self.rstd, ops.sub(centered, along)))
        if g_mean is not None:
            terms.append(self.spread(g_mean))
        if g_var is not None:
            # d var / dx_i = 2 (x_i - mean) / n = 2 xhat_i / (rstd n)
            twice = ops.div(ops.mul(self.xhat, ops.scalar(2.0, self.x)), self.rstd)
            terms.append(ops.mul(self.spread(g_var), twice))
        return ops.materialize(ops.add_all(*terms), self.x)

    def jvp(self, t: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """The tangents of ``xhat``, ``mean`` and the variance from that of ``x``."""
        t_mean = self.average(t)
        along = self.average(ops.mul(self.xhat, t))
        t_xhat = ops.mul(self.rstd, ops.sub(ops.sub(t, t_mean), ops.mul(self.xhat, along)))
        t_var = ops.div(ops.mul(along, ops.scalar(2.0, t)), self.rstd)
        return t_xhat, t_mean, t_var


def _rstd_to_var(rstd: Tensor) -> Tensor:
    """d rstd / d var = -rstd**3 / 2."""
    return ops.mul(ops.scalar(-0.5, rstd), ops.mul(rstd, ops.square(rstd)))


def _affine_vjp(g: Tensor, xhat: Tensor, scale: Tensor, bias: Tensor,
                per_channel: bool) -> tuple[Tensor, Tensor, Tensor]:
    """For ``y = xhat * scale + bias``: the cotangents of ``xhat``, ``scale`` and ``bias``
    (``per_channel``: scale and bias are ``[C]`` vectors of ``[N, C, ...]``)."""
    if per_channel:
        axes = (0,) + tuple(range(2, g.ndim))
        g_xhat = ops.mul(g, ops.per_channel(scale, g.ndim))
        return (g_xhat, ops.sum(ops.mul(g, xhat), axes=axes), ops.sum(g, axes=axes))
    return (ops.mul(g, scale), ops.sum_to_shape(ops.mul(g, xhat), scale.shape),
            ops.sum_to_shape(g, bias.shape))


def _affine_jvp(t_xhat: Optional[Tensor], xhat: Tensor, scale: Tensor,
                t_scale: Optional[Tensor], t_bias: Optional[Tensor],
                per_channel: bool) -> Optional[Tensor]:
    """The tangent of ``y = xhat * scale + bias``."""
    if per_channel:
        scale = ops.per_channel(scale, xhat.ndim)
        t_scale = None if t_scale is None else ops.per_channel(t_scale, xhat.ndim)
        t_bias = None if t_bias is None else ops.per_channel(t_bias, xhat.ndim)
    total = ops.add_all(ops.scaled(t_xhat, scale), ops.scaled(t_scale, xhat), t_bias)
    return None if total is None else ops.broadcast_as(total, xhat.shape)


# -- layer_norm -------------------------------------------------------------------------------


def _layer(x: Tensor, outputs: tuple[Tensor, ...], axis: int) -> _Normalized:
    _, mean, rstd = outputs
    return _Normalized(x, mean, rstd, tuple(range(axis % x.ndim, x.ndim)))


@rules.vjp("layer_norm")
def _layer_norm_vjp(primals, outputs, cotangents, *, axis, eps) -> Grads:
    (x, scale, bias), (g, g_mean, g_rstd) = primals, cotangents
    norm = _layer(x, outputs, axis)
    g_xhat, g_scale, g_bias = _affine_vjp(ops.materialize(g, x), norm.xhat, scale, bias, False)
    g_var = ops.scaled(g_rstd, _rstd_to_var(norm.rstd))
    return norm.vjp(g_xhat, g_mean, g_var), g_scale, g_bias


@rules.jvp("layer_norm")
def _layer_norm_jvp(primals, tangents, outputs, *, axis, eps) -> Grads:
    (x, scale, _), (t, t_scale, t_bias) = primals, tangents
    norm = _layer(x, outputs, axis)
    t_xhat, t_mean, t_var = norm.jvp(t) if t is not None else (None, None, None)
    t_y = _affine_jvp(t_xhat, norm.xhat, scale, t_scale, t_bias, False)
    return t_y, t_mean, ops.scaled(t_var, _rstd_to_var(norm.rstd))


# -- group_norm -------------------------------------------------------------------------------


def _grouped(t: Tensor, groups: int) -> Tensor:
    """``[N, C, ...]`` as ``[N, groups, C/groups * prod(...)]``."""
    per_group = t.shape[1] // groups * math.prod(t.shape[2:])
    return ops.reshape(t, shape=(t.shape[0], groups, per_group))


@rules.vjp("group_norm")
def _group_norm_vjp(primals, outputs, cotangents, *, num_groups, eps) -> Grads:
    (x, scale, bias), (_, mean, rstd), (g, g_mean, g_rstd) = primals, outputs, cotangents
    stats = (x.shape[0], num_groups, 1)
    norm = _Normalized(_grouped(x, num_groups), ops.reshape(mean, shape=stats),
                       ops.reshape(rstd, shape=stats), (2,))
    xhat = ops.reshape(norm.xhat, shape=x.shape)
    g_xhat, g_scale, g_bias = _affine_vjp(ops.materialize(g, x), xhat, scale, bias, True)
    g_mean = None if g_mean is None else ops.reshape(g_mean, shape=stats)
    g_var = None if g_rstd is None else ops.mul(ops.reshape(g_rstd, shape=stats),
                                                _rstd_to_var(norm.rstd))
    g_x = norm.vjp(_grouped(g_xhat, num_groups), g_mean, g_var)
    return ops.reshape(g_x, shape=x.shape), g_scale, g_bias


@rules.jvp("group_norm")
def _group_norm_jvp(primals, tangents, outputs, *, num_groups, eps) -> Grads:
    (x, scale, _), (t, t_scale, t_bias), (_, mean, rstd) = primals, tangents, outputs
    stats = (x.shape[0], num_groups, 1)
    norm = _Normalized(_grouped(x, num_groups), ops.reshape(mean, shape=stats),
                       ops.reshape(rstd, shape=stats), (2,))
    xhat = ops.reshape(norm.xhat, shape=x.shape)
    t_xhat = t_mean = t_rstd = None
    if t is not None:
        grouped_xhat, grouped_mean, grouped_var = norm.jvp(_grouped(t, num_groups))
        t_xhat = ops.reshape(grouped_xhat, shape=x.shape)
        t_mean = ops.reshape(grouped_mean, shape=mean.shape)
        t_rstd = ops.reshape(ops.mul(grouped_var, _rstd_to_var(norm.rstd)), shape=rstd.shape)
    return _affine_jvp(t_xhat, xhat, scale, t_scale, t_bias, True), t_mean, t_rstd


# -- batch_norm -------------------------------------------------------------------------------


def _channel_stats(x: Tensor, mean: Tensor, var: Tensor, eps: float) -> _Normalized:
    """The normalisation of ``[N, C, ...]`` with per-channel ``mean`` and ``var``."""
    m = ops.per_channel(mean, x.ndim)
    rstd = ops.rsqrt(ops.add(ops.per_channel(var, x.ndim), ops.scalar(eps, var)))
    return _Normalized(x, m, rstd, (0,) + tuple(range(2, x.ndim)))


@rules.vjp("batch_norm")
def _batch_norm_vjp(primals, outputs, cotangents, *, eps, training) -> Grads:
    x, scale, bias, mean_in, var_in = primals
    (g, g_mean, g_var) = cotangents
    stats = outputs[1:] if training else (mean_in, var_in)
    norm = _channel_stats(x, *stats, eps)
    g_xhat, g_scale, g_bias = _affine_vjp(ops.materialize(g, x), norm.xhat, scale, bias, True)
    if training:
        g_x = norm.vjp(g_xhat, _channel_or_none(g_mean, x), _channel_or_none(g_var, x))
        return g_x, g_scale, g_bias, None, None
    # Inference: y = (x - mean) * rstd(var) * scale + bias with mean and var given.
    rstd = ops.reshape(norm.rstd, shape=scale.shape)
    from_mean = ops.neg(ops.mul(g_bias, ops.mul(scale, rstd)))
    from_var = ops.div(ops.mul(ops.mul(g_scale, scale), _rstd_to_var(rstd)), rstd)
    return (ops.mul(g_xhat, norm.rstd), g_scale, g_bias, ops.add_all(from_mean, g_mean),
            ops.add_all(from_var, g_var))


def _channel_or_none(v: Optional[Tensor], x: Tensor) -> Optional[Tensor]:
    return None if v is None else ops.per_channel(v, x.ndim)


@rules.jvp("batch_norm")
def _batch_norm_jvp(primals, tangents, outputs, *, eps, training) -> Grads:
    x, scale, _, mean_in, var_in = primals
    t, t_scale, t_bias, t_mean_in, t_var_in = tangents
    stats = outputs[1:] if training else (mean_in, var_in)
    norm = _channel_stats(x, *stats, eps)
    if training:
        t_xhat, t_mean, t_var = norm.jvp(t) if t is not None else (None, None, None)
        t_y = _affine_jvp(t_xhat, norm.xhat, scale, t_scale, t_bias, True)
        return t_y, _vector_or_none(t_mean, scale), _vector_or_none(t_var, scale)
    # Inference: xhat moves with x, the given mean and the given var.
    t_rstd = None if t_var_in is None else ops.mul(
        ops.per_channel(t_var_in, x.ndim), _rstd_to_var(norm.rstd))
    t_xhat = ops.add_all(
        None if t is None else ops.mul(t, norm.rstd),
        None if t_mean_in is None else ops.neg(ops.mul(ops.per_channel(t_mean_in, x.ndim),
                                                       norm.rstd)),
        None if t_rstd is None else ops.mul(ops.div(norm.xhat, norm.rstd), t_rstd))
    t_y = _affine_jvp(t_xhat, norm.xhat, scale, t_scale, t_bias, True)
    return t_y, t_mean_in, t_var_in


def _vector_or_none(v: Optional[Tensor], like: Tensor) -> Optional[Tensor]:
    return None if v is None else ops.reshape(v, shape=like.shape)


VJP = rules.vjps
JVP = rules.jvps
NONDIFFERENTIABLE: frozenset[str] = frozenset()
