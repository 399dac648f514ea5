"""Batching rules of the ops working along axes — reductions, sorts, scans, ``softmax``: an
axis of the example is one more axis of the batched tensor (``axes=None``, every axis, becomes
every axis but the batch; ``argmax``/``argmin`` of a flattened example search its row)."""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from mskernel_sdk import Tensor, apply

from ..transform import as_outputs
from ._batch import BatchRule, Flags, example_axes, example_axis, example_rank
from ._ops import RuleTable, reshape

rules = RuleTable()

_REDUCTIONS = ("sum", "prod", "mean", "var", "std", "max", "min", "logsumexp", "all", "any")
_ALONG_AXIS = ("sort", "argsort", "topk", "cumsum", "cumprod", "cummax", "cummin", "softmax",
               "log_softmax")


def _over_axes(op: str) -> BatchRule:
    def rule(args: tuple[Tensor, ...], batched: Flags, *, axes: Optional[Sequence[int]],
             **attrs: Any) -> tuple[Tensor, ...]:
        (x,) = args
        return as_outputs(apply(op, x, axes=example_axes(axes, example_rank(x)), **attrs))

    return rule


def _along_axis(op: str) -> BatchRule:
    def rule(args: tuple[Tensor, ...], batched: Flags, *, axis: int,
             **attrs: Any) -> tuple[Tensor, ...]:
        (x,) = args
        return as_outputs(apply(op, x, axis=example_axis(axis, example_rank(x)), **attrs))

    return rule


for _op in _REDUCTIONS:
    rules.batch(_op)(_over_axes(_op))
for _op in _ALONG_AXIS:
    rules.batch(_op)(_along_axis(_op))


def _arg_extreme(op: str) -> BatchRule:
    def rule(args: tuple[Tensor, ...], batched: Flags, *, axis: Optional[int],
             keepdims: bool) -> tuple[Tensor, ...]:
        (x,) = args
        rank = example_rank(x)
        if axis is not None:
            return (apply(op, x, axis=example_axis(axis, rank), keepdims=keepdims),)
        rows = reshape(x, shape=(x.shape[0], math.prod(x.shape[1:])))
        found = apply(op, rows, axis=1, keepdims=False)
        return (reshape(found, shape=(x.shape[0], *((1,) * rank if keepdims else ()))),)

    return rule


for _op in ("argmax", "argmin"):
    rules.batch(_op)(_arg_extreme(_op))


BATCH = rules.batches
NOT_BATCHABLE: dict[str, str] = {}
