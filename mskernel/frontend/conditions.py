"""Conditions of control flow: the truth value a branch or loop reads from a tensor
(:func:`predicate`), and :class:`ControlFlowError` for branches or iterations that disagree.
Shared by the functional control flow (:mod:`.control`) and the converted Python statements
(:mod:`.autograph`)."""

from __future__ import annotations

from typing import Any

from ..errors import MskernelError
from . import functional as F
from .tensor import Tensor

__all__ = ["ControlFlowError", "predicate"]


class ControlFlowError(MskernelError, TypeError):
    """Branches or loop bodies disagree on the structure or types of their values."""


def predicate(pred: Any, op: str) -> Tensor:
    """``pred`` as a scalar bool tensor (non-zero is true); ``op`` names the statement or
    function in the error for a tensor of more than one element."""
    p = F.asarray(pred)
    if p.size != 1:
        raise ControlFlowError(f"{op}: the predicate must have one element, got {p.type}")
    p = F.reshape(p, ())
    return p if p.dtype.is_bool else F.not_equal(p, F.zeros_like(p))
