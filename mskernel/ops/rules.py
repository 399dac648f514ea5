"""Building blocks for shape/dtype rules, shared by every op family.

Each helper raises :class:`~mskernel.errors.InferError` with a reason a user can act on; the
registry adds the op's name, the input types and the source line.

Typing policy of the core op set: elementwise ops with several tensor operands require them to
have *the same dtype* (the frontend promotes with :func:`~mskernel.ir.dtypes.result_type`
before building the node, as JAX's lax does), and their shapes broadcast by NumPy's rules.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from ..errors import InferError
from ..ir.dtypes import DType
from ..ir.types import Shape, TensorType, Type


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


def require_kind(t: TensorType, kinds: str, what: str) -> None:
    """Require ``t.dtype.kind`` in ``kinds`` ("b", "i", "u", "f", "c")."""
    if t.dtype.kind not in kinds:
        raise InferError(f"expects {what} input, got {t}")


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
