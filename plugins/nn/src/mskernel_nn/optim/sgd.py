"""Stochastic gradient descent with momentum: ``SGD`` (PyTorch's ``torch.optim.SGD``
update, MindSpore's signature) and ``Momentum`` (MindSpore's, the same update without
dampening)."""

from __future__ import annotations

from typing import Any, Iterable

from mskernel import ops as F
from mskernel_sdk import Parameter, Tensor

from .optimizer import Optimizer, OptimizerError

__all__ = ["Momentum", "SGD"]


class SGD(Optimizer):
    """``buf = momentum · buf + (1 - dampening) · grad`` (``buf = grad`` at the first step),
    then ``param -= lr · (grad + momentum · buf)`` with ``nesterov``, else ``lr · buf``;
    plain ``param -= lr · grad`` without momentum."""

    #: the name of the momentum buffers in checkpoints
    slot_name = "accum"

    def __init__(self, params: Iterable[Any], learning_rate: Any = 0.1, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0,
                 nesterov: bool = False) -> None:
        super().__init__(learning_rate, params, weight_decay)
        who = type(self).__name__
        if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) or momentum < 0:
            raise OptimizerError(f"{who}: momentum must be a number >= 0, got {momentum!r}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise OptimizerError(f"{who}: nesterov needs momentum > 0 and dampening 0")
        self.momentum = float(momentum)
        self.dampening = float(dampening)
        self.nesterov = bool(nesterov)
        self._buffers = self.slot(self.slot_name) if self.momentum else []

    def update_parameter(self, index: int, param: Parameter, grad: Tensor, lr: Tensor,
                         weight_decay: float, step: Tensor) -> None:
        direction = grad
        if self.momentum:
            buf = self._buffers[index]
            new = F.add(F.multiply(buf, self.momentum), F.multiply(grad, 1.0 - self.dampening))
            if self.dampening:
                new = F.where(F.equal(step, 1.0), grad, new)
            buf.assign_value(new)
            direction = F.add(grad, F.multiply(new, self.momentum)) if self.nesterov else new
        param.assign_value(F.subtract(param, F.multiply(direction, lr)))


class Momentum(SGD):
    """MindSpore's ``Momentum``: ``moments = momentum · moments + grad``, then
    ``param -= lr · (grad + momentum · moments)`` with ``use_nesterov``, else
    ``lr · moments``."""

    slot_name = "moments"

    def __init__(self, params: Iterable[Any], learning_rate: Any, momentum: float,
                 weight_decay: float = 0.0, use_nesterov: bool = False) -> None:
        super().__init__(params, learning_rate, momentum=momentum, weight_decay=weight_decay,
                         nesterov=use_nesterov)
