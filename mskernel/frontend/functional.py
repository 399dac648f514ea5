"""The functional op API, ``mskernel.ops.<name>``: NumPy/MindSpore-style signatures over the
core ops, with type promotion (:mod:`.promote`) and argument normalisation.  Every function
works on concrete and traced tensors alike."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ..ir.dtypes import DType, dtype as to_dtype
from .dispatch import apply
from .promote import promote, result_dtype
from .tensor import Tensor


def asarray(x: Any, dtype: Any = None) -> Tensor:
    """``x`` as a tensor (a tensor of the right dtype is returned as is)."""
    if isinstance(x, Tensor):
        return x if dtype is None else astype(x, dtype)
    return Tensor(x, dtype if dtype is not None else result_dtype([x]))


def astype(x: Any, dtype: Any) -> Tensor:
    x = asarray(x)
    dt = to_dtype(dtype)
    return x if x.dtype is dt else apply("cast", x, dtype=dt)  # type: ignore[return-value]


# -- creation ---------------------------------------------------------------------------------


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Tensor:
    dt = to_dtype(dtype) if dtype is not None else result_dtype([fill_value])
    return apply("full", shape=tuple(shape), value=float(fill_value), dtype=dt)  # type: ignore[return-value]


def zeros(shape: Sequence[int], dtype: Any = "float32") -> Tensor:
    return full(shape, 0, dtype)


def ones(shape: Sequence[int], dtype: Any = "float32") -> Tensor:
    return full(shape, 1, dtype)


def full_like(x: Tensor, fill_value: Any, dtype: Any = None) -> Tensor:
    return full(x.shape, fill_value, x.dtype if dtype is None else dtype)


def zeros_like(x: Tensor, dtype: Any = None) -> Tensor:
    return full_like(x, 0, dtype)


def ones_like(x: Tensor, dtype: Any = None) -> Tensor:
    return full_like(x, 1, dtype)


# -- elementwise ------------------------------------------------------------------------------


def _binary(op: str):
    def fn(x: Any, y: Any) -> Tensor:
        a, b = promote(x, y)
        return apply(op, a, b)  # type: ignore[return-value]

    fn.__name__ = op
    fn.__doc__ = f"Elementwise ``{op}`` with NumPy broadcasting and type promotion."
    return fn


add = _binary("add")
less = _binary("less")
less_equal = _binary("less_equal")
not_equal = _binary("not_equal")


# -- shape and indexing -----------------------------------------------------------------------


def reshape(x: Any, shape: Sequence[int]) -> Tensor:
    return apply("reshape", asarray(x), shape=tuple(shape))  # type: ignore[return-value]


def broadcast_to(x: Any, shape: Sequence[int]) -> Tensor:
    return apply("broadcast_to", asarray(x), shape=tuple(shape))  # type: ignore[return-value]


def expand_dims(x: Any, axis: int | Sequence[int]) -> Tensor:
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return apply("expand_dims", asarray(x), axes=axes)  # type: ignore[return-value]


def stack(xs: Sequence[Any], axis: int = 0) -> Tensor:
    return apply("stack", *promote(*xs), axis=axis)  # type: ignore[return-value]


def take(x: Any, indices: Any, axis: Optional[int] = None) -> Tensor:
    x = asarray(x)
    if axis is None:
        x, axis = reshape(x, (x.size,)), 0
    return apply("gather", x, asarray(indices), axis=axis)  # type: ignore[return-value]


def scatter_nd(x: Any, indices: Any, updates: Any, reduce: str = "none") -> Tensor:
    x = asarray(x)
    return apply("scatter_nd", x, asarray(indices), astype(updates, x.dtype),
                 reduce=reduce)  # type: ignore[return-value]


__all__ = [name for name in dir() if not name.startswith("_") and name not in {
    "annotations", "Any", "Optional", "Sequence", "DType", "apply", "promote", "result_dtype",
    "Tensor", "to_dtype"}]
