"""SAC (Haarnoja et al., 2018) for continuous actions: a squashed Gaussian actor, twin
critics with a Polyak-averaged target, and an automatically tuned entropy coefficient.

One update is one compiled graph, on a replay batch and host-drawn Gaussian noise for the
reparameterised samples ``a ~ pi(.|s)`` and ``a' ~ pi(.|s')`` (actions in ``[-1, 1]``)::

    alpha_loss  = -mean(log_alpha · (log pi(a|s) + target_entropy))       → log_alpha
    alpha       = exp(log_alpha)                                  (its value before the step)
    y           = r + gamma · (1 − terminated) · (min Q_target(s', a') − alpha · log pi(a'|s'))
    critic_loss = ½ · Σ_i mean((Q_i(s, a_buffer) − y)²)                 → both critics
    actor_loss  = mean(alpha · log pi(a|s) − min_i Q_i(s, a))            → the actor
    target      ← target + tau · (critics − target)

each loss followed by its optimizer's Adam step, in this order (the actor's loss sees the
updated critics), as Stable-Baselines3 does; its defaults are these.  For the first
``learning_starts`` steps actions are drawn uniformly from the action space.
"""

from __future__ import annotations

from typing import Literal, Sequence, Union

import mskernel
import numpy as np
from mskernel import nn, ops
from mskernel_sdk import Parameter, Tensor
from pydantic import Field

from ..actor import Trajectory
from ..config import AlgorithmConfig
from ..distributions import squashed_gaussian
from ..networks import SquashedGaussianActor, TwinQ
from ..policy import Policy, SquashedGaussianPolicy
from ..replay import ReplayBuffer
from ..updates import update_target
from .base import Algorithm, Learner, Plan
from .dqn import transition_fields, transitions

__all__ = ["SAC", "SACConfig", "SACLearner"]


class SACConfig(AlgorithmConfig):
    """``ent_coef``: ``"auto"`` (tuned, starting at ``initial_ent_coef``) or a fixed
    number; ``target_entropy``: ``"auto"`` (minus the action dimension) or a number."""

    name: Literal["sac"] = "sac"
    learning_rate: float = Field(3e-4, gt=0)
    buffer_size: int = Field(1_000_000, ge=1)
    learning_starts: int = Field(100, ge=0)
    batch_size: int = Field(256, ge=1)
    tau: float = Field(0.005, gt=0, le=1)
    gamma: float = Field(0.99, ge=0, le=1)
    train_freq: int = Field(1, ge=1)
    gradient_steps: int = Field(1, ge=1)
    ent_coef: Union[Literal["auto"], float] = "auto"
    initial_ent_coef: float = Field(1.0, gt=0)
    target_entropy: Union[Literal["auto"], float] = "auto"
    hidden_sizes: tuple[int, ...] = (256, 256)
    activation: str = "relu"


class SACLearner(Learner):
    def __init__(self, config: SACConfig, plan: Plan) -> None:
        self.config, self.plan = config, plan
        spec = plan.spec
        size, actions = spec.observation_size, spec.action_size
        self.actor = SquashedGaussianActor(size, actions, config.hidden_sizes, config.activation)
        self.critic = TwinQ(size, actions, config.hidden_sizes, config.activation)
        self.target = TwinQ(size, actions, config.hidden_sizes, config.activation)
        for param in self.target.get_parameters():
            param.requires_grad = False
        update_target(self.target, self.critic, 1.0)
        self.actor_params = tuple(self.actor.trainable_params())
        self.critic_params = tuple(self.critic.trainable_params())
        self.actor_optimizer = nn.Adam(self.actor_params, learning_rate=config.learning_rate)
        self.critic_optimizer = nn.Adam(self.critic_params, learning_rate=config.learning_rate)
        self.tune_alpha = config.ent_coef == "auto"
        alpha = config.initial_ent_coef if self.tune_alpha else float(config.ent_coef)
        self.log_alpha = Parameter(np.array(np.log(alpha), np.float32), name="log_alpha",
                                   requires_grad=self.tune_alpha)
        self.alpha_optimizer = nn.Adam([self.log_alpha], learning_rate=config.learning_rate)
        self.target_entropy = float(-actions if config.target_entropy == "auto"
                                    else config.target_entropy)
        low = np.asarray(spec.action_low, np.float32).reshape(spec.action_shape)
        high = np.asarray(spec.action_high, np.float32).reshape(spec.action_shape)
        self.center, self.scale = (high + low) / 2, (high - low) / 2
        self.buffer = ReplayBuffer(config.buffer_size,
                                   transition_fields(spec.observation_shape, spec.action_shape,
                                                     np.float32), seed=plan.seed)
        self.rng = np.random.default_rng(plan.seed)
        self._step = mskernel.jit(self._update)

    @property
    def acting_network(self) -> nn.Cell:
        return self.actor

    @property
    def state(self) -> nn.Cell:
        return nn.CellList([self.actor, self.critic, self.target, self.actor_optimizer,
                            self.critic_optimizer, self.alpha_optimizer])

    def _sample(self, obs: Tensor, noise: Tensor) -> tuple[Tensor, Tensor]:
        mean, log_std = self.actor(obs)
        return squashed_gaussian(mean, log_std, noise)

    def _alpha_loss(self, obs: Tensor, noise: Tensor) -> Tensor:
        _, log_prob = self._sample(obs, noise)
        entropy_gap = mskernel.stop_gradient(ops.add(log_prob, self.target_entropy))
        return ops.negative(ops.mean(ops.multiply(self.log_alpha, entropy_gap)))

    def _critic_loss(self, obs: Tensor, actions: Tensor, rewards: Tensor, next_obs: Tensor,
                     terminated: Tensor, next_noise: Tensor, alpha: Tensor) -> Tensor:
        next_actions, next_log_prob = self._sample(next_obs, next_noise)
        q1_next, q2_next = self.target(next_obs, next_actions)
        soft_next = ops.subtract(ops.minimum(q1_next, q2_next), ops.multiply(alpha, next_log_prob))
        y = mskernel.stop_gradient(ops.add(rewards, ops.multiply(
            ops.multiply(ops.subtract(1.0, terminated), self.config.gamma), soft_next)))
        q1, q2 = self.critic(obs, actions)
        return ops.multiply(ops.add(ops.mean(ops.square(ops.subtract(q1, y))),
                                    ops.mean(ops.square(ops.subtract(q2, y)))), 0.5)

    def _actor_loss(self, obs: Tensor, noise: Tensor, alpha: Tensor) -> Tensor:
        actions, log_prob = self._sample(obs, noise)
        q1, q2 = self.critic(obs, actions)
        return ops.mean(ops.subtract(ops.multiply(alpha, log_prob), ops.minimum(q1, q2)))

    def _update(self, obs: Tensor, actions: Tensor, rewards: Tensor, next_obs: Tensor,
                terminated: Tensor, noise: Tensor, next_noise: Tensor) -> tuple[Tensor, ...]:
        alpha = ops.exp(mskernel.stop_gradient(self.log_alpha))
        alpha_loss = ops.zeros(())
        if self.tune_alpha:
            alpha_loss, grads = mskernel.value_and_grad(
                self._alpha_loss, None, weights=(self.log_alpha,))(obs, noise)
            self.alpha_optimizer(grads)
        critic_loss, grads = mskernel.value_and_grad(
            self._critic_loss, None, weights=self.critic_params)(
            obs, actions, rewards, next_obs, terminated, next_noise, alpha)
        self.critic_optimizer(grads)
        actor_loss, grads = mskernel.value_and_grad(
            self._actor_loss, None, weights=self.actor_params)(obs, noise, alpha)
        self.actor_optimizer(grads)
        update_target(self.target, self.critic, self.config.tau)
        return critic_loss, actor_loss, alpha_loss, alpha

    def learn(self, trajectories: Sequence[Trajectory], env_steps: int) -> dict[str, float]:
        config = self.config
        batch = transitions(trajectories)
        batch["action"] = (batch["action"] - self.center) / self.scale  # the critics' [-1, 1]
        self.buffer.add(**batch)
        if env_steps <= config.learning_starts:
            return {}
        shape = (config.batch_size, *self.plan.spec.action_shape)
        outputs = []
        for _ in range(config.gradient_steps):
            data = self.buffer.sample(config.batch_size).data
            noise = self.rng.standard_normal((2, *shape), dtype=np.float32)
            outputs.append(self._step(data["obs"], data["action"], data["reward"],
                                      data["next_obs"], data["terminated"], noise[0], noise[1]))
        means = np.mean([[float(v) for v in out] for out in outputs], axis=0)
        return dict(zip(("critic_loss", "actor_loss", "alpha_loss", "alpha"), means.tolist()))


class SAC(Algorithm):
    name = "sac"
    Config = SACConfig
    action_kinds = ("continuous",)

    @property
    def steps_per_collect(self) -> int:
        return int(self.config.train_freq)

    def policy(self, plan: Plan) -> Policy:
        config = self.config
        network = SquashedGaussianActor(plan.spec.observation_size, plan.spec.action_size,
                                        config.hidden_sizes, config.activation)
        return SquashedGaussianPolicy(network, plan.spec, random_steps=config.learning_starts)

    def learner(self, plan: Plan) -> Learner:
        return SACLearner(self.config, plan)
