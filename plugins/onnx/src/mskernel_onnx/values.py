"""What an ONNX name stands for during import, and the layout of a model's inputs and outputs.

ONNX values are tensors, sequences of tensors and optionals.  The IR has tensors only, with
static shapes, so a sequence is a tuple of IR values whose length the import knows
(:class:`SeqValue`), and an optional is either its content or absent (:class:`OptValue`).
A model's sequence and optional inputs and outputs become zero or more graph inputs and
outputs; a :data:`Layout` records how many and which, so a caller can flatten its arguments
and regroup the results (:func:`flatten`, :func:`unflatten`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Optional, Sequence, Union

from mskernel_sdk import DType, TensorType, Value


@dataclass(frozen=True)
class SeqValue:
    """An ONNX sequence: its element dtype and its items (possibly none)."""

    dtype: DType
    items: tuple[Value, ...]


@dataclass(frozen=True)
class OptValue:
    """An ONNX optional: ``item`` is a tensor or sequence, or ``None`` when absent; ``kind``
    says what it would hold (``TensorType`` of any shape for a tensor, :class:`SeqValue`
    with no items for a sequence)."""

    item: Union[Value, SeqValue, None]
    kind: Union[TensorType, SeqValue]


OnnxValue = Union[Value, SeqValue, OptValue]


@dataclass(frozen=True)
class SeqLayout:
    dtype: DType
    items: tuple[TensorType, ...]


@dataclass(frozen=True)
class OptLayout:
    item: Optional["Layout"]


#: How one model input or output maps onto graph inputs or outputs.
Layout = Union[TensorType, SeqLayout, OptLayout]


def layout_of(value: OnnxValue) -> Layout:
    if isinstance(value, Value):
        return value.type
    if isinstance(value, SeqValue):
        return SeqLayout(value.dtype, tuple(v.type for v in value.items))
    return OptLayout(None if value.item is None else layout_of(value.item))


def leaves(value: OnnxValue) -> Iterator[Value]:
    """The IR values an ONNX value is made of, in order."""
    if isinstance(value, Value):
        yield value
    elif isinstance(value, SeqValue):
        yield from value.items
    elif value.item is not None:
        yield from leaves(value.item)


def flatten(layout: Layout, data: Any) -> list[Any]:
    """The arrays of one input (a tensor, a list for a sequence, ``None`` for an absent
    optional) in graph-input order."""
    if isinstance(layout, TensorType):
        return [data]
    if isinstance(layout, SeqLayout):
        return list(data)
    return [] if layout.item is None else flatten(layout.item, data)


def unflatten(layout: Layout, arrays: Sequence[Any]) -> tuple[Any, int]:
    """One output rebuilt from the front of ``arrays``, and how many it took."""
    if isinstance(layout, TensorType):
        return arrays[0], 1
    if isinstance(layout, SeqLayout):
        n = len(layout.items)
        return list(arrays[:n]), n
    if layout.item is None:
        return None, 0
    return unflatten(layout.item, arrays)
