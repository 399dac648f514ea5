"""Batching rules of ``If`` and ``While``: their regions are replayed with the batch
(:func:`~mskernel_autodiff.batching.replay`) inside functions that ``cond``/``while_loop``
trace into new regions, so the rules emit ordinary ``If``/``While`` nodes.

- ``If`` with one predicate for all examples: an ``If`` whose branches compute the batch; an
  output batched by either branch is batched by both.
- ``If`` with a predicate per example: both branches run on the whole batch and ``where``
  picks each example's result (as JAX does; a branch's errors then happen either way).
- ``While``: the carried values that become batched are found first (a value the body
  computes from a batched one is batched from the start).  With one condition for all
  examples the loop runs as it is; with a condition per example it runs while *any* example
  goes on, and an example that has stopped keeps its values (``where``), so it ends with the
  values of its own last iteration.  ``max_iterations`` bounds every example as before.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from mskernel.ops import cond, while_loop
from mskernel_sdk import Graph, Tensor, apply

from ..batching import batch_apply, batched_outputs, replay, replay_as
from ._batch import Flags, size_of, with_batch
from ._ops import RuleTable

rules = RuleTable()


def _all_batched(values: Sequence[Tensor], flags: Sequence[bool], size: int) -> tuple[Tensor, ...]:
    return tuple(t if f else with_batch(t, size) for t, f in zip(values, flags))


def _select(pred: Tensor, new: Tensor, old: Tensor) -> Tensor:
    """``new`` for the examples whose ``pred`` holds, else ``old`` (all batched)."""
    return batch_apply("where", (pred, new, old), (True, True, True), {})[0]


@rules.batch("If")
def _if(args: tuple[Tensor, ...], batched: Flags, *,
        regions: tuple[Graph, Graph]) -> tuple[Tensor, ...]:
    pred, operands, flags = args[0], args[1:], batched[1:]
    size = size_of(args, batched)
    then_region, else_region = regions
    wanted = [a or b for a, b in zip(batched_outputs(then_region, flags),
                                     batched_outputs(else_region, flags))]
    if not batched[0]:
        def branch(region: Graph) -> Any:
            return lambda *xs: replay_as(region, xs, flags, wanted, size)

        outs = cond(pred, branch(then_region), branch(else_region), *operands)
        return _all_batched(outs, wanted, size)
    chosen = zip(replay(then_region, operands, flags), replay(else_region, operands, flags))
    return tuple(_select(pred, *_all_batched((t, e), (bt, be), size))
                 for (t, bt), (e, be) in chosen)


def _carried_flags(body: Graph, batched: Flags) -> list[bool]:
    """The carried values of a loop that are batched: the batched inputs and, to a fixed
    point, every value the body computes from a batched one."""
    flags = list(batched)
    while True:
        grown = [f or out for f, out in zip(flags, batched_outputs(body, flags))]
        if grown == flags:
            return flags
        flags = grown


@rules.batch("While")
def _while(args: tuple[Tensor, ...], batched: Flags, *, max_iterations: Optional[int],
           regions: tuple[Graph, Graph]) -> tuple[Tensor, ...]:
    cond_region, body_region = regions
    size = size_of(args, batched)
    flags = _carried_flags(body_region, batched)
    (per_example,) = batched_outputs(cond_region, flags)
    if per_example:  # every value the body changes follows its own example's condition
        unchanged = [o is i for o, i in zip(body_region.outputs, body_region.inputs)]
        flags = [f or not same for f, same in zip(flags, unchanged)]
    state = tuple(t if b or not f else with_batch(t, size)
                  for t, b, f in zip(args, batched, flags))

    def body(values: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        return tuple(replay_as(body_region, values, flags, flags, size))

    if not per_example:
        final = while_loop(lambda values: replay(cond_region, values, flags)[0][0], body, state,
                           max_iterations)
        return _all_batched(final, flags, size)

    def going_on(values: tuple[Tensor, ...]) -> Tensor:
        return replay_as(cond_region, values, flags, [True], size)[0]

    def masked_body(values: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        pred = going_on(values)
        return tuple(new if same else _select(pred, new, old)
                     for new, old, same in zip(body(values), values, unchanged))

    final = while_loop(lambda values: apply("any", going_on(values)), masked_body, state,
                       max_iterations)
    return _all_batched(final, flags, size)


BATCH = rules.batches
NOT_BATCHABLE: dict[str, str] = {}
