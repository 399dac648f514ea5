"""Batching rules of the elementwise ops (and ``autodiff.stop_gradient``).

An elementwise op broadcasts its operands as NumPy does, aligning trailing axes.  So a batched
operand needs only size-1 axes inserted after its batch until its example has the rank of the
largest example (:func:`~._batch.aligned`); an unbatched operand then broadcasts against the
batch as it did against one example.  One rule serves every op of the family: the op applied
to the aligned operands, with its attributes.
"""

from __future__ import annotations

from typing import Any

from mskernel_sdk import Tensor, apply

from ..ops import STOP_GRADIENT
from ..transform import as_outputs
from . import elementwise
from ._batch import BatchRule, Flags, aligned, example_rank


def broadcasting(op: str) -> BatchRule:
    """The batching rule of an op that broadcasts its operands elementwise."""

    def rule(args: tuple[Tensor, ...], batched: Flags, **attrs: Any) -> tuple[Tensor, ...]:
        rank = max(example_rank(t, b) for t, b in zip(args, batched))
        operands = [aligned(t, rank) if b else t for t, b in zip(args, batched)]
        return as_outputs(apply(op, *operands, **attrs))

    rule.__name__ = rule.__qualname__ = f"{op}_batch"
    return rule


#: The family: every op with a derivative rule or a declared lack of one in
#: :mod:`.elementwise` (the core ops with the ``"elementwise"`` trait).
OPS = frozenset(elementwise.VJP) | elementwise.NONDIFFERENTIABLE | {STOP_GRADIENT}

BATCH: dict[str, BatchRule] = {op: broadcasting(op) for op in sorted(OPS)}
NOT_BATCHABLE: dict[str, str] = {}
