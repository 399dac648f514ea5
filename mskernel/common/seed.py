"""``mskernel.set_seed``: MindSpore's global seed.  It seeds what MindSpore's does — the
process seed of :mod:`mskernel.random` (initialisers and the ``rand``/``randn``
conveniences draw from it) and NumPy's global generator — so a script that calls it builds
the same network in every run.  Datasets keep their own seed (``mskernel.dataset.config``)."""

from __future__ import annotations

import operator
from typing import Optional

import numpy as np

from ..frontend import random

_seed: list[Optional[int]] = [None]


def set_seed(seed: int) -> None:
    """Seed :mod:`mskernel.random`'s process seed and ``numpy.random``."""
    value = operator.index(seed)
    if value < 0:
        raise ValueError(f"set_seed: the seed must be non-negative, got {value}")
    random.set_seed(value)
    np.random.seed(value % 2**32)
    _seed[0] = value


def get_seed() -> Optional[int]:
    """The seed :func:`set_seed` last set (``None`` before)."""
    return _seed[0]
