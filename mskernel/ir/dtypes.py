"""Element types of the IR and their promotion rules.

A :class:`DType` names an element type the IR can carry.  ``storage`` is the NumPy dtype the
reference backend keeps it in: every type is stored natively except ``bfloat16``, which NumPy
lacks and which is therefore stored as ``float32`` holding values rounded to bfloat16
(see :func:`round_to_bfloat16`), so reference results carry exactly bfloat16 precision.

Promotion follows NumPy's ``result_type`` for the types NumPy has; ``bfloat16`` promotes like
JAX's: with a bool or integer type it stays ``bfloat16``, with ``float16`` it widens to
``float32``, and with a wider float or a complex type it takes that type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, eq=False)
class DType:
    """One element type.  Instances are singletons: compare with ``is`` or ``==``."""

    name: str
    short: str
    kind: str  # "b" bool, "i" signed int, "u" unsigned int, "f" float, "c" complex
    itemsize: int
    storage: np.dtype

    @property
    def is_floating(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def is_inexact(self) -> bool:
        return self.kind in "fc"

    @property
    def is_integer(self) -> bool:
        return self.kind in "iu"

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    def __repr__(self) -> str:
        return f"mskernel.{self.name}"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self) -> str:
        return self.name


def _make(name: str, short: str, kind: str, itemsize: int, storage: Any) -> DType:
    return DType(name, short, kind, itemsize, np.dtype(storage))


bool_ = _make("bool", "bool", "b", 1, np.bool_)
int8 = _make("int8", "i8", "i", 1, np.int8)
int16 = _make("int16", "i16", "i", 2, np.int16)
int32 = _make("int32", "i32", "i", 4, np.int32)
int64 = _make("int64", "i64", "i", 8, np.int64)
uint8 = _make("uint8", "u8", "u", 1, np.uint8)
uint16 = _make("uint16", "u16", "u", 2, np.uint16)
uint32 = _make("uint32", "u32", "u", 4, np.uint32)
uint64 = _make("uint64", "u64", "u", 8, np.uint64)
float16 = _make("float16", "f16", "f", 2, np.float16)
bfloat16 = _make("bfloat16", "bf16", "f", 2, np.float32)
float32 = _make("float32", "f32", "f", 4, np.float32)
float64 = _make("float64", "f64", "f", 8, np.float64)
complex64 = _make("complex64", "c64", "c", 8, np.complex64)
complex128 = _make("complex128", "c128", "c", 16, np.complex128)

ALL_DTYPES: tuple[DType, ...] = (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, bfloat16, float32, float64, complex64, complex128,
)
FLOAT_DTYPES: tuple[DType, ...] = (float16, bfloat16, float32, float64)
INTEGER_DTYPES: tuple[DType, ...] = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)

_BY_NAME: dict[str, DType] = {}
for _dt in ALL_DTYPES:
    _BY_NAME[_dt.name] = _dt
    _BY_NAME[_dt.short] = _dt
_BY_NAME["bool_"] = bool_
_BY_NAME["half"] = float16
_BY_NAME["float"] = float32
_BY_NAME["double"] = float64
_BY_NUMPY: dict[np.dtype, DType] = {
    dt.storage: dt for dt in ALL_DTYPES if dt is not bfloat16
}


def dtype(spec: Any) -> DType:
    """Return the :class:`DType` for ``spec``: a DType, a name (``"float32"``, ``"f32"``),
    a NumPy dtype or scalar type, or a Python type (``bool``, ``int`` → int64, ``float`` →
    float32, ``complex`` → complex64, the framework defaults)."""
    if isinstance(spec, DType):
        return spec
    if isinstance(spec, str):
        try:
            return _BY_NAME[spec]
        except KeyError:
            known = ", ".join(dt.name for dt in ALL_DTYPES)
            raise TypeError(f"unknown dtype {spec!r}; known dtypes: {known}") from None
    if spec is bool:
        return bool_
    if spec is int:
        return int64
    if spec is float:
        return float32
    if spec is complex:
        return complex64
    try:
        np_dtype = np.dtype(spec)
    except TypeError:
        raise TypeError(f"cannot interpret {spec!r} as a dtype") from None
    if np_dtype.name == "bfloat16":  # ml_dtypes' type, when a user has it
        return bfloat16
    try:
        return _BY_NUMPY[np_dtype]
    except KeyError:
        raise TypeError(f"NumPy dtype {np_dtype} has no mskernel equivalent") from None


def promote_types(a: DType, b: DType) -> DType:
    """The type two operands of a binary op are computed in (NumPy rules, bfloat16 as JAX)."""
    if a is b:
        return a
    if a is bfloat16 or b is bfloat16:
        other = b if a is bfloat16 else a
        if other.kind in "biu":
            return bfloat16
        if other is float16:
            return float32
        return other
    return _BY_NUMPY[np.promote_types(a.storage, b.storage)]


def result_type(*dtypes: DType) -> DType:
    """Promote any number of dtypes left to right."""
    if not dtypes:
        raise ValueError("result_type needs at least one dtype")
    out = dtypes[0]
    for dt in dtypes[1:]:
        out = promote_types(out, dt)
    return out


def round_to_bfloat16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), returned as float32.

    NaN stays NaN and infinities stay infinite; this is how the reference backend keeps
    bfloat16 arithmetic exact to the type.
    """
    x32 = np.require(x, np.float32, "C")
    bits = x32.view(np.uint32)
    rounding = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    rounded = ((bits + rounding) & np.uint32(0xFFFF0000)).view(np.float32)
    return np.where(np.isnan(x32), x32, rounded).astype(np.float32, copy=False)


def bfloat16_to_bits(x: np.ndarray) -> np.ndarray:
    """The uint16 bit patterns of float32-stored bfloat16 values (for files and devices)."""
    return (round_to_bfloat16(x).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def bfloat16_from_bits(bits: np.ndarray) -> np.ndarray:
    """Float32 storage for bfloat16 values given as uint16 bit patterns."""
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def as_storage(x: Any, dt: DType) -> np.ndarray:
    """Convert ``x`` to the reference storage of ``dt`` (rounding for bfloat16)."""
    arr = np.asarray(x)
    if dt is bfloat16:
        return round_to_bfloat16(arr.astype(np.float32))
    return arr.astype(dt.storage, copy=False)
