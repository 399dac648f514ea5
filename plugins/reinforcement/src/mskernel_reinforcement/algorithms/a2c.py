"""A2C (Mnih et al., 2016, synchronous): one gradient step per rollout of ``n_steps`` from
every environment, on the policy gradient with GAE advantages (``gae_lambda = 1``: n-step
returns), a value loss and an entropy bonus, with RMSprop::

    loss = -mean(A * log_prob) + vf_coef * mean((returns - V)^2) - ent_coef * mean(entropy)

The hyperparameters' defaults are those of Stable-Baselines3's A2C.
"""

from __future__ import annotations

from typing import Any, Literal, Sequence

from mskernel import nn, ops
from mskernel_sdk import Tensor
from pydantic import Field

from .actor_critic import ActorCriticAlgorithm, ActorCriticConfig, ActorCriticLearner
from .base import Learner, Plan

__all__ = ["A2C", "A2CConfig", "A2CLearner"]


class A2CConfig(ActorCriticConfig):
    """``rms_prop_eps`` and ``alpha``: RMSprop's epsilon and decay."""

    name: Literal["a2c"] = "a2c"
    learning_rate: float = Field(7e-4, gt=0)
    n_steps: int = Field(5, ge=1)
    gae_lambda: float = Field(1.0, ge=0, le=1)
    normalize_advantage: bool = False
    rms_prop_eps: float = Field(1e-5, gt=0)
    alpha: float = Field(0.99, gt=0, lt=1)


class A2CLearner(ActorCriticLearner):
    def __init__(self, config: A2CConfig, plan: Plan) -> None:
        super().__init__(config, plan, epochs=1, batch_size=config.n_steps * plan.envs)

    def make_optimizer(self, params: Sequence[Any]) -> nn.Optimizer:
        return nn.RMSProp(params, learning_rate=self.config.learning_rate,
                          decay=self.config.alpha, epsilon=self.config.rms_prop_eps)

    def policy_loss(self, log_prob: Tensor, old_log_prob: Tensor, advantages: Tensor,
                    *hyperparameters: Tensor) -> tuple[Tensor, ...]:
        return (ops.negative(ops.mean(ops.multiply(advantages, log_prob))),)


class A2C(ActorCriticAlgorithm):
    name = "a2c"
    Config = A2CConfig

    def learner(self, plan: Plan) -> Learner:
        return A2CLearner(self.config, plan)
