"""Shared helpers: NumPy forward passes of the plugin's MLPs from their weights, and a small
plan to build learners on."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

# actor processes (spawned) import the test environments from here
sys.path.insert(0, str(Path(__file__).parent))

from mskernel_reinforcement.algorithms import Plan  # noqa: E402
from mskernel_reinforcement.environment import EnvSpec  # noqa: E402


def numpy_mlp(weights: dict[str, np.ndarray], prefix: str, x: np.ndarray,
              activation=np.tanh) -> np.ndarray:
    """The ``SequentialCell`` of Dense layers (and activations between them) under ``prefix``
    applied to ``x`` in float64."""
    indices = sorted({int(k[len(prefix):].split(".")[0]) for k in weights
                      if k.startswith(prefix) and k.endswith(".weight")})
    x = np.asarray(x, np.float64)
    for n, i in enumerate(indices):
        x = x @ weights[f"{prefix}{i}.weight"].T.astype(np.float64) + weights[f"{prefix}{i}.bias"]
        if n < len(indices) - 1:
            x = activation(x)
    return x


def log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


@pytest.fixture
def discrete_plan() -> Plan:
    return Plan(EnvSpec((4,), "discrete", action_count=3), total_steps=1000, envs=2, seed=0)


@pytest.fixture
def continuous_plan() -> Plan:
    return Plan(EnvSpec((3,), "continuous", action_shape=(2,), action_low=(-2.0, -1.0),
                        action_high=(2.0, 3.0)), total_steps=1000, envs=1, seed=0)
