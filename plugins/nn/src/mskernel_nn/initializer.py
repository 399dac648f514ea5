"""Parameter initialisers, as MindSpore's ``mindspore.common.initializer``.

``initializer(init, shape, dtype=float32, seed=None)`` makes a tensor from ``init``: an
:class:`Initializer` (``Normal(sigma)``, ``Uniform(scale)``, ``XavierUniform(gain)``,
``XavierNormal(gain)``, ``HeUniform(negative_slope, mode, nonlinearity)``, ``HeNormal``,
``TruncatedNormal(sigma, mean, a, b)``, ``Zero``, ``One``, ``Constant(value)``), one of their
names (``"normal"``, ``"he_uniform"``, ``"zeros"`` …), a number (a constant) or a tensor or
array of the right shape (copied).

Random draws come from :mod:`mskernel.random` keys, so they are the same on every backend:

- ``seed=n`` always gives the same values for the same initialiser, shape and dtype;
- without a seed, each draw takes the next key of the process seed set by
  ``mskernel.random.set_seed(n)`` — a network built after ``set_seed(n)`` has the same
  weights in every run;
- without either, the operating system's entropy seeds the draw (as MindSpore and PyTorch do
  without a seed).

Initial values are computed eagerly even while a function is traced, so a network built
inside ``@jit`` has concrete weights (MindSpore builds cells at compile time).

Fans follow MindSpore (and PyTorch): for a weight of shape ``[out, in, *kernel]``,
``fan_in = in * prod(kernel)`` and ``fan_out = out * prod(kernel)``.
"""

from __future__ import annotations

import math
import numbers
import secrets
from typing import Any, Optional, Sequence

import numpy as np

from mskernel import float32, ops as F, random
from mskernel_sdk import DType, MskernelError, Parameter, Tensor, dtype as to_dtype, outside_traces

__all__ = [
    "Constant", "HeNormal", "HeUniform", "Initializer", "Normal", "One", "TruncatedNormal",
    "Uniform", "XavierNormal", "XavierUniform", "Zero", "calculate_gain", "initializer",
    "next_key", "parameter",
]

Shape = tuple[int, ...]


class Initializer:
    """An initialisation rule: ``init(shape, dtype, key)`` gives a tensor.  Subclasses
    implement :meth:`generate`; deterministic ones ignore the key."""

    draws = True

    def __call__(self, shape: Sequence[int], dtype: Any = float32,
                 key: Optional[Tensor] = None) -> Tensor:
        dt = to_dtype(dtype)
        shape = tuple(int(d) for d in shape)
        if self.draws and not dt.is_floating:
            raise TypeError(f"{type(self).__name__} draws floating-point values; it cannot "
                            f"initialise a {dt} parameter")
        return self.generate(shape, dt, key if key is not None or not self.draws
                             else next_key())

    def generate(self, shape: Shape, dtype: DType, key: Optional[Tensor]) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must define generate()")

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({settings})"


# -- deterministic ----------------------------------------------------------------------------


class Constant(Initializer):
    """Every element ``value``."""

    draws = False

    def __init__(self, value: float) -> None:
        self.value = value

    def generate(self, shape: Shape, dtype: DType, key: Optional[Tensor]) -> Tensor:
        return F.full(shape, self.value, dtype)


class Zero(Constant):
    """Every element 0."""

    def __init__(self) -> None:
        super().__init__(0)


class One(Constant):
    """Every element 1."""

    def __init__(self) -> None:
        super().__init__(1)


# -- fixed distributions ----------------------------------------------------------------------


class Normal(Initializer):
    """Normal values with mean ``mean`` and standard deviation ``sigma``."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0) -> None:
        self.sigma = sigma
        self.mean = mean

    def generate(self, shape: Shape, dtype: DType, key: Optional[Tensor]) -> Tensor:
        return random.normal(key, shape, dtype, mean=self.mean, std=self.sigma)


class Uniform(Initializer):
    """Values uniform in ``[-scale, scale]``."""

    def __init__(self, scale: float = 0.07) -> None:
        self.scale = scale

    def generate(self, shape: Shape, dtype: DType, key: Optional[Tensor]) -> Tensor:
        return random.uniform(key, shape, dtype, -self.scale, self.scale)


class TruncatedNormal(Initializer):
    """Normal values (``mean``, ``sigma``) conditioned on ``[a, b]`` (absolute bounds)."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0, a: float = -2.0,
                 b: float = 2.0) -> None:
        if not a < b:
            raise ValueError(f"TruncatedNormal needs a < b, got a={a}, b={b}")
        self.sigma = sigma
        self.mean = mean
        self.a = a
        self.b = b

    def generate(self, shape: Shape, dtype: DType, key: Optional[Tensor]) -> Tensor:
        lower, upper = (self.a - self.mean) / self.sigma, (self.b - self.mean) / self.sigma
        z = random.truncated_normal(key, lower, upper, shape, dtype)
        return F.add(F.multiply(z, self.sigma), self.mean)


# -- fan-scaled distributions -----------------------------------------------------------------


def _fans(shape: Shape, who: str) -> tuple[int, int]:
    if len(shape) < 2:
        raise ValueError(f"{who} needs a weight of at least 2 dims to compute its fans, got "
                         f"shape {list(shape)}")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity: str, param: Optional[float] = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's and MindSpore's table):
    1 for linear, convolutions and sigmoid, 5/3 for tanh, sqrt(2) for relu,
    sqrt(2 / (1 + slope^2)) for leaky_relu (slope ``param``, default 0.01), 3/4 for selu."""
    linear = {"linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid"}
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, numbers.Real):
            raise ValueError(f"leaky_relu's negative slope must be a number, got {slope!r}")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unknown nonlinearity {nonlinearity!r}; expected one of "
                     f"{sorted(linear | {'tanh', 'relu', 'leaky_relu', 'selu'})}")


class XavierUniform(Initializer):
    """Uniform in ``[-b, b]``, ``b = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot)."""

    def __init__(self, gain: float = 1.0) -> None:
        self.gain = gain

    def generate(self, shape: Shape, dtype: DType, key: Optional[Tensor]) -> Tensor:
        fan_in, fan_out = _fans(shape, "XavierUniform")
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return random.uniform(key, shape, dtype, -bound, bound)


class XavierNormal(Initializer):
    """Normal with ``std = gain * sqrt(2 / (fan_in + fan_out))`` (Glorot)."""

    def __init__(self, gain: float = 1.0) -> None:
        self.gain = gain

    def generate(self, shape: Shape, dtype: DType, key: Optional[Tensor]) -> Tensor:
        fan_in, fan_out = _fans(shape, "XavierNormal")
        return random.normal(key, shape, dtype,
                             std=self.gain * math.sqrt(2.0 / (fan_in + fan_out)))


class _He(Initializer):
    """The He (Kaiming) rules: ``std = gain(nonlinearity, negative_slope) / sqrt(fan)`` with
    ``fan`` the weight's ``fan_in`` or ``fan_out`` (``mode``)."""

    def __init__(self, negative_slope: float = 0, mode: str = "fan_in",
                 nonlinearity: str = "leaky_relu") -> None:
        if mode not in ("fan_in", "fan_out"):
            raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
        calculate_gain(nonlinearity, negative_slope)  # reject unknown settings now
        self.negative_slope = negative_slope
        self.mode = mode
        self.nonlinearity = nonlinearity

    def std(self, shape: Shape) -> float:
        fan_in, fan_out = _fans(shape, type(self).__name__)
        fan = fan_in if self.mode == "fan_in" else fan_out
        return calculate_gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan)


class HeUniform(_He):
    """Uniform in ``[-b, b]``, ``b = sqrt(3) * std`` (Kaiming uniform)."""

    def generate(self, shape: Shape, dtype: DType, key: Optional[Tensor]) -> Tensor:
        bound = math.sqrt(3.0) * self.std(shape)
        return random.uniform(key, shape, dtype, -bound, bound)


class HeNormal(_He):
    """Normal with the He ``std`` (Kaiming normal)."""

    def generate(self, shape: Shape, dtype: DType, key: Optional[Tensor]) -> Tensor:
        return random.normal(key, shape, dtype, std=self.std(shape))


# -- the initializer function -----------------------------------------------------------------

#: Names accepted for ``init`` (MindSpore's aliases, lower case).
_BY_NAME: dict[str, type[Initializer]] = {
    "zeros": Zero, "zero": Zero, "ones": One, "one": One, "normal": Normal,
    "uniform": Uniform, "truncatednormal": TruncatedNormal, "truncated_normal": TruncatedNormal,
    "xavieruniform": XavierUniform, "xavier_uniform": XavierUniform,
    "xaviernormal": XavierNormal, "xavier_normal": XavierNormal, "heuniform": HeUniform,
    "he_uniform": HeUniform, "henormal": HeNormal, "he_normal": HeNormal,
}


def next_key() -> Tensor:
    """A key for a draw made without ``seed`` (an initialiser, a dropout layer's state): the
    next one of the process seed, else one from the operating system's entropy."""
    with outside_traces():
        try:
            words = np.asarray(random.rand(2)).view(np.uint32)
        except MskernelError:  # no mskernel.random.set_seed(...) yet
            return random.key(secrets.randbits(63))
        return random.key((int(words[0]) << 31) ^ int(words[1]))


def _resolve(init: Any) -> Initializer:
    if isinstance(init, Initializer):
        return init
    if isinstance(init, str):
        rule = _BY_NAME.get(init.lower())
        if rule is None:
            raise ValueError(f"unknown initializer {init!r}; known names: {sorted(_BY_NAME)}")
        return rule()
    if isinstance(init, numbers.Number) and not isinstance(init, bool):
        return Constant(init)  # type: ignore[arg-type]
    raise TypeError(f"init must be an Initializer, a name, a number, a tensor or an array, got "
                    f"{type(init).__name__}")


def initializer(init: Any, shape: Any = None, dtype: Any = float32,
                seed: Optional[int] = None) -> Tensor:
    """A tensor of ``shape`` and ``dtype`` initialised by ``init`` (see the module docs);
    ``seed`` makes a random draw reproducible."""
    with outside_traces():
        return _initial_value(init, shape, dtype, seed)


def _initial_value(init: Any, shape: Any, dtype: Any, seed: Optional[int]) -> Tensor:
    if isinstance(init, (Tensor, np.ndarray)):
        values = F.astype(init, dtype)
        if shape is not None and values.shape != tuple(shape):
            raise ValueError(f"the initial value has shape {list(values.shape)}, but the "
                             f"parameter needs {list(shape)}")
        return values
    if shape is None:
        raise ValueError("initializer needs a shape unless init is a tensor or an array")
    dims = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    return _resolve(init)(dims, dtype, None if seed is None else random.key(seed))


def parameter(init: Any, shape: Any, dtype: Any = float32, requires_grad: bool = True) -> Parameter:
    """A new :class:`~mskernel.Parameter` initialised by ``init`` (how layers make theirs; the
    cell that holds it gives its name)."""
    return Parameter(initializer(init, shape, dtype), requires_grad=requires_grad)
