"""Linear algebra: :func:`matmul`, :func:`einsum`, and NumPy's :func:`dot` and :func:`outer`
built on them."""

from __future__ import annotations

from typing import Any

from ..promote import promote
from ..tensor import Tensor
from ._core import _op
from .elementwise import multiply
from .shape import reshape

_LETTERS = "abcdefghijklmnopqrstuvwxy"


def matmul(x: Any, y: Any) -> Tensor:
    """Matrix product with NumPy's rules for 1-d operands and batch broadcasting."""
    return _op("matmul", *promote(x, y))


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation, NumPy's subscripts (ellipsis included).  The operands may also be
    given as one list of tensors (PyTorch)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)) and all(
            isinstance(o, Tensor) for o in operands[0]):
        operands = tuple(operands[0])
    return _op("einsum", *promote(*operands), equation=equation)


def dot(x: Any, y: Any) -> Tensor:
    """NumPy's ``dot``: a product with a scalar, else the sum over the last axis of ``x`` and
    the second-to-last of ``y`` (the only axis of a 1-d ``y``)."""
    a, b = promote(x, y)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.ndim == 1 or b.ndim <= 2:
        return matmul(a, b)
    left = _LETTERS[:a.ndim - 1]
    right = _LETTERS[a.ndim - 1:a.ndim + b.ndim - 3]
    last = _LETTERS[a.ndim + b.ndim - 3]
    return einsum(f"{left}z,{right}z{last}->{left}{right}{last}", a, b)


def outer(x: Any, y: Any) -> Tensor:
    """``x[i] * y[j]`` of the flattened operands."""
    a, b = promote(x, y)
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))
