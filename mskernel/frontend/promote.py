"""Type promotion at the frontend: the IR's ops require their operands to share a dtype, so the
frontend converts and casts before emitting them.

Tensors promote by :func:`~mskernel.ir.dtypes.promote_types` (NumPy's table; bfloat16 as JAX).
Python scalars — and *weakly typed* tensors standing for them, such as the index of a
converted ``for i in range(n)`` loop — are *weak*, as in JAX and NumPy 2 (NEP 50): they take the dtype of the tensors
they meet when their kind fits (``int8_tensor + 1`` stays int8, ``f16_tensor * 2.5`` stays
float16), and only raise the kind when they must (``int_tensor + 0.5`` gives the default float,
float32; a complex scalar gives the complex type of the tensors' precision).  With no tensor
at all, scalars take the framework defaults (bool, int64, float32, complex64).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..ir.dtypes import (
    DType, bool_, complex64, complex128, dtype as to_dtype, float32, float64, int64, promote_types,
)
from .dispatch import apply
from .tensor import Tensor, host_array

_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}
_SCALAR_KIND = {bool: "b", int: "i", float: "f", complex: "c"}
_DEFAULT = {"b": bool_, "i": int64, "f": float32, "c": complex64}


def is_weak(x: Any) -> bool:
    """A Python scalar (not a NumPy scalar, which has a dtype of its own)."""
    return type(x) in _SCALAR_KIND


def all_weak(args: Sequence[Any]) -> bool:
    """Every argument is a Python scalar or a weakly typed tensor: the result of an op on
    them stays weak, so ``i * 2`` with a converted loop index still promotes like a number."""
    return all(is_weak(a) or (isinstance(a, Tensor) and a._weak) for a in args)


def result_dtype(args: Sequence[Any]) -> DType:
    """The dtype ``args`` (tensors, arrays, NumPy and Python scalars) compute in."""
    strong: DType | None = None
    weak_kind = "b"
    for a in args:
        if isinstance(a, Tensor) and a._weak:
            kind = "i" if a.dtype.kind == "u" else a.dtype.kind
            if _KIND_RANK[kind] > _KIND_RANK[weak_kind]:
                weak_kind = kind
            continue
        if isinstance(a, Tensor):
            dt = a.dtype
        elif is_weak(a):
            kind = _SCALAR_KIND[type(a)]
            if _KIND_RANK[kind] > _KIND_RANK[weak_kind]:
                weak_kind = kind
            continue
        elif isinstance(a, (np.ndarray, np.generic)):
            dt = to_dtype(a.dtype)
        else:  # nested lists: the dtype Tensor(a) would get
            dt = host_array(a)[1]
        strong = dt if strong is None else promote_types(strong, dt)
    if strong is None:
        return _DEFAULT[weak_kind]
    if _KIND_RANK[weak_kind] <= _KIND_RANK[strong.kind]:
        return strong
    if weak_kind == "c":
        return complex128 if strong is float64 else complex64
    if weak_kind == "i":  # a bool tensor meeting a Python int
        return int64
    return float32  # an int or bool tensor meeting a Python float


def as_tensor(x: Any, dt: DType) -> Tensor:
    """``x`` as a tensor of dtype ``dt`` (casting a tensor only when it differs)."""
    if isinstance(x, Tensor):
        if x.dtype is dt:
            return x
        return apply("cast", x, dtype=dt)  # type: ignore[return-value]
    if type(x) is int and dt.is_integer:
        info = np.iinfo(dt.storage)
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python int {x} is out of range for {dt}")
    return Tensor(x, dt)


def promote(*args: Any) -> list[Tensor]:
    """Convert every argument to a tensor of the common dtype."""
    dt = result_dtype(args)
    return [as_tensor(a, dt) for a in args]
