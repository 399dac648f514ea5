"""Reductions over axes (sums, means, variances, extremes, truth tests, ``logsumexp``,
``argmax``/``argmin``) and scans, their running forms along one axis (``cumsum`` …)."""

from __future__ import annotations

import operator
from typing import Any, Callable, Optional

from ...ir.dtypes import int64, uint8, uint64
from ..tensor import Tensor
from ._core import Axis, _along, _axes, _inexact, _named, _op, asarray, astype
from .elementwise import _truth


def _reduce(op: str, t: Tensor, axis: Axis, keepdims: bool, **attrs: Any) -> Tensor:
    return _op(op, t, axes=_axes(axis), keepdims=keepdims, **attrs)


def _summands(x: Any, dtype: Any) -> Tensor:
    """What a sum or product accumulates: ``x`` in ``dtype`` when given, else with bool and
    narrow integers widened to 64 bits (NumPy)."""
    if dtype is not None:
        return astype(x, dtype)
    t = asarray(x)
    if t.dtype.is_bool or (t.dtype.kind == "i" and t.dtype.itemsize < 8):
        return astype(t, int64)
    if t.dtype.kind == "u" and t.dtype.itemsize < 8:
        return astype(t, uint64)
    return t


def sum(x: Any, axis: Axis = None, keepdims: bool = False, dtype: Any = None) -> Tensor:
    """Sum over ``axis``; bool and narrow integers accumulate in 64 bits (NumPy)."""
    return _reduce("sum", _summands(x, dtype), axis, keepdims)


def prod(x: Any, axis: Axis = None, keepdims: bool = False, dtype: Any = None) -> Tensor:
    """Product over ``axis``; bool and narrow integers accumulate in 64 bits (NumPy)."""
    return _reduce("prod", _summands(x, dtype), axis, keepdims)


def mean(x: Any, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Arithmetic mean over ``axis`` (float32 for integer and bool inputs)."""
    return _reduce("mean", _inexact(x), axis, keepdims)


def _correction(ddof: int, correction: Optional[int]) -> int:
    return ddof if correction is None else correction


def var(x: Any, axis: Axis = None, ddof: int = 0, keepdims: bool = False, *,
        correction: Optional[int] = None) -> Tensor:
    """Variance over ``axis``, dividing by ``n - ddof`` (``correction`` is PyTorch's name)."""
    return _reduce("var", _inexact(x), axis, keepdims, correction=_correction(ddof, correction))


def std(x: Any, axis: Axis = None, ddof: int = 0, keepdims: bool = False, *,
        correction: Optional[int] = None) -> Tensor:
    """Standard deviation over ``axis`` (``ddof``/``correction`` as :func:`var`)."""
    return _reduce("std", _inexact(x), axis, keepdims, correction=_correction(ddof, correction))


def amax(x: Any, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Largest element over ``axis`` (NaN propagates; for bool: any); ``Tensor.max``."""
    t = asarray(x)
    return _reduce("any" if t.dtype.is_bool else "max", t, axis, keepdims)


def amin(x: Any, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Smallest element over ``axis`` (NaN propagates; for bool: all); ``Tensor.min``."""
    t = asarray(x)
    return _reduce("all" if t.dtype.is_bool else "min", t, axis, keepdims)


def all(x: Any, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Whether every element over ``axis`` is true (non-zero)."""
    return _reduce("all", _truth(x), axis, keepdims)


def any(x: Any, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Whether some element over ``axis`` is true (non-zero)."""
    return _reduce("any", _truth(x), axis, keepdims)


def logsumexp(x: Any, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, without overflow."""
    return _reduce("logsumexp", _inexact(x), axis, keepdims)


def _arg_extreme(op: str) -> Callable[..., Tensor]:
    def fn(x: Any, axis: Optional[int] = None, keepdims: bool = False) -> Tensor:
        t = asarray(x)
        if t.dtype.is_bool:
            t = astype(t, uint8)
        return _op(op, t, axis=None if axis is None else operator.index(axis), keepdims=keepdims)

    which = "largest" if op == "argmax" else "smallest"
    return _named(fn, op, f"int64 index of the first {which} element along ``axis`` (of the "
                  "flattened tensor when ``axis`` is None).")


argmax = _arg_extreme("argmax")
argmin = _arg_extreme("argmin")


def _with_index(name: str, values: Callable[..., Tensor],
                index: Callable[..., Tensor]) -> Callable[..., tuple[Tensor, Tensor]]:
    def fn(x: Any, axis: Optional[int] = None, keepdims: bool = False) -> tuple[Tensor, Tensor]:
        return values(x, axis, keepdims), index(x, axis, keepdims)

    return _named(fn, name, f"MindSpore's ``ops.{name}``: ``(values, indices)`` over ``axis`` "
                  "(the flattened tensor when None; int64 indices, the first of ties); the "
                  f"values alone are :func:`a{name}` and ``Tensor.{name}``.")


max = _with_index("max", amax, argmax)
min = _with_index("min", amin, argmin)


# -- scans ------------------------------------------------------------------------------------


def _running_total(op: str, x: Any, axis: Optional[int], dtype: Any, reverse: bool,
                   exclusive: bool) -> Tensor:
    """``cumsum`` or ``cumprod``: accumulated as :func:`sum` and :func:`prod` accumulate."""
    t, ax = _along(_summands(x, dtype), axis)
    return _op(op, t, axis=ax, reverse=reverse, exclusive=exclusive)


def cumsum(x: Any, axis: Optional[int] = None, dtype: Any = None, *, reverse: bool = False,
           exclusive: bool = False) -> Tensor:
    """Running sum along ``axis`` (of the flattened tensor when None); ``reverse`` scans from
    the end, ``exclusive`` leaves each element out of its own sum."""
    return _running_total("cumsum", x, axis, dtype, reverse, exclusive)


def cumprod(x: Any, axis: Optional[int] = None, dtype: Any = None, *, reverse: bool = False,
            exclusive: bool = False) -> Tensor:
    """Running product along ``axis``; ``reverse`` and ``exclusive`` as :func:`cumsum`."""
    return _running_total("cumprod", x, axis, dtype, reverse, exclusive)


def cummax(x: Any, axis: int) -> Tensor:
    """Running maximum along ``axis`` (NaN propagates)."""
    return _op("cummax", asarray(x), axis=operator.index(axis))


def cummin(x: Any, axis: int) -> Tensor:
    """Running minimum along ``axis`` (NaN propagates)."""
    return _op("cummin", asarray(x), axis=operator.index(axis))
