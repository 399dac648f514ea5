"""Creation ops: tensors filled with a value (:func:`full`, :func:`zeros`, :func:`ones`,
their ``*_like`` forms and MindSpore's :func:`fill`), ramps (:func:`arange`,
:func:`linspace`) and :func:`eye`."""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from ...ir.dtypes import DType, dtype as to_dtype, float32, float64, int64
from ..promote import result_dtype
from ..tensor import Tensor
from ._core import _ints, _op, asarray, astype
from .elementwise import add, equal, floor, multiply
from .shape import broadcast_to, concat


def _dtype_or_inferred(dtype: Any, values: Sequence[Any]) -> DType:
    """``dtype`` when given, else the dtype ``values`` compute in (Python scalars weak)."""
    return to_dtype(dtype) if dtype is not None else result_dtype(values)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (a number, or a scalar tensor)."""
    dt = _dtype_or_inferred(dtype, [fill_value])
    if isinstance(fill_value, Tensor):
        return broadcast_to(astype(fill_value, dt), _ints(shape))
    return _op("full", shape=_ints(shape), value=float(fill_value), dtype=dt)


def fill(type: Any, shape: Any, value: Any) -> Tensor:
    """MindSpore's ``fill(type, shape, value)``: :func:`full` with the dtype first."""
    return full(shape, value, type)


def zeros(shape: Any, dtype: Any = "float32") -> Tensor:
    return full(shape, 0, dtype)


def ones(shape: Any, dtype: Any = "float32") -> Tensor:
    return full(shape, 1, dtype)


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    """A tensor of ``x``'s shape (and dtype, unless given) filled with ``fill_value``."""
    x = asarray(x)
    return full(x.shape, fill_value, x.dtype if dtype is None else dtype)


def zeros_like(x: Any, dtype: Any = None) -> Tensor:
    return full_like(x, 0, dtype)


def ones_like(x: Any, dtype: Any = None) -> Tensor:
    return full_like(x, 1, dtype)


def _iota(n: int, dt: DType) -> Tensor:
    return _op("iota", shape=(n,), axis=0, dtype=dt)


def _compute_dtype(dt: DType) -> DType:
    """The dtype a ramp of ``dt`` is computed in: float16 and bfloat16 count in float32."""
    return float32 if dt.is_floating and dt.itemsize < 4 else dt


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Tensor:
    """``start, start + step, ...`` below ``stop`` (NumPy's ``arange``; ``arange(n)`` counts
    from 0).  The dtype is int64 for Python ints, float32 if any bound is a Python float."""
    if stop is None:
        start, stop = 0, start
    dt = _dtype_or_inferred(dtype, [start, stop, step])
    if step == 0:
        raise ValueError("arange: step must not be zero")
    n = max(math.ceil((float(stop) - float(start)) / float(step)), 0)
    ramp = _iota(n, _compute_dtype(dt))
    if step != 1:
        ramp = multiply(ramp, step)
    if start != 0:
        ramp = add(ramp, start)
    return astype(ramp, dt)


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True,
             dtype: Any = None) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` (included when ``endpoint``,
    exactly); float32 unless ``dtype`` says otherwise (integer dtypes round toward -inf)."""
    dt = _dtype_or_inferred(dtype, [start, stop, 0.0])
    work = float64 if dt is float64 else float32
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    steps = num - 1 if endpoint else num
    count = num - 1 if endpoint and num > 1 else num
    step = (float(stop) - float(start)) / steps if steps > 0 else 0.0
    ramp = add(multiply(_iota(count, work), step), float(start))
    if count < num:
        ramp = concat([ramp, full((1,), float(stop), work)])
    if dt.is_integer:
        ramp = floor(ramp)
    return astype(ramp, dt)


def eye(n: int, m: Optional[int] = None, dtype: Any = "float32", k: int = 0) -> Tensor:
    """An ``n x m`` matrix with ones on diagonal ``k`` (above the main one for k > 0);
    MindSpore's argument order, ``dtype`` third."""
    shape = (n, n if m is None else m)
    rows = _op("iota", shape=shape, axis=0, dtype=int64)
    cols = _op("iota", shape=shape, axis=1, dtype=int64)
    return astype(equal(add(rows, k), cols), dtype)
