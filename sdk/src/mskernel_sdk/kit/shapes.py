"""Random broadcast shapes for elementwise ops.

The op table gives each elementwise op a few fixed shapes; the kit adds samples of random
rank (0 to 4) and dims (size 0 included), each operand a random broadcastable suffix of the
result shape.  Values are drawn from the table sample's own values, so every new sample stays
in the op's domain (no ``log`` of negatives, no shift by more than the bit width) and keeps
its dtype exactly (bfloat16 values stay bfloat16).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional, Sequence

import numpy as np
from mskernel.testing import OpSample

MAX_RANK = 4
#: Dims a random shape is made of; 0 makes empty tensors, 1 exercises broadcasting.
DIMS = (0, 1, 2, 3, 4, 5)
DIM_WEIGHTS = (0.05, 0.25, 0.2, 0.2, 0.15, 0.15)


def random_shape(rng: np.random.Generator) -> tuple[int, ...]:
    rank = int(rng.integers(0, MAX_RANK + 1))
    return tuple(int(d) for d in rng.choice(DIMS, size=rank, p=DIM_WEIGHTS))


def broadcastable_to(rng: np.random.Generator, shape: Sequence[int]) -> tuple[int, ...]:
    """A random shape that broadcasts to ``shape``: a suffix of it with some dims set to 1."""
    rank = int(rng.integers(0, len(shape) + 1))
    suffix = shape[len(shape) - rank:]
    return tuple(1 if rng.random() < 0.3 else d for d in suffix)


def reshaped(sample: OpSample, rng: np.random.Generator) -> Optional[OpSample]:
    """``sample`` with operands of random broadcast shapes, or ``None`` when it has no values
    to draw from (an empty operand) or operands that are not arrays (cells, tokens)."""
    if sample.regions or not all(isinstance(a, np.ndarray) and a.size for a in sample.args):
        return None
    result = random_shape(rng)
    shapes = [broadcastable_to(rng, result) for _ in sample.args]
    if shapes:  # one operand spans the whole result shape, so the result is `result`
        shapes[int(rng.integers(len(shapes)))] = result
    args = tuple(_draw(rng, a, shape) for a, shape in zip(sample.args, shapes))
    label = "random-shape" + (f"-{sample.label}" if sample.label else "")
    return replace(sample, args=args, label=label)


def _draw(rng: np.random.Generator, values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(rng.choice(values.ravel(), size=shape), dtype=values.dtype)
