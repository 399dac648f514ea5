"""Where a pipeline's randomness comes from.

Every random decision is drawn from a generator seeded by *what* is decided, never by who
computes it or when: the global seed, the node's number in the pipeline (its place in a
depth-first walk, so equal pipelines number alike), the epoch, and for a row its position in
the node's input for that epoch.  A row therefore gets the same crop, flip or rotation with
one worker or eight, with threads or processes, and whichever worker happens to take it.

An epoch is a tuple: the iterator's epoch number followed by one repetition index per
enclosing ``repeat``, so the passes of a repeat are shuffled and augmented differently.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import config

Epoch = tuple[int, ...]

_ROW, _PASS, _EAGER = 0, 1, 2  # what a generator is for, part of its seed


def row_rng(seed: int, node: int, epoch: Epoch, position: int) -> np.random.Generator:
    """The generator of the random transforms applied to one row."""
    return np.random.default_rng([seed, _ROW, node, len(epoch), *epoch, position])


def pass_rng(seed: int, node: int, epoch: Epoch) -> np.random.Generator:
    """The generator of a node's decisions over a whole pass (a shuffle's order)."""
    return np.random.default_rng([seed, _PASS, node, len(epoch), *epoch])


_eager: Optional[np.random.Generator] = None


def eager_rng() -> np.random.Generator:
    """The generator of random transforms called directly (``RandomCrop(8)(image)``),
    seeded from ``config.get_seed()`` and reset by ``config.set_seed``."""
    global _eager
    if _eager is None:
        _eager = np.random.default_rng([config.get_seed(), _EAGER])
    return _eager


def reset_eager_rng() -> None:
    global _eager
    _eager = None
