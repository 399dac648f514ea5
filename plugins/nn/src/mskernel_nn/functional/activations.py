"""Activation functions of MindSpore's ``ops`` beyond the core's (``relu``, ``sigmoid``,
``gelu``, ``silu``, ``softplus`` …), as compositions of core ops with PyTorch's formulas and
MindSpore's argument names and defaults; the activation cells of :mod:`mskernel_nn.layers`
call them.  :func:`dropout` draws from a key like :class:`mskernel_nn.layers.Dropout`."""

from __future__ import annotations

import math
from typing import Any, Optional

from mskernel import ops as F, random
from mskernel_sdk import Tensor

from ..initializer import next_key

__all__ = [
    "celu", "dropout", "elu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh",
    "leaky_relu", "logsigmoid", "mish", "prelu", "relu6", "selu", "softmin", "softshrink",
    "softsign", "tanhshrink",
]

#: SELU's constants (Klambauer et al., 2017).
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def _exp_below_zero(x: Tensor, alpha: float, scale: float = 1.0) -> Tensor:
    """``x`` where positive, else ``alpha * (exp(x / scale) - 1)``."""
    negative = F.multiply(F.expm1(F.divide(F.minimum(x, 0), scale)), alpha)
    return F.where(F.greater(x, 0), x, negative)


def leaky_relu(input: Any, alpha: float = 0.2) -> Tensor:
    """``x`` where positive, else ``alpha * x`` (MindSpore's default ``alpha=0.2``)."""
    x = F.asarray(input)
    return F.where(F.greater(x, 0), x, F.multiply(x, alpha))


def elu(input_x: Any, alpha: float = 1.0) -> Tensor:
    """``x`` where positive, else ``alpha * (exp(x) - 1)``."""
    return _exp_below_zero(F.asarray(input_x), alpha)


def celu(x: Any, alpha: float = 1.0) -> Tensor:
    """``x`` where positive, else ``alpha * (exp(x / alpha) - 1)``."""
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0")
    return _exp_below_zero(F.asarray(x), alpha, alpha)


def selu(input_x: Any) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    return F.multiply(_exp_below_zero(F.asarray(input_x), SELU_ALPHA), SELU_SCALE)


def relu6(x: Any) -> Tensor:
    """``min(max(x, 0), 6)``."""
    return F.clip(x, 0.0, 6.0)


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``x`` clipped to ``[min_val, max_val]``."""
    return F.clip(input, min_val, max_val)


def hardsigmoid(input: Any) -> Tensor:
    """``relu6(x + 3) / 6``."""
    return F.divide(relu6(F.add(input, 3.0)), 6.0)


def hardswish(x: Any) -> Tensor:
    """``x * relu6(x + 3) / 6``."""
    return F.multiply(x, hardsigmoid(x))


def mish(x: Any) -> Tensor:
    """``x * tanh(softplus(x))`` (Misra, 2019)."""
    return F.multiply(x, F.tanh(F.softplus(x)))


def logsigmoid(x: Any) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, without overflow."""
    return F.negative(F.softplus(F.negative(x)))


def softsign(x: Any) -> Tensor:
    """``x / (1 + |x|)``."""
    return F.divide(x, F.add(F.abs(x), 1.0))


def tanhshrink(input: Any) -> Tensor:
    """``x - tanh(x)``."""
    return F.subtract(input, F.tanh(input))


def softshrink(input: Any, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    x = F.asarray(input)
    shrunk = F.subtract(x, F.multiply(F.sign(x), lambd))
    return F.where(F.greater(F.abs(x), lambd), shrunk, F.zeros_like(x))


def hardshrink(input: Any, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0."""
    x = F.asarray(input)
    return F.where(F.greater(F.abs(x), lambd), x, F.zeros_like(x))


def softmin(x: Any, axis: int = -1) -> Tensor:
    """``softmax(-x)`` along ``axis``."""
    return F.softmax(F.negative(x), axis)


def prelu(x: Any, weight: Any) -> Tensor:
    """``x`` where positive, else ``weight * x``: one slope, or one per channel (axis 1)."""
    t, w = F.asarray(x), F.asarray(weight)
    if w.size > 1:
        if t.ndim < 2 or w.ndim != 1 or w.size != t.shape[1]:
            raise ValueError(f"prelu: {w.type} weight for a {t.type} input; give one slope, "
                             "or one per channel (axis 1)")
        w = F.reshape(w, (w.size,) + (1,) * (t.ndim - 2))
    return F.where(F.greater(t, 0), t, F.multiply(t, F.astype(w, t.dtype)))


def glu(x: Any, axis: int = -1) -> Tensor:
    """The gated linear unit: ``a * sigmoid(b)`` for the halves ``a``, ``b`` of ``axis``."""
    t = F.asarray(x)
    if t.shape[axis] % 2:
        raise ValueError(f"glu: axis {axis} of a {t.type} input must have an even size")
    a, b = F.split(t, 2, axis)
    return F.multiply(a, F.sigmoid(b))


def dropout(input: Any, p: float = 0.5, training: bool = True, seed: Optional[int] = None, *,
            key: Any = None) -> Tensor:
    """In training, each element zeroed with probability ``p`` and the rest scaled by
    ``1 / (1 - p)``; else ``input`` itself.  The mask comes from ``key`` (a
    :mod:`mskernel.random` key), else from ``seed``, else from the process's seed
    (``mskernel.set_seed``) — read when traced, so a jitted function without ``key`` draws
    one mask for every call: pass ``key`` (or use the ``Dropout`` cell) there."""
    if not 0 <= p <= 1 or math.isnan(p):
        raise ValueError(f"dropout: p must lie in [0, 1], got {p}")
    x = F.asarray(input)
    if not training or p == 0:
        return x
    if p == 1:
        return F.zeros_like(x)
    draw = key if key is not None else random.key(seed) if seed is not None else next_key()
    keep = random.bernoulli(draw, 1 - p, x.shape)
    return F.where(keep, F.divide(x, 1 - p), F.zeros_like(x))
