"""Policies: what an actor runs to choose actions.

A :class:`Policy` holds a network (an ``mskernel.nn`` cell) and maps a batch of observations
to actions in one compiled call: :meth:`Policy.forward` is traced once by ``@mskernel.jit``
per signature — the batch of the actor's environments, exploring or greedy — and every later
step runs the cached graph.  Randomness comes in as noise drawn on the host by the actor's
NumPy generator (:meth:`Policy.noise`), so the graph is a pure function and a seeded actor
repeats itself exactly.

The weights are the network's parameters by name: :meth:`weights` gives them as NumPy
arrays (what a learner broadcasts to actors) and :meth:`load_weights` assigns them in place,
which a compiled forward pass reads without recompiling.

Writing a policy: subclass :class:`Policy`, implement :meth:`forward` (return a dict with
``"action"`` and any per-step quantities the learner needs, such as ``"log_prob"``), and
:meth:`noise` if it samples.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, Mapping

import mskernel
import numpy as np
from mskernel import int32, nn, ops
from mskernel_sdk import Tensor

from .distributions import (
    categorical_log_prob, categorical_sample, gumbel_noise, squashed_gaussian,
)
from .environment import EnvSpec

__all__ = [
    "CategoricalPolicy", "EpsilonGreedyPolicy", "LinearSchedule", "Policy",
    "SquashedGaussianPolicy", "cell_weights", "load_cell_weights",
]


def cell_weights(cell: nn.Cell) -> dict[str, np.ndarray]:
    """A cell's parameters by name, as NumPy copies."""
    return {name: np.array(param.numpy()) for name, param in cell.parameters_and_names()}


def load_cell_weights(cell: nn.Cell, weights: Mapping[str, np.ndarray]) -> None:
    """Assign ``weights`` (name → array, exactly the cell's parameters) in place."""
    params = dict(cell.parameters_and_names())
    if set(params) != set(weights):
        missing, extra = sorted(set(params) - set(weights)), sorted(set(weights) - set(params))
        raise ValueError(f"weights do not match {type(cell).__name__}: missing {missing}, "
                         f"unexpected {extra}")
    for name, param in params.items():
        value = np.asarray(weights[name])
        if value.shape != tuple(param.shape):
            raise ValueError(f"weight {name!r} has shape {list(value.shape)}, the parameter "
                             f"{list(param.shape)}")
        param.assign_value(value)


class Policy(ABC):
    """Observations → actions through ``network``, one cached jit call per step."""

    def __init__(self, network: nn.Cell, spec: EnvSpec) -> None:
        self.network = network
        self.spec = spec
        self._forward = mskernel.jit(self.forward)

    @abstractmethod
    def forward(self, observations: Tensor, noise: Any, explore: bool) -> dict[str, Tensor]:
        """The compiled step: a dict with ``"action"`` (``[B]`` int32 or ``[B, *shape]``
        float32) and the extras the learner consumes.  ``noise`` is what :meth:`noise`
        drew; ``explore`` is static (a graph for each value)."""

    def noise(self, rng: np.random.Generator, batch: int, explore: bool) -> Any:
        """The host randomness :meth:`forward` consumes for a batch (``None``: none)."""
        return None

    def act(self, observations: np.ndarray, rng: np.random.Generator,
            explore: bool = True) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``(actions, extras)`` for a batch of observations, as NumPy arrays."""
        out = self._forward(observations, self.noise(rng, len(observations), explore), explore)
        arrays = {name: value.numpy() for name, value in out.items()}
        return arrays.pop("action"), arrays

    @property
    def has_values(self) -> bool:
        """Whether :meth:`values` estimates state values (actor-critic policies)."""
        return False

    def values(self, observations: np.ndarray) -> np.ndarray:
        """State values of a batch of observations (actor-critic policies only)."""
        raise NotImplementedError(f"{type(self).__name__} has no value function")

    def set_progress(self, env_steps: int) -> None:
        """Told the run's environment steps so far before each collection (for schedules
        such as epsilon-greedy's)."""

    def weights(self) -> dict[str, np.ndarray]:
        return cell_weights(self.network)

    def load_weights(self, weights: Mapping[str, np.ndarray]) -> None:
        load_cell_weights(self.network, weights)


class CategoricalPolicy(Policy):
    """A softmax policy over discrete actions with a value head (an actor-critic network
    returning ``(logits, values)``): samples by the Gumbel-max trick when exploring, takes the
    most likely action otherwise; extras ``"log_prob"`` and ``"value"``."""

    def __init__(self, network: nn.Cell, spec: EnvSpec) -> None:
        super().__init__(network, spec)
        self._values = mskernel.jit(self._value)

    def forward(self, observations: Tensor, noise: Any, explore: bool) -> dict[str, Tensor]:
        logits, values = self.network(observations)
        if explore:
            actions = categorical_sample(logits, noise)
        else:
            actions = ops.astype(ops.argmax(logits, axis=-1), int32)
        return {"action": actions, "log_prob": categorical_log_prob(logits, actions),
                "value": values}

    def noise(self, rng: np.random.Generator, batch: int, explore: bool) -> Any:
        return gumbel_noise(rng, (batch, self.spec.action_count)) if explore else None

    def _value(self, observations: Tensor) -> Tensor:
        return self.network(observations)[1]

    @property
    def has_values(self) -> bool:
        return True

    def values(self, observations: np.ndarray) -> np.ndarray:
        return self._values(observations).numpy()  # type: ignore[no-any-return]


class LinearSchedule:
    """``start`` → ``end`` linearly over the first ``fraction`` of ``total`` steps, then
    ``end``."""

    def __init__(self, start: float, end: float, fraction: float, total: int) -> None:
        self.start, self.end = float(start), float(end)
        self.span = max(1.0, fraction * total)

    def __call__(self, step: int) -> float:
        progress = min(1.0, step / self.span)
        return self.start + progress * (self.end - self.start)


class EpsilonGreedyPolicy(Policy):
    """Greedy in a Q-network's values, with probability ``epsilon`` a uniformly random action
    instead (``epsilon`` follows ``schedule`` of the run's environment steps)."""

    def __init__(self, network: nn.Cell, spec: EnvSpec,
                 schedule: Callable[[int], float]) -> None:
        super().__init__(network, spec)
        self.schedule = schedule
        self.epsilon = schedule(0)

    def forward(self, observations: Tensor, noise: Any, explore: bool) -> dict[str, Tensor]:
        greedy = ops.astype(ops.argmax(self.network(observations), axis=-1), int32)
        if not explore:
            return {"action": greedy}
        uniform, random_actions, epsilon = noise
        return {"action": ops.where(ops.less(uniform, epsilon), random_actions, greedy)}

    def noise(self, rng: np.random.Generator, batch: int, explore: bool) -> Any:
        if not explore:
            return None
        return (rng.random(batch, dtype=np.float32),
                rng.integers(0, self.spec.action_count, batch, dtype=np.int32),
                np.float32(self.epsilon))

    def set_progress(self, env_steps: int) -> None:
        self.epsilon = self.schedule(env_steps)


class SquashedGaussianPolicy(Policy):
    """SAC's policy: ``tanh`` of a Gaussian sample (of its mean when greedy), scaled to the
    action bounds.  For the first ``random_steps`` environment steps of a run it acts
    uniformly at random instead, to fill the replay buffer with diverse data."""

    def __init__(self, network: nn.Cell, spec: EnvSpec, random_steps: int = 0) -> None:
        super().__init__(network, spec)
        low = np.asarray(spec.action_low, np.float32).reshape(spec.action_shape)
        high = np.asarray(spec.action_high, np.float32).reshape(spec.action_shape)
        self.low, self.high = low, high
        self.scale, self.center = (high - low) / 2, (high + low) / 2
        self.random_steps = random_steps
        self._random = random_steps > 0

    def forward(self, observations: Tensor, noise: Any, explore: bool) -> dict[str, Tensor]:
        mean, log_std = self.network(observations)
        squashed = squashed_gaussian(mean, log_std, noise)[0] if explore else ops.tanh(mean)
        return {"action": ops.add(ops.multiply(squashed, self.scale), self.center)}

    def noise(self, rng: np.random.Generator, batch: int, explore: bool) -> Any:
        if not explore:
            return None
        return rng.standard_normal((batch, *self.spec.action_shape), dtype=np.float32)

    def act(self, observations: np.ndarray, rng: np.random.Generator,
            explore: bool = True) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        if explore and self._random:
            shape = (len(observations), *self.spec.action_shape)
            return rng.uniform(self.low, self.high, shape).astype(np.float32), {}
        return super().act(observations, rng, explore)

    def set_progress(self, env_steps: int) -> None:
        self._random = env_steps < self.random_steps
