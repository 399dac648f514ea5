"""The optimizer base class: parameter groups, learning rates, weight decay and state slots.

An optimizer is a :class:`~mskernel_nn.cell.Cell` (as in MindSpore) called with the gradients
of its parameters, in order — ``optimizer(grads)`` — and updating the parameters in place
with :meth:`~mskernel.Parameter.assign_value`.  Everything it remembers between steps is a
Parameter registered on it, so that

- a training step compiled with ``@jit`` reads and writes the state in place, through the
  graph's state token, without recompiling as the state changes;
- checkpoints save it with the weights, and training resumes exactly.

The state is named after the weights it belongs to: ``"global_step"`` (steps taken, int32),
``"learning_rate"`` (a constant rate, or the per-step table of a list of rates), and one
slot per weight and kind, ``"<slot>.<parameter name>"`` (``"moment1.fc.weight"``).

``params`` is a list of Parameters, or of groups — dicts with ``"params"`` and optionally
``"lr"`` and ``"weight_decay"``, which override the optimizer's arguments for that group::

    nn.Momentum([{"params": decayed, "weight_decay": 1e-4},
                 {"params": no_decay, "lr": 0.01}], learning_rate=0.1, momentum=0.9)

``learning_rate`` is a number, a list (or 1-d tensor) of one rate per step (the last one is
kept after the list ends), or a :class:`~mskernel_nn.schedules.LearningRateSchedule`.
Subclasses implement :meth:`Optimizer.update_parameter`; the base class adds L2 weight decay
(``grad + weight_decay · param``) first unless the subclass decouples it
(``decoupled_weight_decay = True``) and applies it itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

import numpy as np
from mskernel import float32, ops as F
from mskernel_sdk import MskernelError, Parameter, Tensor

from ..cell import Cell
from ..schedules import LearningRateSchedule

__all__ = ["Optimizer", "OptimizerError"]

_GROUP_KEYS = {"params", "lr", "weight_decay"}


class OptimizerError(MskernelError, ValueError):
    """An optimizer was given parameters, groups, rates or gradients it cannot use."""


class _LearningRate:
    """One group's learning rate: a Parameter holding a constant or a per-step table, or a
    schedule.  :meth:`at` gives the rate at a step count."""

    def __init__(self, value: Any, name: str, owner: Optimizer) -> None:
        self.schedule: Optional[LearningRateSchedule] = None
        self.parameter: Optional[Parameter] = None
        if isinstance(value, LearningRateSchedule):
            self.schedule = value
            return
        rates = _rate_table(value)
        self.parameter = Parameter(rates, name=name, requires_grad=False)
        owner.insert_param_to_cell(name, self.parameter)

    def at(self, step: Tensor) -> Tensor:
        if self.schedule is not None:
            return F.astype(self.schedule(step), float32)
        table = self.parameter
        if table.ndim == 0:  # type: ignore[union-attr]
            return table  # type: ignore[return-value]
        return F.take(table, F.minimum(step, table.shape[0] - 1))  # type: ignore[union-attr]


def _rate_table(value: Any) -> np.ndarray:
    """A constant rate (0-d) or one rate per step (1-d), as float32, checked."""
    wrong = OptimizerError(f"learning_rate must be a number, a list of rates or a "
                           f"LearningRateSchedule, got {value!r}")
    if isinstance(value, (bool, str)):
        raise wrong
    try:
        rates = np.asarray(value, np.float32)
    except (TypeError, ValueError):
        raise wrong from None
    if rates.ndim > 1 or rates.size == 0:
        raise OptimizerError(f"a learning-rate table must be a non-empty 1-d list, got shape "
                             f"{list(rates.shape)}")
    if not np.all(np.isfinite(rates)) or not np.all(rates >= 0):
        raise OptimizerError(f"learning rates must be finite and >= 0, got {value!r}")
    return rates


@dataclass(frozen=True)
class _Group:
    indices: tuple[int, ...]
    learning_rate: _LearningRate
    weight_decay: float


def _weight_decay(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise OptimizerError(f"{where}: weight_decay must be a number >= 0, got {value!r}")
    return float(value)


class Optimizer(Cell):
    """Base class of the optimizers; see :mod:`mskernel_nn.optim.optimizer`."""

    #: whether the subclass applies weight decay itself (AdamW) instead of adding it to the
    #: gradient
    decoupled_weight_decay = False

    def __init__(self, learning_rate: Any, parameters: Iterable[Any],
                 weight_decay: float = 0.0) -> None:
        super().__init__()
        who = type(self).__name__
        groups = _as_groups(parameters, who)
        params: list[Parameter] = []
        self._groups: list[_Group] = []
        for k, group in enumerate(groups):
            start = len(params)
            params.extend(group["params"])
            rate = _LearningRate(group.get("lr", learning_rate),
                                 "learning_rate" if k == 0 else f"learning_rate_group{k}", self)
            decay = _weight_decay(group.get("weight_decay", weight_decay), who)
            self._groups.append(_Group(tuple(range(start, len(params))), rate, decay))
        _check_parameters(params, who)
        self.parameters = tuple(params)
        self.global_step = Parameter(np.array(0, np.int32), name="global_step",
                                     requires_grad=False)

    # -- state --------------------------------------------------------------------------

    def slot(self, prefix: str, fill: float = 0.0) -> list[Parameter]:
        """One state Parameter per weight, of its shape and dtype, filled with ``fill`` and
        registered as ``"<prefix>.<weight name>"``."""
        out = []
        for i, p in enumerate(self.parameters):
            name = f"{prefix}.{p.name or i}"
            state = Parameter(np.full(p.shape, fill, p.dtype.storage), name=name,
                              requires_grad=False, dtype=p.dtype)
            self.insert_param_to_cell(name, state, check_name_contain_dot=False)
            out.append(state)
        return out

    # -- a step -------------------------------------------------------------------------

    def construct(self, gradients: Sequence[Any]) -> None:
        grads = tuple(gradients)
        if len(grads) != len(self.parameters):
            raise OptimizerError(f"{type(self).__name__} updates {len(self.parameters)} "
                                 f"parameters but got {len(grads)} gradients")
        step = self.global_step
        rates = [group.learning_rate.at(step) for group in self._groups]
        self.global_step.assign_value(F.add(step, 1))
        count = F.astype(self.global_step, float32)  # steps including this one: 1, 2, ...
        for group, lr in zip(self._groups, rates):
            for i in group.indices:
                param, grad = self.parameters[i], F.asarray(grads[i])
                if grad.shape != param.shape:
                    raise OptimizerError(f"the gradient of {param.name or f'parameter {i}'} has "
                                         f"shape {list(grad.shape)}, the parameter "
                                         f"{list(param.shape)}")
                grad = F.astype(grad, param.dtype)
                if group.weight_decay and not self.decoupled_weight_decay:
                    grad = F.add(grad, F.multiply(param, group.weight_decay))
                self.update_parameter(i, param, grad, F.astype(lr, param.dtype),
                                      group.weight_decay, count)

    def update_parameter(self, index: int, param: Parameter, grad: Tensor, lr: Tensor,
                         weight_decay: float, step: Tensor) -> None:
        """Update ``param`` (the ``index``-th) from ``grad`` at learning rate ``lr``;
        ``step`` counts the steps including this one (float32: 1.0 at the first)."""
        raise NotImplementedError(f"{type(self).__name__} must define update_parameter")

    def get_lr(self) -> Any:
        """The learning rate the next step uses (a tuple, one per group, with several
        groups)."""
        rates = tuple(group.learning_rate.at(self.global_step) for group in self._groups)
        return rates[0] if len(rates) == 1 else rates

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        """The groups as dicts: ``params``, ``lr`` (the rate's Parameter or schedule),
        ``weight_decay``."""
        return [{"params": [self.parameters[i] for i in g.indices],
                 "lr": g.learning_rate.schedule or g.learning_rate.parameter,
                 "weight_decay": g.weight_decay} for g in self._groups]


def _as_groups(parameters: Iterable[Any], who: str) -> list[dict[str, Any]]:
    items = list(parameters)
    if not items:
        raise OptimizerError(f"{who} got no parameters to optimize")
    if all(isinstance(item, dict) for item in items):
        groups = []
        for k, group in enumerate(items):
            unknown = set(group) - _GROUP_KEYS
            if "params" not in group or unknown:
                raise OptimizerError(f"{who}: parameter group {k} must have 'params' and may "
                                     f"have 'lr' and 'weight_decay', got keys {sorted(group)}")
            groups.append({**group, "params": list(group["params"])})
        return groups
    if any(isinstance(item, dict) for item in items):
        raise OptimizerError(f"{who}: give either Parameters or parameter groups (dicts), not "
                             "a mix")
    return [{"params": items}]


def _check_parameters(params: list[Any], who: str) -> None:
    seen: set[int] = set()
    for i, p in enumerate(params):
        if not isinstance(p, Parameter):
            raise OptimizerError(f"{who}: entry {i} is a {type(p).__name__}, not a Parameter")
        if not p.dtype.is_floating:
            raise OptimizerError(f"{who}: parameter {p.name or i} is {p.dtype.name}; only "
                                 "floating-point parameters can be optimized")
        if id(p) in seen:
            raise OptimizerError(f"{who}: parameter {p.name or i} is given twice")
        seen.add(id(p))
