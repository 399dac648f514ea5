"""Gradient freezing (MindSpore's ``GradientFreeze``): at each step only the parameters from
some block onwards are trained, so the backward pass stops early and the optimizer skips the
frozen ones.

The trainable parameters are cut into blocks of about three in order (a weight with the
batch-norm parameters and biases after it stays in one block), and ``param_groups`` groups
are made of them: group ``i`` holds the blocks from ``i · stride`` to the end, so group 0
trains everything.  A step sequence names the group of each step: ``freeze_type`` 0 repeats
``0…0 1 2 … P-1`` with the zeros a ``freeze_p`` share of steps, 1 draws groups ``1 … P-1``
(those freezing fewer blocks more often) for a ``1 - freeze_p`` share of the steps — MindSpore's
two strategies, seeded so every run takes the same sequence.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from mskernel_sdk import Parameter

__all__ = ["freeze_sequence", "parameter_groups"]


def parameter_groups(params: Sequence[Parameter], count: int) -> list[list[Parameter]]:
    """``count`` groups of ``params``: group ``i`` from block ``i · stride`` to the end."""
    if count < 1:
        raise ValueError(f"grad_freeze: param_groups must be >= 1, got {count}")
    blocks: list[list[Parameter]] = []
    current: list[Parameter] = []
    for p in params:
        name = p.name or ""
        if "bn" in name or "bias" in name or "beta" in name or "gamma" in name \
                or len(current) < 3:
            current.append(p)
        else:
            blocks.append(current)
            current = [p]
    if current:
        blocks.append(current)
    count = min(count, len(blocks))
    stride = max(len(blocks) // count, 1)
    return [sum(blocks[i * stride:], []) for i in range(count)]


def freeze_sequence(groups: int, freeze_type: int, freeze_p: float, steps: int,
                    seed: int = 0) -> list[int]:
    """The group trained at each of ``steps`` steps (see the module's documentation)."""
    if not 0 <= freeze_p < 1:
        raise ValueError(f"grad_freeze: freeze_p must be in [0, 1), got {freeze_p}")
    if groups <= 1:
        return [0] * steps
    if freeze_type == 0:
        zeros = int(freeze_p * (groups - 1) / (1 - freeze_p) + 0.5)
        cycle = [0] * zeros + list(range(1, groups))
        return (cycle * (steps // len(cycle) + 1))[:steps]
    if freeze_type == 1:
        rng = np.random.default_rng(seed)
        choices = np.arange(1, groups)
        weights = choices / choices.sum()
        out, frozen = [0], 0
        while len(out) < steps:
            if frozen / len(out) < 1 - freeze_p:
                out.append(int(rng.choice(choices[::-1], p=weights)))
                frozen += 1
            else:
                out.append(0)
        return out[:steps]
    raise ValueError(f"grad_freeze: freeze_type must be 0 or 1, got {freeze_type}")
