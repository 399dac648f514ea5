"""On-policy actor-critic learning, shared by PPO and A2C: the actor-critic network, GAE over
the actors' trajectories, and minibatch epochs of one compiled update step.

The update step — forward pass, the loss (policy loss, value loss, entropy bonus), its
gradients, clipping by global norm and the optimizer's update — is one ``@mskernel.jit``
graph, compiled once (every minibatch has the same shape) and then called for every
minibatch.  Subclasses differ in their policy loss (:meth:`ActorCriticLearner.policy_loss`),
their optimizer and how many epochs and minibatches they run.
"""

from __future__ import annotations

from typing import Any, Sequence

import mskernel
import numpy as np
from mskernel import nn, ops
from mskernel_sdk import Tensor
from pydantic import Field

from ..actor import Trajectory
from ..config import AlgorithmConfig
from ..distributions import categorical_entropy, categorical_log_prob
from ..networks import ActorCritic
from ..policy import CategoricalPolicy, Policy
from ..returns import gae
from ..updates import clip_by_global_norm
from .base import Algorithm, Learner, Plan

__all__ = ["ActorCriticAlgorithm", "ActorCriticConfig", "ActorCriticLearner"]


class ActorCriticConfig(AlgorithmConfig):
    """Settings PPO and A2C share.  ``n_steps``: steps of each environment per update;
    ``anneal_learning_rate``: decay the rate linearly to 0 over the run; ``hidden_sizes`` and
    ``activation``: the policy's and the value function's MLPs (orthogonally initialised)."""

    learning_rate: float = Field(3e-4, gt=0)
    anneal_learning_rate: bool = False
    n_steps: int = Field(2048, ge=1)
    gamma: float = Field(0.99, ge=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    ent_coef: float = Field(0.0, ge=0)
    vf_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(0.5, gt=0)
    normalize_advantage: bool = True
    hidden_sizes: tuple[int, ...] = (64, 64)
    activation: str = "tanh"


class ActorCriticLearner(Learner):
    """GAE, then ``epochs`` passes over the rollout in shuffled minibatches of
    ``batch_size``, each one call of the compiled update step."""

    #: names of the values :meth:`policy_loss` returns after the loss itself
    policy_metrics: tuple[str, ...] = ()

    def __init__(self, config: ActorCriticConfig, plan: Plan, epochs: int,
                 batch_size: int) -> None:
        self.config = config
        self.plan = plan
        self.rng = np.random.default_rng(plan.seed)
        spec = plan.spec
        self.network = ActorCritic(spec.observation_size, spec.action_count,
                                   config.hidden_sizes, config.activation, "orthogonal",
                                   self.rng)
        self.params = tuple(self.network.trainable_params())
        self.optimizer = self.make_optimizer(self.params)
        rollout = config.n_steps * plan.envs
        if batch_size > rollout or rollout % batch_size:
            raise ValueError(f"{type(self).__name__}: batch_size {batch_size} must divide the "
                             f"rollout of n_steps × environments = {rollout} steps")
        self.epochs, self.batch_size = epochs, batch_size
        self._step = mskernel.jit(self._update)

    def make_optimizer(self, params: Sequence[Any]) -> nn.Optimizer:
        return nn.Adam(params, learning_rate=self.config.learning_rate, eps=1e-5)

    def policy_loss(self, log_prob: Tensor, old_log_prob: Tensor, advantages: Tensor,
                    *hyperparameters: Tensor) -> tuple[Tensor, ...]:
        """The policy's loss on a minibatch, then the values named by
        :attr:`policy_metrics`."""
        raise NotImplementedError

    def hyperparameters(self, progress: float) -> tuple[np.float32, ...]:
        """Scalars the policy loss takes at ``progress`` (the run's fraction done) — inputs
        of the compiled step, so changing them does not recompile it."""
        return ()

    @property
    def acting_network(self) -> nn.Cell:
        return self.network

    @property
    def state(self) -> nn.Cell:
        return nn.CellList([self.network, self.optimizer])

    def _loss(self, observations: Tensor, actions: Tensor, old_log_prob: Tensor,
              advantages: Tensor, returns: Tensor,
              *hyperparameters: Tensor) -> tuple[Tensor, tuple[Tensor, ...]]:
        config = self.config
        logits, values = self.network(observations)
        log_prob = categorical_log_prob(logits, actions)
        if config.normalize_advantage:
            centred = ops.subtract(advantages, ops.mean(advantages))
            advantages = ops.divide(centred, ops.add(ops.std(advantages, ddof=1), 1e-8))
        policy_loss, *extra = self.policy_loss(log_prob, old_log_prob, advantages,
                                               *hyperparameters)
        value_loss = ops.mean(ops.square(ops.subtract(returns, values)))
        entropy = ops.mean(categorical_entropy(logits))
        loss = policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy
        return loss, (policy_loss, value_loss, entropy, *extra)

    def _update(self, *batch: Tensor) -> tuple[Tensor, ...]:
        (loss, metrics), grads = mskernel.value_and_grad(
            self._loss, None, weights=self.params, has_aux=True)(*batch)
        self.optimizer(clip_by_global_norm(grads, self.config.max_grad_norm))
        return (loss, *metrics)

    def learn(self, trajectories: Sequence[Trajectory], env_steps: int) -> dict[str, float]:
        config = self.config
        trajectory = Trajectory.concatenate(trajectories)
        assert trajectory.bootstrap is not None
        advantages, returns = gae(trajectory.rewards, trajectory.extras["value"],
                                  trajectory.bootstrap, trajectory.terminated,
                                  trajectory.truncated, config.gamma, config.gae_lambda)
        progress = min(1.0, env_steps / self.plan.total_steps)
        if config.anneal_learning_rate:
            rate = self.optimizer.param_groups[0]["lr"]
            rate.assign_value(np.float32(config.learning_rate * (1.0 - progress)))
        count = trajectory.steps
        columns = (trajectory.observations.reshape(count, -1),
                   trajectory.actions.reshape(count).astype(np.int32),
                   trajectory.extras["log_prob"].reshape(count),
                   advantages.reshape(count), returns.reshape(count))
        hyper = self.hyperparameters(progress)
        outputs = []
        for _ in range(self.epochs):
            order = self.rng.permutation(count)
            for start in range(0, count, self.batch_size):
                rows = order[start:start + self.batch_size]
                outputs.append(self._step(*(c[rows] for c in columns), *hyper))
        names = ("loss", "policy_loss", "value_loss", "entropy", *self.policy_metrics)
        means = np.mean([[float(v) for v in out] for out in outputs], axis=0)
        return dict(zip(names, means.tolist()))


class ActorCriticAlgorithm(Algorithm):
    """PPO's and A2C's common parts: a categorical policy over an actor-critic network."""

    @property
    def steps_per_collect(self) -> int:
        return int(self.config.n_steps)

    def policy(self, plan: Plan) -> Policy:
        config = self.config
        network = ActorCritic(plan.spec.observation_size, plan.spec.action_count,
                              config.hidden_sizes, config.activation, "orthogonal",
                              np.random.default_rng(plan.seed))
        return CategoricalPolicy(network, plan.spec)

