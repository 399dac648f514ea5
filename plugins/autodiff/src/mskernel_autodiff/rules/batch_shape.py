"""Batching rules of the shape ops: each becomes the same op on the batched tensor with its
attributes moved past the batch axis — a shape gains the batch in front, a permutation keeps
axis 0 in place, ``pads`` gain a ``(0, 0)`` pair.  Operands joined by ``concat``/``stack`` are
all brought to the batch first; ``tile`` and ``broadcast_to`` first align the example's rank
to the one the op would give it (NumPy pads shapes with leading 1s); ``tril``/``triu`` work on
the last two axes and batch as they are.  The creation ops
(``constant``, ``full``, ``iota``) take no tensor, so nothing batched ever reaches them.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

from mskernel_sdk import Tensor, apply, normalize_axes

from ..transform import as_outputs
from ._batch import (
    Flags, aligned, all_batched, as_is, example_axes, example_axis, example_rank, example_types,
)
from ._ops import RuleTable, reshape

rules = RuleTable()


@rules.batch("reshape")
def _reshape(args: tuple[Tensor, ...], batched: Flags, *, shape: Sequence[int]) -> tuple[Tensor]:
    (x,) = args
    (example,) = example_types("reshape", args, batched, {"shape": shape})
    return (reshape(x, shape=(x.shape[0], *example.shape)),)


@rules.batch("transpose")
def _transpose(args: tuple[Tensor, ...], batched: Flags, *,
               perm: Optional[Sequence[int]]) -> tuple[Tensor]:
    (x,) = args
    rank = example_rank(x)
    order = range(rank - 1, -1, -1) if perm is None else (example_axis(p, rank) - 1 for p in perm)
    return (apply("transpose", x, perm=(0, *(p + 1 for p in order))),)


@rules.batch("broadcast_to")
def _broadcast_to(args: tuple[Tensor, ...], batched: Flags, *,
                  shape: Sequence[int]) -> tuple[Tensor]:
    (x,) = args
    return (apply("broadcast_to", aligned(x, len(shape)), shape=(x.shape[0], *shape)),)


@rules.batch("squeeze")
def _squeeze(args: tuple[Tensor, ...], batched: Flags, *,
             axes: Optional[Sequence[int]]) -> tuple[Tensor]:
    (x,) = args
    example = x.shape[1:]
    dropped = (tuple(i for i, d in enumerate(example) if d == 1) if axes is None
               else normalize_axes(axes, len(example)))
    return (apply("squeeze", x, axes=tuple(a + 1 for a in dropped)),)


@rules.batch("expand_dims")
def _expand_dims(args: tuple[Tensor, ...], batched: Flags, *,
                 axes: Sequence[int]) -> tuple[Tensor]:
    (x,) = args
    return (apply("expand_dims", x, axes=example_axes(axes, example_rank(x) + len(axes))),)


@rules.batch("flip")
def _flip(args: tuple[Tensor, ...], batched: Flags, *,
          axes: Optional[Sequence[int]]) -> tuple[Tensor]:
    (x,) = args
    return (apply("flip", x, axes=example_axes(axes, example_rank(x))),)


@rules.batch("concat")
def _concat(args: tuple[Tensor, ...], batched: Flags, *, axis: int) -> tuple[Tensor]:
    xs = all_batched(args, batched)
    return (apply("concat", *xs, axis=example_axis(axis, example_rank(xs[0]))),)


@rules.batch("stack")
def _stack(args: tuple[Tensor, ...], batched: Flags, *, axis: int) -> tuple[Tensor]:
    xs = all_batched(args, batched)
    return (apply("stack", *xs, axis=example_axis(axis, example_rank(xs[0]) + 1)),)


@rules.batch("split")
def _split(args: tuple[Tensor, ...], batched: Flags, *, axis: int,
           sizes: Sequence[int]) -> tuple[Tensor, ...]:
    (x,) = args
    return as_outputs(apply("split", x, axis=example_axis(axis, example_rank(x)), sizes=sizes))


@rules.batch("slice")
def _slice(args: tuple[Tensor, ...], batched: Flags, *, starts: Sequence[int],
           stops: Sequence[int], steps: Optional[Sequence[int]],
           axes: Optional[Sequence[int]]) -> tuple[Tensor]:
    (x,) = args
    rank = example_rank(x)
    sliced = range(len(starts)) if axes is None else axes
    return (apply("slice", x, starts=starts, stops=stops, steps=steps,
                  axes=tuple(example_axis(a, rank) for a in sliced)),)


@rules.batch("pad")
def _pad(args: tuple[Tensor, ...], batched: Flags, *, pads: Sequence[int], mode: str,
         value: float) -> tuple[Tensor]:
    (x,) = args
    return (apply("pad", x, pads=(0, 0, *pads), mode=mode, value=value),)


@rules.batch("tile")
def _tile(args: tuple[Tensor, ...], batched: Flags, *, reps: Sequence[int]) -> tuple[Tensor]:
    (x,) = args
    rank = max(len(reps), example_rank(x))
    padded = (1,) * (rank - len(reps)) + tuple(reps)
    return (apply("tile", aligned(x, rank), reps=(1, *padded)),)


@rules.batch("repeat")
def _repeat(args: tuple[Tensor, ...], batched: Flags, *, repeats: int,
            axis: Optional[int]) -> tuple[Tensor]:
    (x,) = args
    if axis is None:
        rows = reshape(x, shape=(x.shape[0], math.prod(x.shape[1:])))
        return (apply("repeat", rows, repeats=repeats, axis=1),)
    return (apply("repeat", x, repeats=repeats, axis=example_axis(axis, example_rank(x))),)


rules.batch("tril")(as_is("tril"))
rules.batch("triu")(as_is("triu"))


BATCH = rules.batches
NOT_BATCHABLE: dict[str, str] = {}
