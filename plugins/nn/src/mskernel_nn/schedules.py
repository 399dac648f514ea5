"""Learning-rate schedules (MindSpore's ``nn.learning_rate_schedule``): cells mapping the
optimizer's step count to a learning rate.

A schedule is a :class:`~mskernel_nn.cell.Cell` whose ``construct(global_step)`` takes the
number of steps taken so far (an int32 scalar tensor, 0 at the first step) and returns the
learning rate as a float32 scalar tensor.  It is computed with tensor ops, so a compiled
training step computes the rate inside the graph, from the step count the optimizer keeps in
a Parameter, without recompiling as the rate changes.  Give one to an optimizer as its
``learning_rate``::

    lr = nn.CosineDecayLR(min_lr=1e-5, max_lr=1e-3, decay_steps=10_000)
    opt = nn.Adam(net.trainable_params(), learning_rate=lr)

Write your own by subclassing :class:`LearningRateSchedule` — a warm-up followed by a cosine
decay, say, returns ``ops.where(step < warmup, warm(step), cosine(step - warmup))``.

- ``ExponentialDecayLR(learning_rate, decay_rate, decay_steps, is_stair=False)``:
  ``lr · decay_rate^(step / decay_steps)``; with ``is_stair`` the exponent is floored — a
  step schedule dividing the rate every ``decay_steps`` steps.
- ``PiecewiseConstantLR(milestones, learning_rates)``: ``learning_rates[i]`` until step
  ``milestones[i]``.
- ``CosineDecayLR(min_lr, max_lr, decay_steps)``, ``PolynomialDecayLR(learning_rate,
  end_learning_rate, decay_steps, power, update_decay_steps=False)``,
  ``WarmUpLR(learning_rate, warmup_steps)``: MindSpore's formulas, given with each class.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from mskernel import float32, ops as F
from mskernel_sdk import Tensor

from .cell import Cell

__all__ = [
    "CosineDecayLR", "ExponentialDecayLR", "LearningRateSchedule", "PiecewiseConstantLR",
    "PolynomialDecayLR", "WarmUpLR",
]


def _positive(value: Any, what: str, who: str, integer: bool = False) -> Any:
    kind = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind) or value <= 0:
        raise ValueError(f"{who}: {what} must be a positive {'int' if integer else 'number'}, "
                         f"got {value!r}")
    return value


def _non_negative(value: Any, what: str, who: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"{who}: {what} must be a number >= 0, got {value!r}")
    return float(value)


class LearningRateSchedule(Cell):
    """Base class: ``construct(global_step)`` → the learning rate (float32 scalar tensor)."""

    def construct(self, global_step: Any) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must define construct(global_step)")

    @staticmethod
    def _step(global_step: Any) -> Tensor:
        """The step count as a float32 scalar."""
        return F.astype(global_step, float32)


class ExponentialDecayLR(LearningRateSchedule):
    """``learning_rate · decay_rate^p`` with ``p = step / decay_steps`` (floored when
    ``is_stair``: a step decay)."""

    def __init__(self, learning_rate: float, decay_rate: float, decay_steps: int,
                 is_stair: bool = False) -> None:
        super().__init__()
        who = "ExponentialDecayLR"
        self.learning_rate = _non_negative(learning_rate, "learning_rate", who)
        self.decay_rate = float(_positive(decay_rate, "decay_rate", who))
        self.decay_steps = _positive(decay_steps, "decay_steps", who, integer=True)
        self.is_stair = bool(is_stair)

    def construct(self, global_step: Any) -> Tensor:
        p = F.divide(self._step(global_step), float(self.decay_steps))
        if self.is_stair:
            p = F.floor(p)
        return F.multiply(F.power(F.full((), self.decay_rate, float32), p), self.learning_rate)


class PiecewiseConstantLR(LearningRateSchedule):
    """``learning_rates[i]`` while ``step < milestones[i]`` (and the last rate after the last
    milestone): MindSpore's ``piecewise_constant_lr`` as a schedule.  ``milestones`` increase;
    there is one more rate than milestones, or as many (the last milestone then only ends
    the list)."""

    def __init__(self, milestones: Sequence[int], learning_rates: Sequence[float]) -> None:
        super().__init__()
        who = "PiecewiseConstantLR"
        self.milestones = [_positive(m, "every milestone", who, integer=True) for m in milestones]
        self.learning_rates = [_non_negative(r, "every learning rate", who)
                               for r in learning_rates]
        if any(b <= a for a, b in zip(self.milestones, self.milestones[1:])):
            raise ValueError(f"{who}: milestones must increase, got {self.milestones}")
        if len(self.learning_rates) not in (len(self.milestones), len(self.milestones) + 1) \
                or not self.learning_rates:
            raise ValueError(f"{who}: give one learning rate per milestone (or one more), got "
                             f"{len(self.learning_rates)} rates for {len(self.milestones)} "
                             "milestones")

    def construct(self, global_step: Any) -> Tensor:
        step = self._step(global_step)
        lr = F.full((), self.learning_rates[-1], float32)
        for milestone, rate in reversed(list(zip(self.milestones, self.learning_rates))):
            lr = F.where(F.less(step, float(milestone)), rate, lr)
        return lr


class CosineDecayLR(LearningRateSchedule):
    """``min_lr + (max_lr - min_lr) · (1 + cos(π · p)) / 2`` with ``p = min(step,
    decay_steps) / decay_steps``."""

    def __init__(self, min_lr: float, max_lr: float, decay_steps: int) -> None:
        super().__init__()
        who = "CosineDecayLR"
        self.min_lr = _non_negative(min_lr, "min_lr", who)
        self.max_lr = _non_negative(max_lr, "max_lr", who)
        if self.max_lr < self.min_lr:
            raise ValueError(f"{who}: max_lr ({max_lr}) must be >= min_lr ({min_lr})")
        self.decay_steps = _positive(decay_steps, "decay_steps", who, integer=True)

    def construct(self, global_step: Any) -> Tensor:
        p = F.divide(F.minimum(self._step(global_step), float(self.decay_steps)),
                     float(self.decay_steps))
        cosine = F.add(F.cos(F.multiply(p, math.pi)), 1.0)
        return F.add(F.multiply(cosine, 0.5 * (self.max_lr - self.min_lr)), self.min_lr)


class PolynomialDecayLR(LearningRateSchedule):
    """``(learning_rate - end_learning_rate) · (1 - p)^power + end_learning_rate`` with
    ``p = min(step, decay_steps) / decay_steps``.  With ``update_decay_steps`` the decay
    restarts: ``decay_steps`` is multiplied by ``max(ceil(step / decay_steps), 1)``."""

    def __init__(self, learning_rate: float, end_learning_rate: float, decay_steps: int,
                 power: float, update_decay_steps: bool = False) -> None:
        super().__init__()
        who = "PolynomialDecayLR"
        self.learning_rate = _non_negative(learning_rate, "learning_rate", who)
        self.end_learning_rate = _non_negative(end_learning_rate, "end_learning_rate", who)
        self.decay_steps = _positive(decay_steps, "decay_steps", who, integer=True)
        self.power = float(_positive(power, "power", who))
        self.update_decay_steps = bool(update_decay_steps)

    def construct(self, global_step: Any) -> Tensor:
        step = self._step(global_step)
        steps: Any = float(self.decay_steps)
        if self.update_decay_steps:
            steps = F.multiply(F.maximum(F.ceil(F.divide(step, steps)), 1.0), steps)
        else:
            step = F.minimum(step, steps)
        remaining = F.subtract(1.0, F.divide(step, steps))
        span = self.learning_rate - self.end_learning_rate
        return F.add(F.multiply(F.power(remaining, self.power), span), self.end_learning_rate)


class WarmUpLR(LearningRateSchedule):
    """``learning_rate · min(step, warmup_steps) / warmup_steps``: a linear warm-up (0 at the
    first step, as in MindSpore)."""

    def __init__(self, learning_rate: float, warmup_steps: int) -> None:
        super().__init__()
        who = "WarmUpLR"
        self.learning_rate = _non_negative(learning_rate, "learning_rate", who)
        self.warmup_steps = _positive(warmup_steps, "warmup_steps", who, integer=True)

    def construct(self, global_step: Any) -> Tensor:
        fraction = F.divide(F.minimum(self._step(global_step), float(self.warmup_steps)),
                            float(self.warmup_steps))
        return F.multiply(fraction, self.learning_rate)
