"""Advantages and returns of on-policy trajectories (on the host, in NumPy: a backward scan
over at most a few thousand steps, vectorised over the environments).

Generalised advantage estimation (Schulman et al., 2016), with the two ways an episode ends
kept apart: a *terminated* episode has no future (the next value is 0), a *truncated* one (a
time limit) does, estimated by the value of its final observation::

    next_value[t] = bootstrap[t]          if the episode ended at t, or t is the last step
                  = values[t + 1]         otherwise
    delta[t]      = rewards[t] + gamma * (1 - terminated[t]) * next_value[t] - values[t]
    adv[t]        = delta[t] + gamma * lam * (1 - done[t]) * adv[t + 1]      (adv[T] = 0)
    returns[t]    = adv[t] + values[t]

With ``lam = 1`` the returns are the discounted sums of rewards up to the end of the episode
or of the trajectory, bootstrapped there; with ``lam = 0`` one-step TD targets.
"""

from __future__ import annotations

import numpy as np

__all__ = ["gae"]


def gae(rewards: np.ndarray, values: np.ndarray, bootstrap: np.ndarray,
        terminated: np.ndarray, truncated: np.ndarray, gamma: float,
        lam: float) -> tuple[np.ndarray, np.ndarray]:
    """``(advantages, returns)``, each ``[T, N]`` float32, of ``T`` steps of ``N``
    environments.  ``values[t]`` is the value of the observation acted on at ``t``;
    ``bootstrap[t]`` the value of the step's next observation, read where the episode was
    truncated at ``t`` and at ``t = T - 1`` (elsewhere it may hold anything)."""
    rewards = np.asarray(rewards, np.float32)
    shape = rewards.shape
    for name, array in (("values", values), ("bootstrap", bootstrap),
                        ("terminated", terminated), ("truncated", truncated)):
        if np.shape(array) != shape:
            raise ValueError(f"gae: {name} has shape {list(np.shape(array))}, the rewards "
                             f"{list(shape)}")
    if not 0.0 <= gamma <= 1.0 or not 0.0 <= lam <= 1.0:
        raise ValueError(f"gae: gamma and lam must be in [0, 1], got {gamma} and {lam}")
    values = np.asarray(values, np.float32)
    alive = 1.0 - np.asarray(terminated, np.float32)
    done = np.asarray(terminated, bool) | np.asarray(truncated, bool)
    next_values = np.empty_like(values)
    next_values[:-1] = values[1:]
    next_values[-1] = 0.0
    ended = done.copy()
    ended[-1] = True
    next_values = np.where(ended, np.asarray(bootstrap, np.float32), next_values)
    deltas = rewards + gamma * alive * next_values - values
    carry = gamma * lam * (1.0 - done.astype(np.float32))
    advantages = np.empty_like(values)
    running = np.zeros(shape[1:], np.float32)
    for t in range(shape[0] - 1, -1, -1):
        running = deltas[t] + carry[t] * running
        advantages[t] = running
    return advantages, advantages + values
