"""Operators and methods of :class:`~mskernel.frontend.tensor.Tensor`."""

from __future__ import annotations


class TensorMethods:
    __slots__ = ()
