"""DQN (Mnih et al., 2015) with a target network, experience replay (uniform or prioritised,
Schaul et al., 2016), an epsilon-greedy schedule, and optionally double DQN (van Hasselt et
al., 2016).

Every ``train_freq`` steps of each environment the transitions go into the replay buffer, and
once more than ``learning_starts`` steps were taken, ``gradient_steps`` updates follow, each
one call of a compiled graph::

    target ← (1 − c) · target + c · online              c = tau when an update is due, else 0
    a*     = argmax_a Q_online(s', a)   (double)   or   argmax_a Q_target(s', a)
    y      = r + gamma · (1 − terminated) · Q_target(s', a*)
    loss   = mean(w · huber(Q_online(s, a) − y))         w: importance weights (1: uniform)

then the clipped gradients' Adam step.  The target network is updated every
``target_update_interval`` environment steps (``tau = 1``: copied), as in Stable-Baselines3,
whose defaults these are; with prioritised replay the sampled transitions' priorities become
``|Q_online(s, a) − y|``, and ``beta`` rises linearly to 1 over the run.
"""

from __future__ import annotations

from typing import Literal, Sequence

import mskernel
import numpy as np
from mskernel import int32, nn, ops
from mskernel_sdk import Tensor
from pydantic import Field

from ..actor import Trajectory
from ..config import AlgorithmConfig
from ..networks import QNetwork
from ..policy import EpsilonGreedyPolicy, LinearSchedule, Policy
from ..replay import PrioritizedReplayBuffer, ReplayBuffer
from ..updates import clip_by_global_norm, update_target
from .base import Algorithm, Learner, Plan

__all__ = ["DQN", "DQNConfig", "DQNLearner", "transition_fields", "transitions"]


class DQNConfig(AlgorithmConfig):
    """``train_freq``: steps of each environment between learning phases;
    ``gradient_steps``: updates per phase; ``target_update_interval``: environment steps
    between target updates; ``exploration_fraction``: the part of the run over which epsilon
    falls from ``exploration_initial_eps`` to ``exploration_final_eps``."""

    name: Literal["dqn"] = "dqn"
    learning_rate: float = Field(1e-4, gt=0)
    buffer_size: int = Field(1_000_000, ge=1)
    learning_starts: int = Field(100, ge=0)
    batch_size: int = Field(32, ge=1)
    tau: float = Field(1.0, gt=0, le=1)
    gamma: float = Field(0.99, ge=0, le=1)
    train_freq: int = Field(4, ge=1)
    gradient_steps: int = Field(1, ge=1)
    target_update_interval: int = Field(10_000, ge=1)
    exploration_fraction: float = Field(0.1, ge=0, le=1)
    exploration_initial_eps: float = Field(1.0, ge=0, le=1)
    exploration_final_eps: float = Field(0.05, ge=0, le=1)
    max_grad_norm: float = Field(10.0, gt=0)
    double: bool = False
    prioritized: bool = False
    priority_alpha: float = Field(0.6, ge=0)
    priority_beta: float = Field(0.4, ge=0, le=1)
    hidden_sizes: tuple[int, ...] = (64, 64)
    activation: str = "relu"


def transition_fields(observation_shape: tuple[int, ...], action_shape: tuple[int, ...],
                      action_dtype: type) -> dict[str, tuple[tuple[int, ...], type]]:
    """The replay buffer's fields for transitions of this shape."""
    return {"obs": (observation_shape, np.float32), "action": (action_shape, action_dtype),
            "reward": ((), np.float32), "next_obs": (observation_shape, np.float32),
            "terminated": ((), np.float32)}


def transitions(trajectories: Sequence[Trajectory]) -> dict[str, np.ndarray]:
    """The trajectories' steps as one batch of transitions (rows ``[steps, ...]``).  Only
    termination stops bootstrapping: a truncated episode's last transition keeps its true
    next observation."""
    def rows(arrays: list[np.ndarray]) -> np.ndarray:
        return np.concatenate([a.reshape(-1, *a.shape[2:]) for a in arrays])

    return {"obs": rows([t.observations for t in trajectories]),
            "action": rows([t.actions for t in trajectories]),
            "reward": rows([t.rewards for t in trajectories]),
            "next_obs": rows([t.next_observations for t in trajectories]),
            "terminated": rows([t.terminated for t in trajectories]).astype(np.float32)}


def huber(x: Tensor) -> Tensor:
    """Huber's loss with ``delta = 1`` (PyTorch's ``smooth_l1_loss``)."""
    magnitude = ops.abs(x)
    return ops.where(ops.less(magnitude, 1.0), ops.multiply(ops.square(x), 0.5),
                     ops.subtract(magnitude, 0.5))


class DQNLearner(Learner):
    def __init__(self, config: DQNConfig, plan: Plan) -> None:
        self.config, self.plan = config, plan
        spec = plan.spec
        self.online = QNetwork(spec.observation_size, spec.action_count, config.hidden_sizes,
                               config.activation)
        self.target = QNetwork(spec.observation_size, spec.action_count, config.hidden_sizes,
                               config.activation)
        for param in self.target.get_parameters():
            param.requires_grad = False
        update_target(self.target, self.online, 1.0)
        self.params = tuple(self.online.trainable_params())
        self.optimizer = nn.Adam(self.params, learning_rate=config.learning_rate)
        fields = transition_fields(spec.observation_shape, (), np.int32)
        if config.prioritized:
            self.buffer: ReplayBuffer = PrioritizedReplayBuffer(
                config.buffer_size, fields, config.priority_alpha, config.priority_beta,
                seed=plan.seed)
        else:
            self.buffer = ReplayBuffer(config.buffer_size, fields, seed=plan.seed)
        self._step = mskernel.jit(self._update)
        self.env_steps = 0

    @property
    def acting_network(self) -> nn.Cell:
        return self.online

    @property
    def state(self) -> nn.Cell:
        return nn.CellList([self.online, self.target, self.optimizer])

    def _loss(self, obs: Tensor, actions: Tensor, rewards: Tensor, next_obs: Tensor,
              terminated: Tensor, weights: Tensor) -> tuple[Tensor, Tensor]:
        config = self.config
        next_target = self.target(next_obs)
        chooser = self.online(next_obs) if config.double else next_target
        best = ops.expand_dims(ops.astype(ops.argmax(chooser, axis=-1), int32), -1)
        next_q = ops.squeeze(ops.take_along_axis(next_target, best, -1), -1)
        y = mskernel.stop_gradient(
            rewards + config.gamma * ops.multiply(ops.subtract(1.0, terminated), next_q))
        index = ops.expand_dims(actions, -1)
        q = ops.squeeze(ops.take_along_axis(self.online(obs), index, -1), -1)
        errors = ops.subtract(q, y)
        return ops.mean(ops.multiply(weights, huber(errors))), errors

    def _update(self, obs: Tensor, actions: Tensor, rewards: Tensor, next_obs: Tensor,
                terminated: Tensor, weights: Tensor, target_coefficient: Tensor,
                ) -> tuple[Tensor, Tensor]:
        update_target(self.target, self.online, target_coefficient)
        (loss, errors), grads = mskernel.value_and_grad(
            self._loss, None, weights=self.params, has_aux=True)(
            obs, actions, rewards, next_obs, terminated, weights)
        self.optimizer(clip_by_global_norm(grads, self.config.max_grad_norm))
        return loss, errors

    def learn(self, trajectories: Sequence[Trajectory], env_steps: int) -> dict[str, float]:
        config = self.config
        self.buffer.add(**transitions(trajectories))
        interval = config.target_update_interval
        due = self.env_steps // interval != env_steps // interval
        self.env_steps = env_steps
        if env_steps <= config.learning_starts:
            return {}
        if isinstance(self.buffer, PrioritizedReplayBuffer):
            progress = min(1.0, env_steps / self.plan.total_steps)
            self.buffer.beta = config.priority_beta + progress * (1.0 - config.priority_beta)
        losses = []
        for k in range(config.gradient_steps):
            batch = self.buffer.sample(config.batch_size)
            data = batch.data
            coefficient = np.float32(config.tau if due and k == 0 else 0.0)
            loss, errors = self._step(data["obs"], data["action"], data["reward"],
                                      data["next_obs"], data["terminated"], batch.weights,
                                      coefficient)
            if isinstance(self.buffer, PrioritizedReplayBuffer):
                self.buffer.update_priorities(batch.indices, np.abs(errors.numpy()))
            losses.append(float(loss))
        return {"loss": float(np.mean(losses)), "replay": float(len(self.buffer))}


class DQN(Algorithm):
    name = "dqn"
    Config = DQNConfig

    @property
    def steps_per_collect(self) -> int:
        return int(self.config.train_freq)

    def policy(self, plan: Plan) -> Policy:
        config = self.config
        network = QNetwork(plan.spec.observation_size, plan.spec.action_count,
                           config.hidden_sizes, config.activation)
        schedule = LinearSchedule(config.exploration_initial_eps, config.exploration_final_eps,
                                  config.exploration_fraction, plan.total_steps)
        return EpsilonGreedyPolicy(network, plan.spec, schedule)

    def learner(self, plan: Plan) -> Learner:
        return DQNLearner(self.config, plan)
