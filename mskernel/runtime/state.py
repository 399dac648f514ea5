"""Run-time objects for the IR's stateful types.

``!token`` values are represented by :data:`TOKEN_VALUE` (they carry no data; only the data
dependency they create matters).  ``!ref<T>`` values are :class:`RefCell` objects: a mutable
cell holding one array of type ``T``, owned by the caller, read by ``ref_load`` and written by
``ref_store``.  While a graph runs, the cell holds a :class:`~mskernel.runtime.DeviceArray`
of the backend that uses it; a cell created with a host (NumPy) array is moved to that
device on first use, and stays there between runs.
"""

from __future__ import annotations

from typing import Any

from ..ir.types import TensorType


class _Token:
    __slots__ = ()

    def __repr__(self) -> str:
        return "TOKEN"


TOKEN_VALUE = _Token()


class RefCell:
    """A mutable cell of a fixed tensor type (a parameter, an optimizer slot, RNG state)."""

    __slots__ = ("type", "value")

    def __init__(self, type: TensorType, value: Any) -> None:
        self.type = type
        self.value = value

    def __repr__(self) -> str:
        return f"RefCell({self.type})"
