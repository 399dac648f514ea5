"""``Actor``: steps an environment with a policy and records what happened, as a
``Trajectory`` of arrays.

An actor is all a process needs to gather experience: its own :class:`~.Environment` (a
batch of copies), its own policy (a network of the learner's architecture, whose weights the
learner sends) and its own seeded random generator.  The same class runs in the learner's
process and in actor processes (:mod:`mskernel_reinforcement.execution`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from .environment import Environment
from .policy import Policy

__all__ = ["Actor", "Trajectory"]


@dataclass
class Trajectory:
    """``T`` steps of ``N`` environments (arrays ``[T, N, ...]``): the observations acted on,
    the actions, rewards, ``terminated`` / ``truncated`` flags and true next observations;
    the policy's extras per step (``"log_prob"``, ``"value"`` …); for policies with a value
    function, ``bootstrap`` — the value of each step's next observation, computed where an
    episode was truncated and at the last step (zeros elsewhere); and the returns and
    lengths of the episodes that ended during these steps."""

    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    next_observations: np.ndarray
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    bootstrap: Optional[np.ndarray] = None
    episode_returns: np.ndarray = field(default_factory=lambda: np.zeros(0))
    episode_lengths: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    actor: int = 0

    @property
    def steps(self) -> int:
        """Environment steps recorded (``T * N``)."""
        return int(self.rewards.size)

    @staticmethod
    def concatenate(parts: Sequence["Trajectory"]) -> "Trajectory":
        """Trajectories of equal length side by side: ``[T, N1 + N2 + ..., ...]``."""
        if len(parts) == 1:
            return parts[0]
        lengths = {len(p.rewards) for p in parts}
        if len(lengths) != 1:
            raise ValueError(f"trajectories of different lengths {sorted(lengths)} cannot be "
                             "joined")

        def join(arrays: Sequence[np.ndarray]) -> np.ndarray:
            return np.concatenate(arrays, axis=1)

        bootstrap = None if parts[0].bootstrap is None else join([p.bootstrap for p in parts])
        return Trajectory(
            join([p.observations for p in parts]), join([p.actions for p in parts]),
            join([p.rewards for p in parts]), join([p.terminated for p in parts]),
            join([p.truncated for p in parts]), join([p.next_observations for p in parts]),
            {k: join([p.extras[k] for p in parts]) for k in parts[0].extras}, bootstrap,
            np.concatenate([p.episode_returns for p in parts]),
            np.concatenate([p.episode_lengths for p in parts]), parts[0].actor)


class Actor:
    """Collects experience from ``env`` with ``policy``, exploring, with randomness from a
    generator seeded by ``seed``.  ``index`` names the actor in reports."""

    def __init__(self, env: Environment, policy: Policy, seed: Optional[int] = None,
                 index: int = 0) -> None:
        self.env = env
        self.policy = policy
        self.rng = np.random.default_rng(seed)
        self.index = index
        self.env.reset(seed=None if seed is None else int(seed % 2**31))

    def collect(self, steps: int) -> Trajectory:
        """Step every environment ``steps`` times (``steps * num_envs`` environment steps)."""
        if steps < 1:
            raise ValueError(f"Actor.collect: steps must be at least 1, got {steps}")
        n, spec = self.env.num_envs, self.env.spec
        obs_shape = (steps, n, *spec.observation_shape)
        observations = np.empty(obs_shape, np.float32)
        next_observations = np.empty(obs_shape, np.float32)
        rewards = np.empty((steps, n), np.float32)
        terminated = np.empty((steps, n), bool)
        truncated = np.empty((steps, n), bool)
        bootstrap = np.zeros((steps, n), np.float32) if self.policy.has_values else None
        actions: Optional[np.ndarray] = None
        extras: dict[str, np.ndarray] = {}
        obs = self.env.observations
        for t in range(steps):
            action, step_extras = self.policy.act(obs, self.rng, explore=True)
            if actions is None:
                actions = np.empty((steps, *action.shape), action.dtype)
                extras = {k: np.empty((steps, *v.shape), v.dtype) for k, v in step_extras.items()}
            step = self.env.step(action)
            observations[t], actions[t] = obs, action
            for k, v in step_extras.items():
                extras[k][t] = v
            rewards[t], terminated[t], truncated[t] = step.rewards, step.terminated, step.truncated
            next_observations[t] = step.next_observations
            if bootstrap is not None and (t == steps - 1 or step.truncated.any()):
                bootstrap[t] = self.policy.values(step.next_observations)
            obs = step.observations
        assert actions is not None
        episodes = self.env.pop_episodes()
        return Trajectory(observations, actions, rewards, terminated, truncated,
                          next_observations, extras, bootstrap, episodes.returns,
                          episodes.lengths, self.index)

    def close(self) -> None:
        self.env.close()
