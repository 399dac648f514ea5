"""Test support shared by the core's tests, plugin tests and the SDK's conformance kit.

Every op's samples — inputs that exercise it: broadcasting, edge shapes (size 0 and 1), every
dtype family it accepts — are attached to it under the rule kind ``"samples"``
(:mod:`mskernel.ops.samples`), the core's beside their op definitions and a plugin's by the
plugin, so one table drives the reference tests, the text round trip, the pass property
tests, autodiff's rule checks and backend conformance.  :func:`samples_for` reads it.
Results that sum are compared within the bound of
:func:`~mskernel.testing.accumulation.tolerance_for_reduction`, which holds whatever order a
backend sums in.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import numpy as np

from ..defaults import op_registry, rule_registry
from ..ir.dtypes import DType
from ..ops.samples import (
    SAMPLES_RULE, OpSample, SampleFn, random_array, region, sample_graph, sample_rng,
)
from .accumulation import (
    ACCUMULATION_RULE, Accumulation, AccumulationFn, accumulation_of, sample_tolerances,
    tolerance, tolerance_for_reduction, unit_roundoff,
)

__all__ = [
    "ACCUMULATION_RULE", "Accumulation", "AccumulationFn", "SAMPLES_RULE", "OpSample",
    "SampleFn", "accumulation_of", "all_samples", "assert_close", "mismatch", "random_array",
    "region", "sample_graph", "sample_rng", "sample_tolerances", "samples_for", "tolerance",
    "tolerance_for_reduction", "unit_roundoff",
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


def mismatch(actual: Any, expected: Any, dt: DType, rtol: Optional[float] = None,
             atol: Any = None) -> Optional[str]:
    """Why ``actual`` differs from ``expected`` beyond the tolerance of ``dt`` (default:
    :func:`tolerance`; exact for bool and integer types; NaNs must match), or ``None`` when it
    does not.  ``atol`` may be an array broadcasting to the result (one bound per element)."""
    got, want = np.asarray(actual), np.asarray(expected)
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    d_rtol, d_atol = tolerance(dt)
    rtol, atol = d_rtol if rtol is None else rtol, d_atol if atol is None else atol
    if dt.is_inexact:
        ok = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = got == want
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    where = tuple(int(i) for i in bad[0])
    here = float(np.broadcast_to(atol, got.shape)[where]) if dt.is_inexact else 0.0
    bound = f"rtol {rtol:g}, atol {here:g} there" if dt.is_inexact else "exact"
    return (f"{len(bad)} of {ok.size} elements differ ({bound}); first at {list(where)}: "
            f"got {got[where]}, expected {want[where]}")


def assert_close(actual: Any, expected: Any, dt: DType, *, rtol: Optional[float] = None,
                 atol: Any = None, what: str = "") -> None:
    """Compare with the dtype's tolerance (exact for bool and integer types); NaNs must match.
    ``atol`` may be an array of one bound per element (see :func:`tolerance_for_reduction`)."""
    reason = mismatch(actual, expected, dt, rtol, atol)
    if reason:
        raise AssertionError(f"{what}: {reason}" if what else reason)

