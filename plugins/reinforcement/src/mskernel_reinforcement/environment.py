"""``Environment``: a batch of gymnasium environments stepped together, as arrays.

Whatever it wraps — a registered id, a ``gymnasium.Env``, a factory of them, or a gymnasium
vector environment — an :class:`Environment` steps ``num_envs`` copies at once through one of
gymnasium's vector environments (``SyncVectorEnv`` in this process or ``AsyncVectorEnv``, one
subprocess per copy), resetting each copy in the step that ends its episode (gymnasium's
``SAME_STEP`` autoreset).  A step returns the observations to act on next and, separately, the
true next observations of that step (the final ones where an episode ended), which off-policy
learners store and on-policy learners bootstrap from.

Observations must be vectors (a 1-d ``Box`` space; given as float32); actions ``Discrete``
or ``Box``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, NamedTuple, Optional, Union

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from mskernel_sdk import MskernelError

__all__ = ["EnvError", "EnvSpec", "Environment", "Episodes", "Step"]


class EnvError(MskernelError, ValueError):
    """An environment this plugin cannot step (its spaces or its vector settings)."""


@dataclass(frozen=True)
class EnvSpec:
    """What a policy needs to know of an environment: the observation shape, and the actions —
    ``"discrete"`` with ``action_count`` choices, or ``"continuous"`` vectors of
    ``action_shape`` between ``action_low`` and ``action_high``."""

    observation_shape: tuple[int, ...]
    action_kind: Literal["discrete", "continuous"]
    action_count: int = 0
    action_shape: tuple[int, ...] = ()
    action_low: tuple[float, ...] = ()
    action_high: tuple[float, ...] = ()

    @classmethod
    def from_spaces(cls, observation: gym.Space, action: gym.Space) -> "EnvSpec":
        if not isinstance(observation, gym.spaces.Box) or len(observation.shape) != 1:
            raise EnvError(f"observations must be vectors (a 1-d Box space), got {observation}"
                           "; wrap the environment in gymnasium.wrappers.FlattenObservation")
        obs_shape = tuple(int(d) for d in observation.shape)
        if isinstance(action, gym.spaces.Discrete):
            if int(action.start) != 0:
                raise EnvError(f"a Discrete action space must start at 0, got {action}")
            return cls(obs_shape, "discrete", action_count=int(action.n))
        if isinstance(action, gym.spaces.Box):
            if not (np.all(np.isfinite(action.low)) and np.all(np.isfinite(action.high))):
                raise EnvError(f"a continuous action space must be bounded, got {action}")
            return cls(obs_shape, "continuous", action_shape=tuple(int(d) for d in action.shape),
                       action_low=tuple(float(v) for v in action.low.ravel()),
                       action_high=tuple(float(v) for v in action.high.ravel()))
        raise EnvError(f"actions must be a Discrete or a Box space, got {action}")

    @property
    def observation_size(self) -> int:
        return int(np.prod(self.observation_shape))

    @property
    def action_size(self) -> int:
        """Logits per observation (discrete) or the action vector's length (continuous)."""
        return self.action_count if self.action_kind == "discrete" else int(
            np.prod(self.action_shape))


class Episodes(NamedTuple):
    """Episodes that ended: their ``returns``, ``lengths`` and the copy (``envs``) each ran
    in, in the order they ended."""

    returns: np.ndarray
    lengths: np.ndarray
    envs: np.ndarray


class Step(NamedTuple):
    """One step of every copy: ``observations`` to act on next (reset ones where an episode
    ended), ``rewards``, ``terminated`` and ``truncated`` flags, and ``next_observations`` —
    the step's true successors (the final observation where an episode ended)."""

    observations: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    next_observations: np.ndarray


EnvSource = Union[str, gym.Env, VectorEnv, Callable[[], gym.Env]]


class Environment:
    """``num_envs`` copies of an environment stepped together (see the module docstring).

    ``env`` is a gymnasium id (``kwargs`` go to ``gymnasium.make``), a factory returning a
    ``gymnasium.Env``, a ``gymnasium.Env`` (``num_envs`` must be 1), or a vector environment
    made with ``autoreset_mode=AutoresetMode.SAME_STEP``.  ``vectorization`` is ``"sync"``
    or ``"async"``.  ``seed`` seeds the first reset (copy ``i`` gets ``seed + i``).

    Finished episodes are counted as they end: :meth:`pop_episodes` returns those finished
    since it was last called.
    """

    def __init__(self, env: EnvSource, num_envs: int = 1,
                 vectorization: Literal["sync", "async"] = "sync", seed: Optional[int] = None,
                 **kwargs: Any) -> None:
        if num_envs < 1:
            raise EnvError(f"num_envs must be at least 1, got {num_envs}")
        self.vector = _vector_env(env, num_envs, vectorization, kwargs)
        self.num_envs = self.vector.num_envs
        self.spec = EnvSpec.from_spaces(self.vector.single_observation_space,
                                        self.vector.single_action_space)
        self._seed = seed
        self._observations: Optional[np.ndarray] = None
        self._returns = np.zeros(self.num_envs, np.float64)
        self._lengths = np.zeros(self.num_envs, np.int64)
        self._finished: list[tuple[int, float, int]] = []

    def reset(self, seed: Optional[int] = None) -> np.ndarray:
        """Reset every copy; returns the first observations ``[num_envs, *observation]``."""
        seed = self._seed if seed is None else seed
        observations, _ = self.vector.reset(seed=seed)
        self._returns[:] = 0
        self._lengths[:] = 0
        self._observations = _float32(observations)
        return self._observations

    @property
    def observations(self) -> np.ndarray:
        """The observations to act on next (resetting first if nothing was stepped yet)."""
        if self._observations is None:
            return self.reset()
        return self._observations

    def step(self, actions: np.ndarray) -> Step:
        if self._observations is None:
            self.reset()
        if self.spec.action_kind == "discrete":
            actions = np.asarray(actions, np.int64).reshape(self.num_envs)
        else:
            actions = np.asarray(actions, np.float32).reshape(
                (self.num_envs, *self.spec.action_shape))
        observations, rewards, terminated, truncated, info = self.vector.step(actions)
        observations = _float32(observations)
        rewards = np.asarray(rewards, np.float32)
        terminated = np.asarray(terminated, bool)
        truncated = np.asarray(truncated, bool)
        next_observations = observations
        done = terminated | truncated
        if done.any():
            next_observations = observations.copy()
            for i in np.flatnonzero(done):
                next_observations[i] = info["final_obs"][i]
        self._count(rewards, done)
        self._observations = observations
        return Step(observations, rewards, terminated, truncated, next_observations)

    def _count(self, rewards: np.ndarray, done: np.ndarray) -> None:
        self._returns += rewards
        self._lengths += 1
        for i in np.flatnonzero(done):
            self._finished.append((int(i), float(self._returns[i]), int(self._lengths[i])))
            self._returns[i] = 0
            self._lengths[i] = 0

    def pop_episodes(self) -> Episodes:
        """The episodes that ended since the last call."""
        envs, returns, lengths = zip(*self._finished) if self._finished else ((), (), ())
        self._finished.clear()
        return Episodes(np.asarray(returns, np.float64), np.asarray(lengths, np.int64),
                        np.asarray(envs, np.int64))

    def close(self) -> None:
        self.vector.close()

    def __enter__(self) -> "Environment":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Environment({self.vector!r}, num_envs={self.num_envs})"


def _float32(observations: Any) -> np.ndarray:
    return np.asarray(observations, np.float32)


def _vector_env(env: EnvSource, num_envs: int, vectorization: str,
                kwargs: dict[str, Any]) -> VectorEnv:
    if vectorization not in ("sync", "async"):
        raise EnvError(f"vectorization is 'sync' or 'async', got {vectorization!r}")
    if isinstance(env, VectorEnv):
        mode = env.metadata.get("autoreset_mode")
        if mode != AutoresetMode.SAME_STEP:
            raise EnvError(
                f"a vector environment must reset a copy in the step that ends its episode: "
                f"make it with autoreset_mode=AutoresetMode.SAME_STEP (it has {mode})")
        return env
    if isinstance(env, str):
        return gym.make_vec(env, num_envs=num_envs, vectorization_mode=vectorization,
                            vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP}, **kwargs)
    if isinstance(env, gym.Env):
        if num_envs != 1:
            raise EnvError("one gymnasium.Env instance is one environment: pass a "
                                   "factory (a function returning a new Env) for num_envs > 1")
        instance = env
        factories = [lambda: instance]
        vectorization = "sync"  # an existing instance stays in this process
    elif callable(env):
        factories = [env] * num_envs
    else:
        raise EnvError(f"expected a gymnasium id, Env, Env factory or vector "
                               f"environment, got {type(env).__name__}")
    vector_class = gym.vector.SyncVectorEnv if vectorization == "sync" \
        else gym.vector.AsyncVectorEnv
    return vector_class(factories, autoreset_mode=AutoresetMode.SAME_STEP)
