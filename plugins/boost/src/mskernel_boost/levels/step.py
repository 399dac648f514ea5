"""``BoostTrainOneStepCell``: the training step of ``Model(boost_level=...)``.

Per call: the loss and the gradients of the parameters the step trains (all of them, or the
group gradient freezing picks for this step, so autodiff prunes the rest of the backward
pass), gradient centralisation and adaptive clipping when LessBN is on, then either the
optimizer's update or — with ``grad_accumulation_step`` k > 1 — accumulation into buffers,
the update taking their mean every k-th call.  Frozen parameters and their optimizer state
keep their values through the update.

The group and whether this call updates are decided on the host from the step count
(``boost_step``, a Parameter the step increments): under ``mskernel.jit`` each combination
compiles once (``__jit_state__``) and every call runs the graph it needs.
"""

from __future__ import annotations

from typing import Any, Optional

import mskernel
import numpy as np
from mskernel import ops as F
from mskernel_sdk import Parameter, Tensor, active_trace
from mskernel.nn import Cell, Optimizer, TrainOneStepCell

from .config import BoostConfig
from .freeze import freeze_sequence, parameter_groups
from .less_bn import adaptive_clip, centralize

__all__ = ["BoostTrainOneStepCell"]


class BoostTrainOneStepCell(TrainOneStepCell):
    """One boosted training step of ``network`` (a network with its loss) and ``optimizer``
    as ``config`` says; returns the loss."""

    def __init__(self, network: Cell, optimizer: Optimizer, config: BoostConfig,
                 parallel_mode: Optional[str] = None) -> None:
        super().__init__(network, optimizer, parallel_mode)
        object.__setattr__(self, "config", config)
        if config.enabled("adasum") and self.data_parallel is not None:
            raise NotImplementedError(
                "boost: AdaSum needs every rank's gradients, and the data-parallel seam "
                "(mskernel_sdk.DataParallelGroup) reduces by sums only")
        self.boost_step = Parameter(np.array(0, np.int32), name="boost_step",
                                    requires_grad=False)
        groups = (parameter_groups(self.weights, config.param_groups)
                  if config.enabled("grad_freeze") else [list(self.weights)])
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "sequence", freeze_sequence(
            len(groups), config.freeze_type, config.freeze_p, config.total_steps)
            if config.enabled("grad_freeze") else [0])
        self.accumulation = max(int(config.grad_accumulation_step), 1) \
            if config.enabled("grad_accumulation") else 1
        self.accumulated = [self._buffer(p) for p in self.weights] if self.accumulation > 1 \
            else []
        object.__setattr__(self, "_state", (0, True))

    def _buffer(self, p: Parameter) -> Parameter:
        name = f"accumulated.{p.name}"
        buf = Parameter(np.zeros(p.shape, p.dtype.storage), name=name, requires_grad=False,
                        dtype=p.dtype)
        self.insert_param_to_cell(name, buf, check_name_contain_dot=False)
        return buf

    # -- what this call does, from the host-side step count -----------------------------------

    def _plan(self) -> tuple[int, bool]:
        step = int(np.asarray(self.boost_step))
        group = self.sequence[(step // self.accumulation) % len(self.sequence)]
        return group, (step + 1) % self.accumulation == 0

    def __jit_state__(self) -> tuple[Any, ...]:
        object.__setattr__(self, "_state", self._plan())
        return (super().__jit_state__(), self._state)

    # -- the step -----------------------------------------------------------------------------

    def construct(self, *inputs: Any) -> Tensor:
        group, update = self._plan() if active_trace() is None else self._state
        trained = self.groups[group]
        loss, grads = mskernel.value_and_grad(self.network, None, weights=trained)(*inputs)
        if self.data_parallel is not None:
            grads = self.data_parallel.reduce_gradients(grads)
        grads = [self._treat(g, p) for g, p in zip(grads, trained)]
        self.boost_step.assign_value(F.add(self.boost_step, 1))
        by_param = {id(p): g for p, g in zip(trained, grads)}
        full = [by_param.get(id(p), F.zeros_like(p)) for p in self.weights]
        if self.accumulation > 1:
            sums = [F.add(buf, g) for buf, g in zip(self.accumulated, full)]
            if not update:
                for buf, total in zip(self.accumulated, sums):
                    buf.assign_value(total)
                return loss
            full = [F.divide(total, float(self.accumulation)) for total in sums]
            for buf in self.accumulated:
                buf.assign_value(F.zeros_like(buf))
        frozen = [p for p in self.weights if id(p) not in by_param]
        kept = self._state_of(frozen)
        before = [F.multiply(p, 1) for p in kept]  # values, not the Parameters
        self.optimizer(full)
        for param, old in zip(kept, before):
            param.assign_value(old)
        return loss

    def _treat(self, grad: Tensor, param: Parameter) -> Tensor:
        if not self.config.enabled("less_bn"):
            return grad
        if self.config.gc_flag:
            grad = centralize(grad)
        return adaptive_clip(grad, param, self.config.clip) if param.ndim > 1 else grad

    def _state_of(self, frozen: list[Parameter]) -> list[Parameter]:
        """The frozen parameters and the optimizer's state slots that belong to them."""
        names = {p.name for p in frozen}
        slots = [s for s in self.optimizer.get_parameters()
                 if "." in (s.name or "") and s.name.split(".", 1)[1] in names]
        return [*frozen, *slots]
