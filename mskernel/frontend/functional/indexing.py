"""Indexing ops: taking and gathering slices by index, scattering updates into a copy,
one-hot encoding, embedding lookups and :func:`nonzero`.  Negative indices count from the
end (see :func:`~mskernel.frontend.indexing.index_operand`)."""

from __future__ import annotations

import operator
from typing import Any, Optional

import numpy as np

from ...ir.dtypes import dtype as to_dtype
from ..indexing import index_operand, located
from ..tensor import Tensor, TracedValueError
from ._core import _along, _axis, _op, asarray, astype


def _gather_along(op: str, x: Any, indices: Any, axis: Optional[int]) -> Tensor:
    """``op`` (``gather`` or ``take_along_axis``) of ``x`` at ``indices`` along ``axis``
    (of the flattened ``x`` when None)."""
    t, ax = _along(x, axis)
    ax = _axis(ax, t.ndim)
    return _op(op, t, index_operand(op, t, indices, t.shape[ax], ax), axis=ax)


def take(x: Any, indices: Any, axis: Optional[int] = None) -> Tensor:
    """NumPy's ``take``: the slices of ``x`` at ``indices`` along ``axis`` (of the flattened
    tensor when None); negative indices count from the end."""
    return _gather_along("gather", x, indices, axis)


def gather(x: Any, indices: Any, axis: int = 0) -> Tensor:
    """MindSpore's ``gather``: :func:`take` along ``axis``."""
    return take(x, indices, axis)


def take_along_axis(x: Any, indices: Any, axis: Optional[int]) -> Tensor:
    """NumPy's ``take_along_axis`` (PyTorch's ``gather``): ``out[..., i, ...] =
    x[..., indices[..., i, ...], ...]``; negative indices count from the end."""
    return _gather_along("take_along_axis", x, indices, axis)


def gather_nd(x: Any, indices: Any) -> Tensor:
    """TensorFlow's ``gather_nd``: ``indices[..., k]`` holds tuples indexing the first ``k``
    axes of ``x``; negative components count from the end."""
    t = asarray(x)
    return _op("gather_nd", t, _index_tuples("gather_nd", t, indices))


def _index_tuples(op: str, t: Tensor, indices: Any) -> Tensor:
    idx = asarray(indices)
    k = idx.shape[-1] if idx.ndim else 0
    if not 0 < k <= t.ndim:
        raise located(op, t, IndexError(
            f"indices of shape {list(idx.shape)} must hold index tuples of length 1 to {t.ndim} "
            f"in their last axis to index x of shape {list(t.shape)}"))
    return index_operand(op, t, idx, t.shape[:k], 0)


def scatter_nd(x: Any, indices: Any, updates: Any, reduce: str = "none") -> Tensor:
    """A copy of ``x`` with ``updates`` placed at the index tuples ``indices[..., k]`` (the
    inverse of :func:`gather_nd`); ``reduce`` in none/add/mul/max/min combines them with
    the elements they land on (``add`` accumulates duplicates, as ``np.add.at``)."""
    t = asarray(x)
    return _op("scatter_nd", t, _index_tuples("scatter_nd", t, indices), astype(updates, t.dtype),
               reduce=reduce)


def scatter(x: Any, axis: int, indices: Any, updates: Any, reduce: str = "none") -> Tensor:
    """PyTorch's ``scatter``/``scatter_reduce`` as a copy: ``updates[p]`` lands on ``x`` at
    ``p`` with ``p[axis]`` replaced by ``indices[p]``."""
    t = asarray(x)
    ax = _axis(axis, t.ndim)
    return _op("scatter", t, index_operand("scatter", t, indices, t.shape[ax], ax),
               astype(updates, t.dtype),
               axis=ax, reduce=reduce)


def one_hot(indices: Any, depth: int, on_value: Any = 1, off_value: Any = 0, axis: int = -1,
            dtype: Any = None) -> Tensor:
    """``on_value`` where a new axis of size ``depth`` equals the index, ``off_value``
    elsewhere (indices outside ``[0, depth)`` give all-off rows); MindSpore's argument order.
    The dtype is ``dtype``, else that of a tensor ``on_value``, else float32."""
    if dtype is None:
        dtype = on_value.dtype if isinstance(on_value, Tensor) else "float32"
    return _op("one_hot", asarray(indices), depth=operator.index(depth), axis=axis,
               dtype=to_dtype(dtype), on_value=float(on_value), off_value=float(off_value))


def embedding(ids: Any, table: Any) -> Tensor:
    """Rows of ``table [V, D]`` at integer ``ids`` of any shape (PyTorch's argument order)."""
    return _op("embedding", asarray(table), asarray(ids))


def nonzero(x: Any) -> tuple[Tensor, ...]:
    """The int64 indices of the non-zero elements, one tensor per axis (NumPy).  The result's
    size depends on the values, so ``x`` must be concrete: under ``@jit`` use ``where``."""
    t = asarray(x)
    if t.is_traced:
        raise TracedValueError(
            f"nonzero of a traced {t.type} tensor: its result's shape depends on the values, "
            "which a traced function does not know; use where(cond, x, y) to select values "
            "with a fixed shape instead"
        )
    host = t.numpy()
    if host.ndim == 0:
        raise ValueError("nonzero of a 0-d tensor; use x.reshape(1) first")
    return tuple(Tensor(i.astype(np.int64)) for i in np.nonzero(host))
