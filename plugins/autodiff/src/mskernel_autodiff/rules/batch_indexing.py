"""Batching rules of the indexing ops.

Where only the indices are batched, the op reads the same tensor for every example and its
result needs at most the batch axis moved to the front.  Where the indexed tensor is batched
too, each example must read its own slice: ``gather_nd``/``scatter_nd`` get the example's
number as an extra leading coordinate of every index tuple, and ``gather``/``embedding`` read
the batch folded into the indexed axis, at indices offset by ``example * size``.  Indices are
widened to int64 first, so the offsets cannot overflow.
"""

from __future__ import annotations

from typing import Any

from mskernel import int64
from mskernel_sdk import Tensor, apply

from ._batch import Flags, all_batched, example_axis, example_rank, move_axis
from ._ops import RuleTable, add, cast, concat, full, iota, mul, reshape

rules = RuleTable()


def _offsets(size: int, stride: int, rank: int) -> Tensor:
    """``example * stride`` as int64, shaped ``(size, 1, ..., 1)`` with ``rank`` axes."""
    steps = iota((size,) + (1,) * (rank - 1), 0)
    return mul(steps, full((), float(stride), int64))


def _wide(indices: Tensor) -> Tensor:
    return indices if indices.dtype is int64 else cast(indices, dtype=int64)


def _with_example_coordinate(indices: Tensor) -> Tensor:
    """Batched index tuples ``(B, ..., k)`` → ``(B, ..., 1 + k)``, the example's number first."""
    indices = _wide(indices)
    number = iota(indices.shape[:-1] + (1,), 0)
    return concat(number, indices, axis=-1)


@rules.batch("gather")
def _gather(args: tuple[Tensor, ...], batched: Flags, *, axis: int) -> tuple[Tensor]:
    x, indices = args
    rank = example_rank(x, batched[0])
    ax = example_axis(axis, rank) - 1
    if not batched[1]:
        return (apply("gather", x, indices, axis=ax + 1),)
    if not batched[0]:  # x[:ax] + (B, *I) + x[ax+1:]: the batch moves to the front
        return (move_axis(apply("gather", x, indices, axis=ax), ax, 0),)
    size, length = x.shape[0], x.shape[ax + 1]
    folded = move_axis(x, ax + 1, 1)  # (B, length, *before, *after)
    folded = reshape(folded, shape=(size * length, *folded.shape[2:]))
    at = add(_wide(indices), _offsets(size, length, indices.ndim))
    out = apply("gather", folded, at, axis=0)  # (B, *I, *before, *after)
    n = example_rank(indices)
    order = [0, *range(1 + n, 1 + n + ax), *range(1, 1 + n), *range(1 + n + ax, out.ndim)]
    return (apply("transpose", out, perm=tuple(order)),)


@rules.batch("take_along_axis")
def _take_along_axis(args: tuple[Tensor, ...], batched: Flags, *, axis: int) -> tuple[Tensor]:
    x, indices = all_batched(args, batched)
    return (apply("take_along_axis", x, indices, axis=example_axis(axis, example_rank(x))),)


@rules.batch("gather_nd")
def _gather_nd(args: tuple[Tensor, ...], batched: Flags) -> tuple[Tensor]:
    x, indices = args
    if not batched[0]:
        return (apply("gather_nd", x, indices),)
    if batched[1]:
        return (apply("gather_nd", x, _with_example_coordinate(indices)),)
    k = indices.shape[-1]  # the batch goes after the k indexed axes, then to the front
    out = apply("gather_nd", move_axis(x, 0, k), indices)
    return (move_axis(out, indices.ndim - 1, 0),)


@rules.batch("scatter")
def _scatter(args: tuple[Tensor, ...], batched: Flags, *, axis: int,
             reduce: str) -> tuple[Tensor]:
    x, indices, updates = all_batched(args, batched)
    return (apply("scatter", x, indices, updates, axis=example_axis(axis, example_rank(x)),
                  reduce=reduce),)


@rules.batch("scatter_nd")
def _scatter_nd(args: tuple[Tensor, ...], batched: Flags, *, reduce: str) -> tuple[Tensor]:
    x, indices, updates = all_batched(args, batched)
    return (apply("scatter_nd", x, _with_example_coordinate(indices), updates, reduce=reduce),)


@rules.batch("one_hot")
def _one_hot(args: tuple[Tensor, ...], batched: Flags, *, axis: int,
             **attrs: Any) -> tuple[Tensor]:
    (indices,) = args
    new = -1 if axis == -1 else example_axis(axis, example_rank(indices) + 1)
    return (apply("one_hot", indices, axis=new, **attrs),)


@rules.batch("embedding")
def _embedding(args: tuple[Tensor, ...], batched: Flags) -> tuple[Tensor]:
    table, ids = args
    if not batched[0]:
        return (apply("embedding", table, ids),)
    table, ids = all_batched(args, batched)
    size, rows = table.shape[:2]
    folded = reshape(table, shape=(size * rows, table.shape[2]))
    return (apply("embedding", folded, add(_wide(ids), _offsets(size, rows, ids.ndim))),)


BATCH = rules.batches
NOT_BATCHABLE: dict[str, str] = {}
