"""Tolerances for results that accumulate: sums, dot products, convolution windows, means,
products, softmax denominators, the statistics of normalisations.

A backend may add the terms of a sum in any order, block them for its vector units and
threads, fuse multiplies into adds, or accumulate in the result's dtype itself; the reference
interpreter accumulates floats in float64 and rounds once.  Whatever the order, summing ``n``
terms (products included) in a precision of unit roundoff ``u`` errs by at most
``γ(n) = n·u / (1 - n·u)`` times the sum of the terms' absolute values (Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed., §3.1 and §4.2).  That bound holds on every
machine; a fixed ``rtol`` holds on the machine where the test was written (one CPU's GEMM
blocks its sums one way, the next one's another).

- :func:`tolerance` is the ``(rtol, atol)`` of a dtype for results computed two ways that
  sum nothing; :func:`tolerance_for_reduction` turns the bound into the ``(rtol, atol)`` of
  a result that does;
- :func:`accumulation_of` gives, for a sample of a reduction-like core op, the reduction
  length and the magnitude (per output element, per output) to pass it.  A plugin attaches
  the same for its own ops under the rule kind :data:`ACCUMULATION_RULE`; the conformance kit
  reads both.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from ..ir.dtypes import DType, dtype as to_dtype
from ..ops.samples import OpSample, sample_graph

#: The rule kind under which a plugin attaches an :data:`AccumulationFn` to an op it defines.
ACCUMULATION_RULE = "accumulation"

#: Unit roundoff (half the machine epsilon) of the real floating-point dtypes.
_UNIT_ROUNDOFF = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24,
                  "float64": 2.0 ** -53}
_COMPONENT = {"complex64": "float32", "complex128": "float64"}


def tolerance(dt: DType) -> tuple[float, float]:
    """Default (rtol, atol) for comparing results of dtype ``dt`` computed two ways."""
    return {
        "float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float32": (1e-5, 1e-6),
        "float64": (1e-12, 1e-14), "complex64": (1e-5, 1e-6), "complex128": (1e-12, 1e-14),
    }.get(dt.name, (0.0, 0.0))


def unit_roundoff(dt: str | DType) -> float:
    """The unit roundoff of a floating-point or complex dtype (of its components); 0 for
    exact dtypes."""
    name = to_dtype(dt).name
    return _UNIT_ROUNDOFF.get(_COMPONENT.get(name, name), 0.0)


def tolerance_for_reduction(dt: str | DType, length: int, magnitude: Any, *,
                            accumulator: str | DType | None = None) -> tuple[float, Any]:
    """``(rtol, atol)`` for comparing a result of dtype ``dt`` that sums ``length`` terms (a
    sum, a dot product, a convolution window, ...) whose absolute values add up to
    ``magnitude`` — a number, or an array of one per result element such as ``|a| @ |b|`` —
    computed in any order, against a reference that computes it exactly and rounds once.

    ``atol`` is the dtype's default plus ``γ(length) · magnitude``, ``γ`` taken at the unit
    roundoff of ``accumulator`` (default: ``dt`` itself, the least precise a backend may
    accumulate in; say ``"float32"`` for a backend known to widen half types); complex
    products add two roundings.  ``rtol`` is the dtype's default, for the final rounding on
    either side.  Exact dtypes compare exactly: ``(0, 0)``."""
    dt = to_dtype(dt)
    rtol, atol = tolerance(dt)
    if not dt.is_inexact:
        return rtol, atol
    terms = max(int(length), 1) + (2 if dt.is_complex else 0)
    nu = terms * unit_roundoff(dt if accumulator is None else accumulator)
    if nu >= 1:
        raise ValueError(f"{terms} terms exhaust the precision of {dt.name}: no error bound")
    # a NaN magnitude (the mean of nothing) bounds nothing: its result must be NaN on both sides
    magnitude = np.nan_to_num(np.abs(np.asarray(magnitude, np.float64)), nan=0.0, posinf=np.inf)
    return rtol, atol + nu / (1 - nu) * magnitude


@dataclass(frozen=True)
class Accumulation:
    """How the outputs of one op application accumulate: ``length`` terms at most per output
    element, whose absolute values sum to ``magnitudes[k]`` for output ``k`` (an array of the
    output's shape or a number; ``None`` for an output that accumulates nothing)."""

    length: int
    magnitudes: tuple[Any, ...]


#: What a reduction-like op attaches: the :class:`Accumulation` of one of its samples, or
#: ``None`` when that application sums nothing.
AccumulationFn = Callable[[OpSample], Optional[Accumulation]]


# -- magnitudes -------------------------------------------------------------------------------


def on_magnitudes(sample: OpSample, *, indices: Sequence[int] = ()) -> tuple[np.ndarray, ...]:
    """The sample's op applied, in float64 by the reference interpreter, to the absolute
    values of its operands (but the index operands at positions ``indices``, passed as they
    are).  For an op whose outputs sum products of its operands with non-negative weights
    (sums, means, matmul, einsum, convolutions, average pools, cumulative sums, scatter-add)
    each element is the sum of its terms' absolute values; for products, the product's
    absolute value."""
    from ..runtime.interpreter import run_graph

    args = tuple(np.asarray(a) if i in indices else _float64(np.abs(a))
                 for i, a in enumerate(sample.args))
    graph = sample_graph(replace(sample, args=args, dtypes=None))
    return tuple(np.asarray(out) for out in run_graph(graph, list(args)))


def _float64(a: Any) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


def _count(shape: Sequence[int], axes: Optional[Sequence[int]]) -> int:
    """The elements reduced into each result by ``axes`` (None: all of them)."""
    if axes is None:
        return math.prod(shape)
    return math.prod(shape[a] for a in axes)


def _summed(length: Callable[[OpSample], int]) -> AccumulationFn:
    """Sums of products of the operands: magnitudes from :func:`on_magnitudes`."""
    return lambda sample: Accumulation(length(sample), on_magnitudes(sample))


def _reduced(sample: OpSample) -> int:
    return _count(np.shape(sample.args[0]), sample.attrs.get("axes"))


def _along_axis(sample: OpSample) -> int:
    shape = np.shape(sample.args[0])
    return shape[sample.attrs.get("axis", -1)] if shape else 1


def _matmul_length(sample: OpSample) -> int:
    return np.shape(sample.args[0])[-1]


def _einsum_length(sample: OpSample) -> int:
    """The product of the sizes of the subscripts summed over (absent from the output)."""
    equation = sample.attrs["equation"].replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    sizes: dict[str, int] = {}
    counts: dict[str, int] = {}
    for subscripts, operand in zip(inputs.split(","), sample.args):
        shape = np.shape(operand)
        head, _, tail = subscripts.partition("...")
        dims = list(zip(head, shape)) + list(zip(tail, shape[len(shape) - len(tail):]))
        for letter, size in dims:
            sizes[letter] = max(sizes.get(letter, 1), size)
            counts[letter] = counts.get(letter, 0) + 1
    kept = set(output) if arrow else {c for c, n in counts.items() if n == 1}
    return math.prod(size for letter, size in sizes.items() if letter not in kept)


def _conv_length(sample: OpSample) -> int:
    w = np.shape(sample.args[1])
    return w[1] * math.prod(w[2:])


def _conv_transpose_length(sample: OpSample) -> int:
    w = np.shape(sample.args[1])
    return w[0] // sample.attrs.get("groups", 1) * math.prod(w[2:])


def _avg_pool_length(sample: OpSample) -> int:
    return math.prod(sample.attrs["kernel"])


def _adaptive_length(sample: OpSample) -> int:
    spatial = np.shape(sample.args[0])[2:]
    return math.prod(-(-size // out) + 1 for size, out in zip(spatial, sample.attrs["output_size"]))


def _scattered(updates_per_element: Callable[[OpSample], int]) -> AccumulationFn:
    """``scatter``/``scatter_nd`` combining duplicates by ``add`` or ``mul``: each element is
    ``x`` and every update addressed to it, in an order the backend chooses."""
    def rule(sample: OpSample) -> Optional[Accumulation]:
        if sample.attrs["reduce"] not in ("add", "mul"):
            return None
        return Accumulation(1 + updates_per_element(sample),
                            on_magnitudes(sample, indices=(1,)))
    return rule


def _scatter_updates(sample: OpSample) -> int:
    """Updates reaching one element of ``x``: at most the index's extent along the axis."""
    indices = np.shape(sample.args[1])
    return indices[sample.attrs["axis"]] if indices else 1


def _scatter_nd_updates(sample: OpSample) -> int:
    """Updates reaching one element of ``x``: at most one per index tuple."""
    return math.prod(np.shape(sample.args[1])[:-1])


def _log_normalizer(sample: OpSample) -> Accumulation:
    """``logsumexp``, ``softmax``, ``log_softmax``: the sum of exponentials (each at most 1
    after the max is taken out) errs relatively by γ(n), so the log by γ(n) absolutely and
    softmax's quotients, at most 1, by γ(n) too."""
    length = _reduced(sample) if sample.op == "logsumexp" else _along_axis(sample)
    return Accumulation(length, (1.0,))


def _moments(sample: OpSample) -> Accumulation:
    """``var``: the mean of squares bounds the error of either the two-pass or the one-pass
    formula; ``std``: that bound divided by ``2·std`` (exact where the deviations are all 0)."""
    x = _float64(sample.args[0])
    axes = sample.attrs.get("axes")
    axes = None if axes is None else tuple(axes)
    keepdims = sample.attrs.get("keepdims", False)
    n = max(_count(x.shape, axes), 1)
    divisor = max(n - sample.attrs.get("correction", 0), 1)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the moments of empty slices: NaN
        squares = np.sum(x * x, axis=axes, keepdims=keepdims) / divisor
        if sample.op == "var":
            return Accumulation(n, (squares,))
        std = np.std(x, axis=axes, keepdims=keepdims) * math.sqrt(n / divisor)
        return Accumulation(n, (np.divide(squares, 2 * std, out=np.zeros_like(std),
                                          where=std > 0),))


def _normalized(x: np.ndarray, axes: tuple[int, ...], scale: np.ndarray, bias: np.ndarray,
                eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Magnitudes of ``(x - mean) * rstd * scale + bias``, of ``mean`` and of ``rstd`` over
    ``axes`` (kept as size 1): the mean errs by γ·mean|x|, the variance by γ·mean(x²), and
    ``y`` by both carried through ``rstd`` and ``scale``."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the moments of empty slices: NaN
        mean = np.mean(x, axis=axes, keepdims=True)
        var = np.var(x, axis=axes, keepdims=True)
        rstd = 1 / np.sqrt(var + eps)
        first = np.mean(np.abs(x), axis=axes, keepdims=True)
        relative_var = np.mean(x * x, axis=axes, keepdims=True) / (var + eps)
        y = np.abs(scale) * rstd * (first + np.abs(x - mean) * (1 + relative_var)) + np.abs(bias)
    return y, first, rstd * relative_var


def _channel(a: np.ndarray, rank: int) -> np.ndarray:
    return a.reshape((1, -1) + (1,) * (rank - 2))


def _layer_norm(sample: OpSample) -> Accumulation:
    x, scale, bias = (_float64(a) for a in sample.args)
    first = sample.attrs.get("axis", -1) % x.ndim
    axes = tuple(range(first, x.ndim))
    y, mean, rstd = _normalized(x, axes, scale, bias, sample.attrs.get("eps", 1e-5))
    return Accumulation(max(_count(x.shape, axes), 1), (y, mean, rstd))


def _group_norm(sample: OpSample) -> Accumulation:
    x, scale, bias = (_float64(a) for a in sample.args)
    batch, groups = x.shape[0], sample.attrs["num_groups"]
    grouped = (batch, groups, x.shape[1] // groups * math.prod(x.shape[2:]))
    scale, bias = (np.broadcast_to(_channel(p, x.ndim), x.shape).reshape(grouped)
                   for p in (scale, bias))
    y, mean, rstd = _normalized(x.reshape(grouped), (2,), scale, bias,
                                sample.attrs.get("eps", 1e-5))
    return Accumulation(max(grouped[2], 1), (y.reshape(x.shape), mean.reshape(batch, groups),
                                 rstd.reshape(batch, groups)))


def _batch_norm(sample: OpSample) -> Accumulation:
    x, scale, bias, mean, var = (_float64(a) for a in sample.args)
    eps = sample.attrs.get("eps", 1e-5)
    scale, bias = _channel(scale, x.ndim), _channel(bias, x.ndim)
    if sample.attrs.get("training", False):
        axes = (0, *range(2, x.ndim))
        y, first, _ = _normalized(x, axes, scale, bias, eps)
        squares = np.mean(x * x, axis=axes) if x.size else np.zeros(x.shape[1])
        return Accumulation(max(_count(x.shape, axes), 1), (y, first.reshape(-1), squares))
    # the given statistics: a few roundings per element, none summed
    rstd = 1 / np.sqrt(_channel(var, x.ndim) + eps)
    y = np.abs(scale) * rstd * (np.abs(x) + np.abs(_channel(mean, x.ndim))) + np.abs(bias)
    return Accumulation(4, (y, None, None))


#: The core ops whose results accumulate, and how.
ACCUMULATIONS: Mapping[str, AccumulationFn] = {
    "sum": _summed(_reduced),
    "mean": _summed(_reduced),
    "prod": _summed(_reduced),
    "cumsum": _summed(_along_axis),
    "cumprod": _summed(_along_axis),
    "matmul": _summed(_matmul_length),
    "einsum": _summed(_einsum_length),
    "conv": _summed(_conv_length),
    "conv_transpose": _summed(_conv_transpose_length),
    "avg_pool": _summed(_avg_pool_length),
    "adaptive_avg_pool": _summed(_adaptive_length),
    "scatter": _scattered(_scatter_updates),
    "scatter_nd": _scattered(_scatter_nd_updates),
    "logsumexp": _log_normalizer,
    "softmax": _log_normalizer,
    "log_softmax": _log_normalizer,
    "var": _moments,
    "std": _moments,
    "layer_norm": _layer_norm,
    "group_norm": _group_norm,
    "batch_norm": _batch_norm,
}


def accumulation_of(sample: OpSample, rules: Any = None) -> Optional[Accumulation]:
    """The :class:`Accumulation` of a sample: from :data:`ACCUMULATIONS` for core ops, else
    from the rule a plugin attached under :data:`ACCUMULATION_RULE` in ``rules`` (a
    :class:`~mskernel.ops.registry.RuleRegistry`); ``None`` when the op accumulates nothing."""
    rule = ACCUMULATIONS.get(sample.op)
    if rule is None and rules is not None:
        rule = rules.get(ACCUMULATION_RULE, sample.op)
    return None if rule is None else rule(sample)


def sample_tolerances(sample: OpSample, dtypes: Sequence[Optional[DType]], rules: Any = None, *,
                      accumulator: str | DType | None = None) -> list[tuple[float, Any]]:
    """``(rtol, atol)`` for each output of a sample run two ways, given the outputs' dtypes
    (``None`` for an output that is no tensor: ``(0, 0)``): the sample's own ``rtol``/``atol``
    where it sets them, else the accumulation bound when the op accumulates
    (:func:`accumulation_of`, with ``rules`` for plugin ops), else the dtype's default."""
    if sample.rtol is not None or sample.atol is not None:
        defaults = [(0.0, 0.0) if dt is None else tolerance(dt) for dt in dtypes]
        return [(rtol if sample.rtol is None else sample.rtol,
                 atol if sample.atol is None else sample.atol) for rtol, atol in defaults]
    accumulation = accumulation_of(sample, rules) or Accumulation(0, (None,) * len(dtypes))
    return [(0.0, 0.0) if dt is None else
            tolerance(dt) if magnitude is None else
            tolerance_for_reduction(dt, accumulation.length, magnitude, accumulator=accumulator)
            for dt, magnitude in zip(dtypes, accumulation.magnitudes)]
