"""Indexing tensors with NumPy's rules: ``x[key]`` (:func:`getitem`) and JAX's functional
updates ``x.at[key].set(v)`` / ``.add(v)`` / ``.multiply(v)`` / ``.min(v)`` / ``.max(v)``.

A key holds ints, slices (negative and strided ones included), ``None`` (``np.newaxis``), at
most one ``...``, integer arrays (lists, NumPy arrays, tensors — traced ones too) and boolean
masks.  How a key lowers to core ops:

- ints and slices alone: one ``slice`` op, then one ``reshape`` that drops the int axes and
  adds the ``None`` ones;
- integer arrays ("advanced" indices) broadcast together; once one is present, ints count as
  advanced indices too.  One advanced index is a ``gather``; several are a ``transpose``
  bringing their axes first and a ``gather_nd``.  The broadcast index dims go where the
  first advanced index stands when all of them are adjacent in the key, else first (NumPy's
  rule), by a final ``reshape`` + ``transpose``;
- a boolean mask stands for the integer arrays of its ``nonzero``, computed on the host: the
  result's shape depends on the mask's values, so a traced mask is an error (use ``where``);
- ``x.at[key]`` updates find the flat positions ``x[key]`` selects — the same indexing
  applied to ``arange(x.size)`` — and write through one ``scatter_nd``.

Negative indices count from the end: static ones are checked and normalised in Python,
traced ones by ``where(-n <= i < 0, i + n, i)`` (a traced index out of range fails when the
gather runs, naming the index as written).  A Python bool is not an index: NumPy reads
``x[True]`` as ``x[None]``, which is the spelling mskernel asks for.

A bad key — out of range, not an integer, too many indices, a traced mask — is reported by
:class:`IndexErrors` in eager mode and under a trace alike: NumPy's wording, with the op, the
indexed tensor's type and the user's line (``op 'getitem' at train.py:12: index -5 is out of
bounds for axis 0 with size 4 (tensor: f32[4,5])``).
"""

from __future__ import annotations

import operator
import typing
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Optional, Sequence, Union

import numpy as np

from ..errors import MskernelError
from ..ir.dtypes import int64
from ..ir.source import user_location
from .dispatch import apply
from .promote import as_tensor
from .tensor import Tensor, TracedValueError

_TO_END = 2**63 - 1  # a slice stop past the end (positive steps)
_TO_START = -(2**63)  # a slice stop before the start (negative steps)

#: A normalised integer index array: on the host, or a traced tensor.
Index = Union[np.ndarray, Tensor]


def _op(op: str, *args: Tensor, **attrs: Any) -> Tensor:
    return typing.cast(Tensor, apply(op, *args, **attrs))


# -- errors -----------------------------------------------------------------------------------

_KINDS = (TracedValueError, IndexError, TypeError, ValueError)


def located(op: str, x: Tensor, error: Exception) -> Exception:
    """``error``, whose message is the bare reason, reworded to name ``op``, the indexed
    tensor ``x`` and the user's line; of the same kind (``IndexError``, ``TypeError``, ...)."""
    loc = user_location()
    kind = next(k for k in _KINDS if isinstance(error, k))
    return kind(f"op '{op}'{f' at {loc}' if loc else ''}: {error} (tensor: {x.type})")


class IndexErrors:
    """``with IndexErrors(op, x):`` — errors in an index key raised in the block come out
    :func:`located` (mskernel's own errors, which already name their op, pass unchanged)."""

    __slots__ = ("op", "x")

    def __init__(self, op: str, x: Tensor) -> None:
        self.op, self.x = op, x

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Optional[type[BaseException]], error: Optional[BaseException],
                 trace: Optional[TracebackType]) -> None:
        if isinstance(error, _KINDS) and (
                isinstance(error, TracedValueError) or not isinstance(error, MskernelError)):
            raise located(self.op, self.x, error) from None


# -- index operands ---------------------------------------------------------------------------


def index_operand(op: str, x: Tensor, indices: Any, sizes: Union[int, Sequence[int]],
                  axis: int) -> Tensor:
    """``indices`` as an integer tensor with negative entries counted from the end of the
    dimension they index, for ``op`` (a gather or scatter op of the IR) on ``x``.  ``sizes``
    is that dimension's size, or one size per entry of the last axis of ``indices`` (index
    tuples whose first entry indexes ``axis``).  Concrete indices are range-checked (an
    ``IndexError`` naming ``op``, ``x`` and the user's line); traced ones are normalised with
    ``where``."""
    with IndexErrors(op, x):
        index = _normalized(indices, sizes, axis)
    return index if isinstance(index, Tensor) else Tensor(index)


def _normalized(indices: Any, sizes: Union[int, Sequence[int]], axis: int) -> Index:
    limit = np.asarray(sizes, np.int64)
    if isinstance(indices, Tensor) and indices.is_traced:
        return _normalized_traced(indices, limit)
    given = np.asarray(indices)
    if given.dtype.kind not in "iu":
        if given.size or given.dtype.kind == "b":
            raise IndexError(f"arrays used as indices must be of integer type, got {given.dtype}")
        given = given.astype(np.int64)  # an empty list
    host = np.minimum(given, np.uint64(_TO_END)) if given.dtype.kind == "u" else given
    host = host.astype(np.int64)
    bad = (host < -limit) | (host >= limit)
    if bad.any():
        pos = np.unravel_index(int(np.argmax(bad)), bad.shape)
        component = pos[-1] if limit.ndim else 0
        size = limit[component] if limit.ndim else limit
        raise IndexError(f"index {given[pos]} is out of bounds for axis {axis + component} "
                         f"with size {size}")
    return np.where(host < 0, host + limit, host)


def _normalized_traced(indices: Tensor, limit: np.ndarray) -> Tensor:
    if not indices.dtype.is_integer:
        raise IndexError(f"arrays used as indices must be of integer type, got {indices.type}")
    if indices.dtype.kind == "u":
        return indices
    i = indices if indices.dtype is int64 else _op("cast", indices, dtype=int64)
    # only in-range negatives move: one out of range reaches the op as the user wrote it
    counted_from_end = _op("logical_and", _op("less", i, as_tensor(0, int64)),
                           _op("greater_equal", i, Tensor(-limit)))
    return _op("where", counted_from_end, _op("add", i, Tensor(limit)), i)


def _as_tensor(index: Index) -> Tensor:
    return index if isinstance(index, Tensor) else Tensor(index)


# -- parsing a key ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Slice:
    axis: int
    start: int
    stop: int
    step: int
    length: int

    def is_whole(self, size: int) -> bool:
        return self.start == 0 and self.step == 1 and self.length == size


@dataclass(frozen=True)
class _Int:
    axis: int
    index: int


@dataclass(frozen=True)
class _Array:
    axis: int
    index: Index


class _NewAxis:
    pass


Entry = Union[_Slice, _Int, _Array, _NewAxis]


def _static_bound(value: Any) -> Optional[int]:
    if isinstance(value, Tensor) and value.is_traced:
        raise TracedValueError(
            f"a slice bound is a traced {value.type} tensor, but slices need static bounds; "
            "for a window at a traced offset i use take(x, i + arange(size), axis)"
        )
    return None if value is None else operator.index(value)


def _mask_error(mask: Tensor) -> TracedValueError:
    return TracedValueError(
        f"indexing with a traced boolean mask ({mask.type}): the result's shape depends on "
        "the mask's values, which a traced function does not know; use "
        "where(mask, x, fill) to keep the shape, or index with a concrete mask"
    )


def _classify(item: Any) -> tuple[str, Any]:
    """One key item as (kind, payload): "none", "ellipsis", "slice", "int", "array" (host
    array or traced tensor) or "mask" (host bool array)."""
    if item is None:
        return "none", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, (bool, np.bool_)):
        raise TypeError("a bool is not an index; use None to add an axis or a bool array as a mask")
    if isinstance(item, (int, np.integer)):
        return "int", int(item)
    if isinstance(item, Tensor):
        if item.is_traced:
            if item.dtype.is_bool:
                raise _mask_error(item)
            return "array", item
        item = item.numpy()
    host = np.asarray(item)
    if host.dtype.kind == "b":
        if host.ndim == 0:
            raise TypeError("a 0-d bool array is not an index; use None to add an axis")
        return "mask", host
    if host.ndim == 0 and host.dtype.kind in "iu":
        return "int", int(host)
    if host.ndim == 0:
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and integer or "
                         f"boolean arrays are valid indices, got {item!r}")
    return "array", host


def _consumed(kind: str, payload: Any) -> int:
    """How many axes of the tensor a key item indexes."""
    if kind in ("slice", "int", "array"):
        return 1
    return payload.ndim if kind == "mask" else 0


def _entries(shape: Sequence[int], key: Any) -> list[Entry]:
    """The key as one entry per index (an ``_Array`` per mask axis), with ``...`` expanded,
    trailing axes filled with whole slices, and every index normalised and range-checked."""
    items = [_classify(item) for item in (key if isinstance(key, tuple) else (key,))]
    rank = len(shape)
    used = sum(_consumed(kind, payload) for kind, payload in items)
    ellipses = sum(kind == "ellipsis" for kind, _ in items)
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if used > rank:
        raise IndexError(f"too many indices for tensor: tensor is {rank}-dimensional, but "
                         f"{used} were indexed")
    whole = [("slice", slice(None))] * (rank - used)
    if ellipses:
        at = next(i for i, (kind, _) in enumerate(items) if kind == "ellipsis")
        items[at:at + 1] = whole
    else:
        items += whole
    entries: list[Entry] = []
    axis = 0
    for kind, payload in items:
        if kind == "none":
            entries.append(_NewAxis())
            continue
        if kind == "mask":
            entries += _mask_entries(payload, shape, axis)
        elif kind == "slice":
            entries.append(_slice_entry(payload, shape[axis], axis))
        elif kind == "int":
            entries.append(_int_entry(payload, shape[axis], axis))
        else:
            entries.append(_Array(axis, _normalized(payload, shape[axis], axis)))
        axis += _consumed(kind, payload)
    return entries


def _slice_entry(s: slice, size: int, axis: int) -> _Slice:
    bounds = slice(_static_bound(s.start), _static_bound(s.stop), _static_bound(s.step))
    start, stop, step = bounds.indices(size)
    length = len(range(start, stop, step))
    return _Slice(axis, start, _TO_START if stop < 0 else stop, step, length)


def _int_entry(index: int, size: int, axis: int) -> _Int:
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    return _Int(axis, index % size)


def _mask_entries(mask: np.ndarray, shape: Sequence[int], axis: int) -> list[Entry]:
    for j, (m, n) in enumerate(zip(mask.shape, shape[axis:])):
        if m != n:
            raise IndexError(
                f"boolean index did not match indexed tensor along axis {axis + j}; size of "
                f"axis is {n} but size of corresponding boolean axis is {m}"
            )
    return [_Array(axis + j, i.astype(np.int64)) for j, i in enumerate(np.nonzero(mask))]


# -- reading ----------------------------------------------------------------------------------


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]`` with NumPy's semantics (see the module doc)."""
    with IndexErrors("getitem", x):
        return _indexed(x, _entries(x.shape, key))


def _indexed(x: Tensor, entries: list[Entry]) -> Tensor:
    """``x`` indexed by a parsed key."""
    if not any(isinstance(e, _Array) for e in entries):
        sliced = _sliced(x, entries)
        shape = tuple(1 if isinstance(e, _NewAxis) else e.length
                      for e in entries if isinstance(e, (_Slice, _NewAxis)))
        return sliced if shape == sliced.shape else _op("reshape", sliced, shape=shape)
    entries = [_Array(e.axis, np.asarray(e.index, np.int64)) if isinstance(e, _Int) else e
               for e in entries]
    return _advanced(_sliced(x, entries), entries)


def _sliced(x: Tensor, entries: list[Entry]) -> Tensor:
    """``x`` with every slice and int entry applied (int axes kept, with size 1)."""
    cuts = []
    for e in entries:
        if isinstance(e, _Slice) and not e.is_whole(x.shape[e.axis]):
            cuts.append((e.axis, e.start, e.stop, e.step))
        elif isinstance(e, _Int):
            cuts.append((e.axis, e.index, e.index + 1, 1))
    if not cuts:
        return x
    axes, starts, stops, steps = zip(*cuts)
    return _op("slice", x, starts=starts, stops=stops, steps=steps, axes=axes)


def _advanced(y: Tensor, entries: list[Entry]) -> Tensor:
    """``y`` (already sliced) indexed by its integer-array entries.  The result's dims are
    tracked as slots — the entry's position for a slice or a new axis, ``"B"`` for the
    broadcast index dims — in the order the gather produces (``layout``) and in NumPy's
    order (``target``)."""
    arrays = [e for e in entries if isinstance(e, _Array)]
    try:
        block = tuple(np.broadcast_shapes(*(a.index.shape for a in arrays)))
    except ValueError:
        shapes = " ".join(str(tuple(a.index.shape)) for a in arrays)
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         f"with shapes {shapes}") from None
    positions = [i for i, e in enumerate(entries) if isinstance(e, _Array)]
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    slices = [(i, e) for i, e in enumerate(entries) if isinstance(e, _Slice)]
    kept = [i for i, _ in slices]
    if len(arrays) == 1:
        gathered = _op("gather", y, _as_tensor(arrays[0].index), axis=arrays[0].axis)
        layout = [i if i != positions[0] else "B" for i in sorted(kept + positions[:1])]
    else:
        moved = [a.axis for a in arrays] + [e.axis for _, e in slices]
        if moved != list(range(y.ndim)):
            y = _op("transpose", y, perm=tuple(moved))
        gathered = _op("gather_nd", y, _stacked([a.index for a in arrays], block))
        layout = ["B", *kept]
    target: list[Any] = []
    for i, e in enumerate(entries):
        if not isinstance(e, _Array):
            target.append(i)
        elif adjacent and i == positions[0]:
            target.append("B")
    if not adjacent:
        target.insert(0, "B")
    return _arranged(gathered, layout, target, len(block))


def _stacked(indices: list[Index], block: tuple[int, ...]) -> Tensor:
    """Index arrays broadcast to ``block`` and stacked into ``block + (k,)`` tuples."""
    if not any(isinstance(i, Tensor) for i in indices):
        return Tensor(np.stack([np.broadcast_to(i, block) for i in indices], axis=-1))
    parts = []
    for i in indices:
        t = i if isinstance(i, Tensor) and i.dtype is int64 else as_tensor(i, int64)
        parts.append(t if t.shape == block else _op("broadcast_to", t, shape=block))
    return _op("stack", *parts, axis=-1)


def _arranged(t: Tensor, layout: list[Any], target: list[Any], block_rank: int) -> Tensor:
    """Reorder ``t``, whose dims are the slots of ``layout`` ("B" the ``block_rank`` broadcast
    index dims, an int one dim), into the slots of ``target``; slots only in ``target``
    (new axes) become size-1 dims."""
    new = [slot for slot in target if slot not in layout]
    if new:
        t = _op("reshape", t, shape=t.shape + (1,) * len(new))
        layout = layout + new
    first: dict[Any, int] = {}
    dim = 0
    for slot in layout:
        first[slot] = dim
        dim += block_rank if slot == "B" else 1
    perm = [first[slot] + k for slot in target
            for k in range(block_rank if slot == "B" else 1)]
    return t if perm == list(range(t.ndim)) else _op("transpose", t, perm=tuple(perm))


# -- functional updates -----------------------------------------------------------------------


class IndexUpdater:
    """``x.at``: ``x.at[key]`` names the elements ``x[key]`` for a functional update."""

    __slots__ = ("_x",)

    def __init__(self, x: Tensor) -> None:
        self._x = x

    def __getitem__(self, key: Any) -> "IndexedUpdate":
        return IndexedUpdate(self._x, key)


class IndexedUpdate:
    """The elements ``x[key]`` of a tensor.  Each method returns a new tensor and leaves
    ``x`` unchanged; ``values`` broadcast to ``x[key].shape`` and are cast to ``x``'s dtype
    (JAX's ``x.at[key]``)."""

    __slots__ = ("_x", "_key")

    def __init__(self, x: Tensor, key: Any) -> None:
        self._x, self._key = x, key

    def get(self) -> Tensor:
        """``x[key]``."""
        return getitem(self._x, self._key)

    def set(self, values: Any) -> Tensor:
        """Replace the elements; where an index repeats, the last value (in row-major order
        of the index) wins."""
        return self._scatter("set", values, "none")

    def add(self, values: Any) -> Tensor:
        """Add to the elements; repeated indices accumulate (``np.add.at``)."""
        return self._scatter("add", values, "add")

    def multiply(self, values: Any) -> Tensor:
        """Multiply the elements; repeated indices multiply repeatedly."""
        return self._scatter("multiply", values, "mul")

    def min(self, values: Any) -> Tensor:
        """The smaller of each element and the values landing on it."""
        return self._scatter("min", values, "min")

    def max(self, values: Any) -> Tensor:
        """The larger of each element and the values landing on it."""
        return self._scatter("max", values, "max")

    def _scatter(self, method: str, values: Any, reduce: str) -> Tensor:
        x = self._x
        flat_positions = _op("iota", shape=(x.size,), axis=0, dtype=int64)
        with IndexErrors(f"at[].{method}", x):
            positions = _indexed(_op("reshape", flat_positions, shape=x.shape),
                                 _entries(x.shape, self._key))
        updates = as_tensor(values, x.dtype)
        if updates.shape != positions.shape:
            updates = _op("broadcast_to", updates, shape=positions.shape)
        flat = _op("reshape", x, shape=(x.size,))
        where = _op("reshape", positions, shape=positions.shape + (1,))
        out = _op("scatter_nd", flat, where, updates, reduce=reduce)
        return _op("reshape", out, shape=x.shape)
