"""``mskernel.random``: random numbers from explicit keys, as JAX's ``jax.random``.

A key is a ``u32[2]`` tensor.  Make one with ``key(seed)``, derive independent ones with
``split`` or ``fold_in``, and give each draw its own key: the same key always gives the same
numbers, in eager mode and under ``@jit`` alike, on every backend (the bit generator is
specified in :mod:`mskernel.ops.random`)::

    k = mskernel.random.key(0)
    k, sub = mskernel.random.split(k)
    w = mskernel.random.normal(sub, (3, 4))

``rand(*shape, seed=...)`` and ``randn`` are conveniences for scripts.  Without ``seed`` they
draw from the process's seed set by ``set_seed(n)``: each call takes a fresh key
``fold_in(key(n), counter)`` and advances the counter.  That counter lives in Python, so it
is read when a function is *traced*: a jitted function calling ``randn()`` bakes one key in
and returns the same numbers on every call, and its numbers differ from an eager run's.
Eager and jit give the same numbers for the same seed only when keys are passed
explicitly (as arguments of the jitted function).
"""

from __future__ import annotations

import itertools
import operator
import threading
import typing
from typing import Any, Optional, Sequence

import numpy as np

from ..errors import MskernelError
from ..ir.dtypes import dtype as to_dtype, float32, int64
from . import functional as F
from .dispatch import apply
from .tensor import Tensor

__all__ = [
    "key", "split", "fold_in", "bits", "uniform", "normal", "truncated_normal", "bernoulli",
    "randint", "permutation", "categorical", "set_seed", "rand", "randn",
]


def _draw(op: str, *args: Tensor, **attrs: Any) -> Tensor:
    return typing.cast(Tensor, apply(op, *args, **attrs))


def _shape(shape: Any) -> tuple[int, ...]:
    if shape is None:
        return ()
    return (operator.index(shape),) if not isinstance(shape, (list, tuple)) else tuple(
        operator.index(d) for d in shape)


def _key_operand(k: Any) -> Tensor:
    t = F.asarray(k)
    if t.shape != (2,) or t.dtype.name != "uint32":
        raise TypeError(f"a random key is a uint32[2] tensor made by mskernel.random.key(seed), "
                        f"got {t.type}; split it to get several keys")
    return t


def _static_int(value: Any, what: str) -> int:
    if isinstance(value, Tensor) and value.is_traced:
        raise TypeError(f"{what} must be a Python int (it is an attribute of the op), got a "
                        f"traced {value.type} tensor")
    return operator.index(value)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.number))


# -- keys -------------------------------------------------------------------------------------


def key(seed: int) -> Tensor:
    """A key from an integer seed of up to 64 bits."""
    return _draw("random_key", seed=_static_int(seed, "seed"))


def split(key: Any, num: int = 2) -> tuple[Tensor, ...]:
    """``num`` new keys, independent of each other and of ``key``, as a tuple (so
    ``k1, k2 = split(k)`` works under ``@jit`` too)."""
    keys = _draw("random_split", _key_operand(key), num=_static_int(num, "num"))
    return tuple(keys[i] for i in range(keys.shape[0]))


def fold_in(key: Any, data: int) -> Tensor:
    """A new key mixing the 32-bit integer ``data`` into ``key`` (a step number, a rank)."""
    return _draw("random_fold_in", _key_operand(key), data=_static_int(data, "data"))


# -- draws ------------------------------------------------------------------------------------


def bits(key: Any, shape: Any = ()) -> Tensor:
    """Uniformly random uint32 words."""
    return _draw("random_bits", _key_operand(key), shape=_shape(shape))


def uniform(key: Any, shape: Any = (), dtype: Any = float32, minval: Any = 0.0,
            maxval: Any = 1.0) -> Tensor:
    """Floats uniform in ``[minval, maxval)``; the bounds may be tensors broadcasting to
    ``shape``."""
    k, dt = _key_operand(key), to_dtype(dtype)
    if _is_number(minval) and _is_number(maxval):
        return _draw("random_uniform", k, shape=_shape(shape), dtype=dt, minval=float(minval),
                     maxval=float(maxval))
    unit = _draw("random_uniform", k, shape=_shape(shape), dtype=dt)
    lo, hi = F.astype(minval, dt), F.astype(maxval, dt)
    return F.add(lo, F.multiply(unit, F.subtract(hi, lo)))


def normal(key: Any, shape: Any = (), dtype: Any = float32, mean: float = 0.0,
           std: float = 1.0) -> Tensor:
    """Normally distributed floats (standard unless ``mean``/``std`` say otherwise)."""
    return _draw("random_normal", _key_operand(key), shape=_shape(shape), dtype=to_dtype(dtype),
                 mean=float(mean), std=float(std))


def truncated_normal(key: Any, lower: float, upper: float, shape: Any = (),
                     dtype: Any = float32) -> Tensor:
    """Standard normal floats conditioned on ``[lower, upper]`` (JAX's argument order)."""
    return _draw("random_truncated_normal", _key_operand(key), shape=_shape(shape),
                 dtype=to_dtype(dtype), lower=float(lower), upper=float(upper))


def bernoulli(key: Any, p: Any = 0.5, shape: Any = None) -> Tensor:
    """Booleans that are true with probability ``p`` (a number, or a tensor of
    probabilities broadcasting to ``shape``; ``shape`` defaults to ``p``'s)."""
    k = _key_operand(key)
    if _is_number(p):
        return _draw("random_bernoulli", k, p=float(p), shape=_shape(shape))
    probs = F.asarray(p)
    if not probs.dtype.is_floating:
        probs = F.astype(probs, float32)
    draw_shape = probs.shape if shape is None else _shape(shape)
    return F.less(_draw("random_uniform", k, shape=draw_shape, dtype=probs.dtype), probs)


def randint(key: Any, shape: Any, minval: int, maxval: int, dtype: Any = int64) -> Tensor:
    """Integers uniform in ``[minval, maxval)``."""
    return _draw("random_randint", _key_operand(key), shape=_shape(shape),
                 minval=_static_int(minval, "minval"), maxval=_static_int(maxval, "maxval"),
                 dtype=to_dtype(dtype))


def permutation(key: Any, x: Any, axis: int = 0) -> Tensor:
    """A random permutation of ``range(x)`` for an int ``x``, else ``x`` shuffled along
    ``axis``."""
    k = _key_operand(key)
    if isinstance(x, (int, np.integer)):
        return _draw("random_permutation", k, n=int(x))
    t = F.asarray(x)
    if t.ndim == 0:
        raise ValueError("permutation: x must be an int or a tensor with at least one axis")
    order = _draw("random_permutation", k, n=t.shape[operator.index(axis)])
    return F.take(t, order, axis=axis)


def categorical(key: Any, logits: Any, axis: int = -1, shape: Optional[Sequence[int]] = None
                ) -> Tensor:
    """Category indices (int64) drawn with probabilities ``softmax(logits)`` along ``axis``;
    ``shape`` (the batch shape of the result) broadcasts the other axes of ``logits``."""
    k = _key_operand(key)
    t = F.asarray(logits)
    if not t.dtype.is_floating:
        t = F.astype(t, float32)
    t = F.moveaxis(t, axis, -1)
    if shape is not None:
        t = F.broadcast_to(t, _shape(shape) + t.shape[-1:])
    return _draw("random_categorical", k, t)


# -- the process seed -------------------------------------------------------------------------


class _ProcessSeed:
    """The seed of ``set_seed`` and the counter that gives each convenience call a key."""

    def __init__(self) -> None:
        self.seed: Optional[int] = None
        self._counter = itertools.count()
        self._lock = threading.Lock()

    def reset(self, seed: int) -> None:
        with self._lock:
            self.seed, self._counter = seed, itertools.count()

    def next_key(self) -> Tensor:
        with self._lock:
            if self.seed is None:
                raise MskernelError(
                    "mskernel.random.rand/randn need seed=..., or mskernel.random.set_seed(n) "
                    "first; or pass explicit keys to uniform/normal (reproducible under @jit)"
                )
            seed, count = self.seed, next(self._counter)
        return fold_in(key(seed), count)


_process_seed = _ProcessSeed()


def set_seed(seed: int) -> None:
    """Seed ``rand``/``randn`` calls made without ``seed=``; restarts their counter."""
    _process_seed.reset(operator.index(seed))


def _convenience_key(seed: Optional[int]) -> Tensor:
    return _process_seed.next_key() if seed is None else key(seed)


def rand(*shape: int, seed: Optional[int] = None, dtype: Any = float32) -> Tensor:
    """Floats uniform in ``[0, 1)`` of ``shape`` (``rand(2, 3)``)."""
    return uniform(_convenience_key(seed), shape, dtype)


def randn(*shape: int, seed: Optional[int] = None, dtype: Any = float32) -> Tensor:
    """Standard normal floats of ``shape`` (``randn(2, 3)``)."""
    return normal(_convenience_key(seed), shape, dtype)
