"""Label differential privacy by randomized response (Warner, 1965; Ghazi et al., "Deep
Learning with Label Differential Privacy", 2021): each label is kept with probability
``e^ε / (e^ε + K − 1)`` and otherwise replaced by one of the other ``K − 1`` classes
uniformly, which makes the labels — and everything trained from them, the gradients the
label party sends included — ε-label-DP."""

from __future__ import annotations

import math

import numpy as np


def keep_probability(epsilon: float, classes: int) -> float:
    return math.exp(epsilon) / (math.exp(epsilon) + classes - 1)


def randomized_response(labels: np.ndarray, classes: int, epsilon: float,
                        rng: np.random.Generator) -> np.ndarray:
    """ε-label-DP copies of integer ``labels`` in ``[0, classes)``."""
    if epsilon <= 0:
        raise ValueError(f"randomized_response: epsilon must be positive, got {epsilon}")
    labels = np.asarray(labels)
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        raise ValueError(f"randomized_response: labels must lie in [0, {classes})")
    flip = rng.random(labels.shape) >= keep_probability(epsilon, classes)
    shift = rng.integers(1, classes, size=labels.shape)  # another class, uniformly
    return np.where(flip, (labels + shift) % classes, labels).astype(labels.dtype)
