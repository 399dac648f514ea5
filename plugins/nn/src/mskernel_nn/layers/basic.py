"""Basic layers: ``Dense``, ``Flatten``, ``Identity``, ``Dropout`` and the activations as cells
(``ReLU``, ``GELU``, ``Sigmoid`` …), with :func:`get_activation` to make one by name."""

from __future__ import annotations

import math
from typing import Any, Callable, Optional, Union

from mskernel import float32, ops as F, random
from mskernel_sdk import Tensor

from ..cell import Cell
from ..functional.activations import (
    dropout, elu, hardsigmoid, hardswish, leaky_relu, prelu, relu6,
)
from ..initializer import HeUniform, Uniform, next_key, parameter

__all__ = [
    "ELU",
    "GELU",
    "Dense",
    "Dropout",
    "Flatten",
    "HSigmoid",
    "HSwish",
    "Identity",
    "LeakyReLU",
    "LogSoftmax",
    "PReLU",
    "ReLU",
    "ReLU6",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "Tanh",
    "get_activation",
]


# -- activations ------------------------------------------------------------------------------


class _Elementwise(Cell):
    """An activation applying one function to its input."""

    fn: Callable[[Tensor], Tensor]

    def construct(self, x: Any) -> Tensor:
        return type(self).fn(x)


class ReLU(_Elementwise):
    """``max(x, 0)``."""

    fn = staticmethod(F.relu)


class ReLU6(_Elementwise):
    """``min(max(x, 0), 6)``."""

    fn = staticmethod(relu6)


class Sigmoid(_Elementwise):
    """``1 / (1 + exp(-x))``."""

    fn = staticmethod(F.sigmoid)


class Tanh(_Elementwise):
    """The hyperbolic tangent."""

    fn = staticmethod(F.tanh)


class SiLU(_Elementwise):
    """``x * sigmoid(x)`` (swish)."""

    fn = staticmethod(F.silu)


class HSigmoid(_Elementwise):
    """The hard sigmoid ``relu6(x + 3) / 6``."""

    fn = staticmethod(hardsigmoid)


class HSwish(_Elementwise):
    """The hard swish ``x * relu6(x + 3) / 6``."""

    fn = staticmethod(hardswish)


class GELU(Cell):
    """Gaussian error linear unit; ``approximate=True`` (MindSpore's default) uses the tanh
    approximation, ``False`` the exact erf form."""

    def __init__(self, approximate: bool = True) -> None:
        super().__init__()
        self.approximate = approximate

    def construct(self, x: Any) -> Tensor:
        return F.gelu(x, approximate="tanh" if self.approximate else "none")

    def extend_repr(self) -> str:
        return f"approximate={self.approximate}"


class _AlongAxis(Cell):
    def __init__(self, axis: int = -1) -> None:
        super().__init__()
        self.axis = axis

    def extend_repr(self) -> str:
        return f"axis={self.axis}"


class Softmax(_AlongAxis):
    """``exp(x) / sum(exp(x))`` along ``axis``."""

    def construct(self, x: Any) -> Tensor:
        return F.softmax(x, self.axis)


class LogSoftmax(_AlongAxis):
    """``log(softmax(x))`` along ``axis``, computed stably."""

    def construct(self, x: Any) -> Tensor:
        return F.log_softmax(x, self.axis)


class LeakyReLU(Cell):
    """``x`` where positive, else ``alpha * x`` (MindSpore's default ``alpha=0.2``)."""

    def __init__(self, alpha: float = 0.2) -> None:
        super().__init__()
        self.alpha = alpha

    def construct(self, x: Any) -> Tensor:
        return leaky_relu(x, self.alpha)

    def extend_repr(self) -> str:
        return f"alpha={self.alpha}"


class ELU(Cell):
    """``x`` where positive, else ``alpha * (exp(x) - 1)``."""

    def __init__(self, alpha: float = 1.0) -> None:
        super().__init__()
        self.alpha = alpha

    def construct(self, x: Any) -> Tensor:
        return elu(x, self.alpha)

    def extend_repr(self) -> str:
        return f"alpha={self.alpha}"


class Softplus(Cell):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def construct(self, x: Any) -> Tensor:
        scaled = F.multiply(x, self.beta)
        smooth = F.divide(F.softplus(F.minimum(scaled, self.threshold)), self.beta)
        return F.where(F.greater(scaled, self.threshold), x, smooth)

    def extend_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Cell):
    """``x`` where positive, else ``w * x`` with a learned slope ``w`` per channel (axis 1)
    or one shared by all (``channel=1``)."""

    def __init__(self, channel: int = 1, w: Any = 0.25, dtype: Any = float32) -> None:
        super().__init__()
        self.channel = channel
        self.w = parameter(w, (channel,), dtype)

    def construct(self, x: Any) -> Tensor:
        return prelu(x, self.w)

    def extend_repr(self) -> str:
        return f"channel={self.channel}"


_ACTIVATIONS: dict[str, Callable[[], Cell]] = {
    "relu": ReLU, "relu6": ReLU6, "sigmoid": Sigmoid, "tanh": Tanh, "silu": SiLU,
    "swish": SiLU, "gelu": GELU, "softmax": Softmax, "logsoftmax": LogSoftmax,
    "leakyrelu": LeakyReLU, "elu": ELU, "softplus": Softplus, "hsigmoid": HSigmoid,
    "hswish": HSwish, "prelu": PReLU,
}


def get_activation(name: str) -> Cell:
    """A new activation cell by (case-insensitive) name: ``"relu"``, ``"gelu"``,
    ``"sigmoid"``, ``"tanh"``, ``"softmax"``, ``"leakyrelu"`` …"""
    make = _ACTIVATIONS.get(name.lower())
    if make is None:
        raise KeyError(f"unknown activation {name!r}; known: {sorted(_ACTIVATIONS)}")
    return make()


# -- layers -----------------------------------------------------------------------------------


class Dense(Cell):
    """``activation(x @ weight.T + bias)`` for ``x`` of shape ``[*, in_channels]``.

    ``weight`` is ``[out_channels, in_channels]``.  Defaults as MindSpore 2.x:
    ``HeUniform(sqrt(5))`` for the weight and ``Uniform(1 / sqrt(in_channels))`` for the bias
    (PyTorch's ``Linear`` initialisation).  ``activation`` is a cell or a name for
    :func:`get_activation`.
    """

    def __init__(self, in_channels: int, out_channels: int, weight_init: Any = None,
                 bias_init: Any = None, has_bias: bool = True,
                 activation: Union[str, Cell, None] = None, dtype: Any = float32) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.has_bias = has_bias
        self.weight = parameter(HeUniform(math.sqrt(5)) if weight_init is None else weight_init,
                                (out_channels, in_channels), dtype)
        self.bias = parameter(Uniform(1 / math.sqrt(in_channels)) if bias_init is None
                              else bias_init, (out_channels,), dtype) if has_bias else None
        self.activation = get_activation(activation) if isinstance(activation, str) \
            else activation

    def construct(self, x: Any) -> Tensor:
        y = F.matmul(x, F.transpose(self.weight))
        if self.has_bias:
            y = F.add(y, self.bias)
        if self.activation is not None:
            y = self.activation(y)
        return y

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"has_bias={self.has_bias}")


class Flatten(Cell):
    """Merge the axes ``start_dim`` … ``end_dim`` into one (by default all but the batch)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def construct(self, x: Any) -> Tensor:
        return F.flatten(x, self.start_dim, self.end_dim)


class Identity(Cell):
    """Its input, unchanged."""

    def construct(self, x: Any) -> Any:
        return x


class Dropout(Cell):
    """In training, zero each element with probability ``p`` and scale the rest by
    ``1 / (1 - p)``; in inference, the identity.  MindSpore's arguments: ``p`` (drop) or the
    older ``keep_prob`` (keep); default ``p=0.5``.

    The random stream is the cell's own: its key is a parameter (``rng_key``, not trainable;
    only when ``p > 0``) split at every training call and stored back, so a jitted training
    step draws a new mask at every step, and a network built after
    ``mskernel.random.set_seed(n)`` draws the same masks in every run.
    """

    def __init__(self, keep_prob: Optional[float] = None, p: Optional[float] = None) -> None:
        super().__init__()
        if keep_prob is not None and p is not None:
            raise ValueError("Dropout takes p or keep_prob, not both")
        drop = p if p is not None else 0.5 if keep_prob is None else 1 - keep_prob
        if not 0 <= drop < 1:
            raise ValueError(f"Dropout's drop probability must be in [0, 1), got {drop}")
        self.p = drop
        if drop > 0:
            self.rng_key = parameter(next_key(), None, "uint32", requires_grad=False)

    def construct(self, x: Any) -> Tensor:
        if not self.training or self.p == 0:
            return x
        state, draw = random.split(self.rng_key)
        self.rng_key.assign_value(state)
        return dropout(x, self.p, key=draw)

    def extend_repr(self) -> str:
        return f"p={self.p}"
