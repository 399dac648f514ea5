"""Operators and methods of :class:`~mskernel.frontend.tensor.Tensor`, installed on the class
by :func:`install` when this package is imported (as JAX sets its array methods from
``jax.numpy``): the tensor module holds data only and never imports the ops built on it.

Each one is the functional op of the same meaning, so a method and its function never
disagree: ``x.sum(1)`` is ``mskernel.ops.sum(x, 1)`` and ``x + 1`` is
``mskernel.ops.add(x, 1)``.  Binary operators accept what the functional ops accept (tensors,
NumPy arrays, lists, Python and NumPy scalars) and return ``NotImplemented`` for anything
else, so ``x == None`` is ``False`` as in Python.  Tensors are immutable: ``x.at[i].set(v)``
returns the updated copy.

:class:`TensorMethods` lists them; type checkers see it as a base class of ``Tensor``.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Iterator

import numpy as np

from ..indexing import IndexUpdater, getitem
from ..tensor import Tensor, TracedValueError
from . import elementwise as E, indexing as I, linalg as L, nn as N, reduction as R
from . import shape as S, sorting as O
from ._core import astype
from .names import accepting_mindspore_keywords

_OPERAND_TYPES = (Tensor, int, float, complex, bool, np.ndarray, np.generic, list, tuple)


def _operator(fn: Callable[[Any, Any], Tensor], reflected: bool = False) -> Callable[[Any, Any], Any]:
    """A binary operator calling ``fn`` (operands swapped if ``reflected``)."""

    def method(self: Tensor, other: Any) -> Any:
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)

    name = fn.__name__
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``mskernel.ops.{name}{'(other, self)' if reflected else '(self, other)'}``."
    return method


def _shape_args(args: tuple[Any, ...]) -> Any:
    """``f(2, 3)`` and ``f((2, 3))`` alike: the varargs as one sequence."""
    return args[0] if len(args) == 1 and not isinstance(args[0], int) else args


class TensorMethods:
    """The operators and methods :func:`install` puts on ``Tensor``."""

    __slots__ = ()

    # -- operators ----------------------------------------------------------------------------

    __add__, __radd__ = _operator(E.add), _operator(E.add, True)
    __sub__, __rsub__ = _operator(E.subtract), _operator(E.subtract, True)
    __mul__, __rmul__ = _operator(E.multiply), _operator(E.multiply, True)
    __truediv__, __rtruediv__ = _operator(E.true_divide), _operator(E.true_divide, True)
    __floordiv__, __rfloordiv__ = _operator(E.floor_divide), _operator(E.floor_divide, True)
    __mod__, __rmod__ = _operator(E.remainder), _operator(E.remainder, True)
    __pow__, __rpow__ = _operator(E.power), _operator(E.power, True)
    __matmul__, __rmatmul__ = _operator(L.matmul), _operator(L.matmul, True)
    __and__, __rand__ = _operator(E.bitwise_and), _operator(E.bitwise_and, True)
    __or__, __ror__ = _operator(E.bitwise_or), _operator(E.bitwise_or, True)
    __xor__, __rxor__ = _operator(E.bitwise_xor), _operator(E.bitwise_xor, True)
    __lshift__, __rlshift__ = _operator(E.left_shift), _operator(E.left_shift, True)
    __rshift__, __rrshift__ = _operator(E.right_shift), _operator(E.right_shift, True)
    __eq__ = _operator(E.equal)  # type: ignore[assignment]
    __ne__ = _operator(E.not_equal)  # type: ignore[assignment]
    __lt__, __le__ = _operator(E.less), _operator(E.less_equal)
    __gt__, __ge__ = _operator(E.greater), _operator(E.greater_equal)
    __neg__ = E.negative
    __abs__ = E.abs
    __invert__ = E.bitwise_not
    __round__ = E.round

    def __pos__(self) -> Tensor:
        return self  # type: ignore[return-value]

    # -- indexing -----------------------------------------------------------------------------

    __getitem__ = getitem

    @property
    def at(self) -> IndexUpdater:
        """Functional updates: ``x.at[idx].set(v)``, ``.add(v)``, ``.multiply(v)``,
        ``.min(v)``, ``.max(v)`` return new tensors (JAX's ``.at``)."""
        return IndexUpdater(self)  # type: ignore[arg-type]

    def __contains__(self, value: Any) -> bool:
        """``value in x``: some element equals ``value`` (NumPy)."""
        return bool(R.any(E.equal(self, value)))

    def __iter__(self) -> Iterator[Tensor]:
        """The sub-tensors along the first axis (concrete tensors only)."""
        t: Any = self
        if t.is_traced:
            raise TracedValueError(
                f"cannot iterate over a traced {t.type} tensor; write the loop in the jitted "
                "function itself (for i in range(n): ... x[i] ...), where it is converted, or "
                "use mskernel.ops.scan / fori_loop"
            )
        if t.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (t[i] for i in range(t.shape[0]))

    # -- shape --------------------------------------------------------------------------------

    def reshape(self, *shape: Any) -> Tensor:
        """``x.reshape(2, 3)`` or ``x.reshape((2, 3))``; one dimension may be -1."""
        return S.reshape(self, _shape_args(shape))

    def view(self, *shape: Any) -> Tensor:
        """MindSpore's ``x.view(2, 3)``: :meth:`reshape` (tensors are immutable, so a view
        and a reshaped copy cannot be told apart)."""
        return S.reshape(self, _shape_args(shape))

    def transpose(self, *axes: Any) -> Tensor:
        """``x.transpose()`` reverses the axes; ``x.transpose(1, 0, 2)`` or
        ``x.transpose((1, 0, 2))`` permutes them."""
        return S.transpose(self, _shape_args(axes) if axes else None)

    permute = transpose

    @property
    def T(self) -> Tensor:
        """The tensor with its axes reversed."""
        return S.transpose(self)

    @property
    def mT(self) -> Tensor:
        """The last two axes swapped (a batch of transposed matrices)."""
        return S.swapaxes(self, -1, -2)

    @property
    def real(self) -> Tensor:
        return E.real(self)

    @property
    def imag(self) -> Tensor:
        return E.imag(self)

    flatten = S.flatten
    ravel = S.ravel
    squeeze = S.squeeze
    expand_dims = S.expand_dims
    unsqueeze = S.unsqueeze
    swapaxes = S.swapaxes
    moveaxis = S.moveaxis
    broadcast_to = S.broadcast_to
    repeat = S.repeat
    tile = S.tile
    flip = S.flip
    roll = S.roll
    split = S.split
    tril = S.tril
    triu = S.triu
    take = I.take
    take_along_axis = I.take_along_axis
    nonzero = I.nonzero

    # -- conversion and math ------------------------------------------------------------------

    astype = astype
    abs = E.abs
    sign = E.sign
    square = E.square
    sqrt = E.sqrt
    rsqrt = E.rsqrt
    exp = E.exp
    log = E.log
    sin = E.sin
    cos = E.cos
    tanh = E.tanh
    sigmoid = E.sigmoid
    relu = E.relu
    floor = E.floor
    ceil = E.ceil
    round = E.round
    clip = E.clip
    conj = E.conj
    isnan = E.isnan
    isfinite = E.isfinite
    softmax = N.softmax
    log_softmax = N.log_softmax
    matmul = L.matmul
    dot = L.dot

    # -- reductions, scans and sorting --------------------------------------------------------

    sum = R.sum
    prod = R.prod
    mean = R.mean
    var = R.var
    std = R.std
    max = R.amax
    min = R.amin
    argmax = R.argmax
    argmin = R.argmin
    all = R.all
    any = R.any
    logsumexp = R.logsumexp
    cumsum = R.cumsum
    cumprod = R.cumprod
    sort = O.sort
    argsort = O.argsort
    topk = O.topk


def install() -> None:
    """Put the operators and methods of :class:`TensorMethods` on ``Tensor`` (and so on its
    subclasses, such as ``Parameter``); the methods take MindSpore's keywords as the
    functional ops do (``x.mean(dim=1, keep_dims=True)``, :mod:`.names`)."""
    for name, value in vars(TensorMethods).items():
        if inspect.isfunction(value) and not name.startswith("__"):
            value = accepting_mindspore_keywords(value)
        if callable(value) or isinstance(value, property):
            setattr(Tensor, name, value)
