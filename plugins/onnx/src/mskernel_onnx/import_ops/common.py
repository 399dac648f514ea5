"""Small building blocks the op tables share: axes, casts, scalars, moving axes."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

import numpy as np

from mskernel_sdk import DType, TensorType, Value, dtype as to_dtype

if TYPE_CHECKING:
    from ..context import NodeContext

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
#: The most elements a table the import builds in NumPy (interpolation matrices, window
#: positions, DFT matrices ...) may have: a forged size is an error, not an allocation.
MAX_TABLE = 1 << 26
#: The most steps a translation unrolls (recurrent layers, loops that cannot be regions).
MAX_UNROLL = 4096


def rank(v: Value) -> int:
    t = v.type
    assert isinstance(t, TensorType)
    return t.rank


def shape(v: Value) -> tuple[int, ...]:
    t = v.type
    assert isinstance(t, TensorType)
    return t.shape


def dtype(v: Value) -> DType:
    t = v.type
    assert isinstance(t, TensorType)
    return t.dtype


def check_table(ctx: "NodeContext", dims: Sequence[int], what: str) -> None:
    """Fail unless a table of ``dims`` stays within :data:`MAX_TABLE` elements."""
    size = math.prod(int(d) for d in dims)
    if size > MAX_TABLE:
        ctx.fail(f"{what} would hold {size} elements, more than the {MAX_TABLE} the import "
                 "builds")


def check_unroll(ctx: "NodeContext", steps: int, what: str) -> None:
    if steps > MAX_UNROLL:
        ctx.fail(f"{what} unrolls {steps} steps, more than the {MAX_UNROLL} the import does")


def axis(ctx: "NodeContext", a: int, n: int, what: str = "axis") -> int:
    """``a`` normalised into ``[0, n)`` (negative counts from the end)."""
    if not -n <= a < n:
        ctx.fail(f"{what} {a} is out of range for rank {n}")
    return a % n


def axes(ctx: "NodeContext", values: Sequence[int], n: int, what: str = "axes") -> tuple[int, ...]:
    return tuple(axis(ctx, int(a), n, what) for a in values)


def cast(ctx: "NodeContext", v: Value, dt: Union[DType, str]) -> Value:
    dt = to_dtype(dt)
    return v if dtype(v) == dt else ctx.op("cast", v, dtype=dt)


def scalar(ctx: "NodeContext", value: Any, dt: Union[DType, str, Value]) -> Value:
    """A scalar of dtype ``dt`` (or of a value's dtype)."""
    if isinstance(dt, Value):
        dt = dtype(dt)
    return ctx.constant(np.asarray(value, to_dtype(dt).storage), dt)


def compute_dtype(dt: DType) -> DType:
    """The dtype float math on ``dt`` runs in: itself for floats, float64 for integers."""
    return dt if dt.is_floating or dt.is_complex else to_dtype("float64")


def entry(ctx: "NodeContext", v: Value, index: int, axis: int = 0) -> Value:
    """``v``'s slice at the constant ``index`` of ``axis`` (the axis removed)."""
    return ctx.op("gather", v, scalar(ctx, index, "int64"), axis=axis)


def move_axis(ctx: "NodeContext", v: Value, src: int, dst: int) -> Value:
    n = rank(v)
    src, dst = src % n, dst % n
    if src == dst:
        return v
    perm = [i for i in range(n) if i != src]
    perm.insert(dst, src)
    return ctx.op("transpose", v, perm=tuple(perm))


def broadcast(ctx: "NodeContext", v: Value, target: Sequence[int]) -> Value:
    return v if shape(v) == tuple(target) else ctx.op("broadcast_to", v, shape=tuple(target))


def to_int64(ctx: "NodeContext", v: Value) -> Value:
    return cast(ctx, v, "int64")


def normalize_indices(ctx: "NodeContext", indices: Value, size: Union[int, Value]) -> Value:
    """ONNX indices in ``[-size, size)`` as IR indices in ``[0, size)``."""
    idx = to_int64(ctx, indices)
    n = size if isinstance(size, Value) else scalar(ctx, size, "int64")
    negative = ctx.op("less", idx, scalar(ctx, 0, "int64"))
    return ctx.op("where", negative, ctx.op("add", idx, n), idx)


def optional_attr_or_input(ctx: "NodeContext", name: str, index: int,
                           since: int) -> Optional[tuple[int, ...]]:
    """An ints parameter that moved from an attribute to input ``index`` at opset ``since``
    (``axes`` of ``Squeeze``, ``ReduceSum`` ...); ``None`` when absent."""
    if ctx.version >= since:
        return ctx.ints(index, None)
    value = ctx.attr(name, None)
    return None if value is None else tuple(int(v) for v in value)
