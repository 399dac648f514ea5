"""Loss functions of MindSpore's ``mindspore.ops``, as compositions of core ops (so their
gradients come from the ops'): :func:`binary_cross_entropy_with_logits`."""

from __future__ import annotations

from typing import Any, Optional

from ..tensor import Tensor
from ._core import _inexact, astype
from .elementwise import abs, add, exp, log1p, maximum, multiply, negative, subtract
from .reduction import mean, sum

_REDUCTIONS = ("mean", "sum", "none")


def reduce_loss(loss: Tensor, reduction: str, who: str) -> Tensor:
    """``loss`` averaged (``"mean"``), summed (``"sum"``) or as it is (``"none"``)."""
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{who}: reduction must be one of {', '.join(_REDUCTIONS)}, got "
                     f"{reduction!r}")


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Optional[Any] = None,
                                     pos_weight: Optional[Any] = None,
                                     reduction: str = "mean") -> Tensor:
    """The binary cross-entropy of ``sigmoid(input)`` against ``target`` in [0, 1], computed
    stably from the logits: ``-w * (p * y * log σ(x) + (1 - y) * log(1 - σ(x)))`` with ``w``
    the ``weight`` of each element and ``p`` the ``pos_weight`` of each class (the last
    axis), both broadcast; then ``reduction``."""
    x = _inexact(input)
    y = astype(target, x.dtype)
    # softplus(-x) = -log σ(x), as max(-x, 0) + log1p(exp(-|x|)) so that no exp overflows
    neg_log_sigmoid = add(maximum(negative(x), 0.0), log1p(exp(negative(abs(x)))))
    positive = neg_log_sigmoid if pos_weight is None else multiply(
        neg_log_sigmoid, astype(pos_weight, x.dtype))
    # -log(1 - σ(x)) = softplus(x) = x + softplus(-x)
    loss = add(multiply(subtract(1.0, y), add(x, neg_log_sigmoid)), multiply(y, positive))
    if weight is not None:
        loss = multiply(loss, astype(weight, x.dtype))
    return reduce_loss(loss, reduction, "binary_cross_entropy_with_logits")
