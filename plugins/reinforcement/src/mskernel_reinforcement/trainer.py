"""``Trainer``: runs an algorithm as its configuration says — actors collect, the learner
learns, weights go back to the actors every ``broadcast_interval`` updates — evaluates the
greedy policy on the way, and saves it.

    trainer = mskernel.rl.Trainer("ppo_cartpole.toml")     # or a TrainerConfig, or a dict
    result = trainer.train()
    print(result.solved_at, result.evaluations[-1].mean)
    trainer.save("ppo_cartpole.ckpt")

    policy, config, _ = mskernel.rl.load_policy("ppo_cartpole.ckpt")   # later, anywhere
    print(mskernel.rl.evaluate(policy, config.env, episodes=100).mean)

Progress is logged through :mod:`logging` (the ``"mskernel.rl"`` logger, level INFO).
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, NamedTuple, Optional, Union

import mskernel
import numpy as np

from .algorithms import Algorithm, Plan, algorithm_class
from .config import EnvConfig, TrainerConfig, load_config
from .environment import Environment
from .execution import ActorFailure, ActorSetup, actor_group, uses_mpi
from .execution.mpi import mpi_world, serve_rank
from .policy import Policy

__all__ = ["Evaluation", "SavedPolicy", "Trainer", "TrainingResult", "evaluate", "load_policy"]

logger = logging.getLogger("mskernel.rl")

#: metadata keys of a saved policy
CONFIG_KEY, STEPS_KEY = "mskernel_rl.config", "mskernel_rl.env_steps"


@dataclass(frozen=True)
class Evaluation:
    """Greedy returns over ``episodes`` episodes, taken after ``env_steps`` training steps."""

    env_steps: int
    mean: float
    std: float
    episodes: int


@dataclass
class TrainingResult:
    """What a run did: environment steps and updates taken, wall time (and the part of it
    spent evaluating), the evaluations, the environment step of the first evaluation reaching
    the target (``solved_at``, ``None`` if none did), the returns of the last 100 training
    episodes, and the actor failures it recovered from."""

    env_steps: int = 0
    updates: int = 0
    wall_time: float = 0.0
    evaluation_time: float = 0.0
    solved_at: Optional[int] = None
    evaluations: list[Evaluation] = field(default_factory=list)
    recent_returns: list[float] = field(default_factory=list)
    failures: list[ActorFailure] = field(default_factory=list)

    @property
    def steps_per_second(self) -> float:
        """Environment steps per second of training (evaluations left out)."""
        training = self.wall_time - self.evaluation_time
        return self.env_steps / training if training > 0 else math.nan


class Trainer:
    """Trains ``config.algorithm`` on ``config.env`` (see the module docstring).  The learner
    is built at once (seeded by ``config.seed``), the actors when :meth:`train` starts."""

    def __init__(self, config: Union[TrainerConfig, Mapping[str, Any], str, Path]) -> None:
        if not isinstance(config, TrainerConfig):
            config = load_config(config if isinstance(config, (str, Path)) else dict(config))
        self.config = config
        self.algorithm: Algorithm = algorithm_class(config.algorithm.name)(config.algorithm)
        self.plan = plan_of(config)
        self.algorithm.check(self.plan.spec)
        mskernel.random.set_seed(config.seed)
        self.learner = self.algorithm.learner(self.plan)
        self.env_steps = 0
        self._greedy: Optional[Policy] = None

    def train(self) -> TrainingResult:
        """Run until ``total_steps`` environment steps, or until an evaluation reaches the
        target.  Returns a :class:`TrainingResult`.  With actors on MPI ranks, rank 0 trains
        and the other ranks run actors; every rank returns the result."""
        config, result = self.config, TrainingResult()
        setup = ActorSetup(type(self.algorithm), self.algorithm.config, self.plan, config.env,
                           config.seed)
        if uses_mpi(config.execution) and mpi_world().Get_rank() != 0:
            return serve_rank(setup, config.execution)   # type: ignore[no-any-return]
        interval = config.evaluation.interval
        next_evaluation = interval or config.total_steps
        recent: deque[float] = deque(maxlen=100)
        start = time.perf_counter()
        with actor_group(setup, config.execution) as actors:
            actors.broadcast(self.learner.policy_weights())
            while self.env_steps < config.total_steps:
                trajectories = actors.collect(self.algorithm.steps_per_collect, self.env_steps)
                self.env_steps += sum(t.steps for t in trajectories)
                metrics = self.learner.learn(trajectories, self.env_steps)
                result.updates += 1
                if result.updates % config.execution.broadcast_interval == 0:
                    actors.broadcast(self.learner.policy_weights())
                for t in trajectories:
                    recent.extend(t.episode_returns.tolist())
                self._log(result.updates, recent, metrics, start)
                if self.env_steps >= next_evaluation or self.env_steps >= config.total_steps:
                    next_evaluation += interval or config.total_steps
                    if self._evaluate_and_check(result):
                        break
            result.failures = list(actors.failures)
            result.env_steps = self.env_steps
            result.wall_time = time.perf_counter() - start
            result.recent_returns = list(recent)
            actors.close(result)
        return result

    def _evaluate_and_check(self, result: TrainingResult) -> bool:
        """Evaluate, record it, and say whether the target is reached."""
        start = time.perf_counter()
        evaluation = self.evaluate()
        result.evaluation_time += time.perf_counter() - start
        result.evaluations.append(evaluation)
        logger.info("evaluation at %d steps: mean return %.1f ± %.1f over %d episodes",
                    evaluation.env_steps, evaluation.mean, evaluation.std, evaluation.episodes)
        target = self.config.evaluation.target
        if target is not None and evaluation.mean >= target and result.solved_at is None:
            result.solved_at = self.env_steps
            return True
        return False

    def _log(self, updates: int, recent: deque[float], metrics: Mapping[str, float],
             start: float) -> None:
        if not logger.isEnabledFor(logging.INFO) or updates % 10:
            return
        mean = f"{np.mean(recent):.1f}" if recent else "-"
        rate = self.env_steps / max(time.perf_counter() - start, 1e-9)
        losses = ", ".join(f"{k} {v:.4g}" for k, v in metrics.items())
        logger.info("%d steps (%.0f/s), %d updates, training return %s; %s", self.env_steps,
                    rate, updates, mean, losses)

    @property
    def policy(self) -> Policy:
        """A policy with the learner's current weights (for greedy evaluation)."""
        if self._greedy is None:
            self._greedy = self.algorithm.policy(self.plan)
        self._greedy.load_weights(self.learner.policy_weights())
        return self._greedy

    def evaluate(self, episodes: Optional[int] = None) -> Evaluation:
        """The greedy policy's returns over ``episodes`` (default: the configuration's)."""
        settings = self.config.evaluation
        return evaluate(self.policy, self.config.env, episodes or settings.episodes,
                        settings.num_envs, seed=self.config.seed + 1_000_003,
                        env_steps=self.env_steps)

    def save(self, path: Union[str, Path]) -> None:
        """Save the acting network's weights with the run's configuration (atomically, as
        every mskernel checkpoint): :func:`load_policy` rebuilds the policy from the file
        alone."""
        mskernel.save_checkpoint(self.learner.acting_network, str(path), append_dict={
            CONFIG_KEY: self.config.to_json(), STEPS_KEY: int(self.env_steps)})


class SavedPolicy(NamedTuple):
    """What :func:`load_policy` returns: the policy, the run's configuration and the
    environment steps it was trained for."""

    policy: Policy
    config: TrainerConfig
    env_steps: int


def load_policy(path: Union[str, Path]) -> SavedPolicy:
    """The policy saved by :meth:`Trainer.save`, rebuilt from its configuration, with its
    weights loaded."""
    entries = mskernel.load_checkpoint(str(path))
    text = entries.pop(CONFIG_KEY, None)
    env_steps = entries.pop(STEPS_KEY, 0)
    if not isinstance(text, str):
        raise ValueError(f"{path}: not a policy saved by mskernel.rl (no {CONFIG_KEY!r})")
    config = TrainerConfig.model_validate_json(text)
    policy = algorithm_class(config.algorithm.name)(config.algorithm).policy(plan_of(config))
    policy.load_weights({name: value.numpy() for name, value in entries.items()})
    return SavedPolicy(policy, config, int(env_steps))


def evaluate(policy: Policy, env: Union[str, EnvConfig, Environment], episodes: int = 100,
             num_envs: int = 10, seed: int = 0, env_steps: int = 0) -> Evaluation:
    """Run ``policy`` greedily for ``episodes`` episodes on ``num_envs`` copies of ``env``
    (a gymnasium id, an :class:`EnvConfig` or an :class:`Environment`).  Each copy runs its
    share of the episodes to the end, so short episodes are not over-represented."""
    if episodes < 1:
        raise ValueError(f"evaluate: episodes must be at least 1, got {episodes}")
    owned = not isinstance(env, Environment)
    environment = _environment(env, min(num_envs, episodes)) if owned else env
    try:
        n = environment.num_envs
        wanted = np.array([episodes // n + (i < episodes % n) for i in range(n)])
        counts = np.zeros(n, np.int64)
        returns: list[float] = []
        rng = np.random.default_rng(seed)
        environment.pop_episodes()
        observations = environment.reset(seed=seed)
        while (counts < wanted).any():
            actions, _ = policy.act(observations, rng, explore=False)
            observations = environment.step(actions).observations
            ended = environment.pop_episodes()
            for i, value in zip(ended.envs, ended.returns):
                if counts[i] < wanted[i]:
                    counts[i] += 1
                    returns.append(float(value))
        return Evaluation(env_steps, float(np.mean(returns)), float(np.std(returns)), len(returns))
    finally:
        if owned:
            environment.close()


def plan_of(config: TrainerConfig) -> Plan:
    """The :class:`Plan` of a run (the environment's spec read from one copy of it)."""
    with _environment(config.env, num_envs=1) as probe:
        spec = probe.spec
    return Plan(spec, config.total_steps, config.execution.actors * config.env.num_envs,
                config.seed)


def _environment(env: Union[str, EnvConfig], num_envs: int) -> Environment:
    if isinstance(env, str):
        return Environment(env, num_envs)
    return Environment(env.id, num_envs, "sync", **env.kwargs)
