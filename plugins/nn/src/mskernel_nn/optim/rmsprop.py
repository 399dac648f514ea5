"""RMSProp (Hinton): gradients divided by a running root mean square."""

from __future__ import annotations

from typing import Any, Iterable

from mskernel import ops as F
from mskernel_sdk import Parameter, Tensor

from .optimizer import Optimizer, OptimizerError

__all__ = ["RMSProp"]


class RMSProp(Optimizer):
    """``mean_square = decay · mean_square + (1 - decay) · grad²``; the step divides the
    gradient by ``sqrt(mean_square) + epsilon`` (``centered``: by the root of the variance
    ``mean_square - mean_grad²``, ``mean_grad`` a running mean of the gradient).  With
    ``momentum`` the divided gradients accumulate in ``moment`` and ``param -= lr · moment``.

    MindSpore's signature; the update is PyTorch's ``RMSprop`` (``epsilon`` is added to the
    root — MindSpore adds it under the root, a difference only for tiny ``mean_square``)."""

    def __init__(self, params: Iterable[Any], learning_rate: Any = 0.1, decay: float = 0.9,
                 momentum: float = 0.0, epsilon: float = 1e-10, centered: bool = False,
                 weight_decay: float = 0.0) -> None:
        super().__init__(learning_rate, params, weight_decay)
        who = type(self).__name__
        for name, value, ok in (("decay", decay, 0 <= decay < 1), ("momentum", momentum,
                                                                     momentum >= 0),
                                ("epsilon", epsilon, epsilon > 0)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not ok:
                raise OptimizerError(f"{who}: {name} is out of range: {value!r}")
        self.decay = float(decay)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.centered = bool(centered)
        self._mean_square = self.slot("mean_square")
        self._mean_grad = self.slot("mean_grad") if self.centered else []
        self._moment = self.slot("moment") if self.momentum else []

    def update_parameter(self, index: int, param: Parameter, grad: Tensor, lr: Tensor,
                         weight_decay: float, step: Tensor) -> None:
        mean_square = F.add(F.multiply(self._mean_square[index], self.decay),
                            F.multiply(F.square(grad), 1.0 - self.decay))
        self._mean_square[index].assign_value(mean_square)
        variance = mean_square
        if self.centered:
            mean_grad = F.add(F.multiply(self._mean_grad[index], self.decay),
                              F.multiply(grad, 1.0 - self.decay))
            self._mean_grad[index].assign_value(mean_grad)
            variance = F.subtract(mean_square, F.square(mean_grad))
        scaled = F.divide(grad, F.add(F.sqrt(variance), self.epsilon))
        if self.momentum:
            scaled = F.add(F.multiply(self._moment[index], self.momentum), scaled)
            self._moment[index].assign_value(scaled)
        param.assign_value(F.subtract(param, F.multiply(scaled, lr)))
