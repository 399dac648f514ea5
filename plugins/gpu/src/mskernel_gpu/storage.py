"""Device storage of the gpu backend.

``DeviceArray.data`` is a C-contiguous ``cupy.ndarray`` in the device storage type of its
dtype: the reference storage type for every dtype except ``bfloat16``, which CuPy has no
type for, kept as its 16-bit patterns (``uint16``): half the memory and the bandwidth of the
reference's float32.  Kernels that compute read bfloat16 widened to float32 and round their
bfloat16 results to nearest even (:func:`to_bfloat16_bits`), exactly as the reference
rounds; the fused kernels do the same in registers (PTX ``cvt.rn.bf16.f32``).

The conversions take the array module (CuPy, or NumPy in the CPU-side tests) as ``xp``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mskernel import bfloat16
from mskernel_sdk import DType


def device_dtype(dt: DType) -> np.dtype:
    """The NumPy/CuPy dtype of the device storage of ``dt``."""
    return np.dtype(np.uint16) if dt is bfloat16 else np.dtype(dt.storage)


def to_bfloat16_bits(xp: Any, x: Any) -> Any:
    """float32 values rounded to bfloat16 (nearest even; NaN kept) as uint16 patterns."""
    x32 = xp.ascontiguousarray(x, dtype=np.float32)  # at least 1-d
    bits = x32.view(np.uint32)
    rounding = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    rounded = xp.where(xp.isnan(x32), bits, bits + rounding)
    return (rounded >> np.uint32(16)).astype(np.uint16).reshape(np.shape(x))


def from_bfloat16_bits(xp: Any, bits: Any) -> Any:
    """float32 values of bfloat16 patterns (exact)."""
    wide = xp.ascontiguousarray(bits).astype(np.uint32) << np.uint32(16)
    return wide.view(np.float32).reshape(np.shape(bits))


def to_device_storage(xp: Any, host: np.ndarray, dt: DType) -> Any:
    """A device copy of ``host`` (reference storage of ``dt``)."""
    if dt is bfloat16:
        return xp.asarray(to_bfloat16_bits(np, np.asarray(host, np.float32)))
    return xp.asarray(np.array(host, dtype=dt.storage, order="C"))


def to_host_storage(data: Any, dt: DType) -> np.ndarray:
    """A host copy, in the reference storage of ``dt``, of device storage ``data``."""
    host = data.get() if hasattr(data, "get") else np.array(data)
    if dt is bfloat16:
        return from_bfloat16_bits(np, host)
    return np.array(host, dtype=dt.storage, copy=True)
