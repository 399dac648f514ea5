"""PPO (Schulman et al., 2017): the clipped surrogate objective, GAE, a value loss and an
entropy bonus, several epochs of minibatch updates per rollout, on vectorised environments.

Per minibatch, with ``r = exp(log_prob - old_log_prob)`` and normalised advantages ``A``::

    policy_loss = -mean(min(r * A, clip(r, 1 - eps, 1 + eps) * A))
    loss        = policy_loss + vf_coef * mean((returns - V)^2) - ent_coef * mean(entropy)

The hyperparameters' defaults are those of Stable-Baselines3's PPO.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from mskernel import ops
from mskernel_sdk import Tensor
from pydantic import Field, model_validator

from .actor_critic import ActorCriticAlgorithm, ActorCriticConfig, ActorCriticLearner
from .base import Learner, Plan

__all__ = ["PPO", "PPOConfig", "PPOLearner"]


class PPOConfig(ActorCriticConfig):
    """``batch_size``: the minibatch; ``n_epochs``: passes over each rollout;
    ``clip_range``: the ratio's clipping ``eps`` (decayed linearly to 0 over the run with
    ``anneal_clip_range``)."""

    name: Literal["ppo"] = "ppo"
    batch_size: int = Field(64, ge=1)
    n_epochs: int = Field(10, ge=1)
    clip_range: float = Field(0.2, gt=0)
    anneal_clip_range: bool = False

    @model_validator(mode="after")
    def _minibatches(self) -> "PPOConfig":
        if self.batch_size < 2 and self.normalize_advantage:
            raise ValueError("normalize_advantage needs minibatches of at least 2 steps")
        return self


class PPOLearner(ActorCriticLearner):
    policy_metrics = ("approx_kl", "clip_fraction")

    def __init__(self, config: PPOConfig, plan: Plan) -> None:
        super().__init__(config, plan, config.n_epochs, config.batch_size)

    def hyperparameters(self, progress: float) -> tuple[np.float32, ...]:
        clip = self.config.clip_range
        return (np.float32(clip * (1.0 - progress) if self.config.anneal_clip_range else clip),)

    def policy_loss(self, log_prob: Tensor, old_log_prob: Tensor, advantages: Tensor,
                    *hyperparameters: Tensor) -> tuple[Tensor, ...]:
        (clip,) = hyperparameters
        log_ratio = ops.subtract(log_prob, old_log_prob)
        ratio = ops.exp(log_ratio)
        clipped = ops.clip(ratio, ops.subtract(1.0, clip), ops.add(1.0, clip))
        loss = ops.negative(ops.mean(ops.minimum(ops.multiply(ratio, advantages),
                                                 ops.multiply(clipped, advantages))))
        # diagnostics (no gradient flows into the loss through them)
        approx_kl = ops.mean(ops.subtract(ops.subtract(ratio, 1.0), log_ratio))
        clip_fraction = ops.mean(ops.astype(ops.greater(ops.abs(ops.subtract(ratio, 1.0)),
                                                        clip), "float32"))
        return loss, approx_kl, clip_fraction


class PPO(ActorCriticAlgorithm):
    name = "ppo"
    Config = PPOConfig

    def learner(self, plan: Plan) -> Learner:
        return PPOLearner(self.config, plan)
