"""The plumbing every functional op uses: emitting an op, normalising int and axis
arguments, converting operands to tensors (:func:`asarray`, :func:`astype`) and naming the
functions that op factories make."""

from __future__ import annotations

import operator
import typing
from typing import Any, Callable, Optional, Sequence, TypeVar, Union

import numpy as np

from ...ir.dtypes import dtype as to_dtype, float32
from ..dispatch import apply as _apply
from ..promote import promote
from ..tensor import Tensor

Axis = Union[None, int, Sequence[int]]
Fn = TypeVar("Fn", bound=Callable[..., Any])


def _op(op: str, *args: Tensor, **attrs: Any) -> Tensor:
    return typing.cast(Tensor, _apply(op, *args, **attrs))


def _ops(op: str, *args: Tensor, **attrs: Any) -> tuple[Tensor, ...]:
    return typing.cast("tuple[Tensor, ...]", _apply(op, *args, **attrs))


def _named(fn: Fn, name: str, doc: str) -> Fn:
    """``fn``, made by an op factory, under its public ``name`` with docstring ``doc``."""
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _ints(value: Any) -> tuple[int, ...]:
    """An int or a sequence of ints (a shape, reps, axes) as a tuple of Python ints; a 1-d
    concrete tensor or array works too."""
    if isinstance(value, (Tensor, np.ndarray)):
        value = np.asarray(value).tolist()
    if isinstance(value, (list, tuple)):
        return tuple(operator.index(v) for v in value)
    return (operator.index(value),)


def _axes(axis: Axis) -> Optional[tuple[int, ...]]:
    return None if axis is None else _ints(axis)


def _axis(axis: int, rank: int) -> int:
    """``axis`` counted from 0, with NumPy's error for an axis out of range."""
    axis = operator.index(axis)
    if not -rank <= axis < rank:
        raise np.exceptions.AxisError(axis, rank)
    return axis % rank


def _along(x: Any, axis: Optional[int]) -> tuple[Tensor, int]:
    """``x`` and the axis to work along; ``axis=None`` flattens ``x`` first (NumPy)."""
    t = asarray(x)
    if axis is not None:
        return t, operator.index(axis)
    return (t if t.ndim == 1 else _op("reshape", t, shape=(t.size,))), 0


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (int, float, np.number, np.bool_))


# -- conversion -------------------------------------------------------------------------------


def asarray(x: Any, dtype: Any = None) -> Tensor:
    """``x`` as a tensor (a tensor of the right dtype is returned as is), with
    ``Tensor(x)``'s defaults: Python floats and lists of them give float32.  A list or tuple
    holding tensors is stacked, so ``asarray([t0, t1])`` works under a trace too."""
    if isinstance(x, Tensor):
        return x if dtype is None else astype(x, dtype)
    if isinstance(x, (list, tuple)) and _holds_tensor(x):
        stacked = _op("stack", *promote(*(asarray(e) for e in x)), axis=0)
        return stacked if dtype is None else astype(stacked, dtype)
    return Tensor(x, dtype)


def _holds_tensor(items: Sequence[Any]) -> bool:
    return any(
        isinstance(e, Tensor) or (isinstance(e, (list, tuple)) and _holds_tensor(e)) for e in items
    )


def astype(x: Any, dtype: Any) -> Tensor:
    """``x`` converted to ``dtype`` (NumPy's ``astype``: floats truncate toward zero when cast
    to integers; complex to real drops the imaginary part)."""
    x = asarray(x)
    dt = to_dtype(dtype)
    return x if x.dtype is dt else _op("cast", x, dtype=dt)


cast = astype


def apply(op_name: str, *tensors: Any, **attrs: Any) -> Union[Tensor, tuple[Tensor, ...]]:
    """Apply any registered op (one a plugin defines, say) to tensors and attributes; returns
    a tensor, or a tuple for a multi-output op.  No promotion is done: the op's rule decides
    what it accepts."""
    return _apply(op_name, *(asarray(t) for t in tensors), **attrs)


def _inexact(x: Any) -> Tensor:
    """``x`` as a tensor; integer and bool tensors as float32 (float-only math)."""
    t = asarray(x)
    return t if t.dtype.is_inexact else astype(t, float32)


def _float_operands(x: Any, y: Any) -> tuple[Tensor, Tensor]:
    """``x`` and ``y`` promoted, in float32 when both are integer or bool."""
    a, b = promote(x, y)
    if not a.dtype.is_inexact:
        a, b = astype(a, float32), astype(b, float32)
    return a, b
