"""``mskernel.common.dtype``: the element types under MindSpore's names, the module scripts
import as ``mstype`` (``from mskernel import dtype as mstype``, ``import
mskernel.common.dtype as mstype``) — ``mstype.float32``, ``mstype.int32`` …

The module is also callable, as ``mskernel.dtype`` always was: ``mskernel.dtype("f32")`` is
:func:`mskernel.ir.dtypes.dtype` (a name, a NumPy dtype or a Python type to a
:class:`~mskernel.ir.dtypes.DType`).
"""

from __future__ import annotations

import sys
import types
from typing import Any


from ..ir.dtypes import (
    ALL_DTYPES, FLOAT_DTYPES, INTEGER_DTYPES, DType, bfloat16, bool_, complex64, complex128,
    dtype as _to_dtype, float16, float32, float64, int8, int16, int32, int64, uint8, uint16,
    uint32, uint64,
)

# MindSpore's C-style aliases of the same types
byte, short, intc, intp = int8, int16, int32, int64
ubyte, ushort, uintc, uintp = uint8, uint16, uint32, uint64
half, single, double = float16, float32, float64

#: MindSpore's groups of types
int_type = tuple(t for t in INTEGER_DTYPES if t.kind == "i")
uint_type = tuple(t for t in INTEGER_DTYPES if t.kind == "u")
float_type = FLOAT_DTYPES
complex_type = (complex64, complex128)
number_type = (*int_type, *uint_type, *float_type, *complex_type)
all_types = ALL_DTYPES

_PYTHON_TYPES = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def pytype_to_dtype(obj: Any) -> DType:
    """The dtype of a Python or NumPy type (``int`` → int64, ``float`` → float32)."""
    return _to_dtype(obj)


def dtype_to_nptype(type_: Any) -> type:
    """The NumPy scalar type of ``type_`` (NumPy has no bfloat16: that is an error)."""
    dt = _to_dtype(type_)
    if dt is bfloat16:
        raise TypeError("NumPy has no bfloat16 type (mskernel keeps bfloat16 values in float32 "
                        "arrays); cast to float32 first")
    return dt.storage.type  # type: ignore[no-any-return]


def dtype_to_pytype(type_: Any) -> type:
    """The Python type holding one element of ``type_`` (bool, int, float or complex)."""
    return _PYTHON_TYPES[_to_dtype(type_).kind]


class _CallableModule(types.ModuleType):
    def __call__(self, spec: Any) -> DType:
        """``mskernel.dtype(spec)``: the :class:`DType` for a name, NumPy dtype or type."""
        return _to_dtype(spec)


sys.modules[__name__].__class__ = _CallableModule

__all__ = [
    "DType", "all_types", "bfloat16", "bool_", "byte", "complex128", "complex64", "complex_type",
    "double", "dtype_to_nptype", "dtype_to_pytype", "float16", "float32", "float64",
    "float_type", "half", "int16", "int32", "int64", "int8", "int_type", "intc", "intp",
    "number_type", "pytype_to_dtype", "short", "single", "ubyte", "uint16", "uint32", "uint64",
    "uint8", "uint_type", "uintc", "uintp", "ushort",
]
