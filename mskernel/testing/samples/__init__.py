"""The op sample table, one module per op family (mirroring :mod:`mskernel.ops`)."""

from __future__ import annotations

from importlib import import_module
from typing import Iterator

import numpy as np

from .. import OpSample, SampleFn
from ...ops.core import FAMILIES


def sample_functions() -> dict[str, SampleFn]:
    """op name → sample function, over every core op family."""
    table: dict[str, SampleFn] = {}
    for family in FAMILIES:
        table.update(import_module(f"{__name__}.{family}").SAMPLES)
    return table


def samples_for(op: str, seed: int = 0) -> list[OpSample]:
    return list(sample_functions()[op](np.random.default_rng(seed)))


def all_samples(seed: int = 0) -> Iterator[OpSample]:
    for op, fn in sorted(sample_functions().items()):
        yield from fn(np.random.default_rng([seed, sum(op.encode())]))
