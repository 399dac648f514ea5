"""The Adam family: ``Adam`` (L2 weight decay added to the gradient), ``AdamW`` (decoupled
weight decay, PyTorch's), ``AdamWeightDecay`` (MindSpore's: AdamW without bias correction)
and ``Lamb`` (Adam's direction scaled by a per-layer trust ratio).

They share the moment estimates, kept in the slots ``moment1`` and ``moment2``::

    m = beta1 · m + (1 - beta1) · grad
    v = beta2 · v + (1 - beta2) · grad²
    direction = m̂ / (sqrt(v̂) + eps),  m̂ = m / (1 - beta1^t),  v̂ = v / (1 - beta2^t)

(``t`` counts the steps; without bias correction ``m̂ = m`` and ``v̂ = v``).
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from mskernel import ops as F
from mskernel_sdk import Parameter, Tensor

from .optimizer import Optimizer, OptimizerError

__all__ = ["Adam", "AdamW", "AdamWeightDecay", "Lamb"]


def _beta(value: Any, name: str, who: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise OptimizerError(f"{who}: {name} must lie in [0, 1), got {value!r}")
    return float(value)


class _AdamBase(Optimizer):
    """The moment estimates and Adam's direction; subclasses say how it updates a weight."""

    bias_correction = True

    def __init__(self, params: Iterable[Any], learning_rate: Any, beta1: float, beta2: float,
                 eps: float, weight_decay: float) -> None:
        super().__init__(learning_rate, params, weight_decay)
        who = type(self).__name__
        self.beta1 = _beta(beta1, "beta1", who)
        self.beta2 = _beta(beta2, "beta2", who)
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or eps <= 0:
            raise OptimizerError(f"{who}: eps must be a number > 0, got {eps!r}")
        self.eps = float(eps)
        self._moment1 = self.slot("moment1")
        self._moment2 = self.slot("moment2")

    def _second_moment(self, index: int, v: Tensor) -> Tensor:
        """The second-moment estimate the direction divides by (AMSGrad keeps its maximum)."""
        return v

    def direction(self, index: int, grad: Tensor, step: Tensor) -> Tensor:
        """Update the moments of weight ``index`` with ``grad``; return ``m̂ / (sqrt(v̂) +
        eps)``."""
        m = F.add(F.multiply(self._moment1[index], self.beta1),
                  F.multiply(grad, 1.0 - self.beta1))
        v = F.add(F.multiply(self._moment2[index], self.beta2),
                  F.multiply(F.square(grad), 1.0 - self.beta2))
        self._moment1[index].assign_value(m)
        self._moment2[index].assign_value(v)
        v = self._second_moment(index, v)
        if self.bias_correction:
            step = F.astype(step, grad.dtype)
            m = F.divide(m, _bias_correction(self.beta1, step))
            v = F.divide(v, _bias_correction(self.beta2, step))
        return F.divide(m, F.add(F.sqrt(v), self.eps))


def _bias_correction(beta: float, step: Tensor) -> Any:
    """``1 - beta^step``, as ``-expm1(step · log(beta))``: accurate in float32 where the
    subtraction would cancel (``1 - 0.999`` keeps only 4 significant digits)."""
    if beta == 0.0:
        return 1.0
    return F.negative(F.expm1(F.multiply(step, math.log(beta))))


class Adam(_AdamBase):
    """Adam (Kingma & Ba): ``param -= lr · direction``; ``weight_decay`` is L2, added to the
    gradient.  ``use_amsgrad`` divides by the running maximum of ``v`` (slot ``vhat``)."""

    def __init__(self, params: Iterable[Any], learning_rate: Any = 1e-3, beta1: float = 0.9,
                 beta2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.0,
                 use_amsgrad: bool = False) -> None:
        super().__init__(params, learning_rate, beta1, beta2, eps, weight_decay)
        self.use_amsgrad = bool(use_amsgrad)
        self._vhat = self.slot("vhat") if self.use_amsgrad else []

    def _second_moment(self, index: int, v: Tensor) -> Tensor:
        if not self.use_amsgrad:
            return v
        vhat = F.maximum(self._vhat[index], v)
        self._vhat[index].assign_value(vhat)
        return vhat

    def update_parameter(self, index: int, param: Parameter, grad: Tensor, lr: Tensor,
                         weight_decay: float, step: Tensor) -> None:
        param.assign_value(F.subtract(param, F.multiply(self.direction(index, grad, step), lr)))


class AdamW(_AdamBase):
    """Adam with decoupled weight decay (Loshchilov & Hutter; PyTorch's ``AdamW``):
    ``param -= lr · (direction + weight_decay · param)``."""

    decoupled_weight_decay = True

    def __init__(self, params: Iterable[Any], learning_rate: Any = 1e-3, beta1: float = 0.9,
                 beta2: float = 0.999, eps: float = 1e-8, weight_decay: float = 1e-2) -> None:
        super().__init__(params, learning_rate, beta1, beta2, eps, weight_decay)

    def update_parameter(self, index: int, param: Parameter, grad: Tensor, lr: Tensor,
                         weight_decay: float, step: Tensor) -> None:
        decayed = F.multiply(param, F.subtract(1.0, F.multiply(lr, weight_decay)))
        param.assign_value(F.subtract(decayed, F.multiply(self.direction(index, grad, step), lr)))


class AdamWeightDecay(AdamW):
    """MindSpore's ``AdamWeightDecay``: :class:`AdamW`'s update without bias correction
    (``m̂ = m``, ``v̂ = v``), with MindSpore's defaults ``eps=1e-6``, ``weight_decay=0``."""

    bias_correction = False

    def __init__(self, params: Iterable[Any], learning_rate: Any = 1e-3, beta1: float = 0.9,
                 beta2: float = 0.999, eps: float = 1e-6, weight_decay: float = 0.0) -> None:
        super().__init__(params, learning_rate, beta1, beta2, eps, weight_decay)


class Lamb(_AdamBase):
    """LAMB (You et al.): ``r = direction + weight_decay · param``, then ``param -= lr ·
    trust · r`` with the trust ratio ``‖param‖ / ‖r‖`` (1 when either norm is 0)."""

    decoupled_weight_decay = True

    def __init__(self, params: Iterable[Any], learning_rate: Any, beta1: float = 0.9,
                 beta2: float = 0.999, eps: float = 1e-6, weight_decay: float = 0.0) -> None:
        super().__init__(params, learning_rate, beta1, beta2, eps, weight_decay)

    def update_parameter(self, index: int, param: Parameter, grad: Tensor, lr: Tensor,
                         weight_decay: float, step: Tensor) -> None:
        r = self.direction(index, grad, step)
        if weight_decay:
            r = F.add(r, F.multiply(param, weight_decay))
        param_norm = F.sqrt(F.sum(F.square(param)))
        r_norm = F.sqrt(F.sum(F.square(r)))
        usable = F.logical_and(F.greater(param_norm, 0.0), F.greater(r_norm, 0.0))
        trust = F.where(usable, F.divide(param_norm, F.where(usable, r_norm, 1.0)), 1.0)
        param.assign_value(F.subtract(param, F.multiply(r, F.multiply(trust, lr))))
