"""The action distributions, as tensor functions that run eagerly and inside compiled graphs
(policies' forward passes and learners' losses use the same ones).

Sampling takes its randomness as an argument — noise drawn on the host by the actor's NumPy
generator — so a compiled forward pass is a pure function of the weights, the observations
and the noise: a categorical sample is ``argmax(logits + gumbel)`` (the Gumbel-max trick),
a Gaussian one ``mean + std * normal``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from mskernel import int32, ops
from mskernel_sdk import Tensor

__all__ = [
    "categorical_entropy", "categorical_log_prob", "categorical_sample", "gaussian_log_prob",
    "gumbel_noise", "squashed_gaussian",
]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def gumbel_noise(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Standard Gumbel noise (float32) for :func:`categorical_sample`."""
    uniform = rng.random(shape, dtype=np.float32)
    return -np.log(-np.log(np.maximum(uniform, np.float32(1e-20))))


def categorical_sample(logits: Any, gumbel: Any) -> Tensor:
    """A sample of each row's categorical distribution (int32), given Gumbel noise of the
    logits' shape."""
    return ops.astype(ops.argmax(ops.add(logits, gumbel), axis=-1), int32)


def categorical_log_prob(logits: Any, actions: Any) -> Tensor:
    """``log p(action)`` of each row (``logits`` ``[B, n]``, integer ``actions`` ``[B]``)."""
    log_probs = ops.log_softmax(logits, -1)
    index = ops.expand_dims(ops.astype(actions, int32), -1)
    return ops.squeeze(ops.take_along_axis(log_probs, index, -1), -1)


def categorical_entropy(logits: Any) -> Tensor:
    """The entropy of each row's categorical distribution."""
    log_probs = ops.log_softmax(logits, -1)
    return ops.negative(ops.sum(ops.multiply(ops.exp(log_probs), log_probs), -1))


def gaussian_log_prob(mean: Any, log_std: Any, x: Any) -> Tensor:
    """``log N(x; mean, exp(log_std)^2)`` summed over the last axis (independent
    dimensions)."""
    z = ops.multiply(ops.subtract(x, mean), ops.exp(ops.negative(log_std)))
    per_dim = ops.subtract(ops.negative(ops.add(ops.multiply(ops.square(z), 0.5), log_std)),
                           _LOG_SQRT_2PI)
    return ops.sum(per_dim, -1)


def squashed_gaussian(mean: Any, log_std: Any, noise: Any) -> tuple[Tensor, Tensor]:
    """A reparameterised sample ``tanh(mean + std * noise)`` in ``(-1, 1)`` and its log
    density, corrected for the squashing (Haarnoja et al., 2018, appendix C)::

        log pi(a) = log N(u) - sum log(1 - tanh(u)^2 + 1e-6)
    """
    u = ops.add(mean, ops.multiply(ops.exp(log_std), noise))
    action = ops.tanh(u)
    correction = ops.sum(ops.log(ops.add(ops.subtract(1.0, ops.square(action)), 1e-6)), -1)
    return action, ops.subtract(gaussian_log_prob(mean, log_std, u), correction)
