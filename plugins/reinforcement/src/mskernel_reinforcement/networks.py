"""The networks of the built-in algorithms, as ``mskernel.nn`` cells: multilayer perceptrons
(:func:`mlp`), an actor-critic pair (PPO, A2C), a Q-network (DQN), and SAC's squashed
Gaussian actor and twin critics.

Initialisation is the layers' default (PyTorch's ``Linear``: what DQN and SAC are usually
run with) or ``"orthogonal"`` (Saxe et al., 2014): orthogonal weights scaled by a gain —
``sqrt(2)`` for hidden layers, ``0.01`` for a policy's logits, ``1`` for a value — and zero
biases, what PPO and A2C implementations use (Andrychowicz et al., 2021).
"""

from __future__ import annotations

import math
from typing import Any, Literal, Optional, Sequence

import numpy as np
from mskernel import nn, ops
from mskernel_sdk import Tensor

__all__ = ["ActorCritic", "QNetwork", "SquashedGaussianActor", "TwinQ", "mlp", "orthogonal"]

Init = Literal["default", "orthogonal"]


def orthogonal(shape: tuple[int, int], gain: float, rng: np.random.Generator) -> np.ndarray:
    """A ``[rows, cols]`` float32 matrix with orthonormal rows or columns, times ``gain``
    (the QR decomposition of a Gaussian matrix, signs fixed as in Saxe et al.)."""
    rows, cols = shape
    flat = rng.standard_normal((max(rows, cols), min(rows, cols)))
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return (gain * q[:rows, :cols]).astype(np.float32)


def mlp(sizes: Sequence[int], activation: str = "tanh", init: Init = "default",
        output_gain: float = 1.0, rng: Optional[np.random.Generator] = None) -> nn.SequentialCell:
    """``Dense`` layers ``sizes[0] → sizes[1] → … → sizes[-1]`` with ``activation`` between
    them (none after the last).  ``init="orthogonal"`` draws the weights from ``rng``, with
    gain ``sqrt(2)`` for hidden layers and ``output_gain`` for the last."""
    if len(sizes) < 2:
        raise ValueError(f"mlp: give at least the input and output sizes, got {list(sizes)}")
    if init not in ("default", "orthogonal"):
        raise ValueError(f"mlp: init is 'default' or 'orthogonal', got {init!r}")
    rng = rng if rng is not None else np.random.default_rng()
    layers: list[nn.Cell] = []
    for k, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        last = k == len(sizes) - 2
        if init == "orthogonal":
            gain = output_gain if last else math.sqrt(2.0)
            layers.append(nn.Dense(n_in, n_out, weight_init=orthogonal((n_out, n_in), gain, rng),
                                   bias_init="zeros"))
        else:
            layers.append(nn.Dense(n_in, n_out))
        if not last:
            layers.append(nn.get_activation(activation))
    return nn.SequentialCell(*layers)


class ActorCritic(nn.Cell):
    """Separate policy and value MLPs on the (flattened) observation: ``construct(obs)``
    returns the policy's logits ``[B, actions]`` and the values ``[B]``."""

    def __init__(self, observation_size: int, action_size: int, hidden: Sequence[int],
                 activation: str = "tanh", init: Init = "orthogonal",
                 rng: Optional[np.random.Generator] = None) -> None:
        super().__init__()
        rng = rng if rng is not None else np.random.default_rng()
        self.policy = mlp([observation_size, *hidden, action_size], activation, init, 0.01, rng)
        self.value = mlp([observation_size, *hidden, 1], activation, init, 1.0, rng)

    def construct(self, observations: Any) -> tuple[Tensor, Tensor]:
        return self.policy(observations), ops.squeeze(self.value(observations), -1)


class QNetwork(nn.Cell):
    """One Q-value per discrete action: ``construct(obs)`` is ``[B, actions]``."""

    def __init__(self, observation_size: int, action_count: int, hidden: Sequence[int],
                 activation: str = "relu", init: Init = "default",
                 rng: Optional[np.random.Generator] = None) -> None:
        super().__init__()
        self.q = mlp([observation_size, *hidden, action_count], activation, init, 1.0, rng)

    def construct(self, observations: Any) -> Tensor:
        return self.q(observations)


class SquashedGaussianActor(nn.Cell):
    """SAC's actor: a trunk MLP, then the mean and the log standard deviation (clipped to
    ``[-20, 2]``) of a Gaussian over the pre-squash action."""

    LOG_STD_MIN, LOG_STD_MAX = -20.0, 2.0

    def __init__(self, observation_size: int, action_size: int, hidden: Sequence[int],
                 activation: str = "relu") -> None:
        super().__init__()
        self.trunk = nn.SequentialCell(mlp([observation_size, *hidden], activation),
                                       nn.get_activation(activation))
        self.mean = nn.Dense(hidden[-1], action_size)
        self.log_std = nn.Dense(hidden[-1], action_size)

    def construct(self, observations: Any) -> tuple[Tensor, Tensor]:
        features = self.trunk(observations)
        log_std = ops.clip(self.log_std(features), self.LOG_STD_MIN, self.LOG_STD_MAX)
        return self.mean(features), log_std


class TwinQ(nn.Cell):
    """Two independent Q-functions of (observation, action): ``construct`` returns both,
    each ``[B]`` (the clipped double-Q trick takes their minimum)."""

    def __init__(self, observation_size: int, action_size: int, hidden: Sequence[int],
                 activation: str = "relu") -> None:
        super().__init__()
        sizes = [observation_size + action_size, *hidden, 1]
        self.q1 = mlp(sizes, activation)
        self.q2 = mlp(sizes, activation)

    def construct(self, observations: Any, actions: Any) -> tuple[Tensor, Tensor]:
        inputs = ops.concat([observations, actions], -1)
        return ops.squeeze(self.q1(inputs), -1), ops.squeeze(self.q2(inputs), -1)
