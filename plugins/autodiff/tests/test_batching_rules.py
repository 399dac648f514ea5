"""The batching rule of every core op against a Python loop over the batch.

Every core op taking tensors must have a ``"batch"`` rule or a ``"not_batchable"``
declaration.  Each rule is run on the op's samples (attached to it under the rule kind
``"samples"``): the
batched operands stack three draws of the sample (the same shapes and attributes, other
values: seeds 1 to 3), the others keep the first draw, and the rule's result must equal the op
applied to each example in turn, stacked — for every operand batched alone and for all of
them batched at once (the predicate of ``If`` included, which takes the per-example path).
The results come from different kernels (a batched one, one per example), so floating-point
results are compared with the dtype's tolerance (or the sample's own).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mskernel.frontend.dispatch import apply
from mskernel.frontend.tensor import Tensor
from mskernel.ops import op_registry, rule_registry
from mskernel.runtime.state import TOKEN_VALUE, RefCell
from mskernel.testing import OpSample, assert_close, samples_for
from mskernel_autodiff.batching import BATCH, NOT_BATCHABLE, BatchingError, batch_apply

BATCH_SIZE = 3

CORE_OPS = sorted(op.name for op in op_registry() if op.owner == "mskernel")


def test_every_core_op_taking_tensors_has_a_batching_rule_or_says_why_not():
    registry = rule_registry()
    missing = [op for op in CORE_OPS if op_registry().get(op).inputs
               and not registry.has(BATCH, op) and not registry.has(NOT_BATCHABLE, op)]
    assert missing == [], f"core ops without a 'batch' rule or a 'not_batchable' reason: {missing}"
    both = [op for op in CORE_OPS if registry.has(BATCH, op) and registry.has(NOT_BATCHABLE, op)]
    assert both == []


def _stateless(sample: OpSample) -> bool:
    return not any(isinstance(a, RefCell) or a is TOKEN_VALUE for a in sample.args)


def _draws(op: str) -> list[tuple[OpSample, list[OpSample]]]:
    """Each sample of ``op`` (but those carrying state) with its BATCH_SIZE other draws."""
    others = [samples_for(op, seed) for seed in range(1, BATCH_SIZE + 1)]
    return [(sample, [draws[i] for draws in others])
            for i, sample in enumerate(samples_for(op)) if _stateless(sample)]


def _tensor(sample: OpSample, i: int, value: Any) -> Tensor:
    dtype = sample.dtypes[i] if sample.dtypes and sample.dtypes[i] else None
    return Tensor(np.asarray(value), dtype) if dtype else Tensor(np.asarray(value))


def _patterns(count: int) -> list[tuple[bool, ...]]:
    alone = [tuple(i == j for j in range(count)) for i in range(count)]
    return alone + ([(True,) * count] if count > 1 else [])


def _cases():
    for op in CORE_OPS:
        if not rule_registry().has(BATCH, op):
            continue
        for sample, draws in _draws(op):
            for pattern in _patterns(len(sample.args)):
                yield pytest.param(sample, draws, pattern,
                                   id=f"{sample}-{''.join('B' if b else '-' for b in pattern)}")


def _outputs(result: Any) -> tuple[Tensor, ...]:
    return result if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("sample, draws, pattern", list(_cases()))
def test_batching_rule_matches_a_loop_over_the_batch(sample, draws, pattern):
    examples = []  # the operands of each example
    for draw in draws:
        examples.append([_tensor(sample, i, (draw if b else sample).args[i])
                         for i, b in enumerate(pattern)])
    batched_args = [_tensor(sample, i, np.stack([np.asarray(d.args[i]) for d in draws]))
                    if b else examples[0][i] for i, b in enumerate(pattern)]
    attrs = dict(sample.attrs)
    got = batch_apply(sample.op, batched_args, pattern, attrs, sample.regions)
    expected = [_outputs(apply(sample.op, *args, regions=sample.regions, **attrs))
                for args in examples]
    assert len(got) == len(expected[0])
    for k, out in enumerate(got):
        want = np.stack([e[k].numpy() for e in expected])
        assert out.shape == want.shape
        assert_close(out.numpy(), want, out.dtype, rtol=sample.rtol, atol=sample.atol,
                     what=f"output {k}")


def _unbatchable():
    for op in CORE_OPS:
        if rule_registry().has(NOT_BATCHABLE, op):
            for sample in samples_for(op)[:1]:
                if _stateless(sample):
                    yield pytest.param(sample, id=str(sample))


@pytest.mark.parametrize("sample", list(_unbatchable()))
def test_an_op_that_cannot_be_batched_says_why(sample):
    args = [_tensor(sample, i, np.stack([np.asarray(a)] * 2)) for i, a in enumerate(sample.args)]
    reason = rule_registry().get(NOT_BATCHABLE, sample.op)
    with pytest.raises(BatchingError, match=f"vmap cannot batch op '{sample.op}': "):
        batch_apply(sample.op, args, (True,) * len(args), dict(sample.attrs), sample.regions)
    assert reason
