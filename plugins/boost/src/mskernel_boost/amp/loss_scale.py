"""Loss scaling (MindSpore's ``mindspore.amp``): float16 gradients underflow unless the loss
is multiplied by a large factor before the backward pass and the gradients divided by it
after; a step whose gradients overflowed is skipped.

- :func:`all_finite` — whether every element of a set of tensors is finite (one bool tensor);
- :class:`StaticLossScaler` — a fixed factor; :class:`DynamicLossScaler` — a factor that
  shrinks by ``scale_factor`` at an overflow and grows by it after ``scale_window`` finite
  steps in a row (both keep their state in Parameters, so they work under ``@jit``);
- :class:`FixedLossScaleManager`, :class:`DynamicLossScaleManager` — what ``Model(...,
  loss_scale_manager=...)`` takes;
- :class:`TrainOneStepWithLossScaleCell` — a training step that scales the loss, unscales the
  gradients, and updates the weights and the optimizer's state only when they are finite
  (otherwise everything the optimizer owns keeps its value); returns ``(loss, overflow,
  scale)`` as MindSpore's does.
"""

from __future__ import annotations

from typing import Any, Sequence

import mskernel
import numpy as np
from mskernel import float32, ops as F
from mskernel_sdk import Parameter, Tensor
from mskernel.nn import Cell, Optimizer

__all__ = ["DynamicLossScaleManager", "DynamicLossScaler", "FixedLossScaleManager",
           "LossScaleManager", "LossScaler", "StaticLossScaler", "TrainOneStepWithLossScaleCell",
           "all_finite"]


def all_finite(inputs: Any) -> Tensor:
    """``True`` (a bool tensor) when every element of every tensor in ``inputs`` (a tensor or
    a sequence of them) is finite."""
    items = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if not items:
        return Tensor(np.array(True))
    finite = F.all(F.isfinite(items[0]))
    for x in items[1:]:
        finite = F.logical_and(finite, F.all(F.isfinite(x)))
    return finite


def _positive(value: Any, what: str, who: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 \
            or not np.isfinite(value):
        raise ValueError(f"{who}: {what} must be a finite number > 0, got {value!r}")
    return float(value)


class LossScaler:
    """Scale a loss, unscale its gradients, and adjust the factor from their finiteness."""

    scale_value: Parameter

    def scale(self, inputs: Any) -> Any:
        """``inputs`` (a tensor or a sequence) times the factor."""
        if isinstance(inputs, Tensor):
            return F.multiply(inputs, F.astype(self.scale_value, inputs.dtype))
        return tuple(self.scale(x) for x in inputs)

    def unscale(self, inputs: Any) -> Any:
        """``inputs`` (a tensor or a sequence) divided by the factor."""
        if isinstance(inputs, Tensor):
            return F.divide(inputs, F.astype(self.scale_value, inputs.dtype))
        return tuple(self.unscale(x) for x in inputs)

    def adjust(self, grads_finite: Tensor) -> Tensor:
        """Update the factor after a step whose gradients were (not) finite; returns
        ``grads_finite``."""
        return grads_finite


class StaticLossScaler(LossScaler):
    """A fixed factor ``scale_value``."""

    def __init__(self, scale_value: float) -> None:
        value = _positive(scale_value, "scale_value", "StaticLossScaler")
        self.scale_value = Parameter(np.array(value, np.float32), name="scale_value",
                                     requires_grad=False)


class DynamicLossScaler(LossScaler):
    """The factor starts at ``scale_value``; it is divided by ``scale_factor`` (not below 1)
    after each step with a non-finite gradient and multiplied by it after ``scale_window``
    finite steps in a row."""

    def __init__(self, scale_value: float, scale_factor: float, scale_window: int) -> None:
        who = "DynamicLossScaler"
        value = _positive(scale_value, "scale_value", who)
        self.scale_factor = _positive(scale_factor, "scale_factor", who)
        if isinstance(scale_window, bool) or not isinstance(scale_window, int) \
                or scale_window < 1:
            raise ValueError(f"{who}: scale_window must be an int >= 1, got {scale_window!r}")
        self.scale_window = scale_window
        self.scale_value = Parameter(np.array(value, np.float32), name="scale_value",
                                     requires_grad=False)
        self.counter = Parameter(np.array(0, np.int32), name="scale_counter",
                                 requires_grad=False)

    def adjust(self, grads_finite: Tensor) -> Tensor:
        scale, count = self.scale_value, F.add(self.counter, 1)
        grow = F.logical_and(grads_finite, F.greater_equal(count, self.scale_window))
        grown = F.where(grow, F.multiply(scale, self.scale_factor), scale)
        shrunk = F.maximum(F.divide(scale, self.scale_factor), Tensor(np.float32(1)))
        self.scale_value.assign_value(F.where(grads_finite, grown, shrunk))
        self.counter.assign_value(F.where(F.logical_and(grads_finite, F.logical_not(grow)),
                                          count, F.full_like(count, 0)))
        return grads_finite


class LossScaleManager:
    """What ``Model(..., loss_scale_manager=...)`` takes: the scaler of a training step."""

    def get_loss_scaler(self) -> LossScaler:
        raise NotImplementedError(f"{type(self).__name__} must define get_loss_scaler")


class FixedLossScaleManager(LossScaleManager):
    """A fixed ``loss_scale``.  ``drop_overflow_update``: skip steps whose gradients are not
    finite (MindSpore's default ``True``)."""

    def __init__(self, loss_scale: float = 128.0, drop_overflow_update: bool = True) -> None:
        self.loss_scale = _positive(loss_scale, "loss_scale", "FixedLossScaleManager")
        self.drop_overflow_update = bool(drop_overflow_update)

    def get_loss_scale(self) -> float:
        return self.loss_scale

    def get_loss_scaler(self) -> LossScaler:
        return StaticLossScaler(self.loss_scale)


class DynamicLossScaleManager(LossScaleManager):
    """A :class:`DynamicLossScaler` starting at ``init_loss_scale`` (MindSpore's defaults)."""

    def __init__(self, init_loss_scale: float = 2.0 ** 24, scale_factor: float = 2.0,
                 scale_window: int = 2000) -> None:
        self.init_loss_scale = init_loss_scale
        self.scale_factor = scale_factor
        self.scale_window = scale_window
        DynamicLossScaler(init_loss_scale, scale_factor, scale_window)  # checks the arguments

    def get_loss_scale(self) -> float:
        return float(self.init_loss_scale)

    def get_loss_scaler(self) -> LossScaler:
        return DynamicLossScaler(self.init_loss_scale, self.scale_factor, self.scale_window)


class TrainOneStepWithLossScaleCell(Cell):
    """A training step with loss scaling; see :mod:`mskernel_boost.amp.loss_scale`.
    ``scale_sense``: a :class:`LossScaler`, a :class:`LossScaleManager`, or a number (a
    fixed factor).  ``skip_overflow``: skip the update of a step whose gradients are not
    finite."""

    def __init__(self, network: Cell, optimizer: Optimizer, scale_sense: Any,
                 skip_overflow: bool = True) -> None:
        super().__init__(auto_prefix=False)
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"TrainOneStepWithLossScaleCell: optimizer must be an nn "
                            f"Optimizer, got {type(optimizer).__name__}")
        if isinstance(scale_sense, LossScaleManager):
            skip_overflow = getattr(scale_sense, "drop_overflow_update", skip_overflow)
            scale_sense = scale_sense.get_loss_scaler()
        elif not isinstance(scale_sense, LossScaler):
            scale_sense = StaticLossScaler(scale_sense)
        self.network = network
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        object.__setattr__(self, "scaler", scale_sense)
        object.__setattr__(self, "skip_overflow", bool(skip_overflow))
        self.scale_value = scale_sense.scale_value
        if isinstance(scale_sense, DynamicLossScaler):
            self.scale_counter = scale_sense.counter

    def construct(self, *inputs: Any) -> tuple[Tensor, Tensor, Tensor]:
        def scaled_loss(*args: Any) -> Tensor:
            return self.scaler.scale(F.astype(self.network(*args), float32))

        scaled, grads = mskernel.value_and_grad(scaled_loss, None, weights=self.weights)(*inputs)
        grads = self.scaler.unscale(tuple(grads))
        finite = all_finite(grads)
        self.scaler.adjust(finite)
        if self.skip_overflow:
            _update_if(finite, lambda: self.optimizer(grads), self._optimizer_state())
        else:
            self.optimizer(grads)
        return self.scaler.unscale(scaled), F.logical_not(finite), self.scale_value

    def _optimizer_state(self) -> list[Parameter]:
        state = {id(p): p for p in (*self.weights, *self.optimizer.get_parameters())}
        return list(state.values())


def _update_if(condition: Tensor, update: Any, state: Sequence[Parameter]) -> None:
    """Run ``update`` (which assigns ``state``), then keep its assignments only where
    ``condition`` holds: a skipped step, eagerly and in graph mode alike."""
    # the values now, not the Parameters (which the update reassigns); the graph's
    # simplifier reduces ``p * 1`` to the value loaded before the update
    before = [F.multiply(p, 1) for p in state]
    update()
    for param, old in zip(state, before):
        param.assign_value(F.where(condition, param, old))
