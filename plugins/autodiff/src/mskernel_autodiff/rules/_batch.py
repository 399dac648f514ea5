"""What batching rules are written with.

A batching rule (:mod:`mskernel_autodiff.batching`) receives an op's operands, some of them
*batched*: carrying the batch at axis 0, in front of the example's own axes.  The helpers here
move between the two views — an axis of the example is axis ``+ 1`` of the batched tensor — and
bring unbatched operands to the batch.  Like the derivative rules they apply ops only, so a
rule works eagerly and traced and enclosing transforms record what it emits.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from mskernel_sdk import Tensor, apply, normalize_axes

from ..batching import Flags, example_types, move_axis, size_of, with_batch
from ..transform import as_outputs
from ._ops import reshape

__all__ = [
    "BatchRule", "Flags", "aligned", "all_batched", "as_is", "example_axes", "example_axis",
    "example_rank", "example_types", "merged", "move_axis", "size_of", "split_batch",
    "with_batch",
]

BatchRule = Callable[..., tuple[Tensor, ...]]


def all_batched(args: Sequence[Tensor], batched: Flags) -> list[Tensor]:
    """Every operand batched: the unbatched ones repeated for each example."""
    size = size_of(args, batched)
    return [t if b else with_batch(t, size) for t, b in zip(args, batched)]


def example_rank(t: Tensor, batched: bool = True) -> int:
    """The rank of one example of ``t``."""
    return t.ndim - 1 if batched else t.ndim


def example_axis(axis: int, rank: int) -> int:
    """Axis ``axis`` of an example of rank ``rank`` (negatives count from its end), as an
    axis of the batched tensor."""
    return normalize_axes((axis,), rank)[0] + 1


def example_axes(axes: Optional[Sequence[int]], rank: int) -> tuple[int, ...]:
    """An ``axes`` attribute of an example of rank ``rank`` (``None``: all of its axes), as
    axes of the batched tensor."""
    return tuple(a + 1 for a in normalize_axes(axes, rank))


def aligned(t: Tensor, rank: int) -> Tensor:
    """The batched ``t`` with size-1 axes inserted after the batch so that an example has
    ``rank`` axes: it then broadcasts against other examples of that rank as its example did
    (NumPy aligns trailing axes)."""
    missing = rank - example_rank(t)
    if missing <= 0:
        return t
    return reshape(t, shape=(t.shape[0], *(1,) * missing, *t.shape[1:]))


def as_is(op: str) -> BatchRule:
    """The batching rule of an op that treats leading axes as a batch of its own (it works
    on the trailing ones): the op applied to the batched operands, attributes unchanged."""

    def rule(args: tuple[Tensor, ...], batched: Flags, **attrs: Any) -> tuple[Tensor, ...]:
        return as_outputs(apply(op, *all_batched(args, batched), **attrs))

    rule.__name__ = rule.__qualname__ = f"{op}_batch"
    return rule


def merged(t: Tensor) -> Tensor:
    """The batched ``t`` with its batch folded into the example's leading axis: ``(B, N, ...)``
    → ``(B * N, ...)``, for ops that treat that axis as a batch of their own."""
    return reshape(t, shape=(t.shape[0] * t.shape[1], *t.shape[2:]))


def split_batch(t: Tensor, size: int, n: int) -> Tensor:
    """The inverse of :func:`merged`: ``(B * N, ...)`` → ``(B, N, ...)``."""
    return reshape(t, shape=(size, n, *t.shape[1:]))
