"""Building blocks for shape/dtype rules (and the reference's compute precision), shared by
every op family.

Each helper raises :class:`~mskernel.errors.InferError` with a reason a user can act on; the
registry adds the op's name, the input types and the source line.

Typing policy of the core op set: elementwise ops with several tensor operands require them to
have *the same dtype* (the frontend promotes with :func:`~mskernel.ir.dtypes.result_type`
before building the node, as JAX's lax does), and their shapes broadcast by NumPy's rules.
"""

from __future__ import annotations

import math
from typing import Iterable, Optional, Sequence

import numpy as np

from ..errors import InferError
from ..ir.dtypes import DType, as_storage
from ..ir.types import Shape, TensorType, Type

# Dtype families an op accepts, as strings of DType.kind letters.
FLOAT = "f"
INEXACT = "fc"
REAL = "iuf"
NUMERIC = "iufc"
INTEGER = "iu"
BOOL = "b"
INT_OR_BOOL = "biu"
ANY = "biufc"

#: How an error message words each family.
KIND_WORDS = {
    FLOAT: "a floating-point", INEXACT: "a floating-point or complex", REAL: "a real numeric",
    NUMERIC: "a numeric", INTEGER: "an integer", BOOL: "a bool", INT_OR_BOOL: "an integer or bool",
    ANY: "a",
}


def tensor(t: Type, what: str = "input") -> TensorType:
    if not isinstance(t, TensorType):
        raise InferError(f"{what} must be a tensor, got {t}")
    return t


def broadcast_shapes(*shapes: Shape) -> Shape:
    """NumPy broadcasting of any number of shapes."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[int] = []
    for i in range(-rank, 0):
        dims = {s[i] for s in shapes if len(s) >= -i}
        dims.discard(1)
        if len(dims) > 1:
            listed = " and ".join(str(list(s)) for s in shapes)
            raise InferError(f"shapes {listed} cannot be broadcast together")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def same_dtype(types: Sequence[TensorType]) -> DType:
    dts = {t.dtype for t in types}
    if len(dts) > 1:
        listed = ", ".join(sorted(dt.name for dt in dts))
        raise InferError(
            f"operands must have the same dtype, got {listed}; cast or promote them first"
        )
    return types[0].dtype


def require_kind(t: TensorType, kinds: str, what: Optional[str] = None) -> None:
    """Require ``t.dtype.kind`` in ``kinds`` (one of the families above, or any string of
    kind letters with ``what`` wording it); a bool given to a numeric op is told to cast."""
    if t.dtype.kind in kinds:
        return
    hint = "; cast it to an integer or floating dtype first" if t.dtype.is_bool else ""
    raise InferError(f"expects {what or KIND_WORDS[kinds]} input, got {t}{hint}")


def normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise InferError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def normalize_axes(axes: Optional[Iterable[int]], rank: int) -> tuple[int, ...]:
    """``None`` means every axis; duplicates are an error."""
    if axes is None:
        return tuple(range(rank))
    out = tuple(sorted(normalize_axis(a, rank) for a in axes))
    if len(set(out)) != len(out):
        raise InferError(f"repeated axis in {tuple(axes)}")
    return out


def reduced_shape(shape: Shape, axes: tuple[int, ...], keepdims: bool) -> Shape:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def with_dim(shape: Shape, axis: int, dim: int) -> Shape:
    """``shape`` with dimension ``axis`` (non-negative) replaced by ``dim``."""
    return shape[:axis] + (dim,) + shape[axis + 1:]


def check_fill_value(value: float, dt: DType, what: str) -> None:
    """Raise :class:`InferError` unless the float attribute ``value`` fits ``dt``: 0 or 1 for
    bool, an in-range whole number for integer types; for float and complex types a finite
    value is rounded to the type and must stay finite.  Used by every op with a fill value."""
    if dt.is_bool:
        ok = value in (0.0, 1.0)
    elif dt.is_integer:
        info = np.iinfo(dt.storage)
        ok = float(value).is_integer() and info.min <= value <= info.max
    else:
        with np.errstate(over="ignore"):
            stored = as_storage(np.float64(value), dt)
        ok = not math.isfinite(value) or bool(np.isfinite(stored))
    if not ok:
        raise InferError(f"{what} {value:g} is not representable in {dt}")


def widened(x: np.ndarray) -> np.ndarray:
    """``x`` in the precision reference kernels compute in: float32 for float16 (bfloat16 is
    stored as float32 already), the array's own dtype otherwise."""
    return x.astype(np.float32) if x.dtype == np.float16 else x
