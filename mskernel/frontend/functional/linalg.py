"""Linear algebra: :func:`matmul`, :func:`einsum`, and built on them NumPy's :func:`dot`,
:func:`outer`, :func:`tensordot` and :func:`kron`, :func:`cross`, :func:`diagonal`,
:func:`trace` and the vector and matrix :func:`norm` (those that need no factorization)."""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Optional, Union

import numpy as np

from ..promote import promote
from ..tensor import Tensor
from ._core import Axis, _axes, _axis, _inexact, _ints, _op, asarray
from .elementwise import abs, multiply, not_equal, pow, sqrt, subtract
from .indexing import take
from .reduction import amax, amin, sum
from .shape import broadcast_arrays, expand_dims, moveaxis, reshape, stack

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


def tensordot(x: Any, y: Any, axes: Any = 2) -> Tensor:
    """Sum of products over ``axes``: the last ``axes`` axes of ``x`` with the first of
    ``y`` (an int), or the pairs of axis lists ``(x_axes, y_axes)``."""
    a, b = promote(x, y)
    if isinstance(axes, int):
        axes = (list(range(a.ndim - axes, a.ndim)), list(range(axes)))
    pairs = [[_axis(i, t.ndim) for i in _ints(ax)] for ax, t in zip(axes, (a, b))]
    left = list(_LETTERS[:a.ndim])
    right = list(_LETTERS[a.ndim:a.ndim + b.ndim])
    for i, j in zip(*pairs):
        right[j] = left[i]
    kept = [c for c in left if c not in right] + [c for c in right if c not in left]
    return einsum(f"{''.join(left)},{''.join(right)}->{''.join(kept)}", a, b)


def kron(x: Any, y: Any) -> Tensor:
    """The Kronecker product: block ``(i, j, ...)`` is ``x[i, j, ...] * y``."""
    a, b = promote(x, y)
    rank = builtins.max(a.ndim, b.ndim)
    a, b = (reshape(t, (1,) * (rank - t.ndim) + t.shape) for t in (a, b))
    product = multiply(reshape(a, [d for n in a.shape for d in (n, 1)]),
                       reshape(b, [d for n in b.shape for d in (1, n)]))
    return reshape(product, [m * n for m, n in zip(a.shape, b.shape)])


def cross(x: Any, y: Any, axis: Optional[int] = None) -> Tensor:
    """The cross product of 3-vectors along ``axis`` (the first axis of size 3 when None)."""
    a, b = broadcast_arrays(*promote(x, y))
    if axis is None:
        axis = next((i for i, n in enumerate(a.shape) if n == 3), -1)
    ax = _axis(axis, a.ndim)
    if a.shape[ax] != 3 or b.shape[ax] != 3:
        raise ValueError(f"cross: axis {axis} of {a.type} and {b.type} must have size 3")
    u = [take(a, i, axis=ax) for i in range(3)]
    v = [take(b, i, axis=ax) for i in range(3)]
    return stack([subtract(multiply(u[(i + 1) % 3], v[(i + 2) % 3]),
                           multiply(u[(i + 2) % 3], v[(i + 1) % 3])) for i in range(3)], ax)


def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """Diagonal ``offset`` of the planes of ``axis1`` and ``axis2``, as a last axis."""
    t = asarray(x)
    planes = moveaxis(t, (axis1, axis2), (-2, -1))
    rows, cols = planes.shape[-2:]
    k = operator.index(offset)
    length = builtins.max(0, builtins.min(rows, cols - k) if k >= 0 else
                          builtins.min(rows + k, cols))
    start = k if k >= 0 else -k * cols
    flat = reshape(planes, planes.shape[:-2] + (rows * cols,))
    return take(flat, start + np.arange(length) * (cols + 1), axis=-1)


def trace(x: Any) -> Tensor:
    """Sum of the main diagonal of a matrix."""
    t = asarray(x)
    if t.ndim != 2:
        raise ValueError(f"trace: expects a matrix, got a {t.type} tensor")
    return sum(diagonal(t))


def norm(x: Any, ord: Union[None, float, str] = None, axis: Axis = None,
         keepdims: bool = False) -> Tensor:
    """Vector norms (``ord`` a number or ±inf; 2 when None) over one axis, matrix norms
    (``"fro"``, ``"nuc"``, ±1, ±2, ±inf) over two; over every axis, flattened, when ``axis``
    and ``ord`` are None (``torch.linalg.norm``).  ``"nuc"`` and ±2 take the singular values
    from ``ops.svd`` (mskernel-linalg)."""
    t = _inexact(x)
    axes = _axes(axis)
    if axes is None:
        axes = tuple(range(t.ndim)) if ord is None or t.ndim == 1 else (0, 1)
    if len(axes) == 2 and ord is not None:
        return _matrix_norm(t, ord, axes, keepdims)
    if ord is None or ord == 2:
        return sqrt(sum(multiply(t, t) if not t.dtype.is_complex else abs(t) ** 2, axes,
                        keepdims))
    if ord == math.inf:
        return amax(abs(t), axes, keepdims)
    if ord == -math.inf:
        return amin(abs(t), axes, keepdims)
    if ord == 0:
        return sum(not_equal(t, 0), axes, keepdims, dtype=t.dtype)
    if isinstance(ord, str):
        raise ValueError(f"norm: ord {ord!r} is a matrix norm; give two axes")
    return pow(sum(pow(abs(t), ord), axes, keepdims), 1.0 / ord)


def _matrix_norm(t: Tensor, ord: Union[float, str], axes: tuple[int, ...],
                 keepdims: bool) -> Tensor:
    if ord == "fro":
        return norm(t, None, axes, keepdims)
    if ord not in (1, -1, 2, -2, math.inf, -math.inf, "nuc"):
        raise ValueError(f"norm: no matrix norm ord={ord!r}; 'fro', 'nuc', ±1, ±2 and ±inf are")
    rows, cols = (_axis(a, t.ndim) for a in axes)
    extreme = amax if ord in (1, 2, math.inf) else amin
    if ord in (2, -2, "nuc"):
        from ... import ops  # ops.svd comes from mskernel-linalg

        s = ops.svd(moveaxis(t, (rows, cols), (-2, -1)), compute_uv=False)
        result = sum(s, -1) if ord == "nuc" else extreme(s, -1)
        return expand_dims(result, (rows, cols)) if keepdims else result
    summed, other = (rows, cols) if ord in (1, -1) else (cols, rows)
    totals = sum(abs(t), summed, keepdims=True)
    result = extreme(totals, other, keepdims=True)
    return result if keepdims else reshape(result, [n for i, n in enumerate(t.shape)
                                                    if i not in (rows, cols)])
