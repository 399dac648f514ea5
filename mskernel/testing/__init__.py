"""Test support shared by the core's tests, plugin tests and the SDK's conformance kit.

Every op's samples — inputs that exercise it: broadcasting, edge shapes (size 0 and 1), every
dtype family it accepts — are attached to it under the rule kind ``"samples"``
(:mod:`mskernel.ops.samples`), the core's beside their op definitions and a plugin's by the
plugin, so one table drives the reference tests, the text round trip, the pass property
tests, autodiff's rule checks and backend conformance.  :func:`samples_for` reads it.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import numpy as np

from ..defaults import op_registry, rule_registry
from ..ir.builder import GraphBuilder
from ..ir.dtypes import DType
from ..ir.graph import Graph
from ..ir.lookup import OpLookup, OpSchema
from ..ops.samples import SAMPLES_RULE, OpSample, SampleFn, random_array, region, sample_rng

__all__ = [
    "SAMPLES_RULE", "OpSample", "SampleFn", "all_samples", "assert_close", "random_array",
    "region", "sample_graph", "sample_rng", "samples_for", "tolerance",
]


def samples_for(op: str, seed: int = 0) -> list[OpSample]:
    """The samples attached to ``op`` (under :data:`SAMPLES_RULE`), drawn with
    :func:`sample_rng` ``(seed, op)``; empty when it has none."""
    samples = rule_registry().get(SAMPLES_RULE, op)
    return [] if samples is None else list(samples(sample_rng(seed, op)))


def all_samples(seed: int = 0, *, owner: Optional[str] = None) -> Iterator[OpSample]:
    """The samples of every op that has some (of the ops defined by the distribution
    ``owner`` when given: ``"mskernel"`` for the core's), op by op in name order."""
    for op in sorted(rule_registry().ops_with(SAMPLES_RULE)):
        if owner is None or op_registry().get(op).owner == owner:
            yield from samples_for(op, seed)


def sample_graph(sample: OpSample, registry: Optional[OpLookup[OpSchema]] = None) -> Graph:
    """A graph applying the sample's op once to fresh inputs; its outputs are the op's."""
    b = GraphBuilder(sample.op.replace(".", "_"), registry)
    inputs = [b.input(t) for t in sample.arg_types()]
    out = b.op(sample.op, *inputs, regions=sample.regions, **dict(sample.attrs))
    return b.build(list(out) if isinstance(out, tuple) else [out])


def tolerance(dt: DType) -> tuple[float, float]:
    """Default (rtol, atol) for comparing results of dtype ``dt`` computed two ways."""
    return {
        "float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float32": (1e-5, 1e-6),
        "float64": (1e-12, 1e-14), "complex64": (1e-5, 1e-6), "complex128": (1e-12, 1e-14),
    }.get(dt.name, (0.0, 0.0))


def assert_close(actual: Any, expected: Any, dt: DType, *, rtol: Optional[float] = None,
                 atol: Optional[float] = None, what: str = "") -> None:
    """Compare with the dtype's tolerance (exact for bool and integer types); NaNs must match."""
    d_rtol, d_atol = tolerance(dt)
    np.testing.assert_allclose(
        np.asarray(actual), np.asarray(expected),
        rtol=d_rtol if rtol is None else rtol, atol=d_atol if atol is None else atol,
        equal_nan=True, err_msg=what,
    )
