"""Reductions: ``sum``, ``prod``, ``mean``, ``var``, ``std``, ``max``, ``min``, ``logsumexp``,
``all``, ``any`` over a set of axes, and ``argmax``/``argmin`` along one axis.

Attributes: ``axes`` (``None`` reduces every axis; negatives count from the end; ``()``
reduces nothing) and ``keepdims`` (reduced axes stay as size 1).  ``argmax``/``argmin`` take
``axis`` (``None`` searches the flattened tensor) and return int64 indices of the first
extreme value.  Every op here carries the ``"reduction"`` trait.

Dtype rules (no op here changes the element type except ``argmax``/``argmin``):

- ``sum``/``prod`` keep the input dtype (integers wrap around) and accept any numeric input;
  bool must be cast first.  Reducing nothing gives 0 and 1.
- ``mean`` accepts floating or complex inputs; ``var``, ``std`` and ``logsumexp`` floating
  ones.  ``var``/``std`` divide by ``max(n - correction, 0)`` as PyTorch does, so the mean
  and variance of an empty reduction are NaN and ``logsumexp`` of one is ``-inf``.
- ``max``/``min``/``argmax``/``argmin`` accept real inputs and have no identity: reducing a
  size-0 axis is an error.  NaN propagates (``argmax`` points at the first NaN).

The reference accumulates floating sums in float64 (complex ones in complex128, see
:func:`accumulator`) and rounds once to the input dtype, so its sums, means and variances are
as exact as the input allows; a backend accumulating in float32 must keep its error near
float32 rounding too (blocked or pairwise sums), whatever the axes reduced.

``mean``, ``var``, ``std``, ``logsumexp`` and ``all`` are composites (see :mod:`.primitives`):
a mean is a ``sum`` divided by the count, a variance two-pass (:func:`.compose.moments_over`),
``logsumexp`` shifts by the finite maximum as the reference does, and ``all(x)`` is
``not any(not x)``.  Half-precision inputs are reduced in float32 (:mod:`.compose`).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterator, Optional

import numpy as np

from ..errors import InferError
from ..ir.dtypes import int64
from ..ir.graph import Value
from ..ir.types import TensorType
from .compose import (
    count, in_working_precision, mean_over, moments_over, reduction_axes, scalar, tensor_type,
    without_axes,
)
from .registry import Attr, DecomposeFn, Emitter, OpDef
from .rules import normalize_axes, normalize_axis, reduced_shape, require_kind, tensor
from .samples import (
    COMPLEX, FLOATS, INTEGERS, OpSample, SampleFn, accumulation_tolerance, dtype_cases,
    random_array,
)

_REDUCTION = frozenset({"reduction"})


def accumulator(dtype: np.dtype) -> np.dtype:
    """The dtype reference reductions accumulate ``dtype`` in: float64 for every floating
    dtype, complex128 for complex ones, ``dtype`` itself otherwise (integer sums wrap).

    NumPy sums pairwise only along one contiguous axis; over other axes (``(0, 2, 3)`` of an
    NCHW tensor, as batch norm and its gradient reduce) it adds one element at a time, and in
    float32 that loses ~1e-5 relative over 65536 elements.
    """
    return np.dtype({"f": np.float64, "c": np.complex128}.get(np.dtype(dtype).kind, dtype))


def accumulated(x: np.ndarray) -> np.ndarray:
    """``x`` in its :func:`accumulator` dtype."""
    return x.astype(accumulator(x.dtype), copy=False)


def moments(x: np.ndarray, axes: tuple[int, ...],
            correction: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``x`` over ``axes``, both with the reduced axes kept as size 1.

    The variance divides by ``max(n - correction, 0)`` (``correction=0`` is the biased
    estimate normalisation layers use).  Both are computed, and returned, in the
    :func:`accumulator` dtype of ``x``: round them to ``x``'s dtype at the end.
    """
    x = accumulated(x)
    count = math.prod(x.shape[a] for a in axes)
    mean = np.sum(x, axis=axes, keepdims=True) / count
    deviation = x - mean
    squares = np.sum(deviation * deviation, axis=axes, keepdims=True)
    return mean, squares / max(count - correction, 0)


def _no_empty_reduction(x: TensorType, axes: tuple[int, ...]) -> None:
    empty = [a for a in axes if x.shape[a] == 0]
    if empty:
        raise InferError(
            f"cannot reduce the size-0 axis {empty[0]} of shape {list(x.shape)}: "
            "the reduction has no identity"
        )


def _reduction(name: str, fn: Callable[..., np.ndarray], kinds: str, doc: str, *,
               nonempty: bool = False, extra: tuple[Attr, ...] = (),
               decomposition: Optional[DecomposeFn] = None) -> OpDef:
    """An op reducing ``x`` over ``axes``; ``fn(x, axes, keepdims, **extra)`` gets the
    normalised axes.  The result keeps ``x``'s dtype (bool for bool inputs)."""

    def infer(x: TensorType, axes: Optional[tuple[int, ...]], keepdims: bool,
              **_: object) -> TensorType:
        x = tensor(x)
        require_kind(x, kinds)
        dims = normalize_axes(axes, x.rank)
        if nonempty:
            _no_empty_reduction(x, dims)
        return x.with_shape(reduced_shape(x.shape, dims, keepdims))

    def reference(x: np.ndarray, axes: Optional[tuple[int, ...]], keepdims: bool,
                  **attrs: object) -> np.ndarray:
        result = fn(x, normalize_axes(axes, x.ndim), keepdims, **attrs)
        return np.asarray(result).astype(x.dtype, copy=False)

    attrs = (Attr("axes", "ints?", None), Attr("keepdims", "bool", False), *extra)
    return OpDef(name, ("x",), infer, reference, attrs=attrs, traits=_REDUCTION, doc=doc,
                 decomposition=decomposition)


def _sum(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    return np.sum(x, axis=axes, dtype=accumulator(x.dtype), keepdims=keepdims)


def _prod(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    return np.prod(x, axis=axes, dtype=accumulator(x.dtype), keepdims=keepdims)


def _mean(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    return _sum(x, axes, keepdims) / math.prod(x.shape[a] for a in axes)


def _var(x: np.ndarray, axes: tuple[int, ...], keepdims: bool, correction: int) -> np.ndarray:
    _, var = moments(x, axes, correction)
    return var if keepdims else np.squeeze(var, axis=axes)


def _std(x: np.ndarray, axes: tuple[int, ...], keepdims: bool, correction: int) -> np.ndarray:
    return np.sqrt(_var(x, axes, keepdims, correction))


def _max(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    return np.max(x, axis=axes, keepdims=keepdims)


def _min(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    return np.min(x, axis=axes, keepdims=keepdims)


def _all(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    return np.all(x, axis=axes, keepdims=keepdims)


def _any(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    return np.any(x, axis=axes, keepdims=keepdims)


def _logsumexp(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    w = accumulated(x)
    peak = np.max(w, axis=axes, keepdims=True, initial=-np.inf)
    # Shifting by an infinite peak would give inf - inf; such slices are all -inf (result
    # -inf) or contain +inf (result +inf), which the unshifted sum gets right.
    peak = np.where(np.isfinite(peak), peak, 0)
    total = np.log(np.sum(np.exp(w - peak), axis=axes, keepdims=True)) + peak
    return total if keepdims else np.squeeze(total, axis=axes)


def _arg_reduction(name: str, fn: Callable[..., np.ndarray], doc: str) -> OpDef:
    def infer(x: TensorType, axis: Optional[int], keepdims: bool) -> TensorType:
        x = tensor(x)
        require_kind(x, "iuf")
        if axis is None:
            if x.size == 0:
                raise InferError(f"cannot search the empty tensor {x}: it has no elements")
            return TensorType(int64, (1,) * x.rank if keepdims else ())
        dim = normalize_axis(axis, x.rank)
        _no_empty_reduction(x, (dim,))
        return TensorType(int64, reduced_shape(x.shape, (dim,), keepdims))

    def reference(x: np.ndarray, axis: Optional[int], keepdims: bool) -> np.ndarray:
        return np.asarray(fn(x, axis=axis, keepdims=keepdims)).astype(np.int64)

    attrs = (Attr("axis", "int?", None), Attr("keepdims", "bool", False))
    return OpDef(name, ("x",), infer, reference, attrs=attrs, traits=_REDUCTION, doc=doc)


# --- decompositions (see OpDef.decomposition) --------------------------------------------


def _decompose_mean(b: Emitter, x: Value, axes: Optional[tuple[int, ...]],
                    keepdims: bool) -> Value:
    dims = reduction_axes(x, axes)
    return without_axes(b, mean_over(b, x, dims), dims, keepdims)


def _moment(root: bool) -> DecomposeFn:
    """The variance (``root=False``) or standard deviation of ``x``."""

    def decomposition(b: Emitter, x: Value, axes: Optional[tuple[int, ...]],
                      keepdims: bool, correction: int) -> Value:
        dims = reduction_axes(x, axes)
        _, var = moments_over(b, x, dims, correction)
        return without_axes(b, b.op("sqrt", var) if root else var, dims, keepdims)

    return decomposition


def _decompose_logsumexp(b: Emitter, x: Value, axes: Optional[tuple[int, ...]],
                         keepdims: bool) -> Value:
    dims = reduction_axes(x, axes)
    t = tensor_type(x)
    if count(x, dims) == 0:  # max has no identity; the sum of no exponentials is 0
        kept = b.op("full", shape=reduced_shape(t.shape, dims, True), value=-math.inf,
                    dtype=t.dtype)
        return without_axes(b, kept, dims, keepdims)
    zero = scalar(b, 0, t.dtype)
    peak = b.op("max", x, axes=dims, keepdims=True)
    # an infinite peak would give inf - inf; such slices are all -inf (result -inf) or hold
    # +inf (result +inf), which the unshifted sum gets right
    peak = b.op("where", b.op("isfinite", peak), peak, zero)
    total = b.op("sum", b.op("exp", b.op("sub", x, peak)), axes=dims, keepdims=True)
    return without_axes(b, b.op("add", b.op("log", total), peak), dims, keepdims)


def _decompose_all(b: Emitter, x: Value, axes: Optional[tuple[int, ...]],
                   keepdims: bool) -> Value:
    some_false = b.op("any", b.op("logical_not", x), axes=axes, keepdims=keepdims)
    return b.op("logical_not", some_false)


_CORRECTION = (Attr("correction", "int", 0),)

OPS: list[OpDef] = [
    _reduction("sum", _sum, "iufc", "sum over axes, in the input dtype (integers wrap)"),
    _reduction("prod", _prod, "iufc", "product over axes, in the input dtype (integers wrap)"),
    _reduction("mean", _mean, "fc", "arithmetic mean over axes (NaN for an empty reduction)",
               decomposition=in_working_precision(_decompose_mean)),
    _reduction("var", _var, "f", "variance over axes, dividing by max(n - correction, 0)",
               extra=_CORRECTION, decomposition=in_working_precision(_moment(root=False))),
    _reduction("std", _std, "f", "sqrt(var(x, axes, correction))", extra=_CORRECTION,
               decomposition=in_working_precision(_moment(root=True))),
    _reduction("max", _max, "iuf", "largest element over axes (NaN propagates)", nonempty=True),
    _reduction("min", _min, "iuf", "smallest element over axes (NaN propagates)", nonempty=True),
    _reduction("logsumexp", _logsumexp, "f",
               "log(sum(exp(x))) over axes, computed without overflow; -inf when empty",
               decomposition=in_working_precision(_decompose_logsumexp)),
    _reduction("all", _all, "b", "true when every element over axes is true",
               decomposition=_decompose_all),
    _reduction("any", _any, "b", "true when some element over axes is true"),
    _arg_reduction("argmax", np.argmax, "int64 index of the first largest element"),
    _arg_reduction("argmin", np.argmin, "int64 index of the first smallest element"),
]


# --- samples (attached to the ops under the "samples" rule kind by mskernel.ops.core) --------
# Samples for the reduction ops: every op on each dtype family it accepts, over all axes,
# one axis, several and negative axes, no axes, with and without ``keepdims``, on scalars and
# on size-1 and size-0 dimensions (reducing a size-0 axis only where the op has an identity).
#
# The first dtype of each op runs every case; the other dtypes run two of them, which keeps the
# table small while every (op, dtype) pair is still covered.


# (shape, axes, keepdims); the last two reduce a size-0 axis.
_CASES: tuple[tuple[tuple[int, ...], Optional[tuple[int, ...]], bool], ...] = (
    ((2, 3, 4), (0, -1), True),
    ((3, 4), None, False),
    ((3, 4), None, True),
    ((2, 3, 4), (1,), False),
    ((2, 3, 4), (-2,), True),
    ((4, 3), (), False),
    ((), None, False),
    ((1, 5), (0,), False),
    ((0, 3), (1,), True),
    ((0, 3), (0,), False),
    ((2, 0), None, True),
)
_NONEMPTY_CASES = _CASES[:-2]

# (shape, axis, keepdims) for argmax/argmin.
_ARG_CASES: tuple[tuple[tuple[int, ...], Optional[int], bool], ...] = (
    ((3, 4), None, False),
    ((3, 4), None, True),
    ((2, 3, 4), 1, False),
    ((2, 3, 4), -1, True),
    ((), None, False),
    ((1, 5), 0, False),
    ((0, 3), 1, True),
)


def _reduction_samples(op: str, dtypes: tuple[str, ...], *, nonempty: bool = False,
               accumulates: bool = True, **attrs: Any) -> SampleFn:
    cases = _NONEMPTY_CASES if nonempty else _CASES

    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        for dt, (shape, axes, keepdims) in dtype_cases(dtypes, cases):
            tolerance = accumulation_tolerance(dt) if accumulates else {}
            yield OpSample(op, (random_array(rng, shape, dt),),
                           {"axes": axes, "keepdims": keepdims, **attrs},
                           dtypes=(dt,), **tolerance)
    return fn


def _moment_samples(op: str) -> SampleFn:
    plain = _reduction_samples(op, FLOATS)
    corrected = _reduction_samples(op, ("float32", "float64"), correction=1)

    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        yield from plain(rng)
        yield from corrected(rng)
        yield OpSample(op, (random_array(rng, (2, 5), "float64"),),
                       {"axes": (1,), "correction": 5}, label="correction-beyond-count")
    return fn


def _logsumexp_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    yield from _reduction_samples("logsumexp", FLOATS)(rng)
    inf = np.inf
    x = np.array([[-inf, -inf, -inf], [-inf, 1.0, 2.0], [inf, 0.0, -inf], [80.0, 90.0, 100.0]])
    for dt in ("float32", "float64"):
        yield OpSample("logsumexp", (x.astype(dt),), {"axes": (1,)}, label="infinities")


def _arg_reduction_samples(op: str) -> SampleFn:
    def fn(rng: np.random.Generator) -> Iterator[OpSample]:
        for dt, (shape, axis, keepdims) in dtype_cases(FLOATS + INTEGERS, _ARG_CASES):
            yield OpSample(op, (random_array(rng, shape, dt),),
                           {"axis": axis, "keepdims": keepdims}, dtypes=(dt,))
    return fn


SAMPLES: dict[str, SampleFn] = {
    "sum": _reduction_samples("sum", FLOATS + INTEGERS + COMPLEX),
    "prod": _reduction_samples("prod", FLOATS + INTEGERS + COMPLEX),
    "mean": _reduction_samples("mean", FLOATS + COMPLEX),
    "var": _moment_samples("var"),
    "std": _moment_samples("std"),
    "logsumexp": _logsumexp_samples,
    "max": _reduction_samples("max", FLOATS + INTEGERS, nonempty=True, accumulates=False),
    "min": _reduction_samples("min", FLOATS + INTEGERS, nonempty=True, accumulates=False),
    "all": _reduction_samples("all", ("bool",), accumulates=False),
    "any": _reduction_samples("any", ("bool",), accumulates=False),
    "argmax": _arg_reduction_samples("argmax"),
    "argmin": _arg_reduction_samples("argmin"),
}
