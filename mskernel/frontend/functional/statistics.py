"""Statistics and search: comparisons within a tolerance (:func:`isclose`, :func:`allclose`),
:func:`nan_to_num`, :func:`logaddexp`, :func:`diff`, :func:`count_nonzero`, MindSpore's
:func:`median` and :func:`quantile`, :func:`searchsorted`, and the value-dependent
:func:`unique` and :func:`bincount`."""

from __future__ import annotations

import builtins
import operator
from typing import Any, Optional

import numpy as np

from ...ir.dtypes import int32, int64
from ..promote import promote
from ..tensor import Tensor, TracedValueError
from ._core import Axis, _along, _axis, _float_operands, _op, asarray, astype
from .creation import ones, zeros
from .elementwise import (
    abs, add, equal, exp, greater, greater_equal, isfinite, isinf, isnan, less, less_equal, log1p,
    logical_and, logical_or, maximum, multiply, negative, not_equal, subtract, where,
)
from .indexing import scatter, take
from .reduction import all, sum
from .shape import expand_dims, moveaxis, reshape, squeeze
from .sorting import argsort


def isclose(x: Any, y: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Whether ``|x - y| <= atol + rtol * |y|`` elementwise; infinities are close only to
    themselves, NaN to nothing (to NaN with ``equal_nan``)."""
    a, b = promote(x, y)
    finite = logical_and(isfinite(a), isfinite(b))
    close = where(finite, less_equal(abs(subtract(a, b)), add(atol, multiply(rtol, abs(b)))),
                  equal(a, b))
    return logical_or(close, logical_and(isnan(a), isnan(b))) if equal_nan else close


def allclose(x: Any, y: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> Tensor:
    """Whether :func:`isclose` holds everywhere (a bool scalar tensor)."""
    return all(isclose(x, y, rtol, atol, equal_nan))


def nan_to_num(x: Any, nan: float = 0.0, posinf: Optional[float] = None,
               neginf: Optional[float] = None) -> Tensor:
    """``x`` with NaN, +inf and -inf replaced (by default by 0 and the dtype's largest and
    smallest finite values)."""
    t = asarray(x)
    if not t.dtype.is_inexact:
        return t
    big = float(np.finfo(t.dtype.storage).max)
    t = where(isnan(t), astype(nan, t.dtype), t)
    t = where(logical_and(isinf(t), greater(t, 0)), astype(big if posinf is None else posinf,
                                                            t.dtype), t)
    return where(isinf(t), astype(-big if neginf is None else neginf, t.dtype), t)


def logaddexp(x: Any, y: Any) -> Tensor:
    """``log(exp(x) + exp(y))`` without overflow."""
    a, b = _float_operands(x, y)
    gap = where(equal(a, b), astype(0, a.dtype), subtract(a, b))  # inf - inf would be NaN
    return add(maximum(a, b), log1p(exp(negative(abs(gap)))))


def diff(x: Any, n: int = 1, axis: int = -1) -> Tensor:
    """The ``n``-th forward difference ``x[i + 1] - x[i]`` along ``axis``."""
    t = asarray(x)
    ax = _axis(axis, t.ndim)
    for _ in range(operator.index(n)):
        size = t.shape[ax]
        t = subtract(_op("slice", t, starts=(1,), stops=(size,), axes=(ax,)),
                     _op("slice", t, starts=(0,), stops=(size - 1,), axes=(ax,)))
    return t


def count_nonzero(x: Any, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """The int64 count of non-zero elements over ``axis``."""
    return sum(not_equal(asarray(x), 0), axis, keepdims)


def median(x: Any, axis: int = -1, keepdims: bool = False) -> tuple[Tensor, Tensor]:
    """MindSpore's ``median``: ``(values, indices)`` of the lower median along ``axis`` (the
    element at sorted position ``(n - 1) // 2``; for an even count not the mean of two)."""
    t = asarray(x)
    ax = _axis(axis, t.ndim)
    order = argsort(t, ax)
    where_from = take(order, (t.shape[ax] - 1) // 2, axis=ax)
    values = squeeze(_op("take_along_axis", t, expand_dims(where_from, ax), axis=ax), ax)
    if keepdims:
        values, where_from = expand_dims(values, ax), expand_dims(where_from, ax)
    return values, where_from


def quantile(x: Any, q: Any, axis: Optional[int] = None, keepdims: bool = False) -> Tensor:
    """The ``q``-th quantiles (in [0, 1]) along ``axis`` (of the flattened tensor when None),
    interpolated linearly between the sorted neighbours; a 1-d ``q`` puts its axis first."""
    original = asarray(x)
    t, ax = _along(original, axis)
    ax = _axis(ax, t.ndim)
    levels = np.asarray(q.numpy() if isinstance(q, Tensor) else q, dtype=np.float64)
    if levels.ndim > 1 or ((levels < 0) | (levels > 1)).any():
        raise ValueError(f"quantile: q must be a scalar or 1-d in [0, 1], got {levels}")
    ordered = _op("sort", astype(t, promote(t, 0.5)[0].dtype), axis=ax, descending=False)
    position = levels.reshape(-1) * (t.shape[ax] - 1)
    low = np.floor(position).astype(np.int64)
    below = take(ordered, low, axis=ax)
    above = take(ordered, np.minimum(low + 1, t.shape[ax] - 1), axis=ax)
    weight = reshape((position - low).astype(ordered.dtype.storage),
                     [-1 if i == ax else 1 for i in range(t.ndim)])
    result = moveaxis(add(below, multiply(subtract(above, below), weight)), ax, 0)
    if keepdims:
        kept = [1 if axis is None or i == ax else n for i, n in enumerate(original.shape)]
        result = reshape(result, [position.size, *kept])
    return result if levels.ndim else squeeze(result, 0)


def searchsorted(sorted_sequence: Any, values: Any, *, out_int32: bool = False,
                 right: bool = False, side: Optional[str] = None) -> Tensor:
    """For each of ``values``, how many elements of the last axis of ``sorted_sequence`` come
    before it (``side="left"``: those ``<`` it; ``right=True`` or ``side="right"``: ``<=``).
    Computed as one comparison of every value with every element: O(n m) work, suited to
    the short boundary lists it is used with (bucketing)."""
    seq, v = promote(sorted_sequence, values)
    before = less_equal if (side == "right" or right) else less
    if seq.ndim == 1:
        counts = sum(before(seq, expand_dims(v, -1)), -1)
    else:
        counts = sum(before(expand_dims(seq, -2), expand_dims(v, -1)), -1)
    return astype(counts, int32 if out_int32 else int64)


def _concrete(x: Any, op: str, instead: str) -> np.ndarray:
    t = asarray(x)
    if t.is_traced:
        raise TracedValueError(f"{op} of a traced {t.type} tensor: its result's shape depends "
                               f"on the values, which a traced function does not know; "
                               f"{instead}")
    return t.numpy()


def unique(x: Any) -> tuple[Tensor, Tensor]:
    """MindSpore's ``unique``: ``(values, indices)``, the sorted distinct elements and, for
    each element of ``x``, the int64 position of its value in them.  Eager only: the
    number of values depends on the data."""
    values, inverse = np.unique(_concrete(x, "unique", "run it outside @jit"),
                                return_inverse=True)
    return asarray(values), asarray(inverse.reshape(np.shape(x)).astype(np.int64))


def bincount(x: Any, weights: Any = None, minlength: int = 0, *,
             length: Optional[int] = None) -> Tensor:
    """How often each value ``0..n-1`` occurs in the 1-d integer tensor ``x`` (the sum of
    their ``weights`` when given).  ``n`` is ``max(x) + 1``, at least ``minlength``: read
    from the values, so under ``@jit`` pass a static ``length`` (JAX's rule), and values
    outside ``[0, length)`` are then left out."""
    t = asarray(x)
    if t.ndim != 1 or t.dtype.kind not in "iu":
        raise ValueError(f"bincount: expects a 1-d integer tensor, got {t.type}")
    if length is None:
        data = _concrete(t, "bincount", "pass length= (the number of bins)")
        if data.size and data.min() < 0:
            raise ValueError(f"bincount: the values must be non-negative, got {data.min()}")
        length = builtins.max(int(data.max()) + 1 if data.size else 0, minlength)
    inside = logical_and(greater_equal(t, 0), less(t, length))
    counts = ones(t.shape, int64) if weights is None else asarray(weights)
    bins = scatter(zeros((length + 1,), counts.dtype), 0, where(inside, t, length),
                   where(inside, counts, astype(0, counts.dtype)), reduce="add")
    return _op("slice", bins, starts=(0,), stops=(length,), axes=(0,))
