"""Ascend's float16 numerics on NumPy arrays, and the record of what rounding did.

:func:`to_half` rounds float32 values to float16 (round to nearest even) and, in saturation
mode — Ascend's default for float16 — clamps what overflows to ±65504 instead of ±inf (NaN
stays NaN).  It counts the values that overflowed (became infinite, or were) and those that
underflowed (non-zero values rounded to zero).  :func:`recording` collects these counts from
every emulated run in a block, per source line and op.
"""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Iterator, Optional

import numpy as np

HALF_MAX = float(np.finfo(np.float16).max)  # 65504


@dataclass
class RoundingEvents:
    """Per key (the ``"file:line"`` of the user's code), how many values overflowed and underflowed, and how many
    were rounded to float16 in all."""

    overflow: Counter[str] = field(default_factory=Counter)
    underflow: Counter[str] = field(default_factory=Counter)
    rounded: Counter[str] = field(default_factory=Counter)

    def note(self, key: str, size: int, overflow: int, underflow: int) -> None:
        self.rounded[key] += size
        if overflow:
            self.overflow[key] += overflow
        if underflow:
            self.underflow[key] += underflow

    @property
    def total_overflow(self) -> int:
        return sum(self.overflow.values())

    @property
    def total_underflow(self) -> int:
        return sum(self.underflow.values())


_recorders: ContextVar[tuple[RoundingEvents, ...]] = ContextVar("ascend_rounding", default=())


@contextmanager
def recording() -> Iterator[RoundingEvents]:
    """Collect the rounding events of every emulated run inside the block."""
    events = RoundingEvents()
    token = _recorders.set((*_recorders.get(), events))
    try:
        yield events
    finally:
        _recorders.reset(token)


def to_half(x: np.ndarray, saturate: bool = True, key: Optional[str] = None) -> np.ndarray:
    """``x`` rounded to float16 (clamped to ±65504 when ``saturate``); the events are noted
    under ``key`` in the active :func:`recording` blocks."""
    x = np.asarray(x, np.float32)
    with np.errstate(over="ignore"):
        half = x.astype(np.float16)
    recorders = _recorders.get()
    infinite = np.isinf(half)
    if recorders and key is not None:
        underflow = int(np.count_nonzero((half == 0) & (x != 0)))
        overflow = int(np.count_nonzero(infinite))
        for events in recorders:
            events.note(key, x.size, overflow, underflow)
    if saturate and infinite.any():
        half = np.clip(half, -HALF_MAX, HALF_MAX)
    return half
