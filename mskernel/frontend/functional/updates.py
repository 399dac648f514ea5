"""Functional updates of a tensor that MindSpore's ``ops`` names: :func:`masked_fill` and
:func:`index_add` (copies, as every op here)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from ._core import _axis, asarray, astype
from .elementwise import multiply, where
from .indexing import scatter
from .shape import broadcast_to, reshape


def masked_fill(x: Any, mask: Any, value: Any) -> Tensor:
    """``x`` with ``value`` where the (broadcast) bool ``mask`` is true."""
    t = asarray(x)
    return where(mask, astype(value, t.dtype), t)


def index_add(x: Any, indices: Any, y: Any, axis: int, alpha: Any = 1) -> Tensor:
    """``x`` with ``alpha * y[..., j, ...]`` added at ``x[..., indices[j], ...]`` along
    ``axis`` (MindSpore's argument order; repeated indices accumulate)."""
    t = asarray(x)
    ax = _axis(axis, t.ndim)
    updates = asarray(y) if _is_one(alpha) else multiply(y, alpha)
    index = asarray(indices)
    if index.ndim != 1 or updates.ndim != t.ndim or updates.shape[ax] != index.size:
        raise ValueError(f"index_add: {index.type} indices and {updates.type} updates do not "
                         f"fit axis {axis} of a {t.type} tensor")
    where_to = broadcast_to(reshape(index, [-1 if a == ax else 1 for a in range(t.ndim)]),
                            updates.shape)
    return scatter(t, ax, where_to, updates, reduce="add")


def _is_one(value: Any) -> bool:
    return not isinstance(value, Tensor) and value == 1
