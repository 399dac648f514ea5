"""Sequences and optionals.  The IR has neither: a sequence is a tuple of IR values whose
length the import knows, an optional is its content or nothing (see
:mod:`mskernel_onnx.values`), so positions and lengths must be known at import time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from mskernel_sdk import Value, tensor_type

from ..protos import element_dtype
from ..values import OnnxValue, OptValue, SeqValue
from .common import axis, dtype, rank, shape

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]


def _sequence(ctx: "NodeContext", i: int) -> SeqValue:
    v = ctx.value(i)
    if isinstance(v, OptValue):
        v = v.item  # type: ignore[assignment]
    if not isinstance(v, SeqValue):
        ctx.fail(f"input {i} must be a sequence")
    return v


def _position(ctx: "NodeContext", i: int, length: int, default: int, insert: bool) -> int:
    """Input ``i`` as a position in ``[0, length)`` (``[0, length]`` to insert at);
    negative positions count from the end."""
    pos = int(ctx.scalar(i, default))
    last = length if insert else length - 1
    if not -length <= pos <= last:
        ctx.fail(f"position {pos} is out of range for a sequence of {length}")
    return pos + length if pos < 0 else pos


def _empty(ctx: "NodeContext") -> SeqValue:
    return SeqValue(element_dtype(ctx.attr("dtype", 1)), ())


def _construct(ctx: "NodeContext") -> SeqValue:
    items = ctx.inputs()
    return SeqValue(dtype(items[0]), tuple(items))


def _at(ctx: "NodeContext") -> Value:
    seq = _sequence(ctx, 0)
    return seq.items[_position(ctx, 1, len(seq.items), 0, insert=False)]


def _insert(ctx: "NodeContext") -> SeqValue:
    seq = _sequence(ctx, 0)
    items = list(seq.items)
    at = _position(ctx, 2, len(items), len(items), insert=True)
    items.insert(at, ctx.input(1))
    return SeqValue(seq.dtype, tuple(items))


def _erase(ctx: "NodeContext") -> SeqValue:
    seq = _sequence(ctx, 0)
    items = list(seq.items)
    del items[_position(ctx, 1, len(items), -1, insert=False)]
    return SeqValue(seq.dtype, tuple(items))


def _length(ctx: "NodeContext") -> Value:
    return ctx.constant(np.array(len(_sequence(ctx, 0).items), np.int64))


def _split_to_sequence(ctx: "NodeContext") -> SeqValue:
    x = ctx.input(0)
    a = axis(ctx, ctx.attr("axis", 0), rank(x))
    dim = shape(x)[a]
    if ctx.has(1):
        split = np.asarray(ctx.const(1)).reshape(-1)
        if np.asarray(ctx.const(1)).ndim == 0:
            chunk = int(split[0])
            sizes = [chunk] * (dim // chunk) + ([dim % chunk] if dim % chunk else [])
        else:
            sizes = [int(s) for s in split]
        parts = ctx.op("split", x, axis=a, sizes=tuple(sizes))
    else:
        parts = ctx.op("split", x, axis=a, sizes=(1,) * dim)
        if not ctx.attr("keepdims", 1):
            parts = tuple(ctx.op("squeeze", p, axes=(a,)) for p in parts)
    return SeqValue(dtype(x), tuple(parts))


def _concat_from_sequence(ctx: "NodeContext") -> Value:
    seq = _sequence(ctx, 0)
    if not seq.items:
        ctx.fail("the sequence is empty")
    first = seq.items[0]
    if ctx.attr("new_axis", 0):
        return ctx.op("stack", *seq.items, axis=axis(ctx, ctx.attr("axis"), rank(first) + 1))
    return ctx.op("concat", *seq.items, axis=axis(ctx, ctx.attr("axis"), rank(first)))


def _optional(ctx: "NodeContext") -> OptValue:
    if ctx.has(0):
        v = ctx.value(0)
        return OptValue(v, v if isinstance(v, SeqValue) else v.type)  # type: ignore[arg-type]
    kind = ctx.attr("type")
    if kind.HasField("sequence_type"):
        dt = element_dtype(kind.sequence_type.elem_type.tensor_type.elem_type)
        return OptValue(None, SeqValue(dt, ()))
    return OptValue(None, tensor_type(element_dtype(kind.tensor_type.elem_type), ()))


def _has_element(ctx: "NodeContext") -> Value:
    present = ctx.has(0) and not (isinstance(ctx.value(0), OptValue) and
                                  ctx.value(0).item is None)  # type: ignore[union-attr]
    return ctx.constant(np.array(present))


def _get_element(ctx: "NodeContext") -> OnnxValue:
    v = ctx.value(0)
    if isinstance(v, OptValue):
        if v.item is None:
            ctx.fail("the optional is empty")
        return v.item
    return v


OPS: dict[str, Handler] = {
    "SequenceEmpty": _empty, "SequenceConstruct": _construct, "SequenceAt": _at,
    "SequenceInsert": _insert, "SequenceErase": _erase, "SequenceLength": _length,
    "SplitToSequence": _split_to_sequence, "ConcatFromSequence": _concat_from_sequence,
    "Optional": _optional, "OptionalHasElement": _has_element,
    "OptionalGetElement": _get_element,
}
