"""Sorting ops: stable :func:`sort` and :func:`argsort` along an axis, and :func:`topk`."""

from __future__ import annotations

import operator
from typing import Any, Optional

from ..tensor import Tensor
from ._core import _along, _op, _ops, asarray


def sort(x: Any, axis: Optional[int] = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
    """``(values, indices)`` of ``x`` sorted stably along ``axis`` (the flattened tensor when
    None); NaN sorts last."""
    t, ax = _along(x, axis)
    return _op("sort", t, axis=ax, descending=descending), argsort(t, ax, descending)


def argsort(x: Any, axis: Optional[int] = -1, descending: bool = False) -> Tensor:
    """int64 indices that sort ``x`` stably along ``axis``."""
    t, ax = _along(x, axis)
    return _op("argsort", t, axis=ax, descending=descending)


def topk(x: Any, k: int, axis: int = -1, largest: bool = True,
         sorted: bool = True) -> tuple[Tensor, Tensor]:
    """``(values, indices)`` of the ``k`` largest (smallest unless ``largest``) elements
    along ``axis``; ties go to the lower index."""
    values, indices = _ops("topk", asarray(x), k=operator.index(k), axis=operator.index(axis),
                           largest=largest, sorted=sorted)
    return values, indices
