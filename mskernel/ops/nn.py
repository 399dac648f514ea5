"""Neural-network ops: ``softmax``, ``log_softmax`` and the normalisations ``batch_norm``,
``layer_norm`` and ``group_norm``.

All take floating-point tensors, and every parameter (scale, bias, statistics) has the dtype
of ``x``.  They are composites of reductions and elementwise ops (see :mod:`.primitives`): a
backend may claim and fuse them, and one that does not runs their decompositions, which
follow the references below step by step (the maximum subtracted before ``exp``, two-pass
statistics, float16 in float32).  Normalisations compute ``(x - mean) * rstd * scale + bias``
with ``rstd = 1 / sqrt(var + eps)`` and the biased variance (divisor ``n``), and return their
statistics as extra outputs for autodiff and running-average updates:

- ``batch_norm(x[N, C, ...], scale[C], bias[C], mean[C], var[C])`` → ``(y, mean, var)``:
  with ``training=True`` the statistics are those of the batch, over every axis but 1
  (momentum updates of running statistics are the caller's); otherwise the given ``mean``
  and ``var`` are used and returned unchanged.
- ``layer_norm(x, scale, bias)`` → ``(y, mean, rstd)``: normalises over the axes from
  ``axis`` on (MindSpore's ``begin_norm_axis``); ``scale``/``bias`` have shape
  ``x.shape[axis:]`` and the statistics keep the normalised axes as size 1, shape
  ``x.shape[:axis] + (1,) * (x.rank - axis)`` (as PyTorch's ``native_layer_norm``).
- ``group_norm(x[N, C, ...], scale[C], bias[C])`` → ``(y, mean, rstd)``: normalises each of
  ``num_groups`` groups of consecutive channels of each sample; statistics have shape
  ``[N, num_groups]`` (as PyTorch's ``native_group_norm``).

The reference computes float16 in float32 (:func:`~mskernel.ops.rules.widened`) and
accumulates sums and statistics in float64 (:func:`~mskernel.ops.reduction.accumulator`).
"""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from ..errors import InferError
from ..ir.graph import Value
from ..ir.types import Shape, TensorType
from .compose import in_working_precision, moments_over, rounded, scalar, tensor_type, working
from .reduction import accumulator, moments
from .registry import Attr, Emitter, OpDef
from .rules import normalize_axis, require_kind, same_dtype, tensor, widened
from .samples import (
    FLOATS, OpSample, SampleFn, accumulation_tolerance, dtype_cases, random_array,
)

_EPS = Attr("eps", "float", 1e-5)


def _softmax_infer(x: TensorType, axis: int) -> TensorType:
    x = tensor(x)
    require_kind(x, "f")
    normalize_axis(axis, x.rank)
    return x


def _shifted(x: np.ndarray, axis: int) -> np.ndarray:
    """``x`` minus its maximum along ``axis`` (the peak becomes 0, so exp cannot overflow)."""
    w = widened(x)
    return w - np.max(w, axis=axis, keepdims=True, initial=-np.inf)


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(_shifted(x, axis))
    total = np.sum(e, axis=axis, dtype=accumulator(e.dtype), keepdims=True)
    return (e / total).astype(x.dtype, copy=False)


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    s = _shifted(x, axis)
    out = s - np.log(np.sum(np.exp(s), axis=axis, dtype=accumulator(s.dtype), keepdims=True))
    return out.astype(x.dtype, copy=False)


def _parameters(x: TensorType, shape: Shape, **params: TensorType) -> None:
    """Require each named parameter to be a tensor of ``x``'s dtype and of ``shape``."""
    for name, t in params.items():
        t = tensor(t, name)
        same_dtype([x, t])
        if t.shape != shape:
            raise InferError(
                f"{name} must have shape {list(shape)} to match x of shape {list(x.shape)}, "
                f"got {list(t.shape)}"
            )


def _channels_first(x: TensorType) -> int:
    """Check ``x`` is a floating ``[N, C, ...]`` tensor and return ``C``."""
    x = tensor(x)
    require_kind(x, "f")
    if x.rank < 2:
        raise InferError(f"x must have shape [N, C, ...] (rank >= 2), got shape {list(x.shape)}")
    return x.shape[1]


def _per_channel(a: np.ndarray, ndim: int) -> np.ndarray:
    """A ``[C]`` vector shaped to broadcast against ``[N, C, ...]``."""
    return a.reshape((1, -1) + (1,) * (ndim - 2))


def _batch_norm_infer(x: TensorType, scale: TensorType, bias: TensorType, mean: TensorType,
                      var: TensorType, eps: float, training: bool) -> tuple[TensorType, ...]:
    channels = _channels_first(x)
    _parameters(x, (channels,), scale=scale, bias=bias, mean=mean, var=var)
    stats = x.with_shape((channels,))
    return x, stats, stats


def _batch_norm(x: np.ndarray, scale: np.ndarray, bias: np.ndarray, mean: np.ndarray,
                var: np.ndarray, eps: float, training: bool) -> tuple[np.ndarray, ...]:
    w = widened(x)
    if training:
        axes = (0, *range(2, x.ndim))
        batch_mean, batch_var = moments(w, axes)
        mean, var = batch_mean.reshape(-1), batch_var.reshape(-1)
    rstd = 1 / np.sqrt(widened(var) + eps)
    gain = _per_channel(rstd * widened(scale), x.ndim)
    y = (w - _per_channel(widened(mean), x.ndim)) * gain + _per_channel(widened(bias), x.ndim)
    return tuple(a.astype(x.dtype, copy=False) for a in (y, mean, var))


def _layer_norm_infer(x: TensorType, scale: TensorType, bias: TensorType, axis: int,
                      eps: float) -> tuple[TensorType, ...]:
    x = tensor(x)
    require_kind(x, "f")
    first = normalize_axis(axis, x.rank)
    _parameters(x, x.shape[first:], scale=scale, bias=bias)
    stats = x.with_shape(x.shape[:first] + (1,) * (x.rank - first))
    return x, stats, stats


def _normalized(w: np.ndarray, axes: tuple[int, ...],
                eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(w - mean) * rstd`` over ``axes``, with the mean and rstd (axes kept as size 1)."""
    mean, var = moments(w, axes)
    rstd = 1 / np.sqrt(var + eps)
    return (w - mean) * rstd, mean, rstd


def _layer_norm(x: np.ndarray, scale: np.ndarray, bias: np.ndarray, axis: int,
                eps: float) -> tuple[np.ndarray, ...]:
    first = axis % x.ndim
    normed, mean, rstd = _normalized(widened(x), tuple(range(first, x.ndim)), eps)
    y = normed * widened(scale) + widened(bias)
    return tuple(a.astype(x.dtype, copy=False) for a in (y, mean, rstd))


def _group_norm_infer(x: TensorType, scale: TensorType, bias: TensorType, num_groups: int,
                      eps: float) -> tuple[TensorType, ...]:
    channels = _channels_first(x)
    if num_groups <= 0:
        raise InferError(f"num_groups must be positive, got {num_groups}")
    if channels % num_groups:
        raise InferError(
            f"the {channels} channels of x (shape {list(x.shape)}) cannot be split into "
            f"{num_groups} groups: {channels} is not divisible by {num_groups}"
        )
    _parameters(x, (channels,), scale=scale, bias=bias)
    stats = x.with_shape((x.shape[0], num_groups))
    return x, stats, stats


def _group_norm(x: np.ndarray, scale: np.ndarray, bias: np.ndarray, num_groups: int,
                eps: float) -> tuple[np.ndarray, ...]:
    batch, channels = x.shape[:2]
    group_size = channels // num_groups * math.prod(x.shape[2:])
    grouped = widened(x).reshape(batch, num_groups, group_size)
    normed, mean, rstd = _normalized(grouped, (2,), eps)
    y = (normed.reshape(x.shape) * _per_channel(widened(scale), x.ndim)
         + _per_channel(widened(bias), x.ndim))
    stats = (mean.reshape(batch, num_groups), rstd.reshape(batch, num_groups))
    return tuple(a.astype(x.dtype, copy=False) for a in (y, *stats))


# --- decompositions (see OpDef.decomposition) --------------------------------------------


def _decompose_softmax(b: Emitter, x: Value, axis: int, *, log: bool = False) -> Value:
    t = tensor_type(x)
    ax = axis % t.rank
    if t.shape[ax] == 0:  # nothing to normalise (and max has no identity)
        return x
    shifted = b.op("sub", x, b.op("max", x, axes=(ax,), keepdims=True))
    e = b.op("exp", shifted)
    total = b.op("sum", e, axes=(ax,), keepdims=True)
    return b.op("sub", shifted, b.op("log", total)) if log else b.op("div", e, total)


def _decompose_log_softmax(b: Emitter, x: Value, axis: int) -> Value:
    return _decompose_softmax(b, x, axis, log=True)


def _channels(b: Emitter, v: Value, rank: int) -> Value:
    """A ``[C]`` vector shaped to broadcast against ``[N, C, ...]``."""
    return b.op("reshape", v, shape=(1, tensor_type(v).shape[0]) + (1,) * (rank - 2))


def _standardized(b: Emitter, w: Value, axes: tuple[int, ...],
                eps: float) -> tuple[Value, Value, Value]:
    """``(w - mean) * rstd`` over ``axes``, with the mean and rstd (axes kept as size 1)."""
    mean, var = moments_over(b, w, axes)
    rstd = b.op("rsqrt", b.op("add", var, scalar(b, eps, tensor_type(var).dtype)))
    return b.op("mul", b.op("sub", w, mean), rstd), mean, rstd


def _decompose_batch_norm(b: Emitter, x: Value, scale: Value, bias: Value, mean: Value,
                          var: Value, eps: float, training: bool) -> tuple[Value, ...]:
    t = tensor_type(x)
    w = working(b, x)
    if training:
        channels = (t.shape[1],)
        batch_mean, batch_var = moments_over(b, w, (0, *range(2, t.rank)))
        mean, var = (rounded(b, b.op("reshape", v, shape=channels), t.dtype)
                     for v in (batch_mean, batch_var))
    wide_var = working(b, var)
    rstd = b.op("rsqrt", b.op("add", wide_var, scalar(b, eps, tensor_type(wide_var).dtype)))
    gain = _channels(b, b.op("mul", rstd, working(b, scale)), t.rank)
    centred = b.op("sub", w, _channels(b, working(b, mean), t.rank))
    y = b.op("add", b.op("mul", centred, gain), _channels(b, working(b, bias), t.rank))
    return rounded(b, y, t.dtype), mean, var


def _decompose_layer_norm(b: Emitter, x: Value, scale: Value, bias: Value, axis: int,
                          eps: float) -> tuple[Value, ...]:
    rank = tensor_type(x).rank
    normed, mean, rstd = _standardized(b, x, tuple(range(axis % rank, rank)), eps)
    return b.op("add", b.op("mul", normed, scale), bias), mean, rstd


def _decompose_group_norm(b: Emitter, x: Value, scale: Value, bias: Value,
                          num_groups: int, eps: float) -> tuple[Value, ...]:
    t = tensor_type(x)
    batch, channels = t.shape[:2]
    group_size = channels // num_groups * math.prod(t.shape[2:])
    grouped = b.op("reshape", x, shape=(batch, num_groups, group_size))
    normed, mean, rstd = _standardized(b, grouped, (2,), eps)
    y = b.op("mul", b.op("reshape", normed, shape=t.shape), _channels(b, scale, t.rank))
    y = b.op("add", y, _channels(b, bias, t.rank))
    stats = (b.op("reshape", v, shape=(batch, num_groups)) for v in (mean, rstd))
    return (y, *stats)


OPS: list[OpDef] = [
    OpDef("softmax", ("x",), _softmax_infer, _softmax, attrs=(Attr("axis", "int", -1),),
          doc="exp(x) / sum(exp(x)) along axis, computed stably",
          decomposition=in_working_precision(_decompose_softmax)),
    OpDef("log_softmax", ("x",), _softmax_infer, _log_softmax, attrs=(Attr("axis", "int", -1),),
          doc="x - logsumexp(x) along axis, computed stably",
          decomposition=in_working_precision(_decompose_log_softmax)),
    OpDef("batch_norm", ("x", "scale", "bias", "mean", "var"), _batch_norm_infer, _batch_norm,
          attrs=(_EPS, Attr("training", "bool", False)),
          doc="per-channel normalisation of [N, C, ...]; returns (y, mean, var)",
          decomposition=_decompose_batch_norm),
    OpDef("layer_norm", ("x", "scale", "bias"), _layer_norm_infer, _layer_norm,
          attrs=(Attr("axis", "int", -1), _EPS),
          doc="normalisation over the axes from axis on; returns (y, mean, rstd)",
          decomposition=in_working_precision(_decompose_layer_norm)),
    OpDef("group_norm", ("x", "scale", "bias"), _group_norm_infer, _group_norm,
          attrs=(Attr("num_groups", "int"), _EPS),
          doc="normalisation over groups of channels of [N, C, ...]; returns (y, mean, rstd)",
          decomposition=in_working_precision(_decompose_group_norm)),
]


# --- samples (attached to the ops under the "samples" rule kind by mskernel.ops.core) --------
# Samples for ``softmax``, ``log_softmax`` and the normalisations, on every float dtype:
# several axes, size-1 and size-0 dimensions, rows holding ``-inf``, ``batch_norm`` in both
# modes, ``layer_norm`` from an axis other than the last, ``group_norm`` with one group, one
# channel per group and groups in between.  ``float32`` runs every case; the other float dtypes
# run two (see :func:`.samples.dtype_cases`).


_SOFTMAX_CASES = (((3, 5), -1), ((2, 3, 4), 1), ((4,), 0), ((1, 1), 0), ((2, 0, 3), -1))

# (shape of x, training)
_BATCH_NORM_CASES = (((2, 3, 2, 2), True), ((4, 3), False), ((4, 3), True),
                     ((2, 3, 2, 2), False), ((1, 2, 3), True), ((0, 2, 3), False))

# (shape of x, axis)
_LAYER_NORM_CASES = (((2, 3, 4), -1), ((2, 3, 4), 1), ((3, 5), 0), ((2, 1, 3), 1), ((0, 4), -1))

# (shape of x, num_groups)
_GROUP_NORM_CASES = (((2, 6, 3), 3), ((2, 4, 2, 2), 2), ((1, 4, 3), 4), ((3, 2, 5), 1),
                     ((0, 4, 2), 2))


def _softmax_samples(op: str) -> SampleFn:
    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        for dt, (shape, axis) in dtype_cases(FLOATS, _SOFTMAX_CASES):
            yield OpSample(op, (random_array(rng, shape, dt, -4, 4),), {"axis": axis},
                           dtypes=(dt,), **accumulation_tolerance(dt))
        with_inf = np.array([[-np.inf, 1.0, 2.0], [0.5, -np.inf, -np.inf]], np.float32)
        yield OpSample(op, (with_inf,), {"axis": -1}, label="minus-inf")
    return fn


def _batch_norm_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, (shape, training) in dtype_cases(FLOATS, _BATCH_NORM_CASES):
        channels = (shape[1],)
        args = (random_array(rng, shape, dt), random_array(rng, channels, dt),
                random_array(rng, channels, dt), random_array(rng, channels, dt),
                random_array(rng, channels, dt, 0.5, 2.0))
        yield OpSample("batch_norm", args, {"training": training}, dtypes=(dt,) * 5,
                       **accumulation_tolerance(dt))


def _layer_norm_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, (shape, axis) in dtype_cases(FLOATS, _LAYER_NORM_CASES):
        normalized = shape[axis % len(shape):]
        args = (random_array(rng, shape, dt), random_array(rng, normalized, dt),
                random_array(rng, normalized, dt))
        yield OpSample("layer_norm", args, {"axis": axis}, dtypes=(dt,) * 3,
                       **accumulation_tolerance(dt))
    x = np.full((2, 3), 7.0, np.float32)
    yield OpSample("layer_norm", (x, np.ones(3, np.float32), np.zeros(3, np.float32)),
                   {"eps": 1e-3}, label="constant-rows")


def _group_norm_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, (shape, groups) in dtype_cases(FLOATS, _GROUP_NORM_CASES):
        channels = (shape[1],)
        args = (random_array(rng, shape, dt), random_array(rng, channels, dt),
                random_array(rng, channels, dt))
        yield OpSample("group_norm", args, {"num_groups": groups}, dtypes=(dt,) * 3,
                       **accumulation_tolerance(dt))


SAMPLES: dict[str, SampleFn] = {
    "softmax": _softmax_samples("softmax"),
    "log_softmax": _softmax_samples("log_softmax"),
    "batch_norm": _batch_norm_samples,
    "layer_norm": _layer_norm_samples,
    "group_norm": _group_norm_samples,
}
