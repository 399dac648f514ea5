"""Device storage of the cpu backend and the conversions to and from reference storage.

``DeviceArray.data`` is a C-contiguous NumPy array whose data is 64-byte aligned, in the
*device* storage type of its dtype: the reference storage type for every dtype except
``bfloat16``, which the device keeps as its 2-byte bit patterns (``uint16``) instead of the
reference's float32 — half the memory traffic.  ``to_device`` rounds float32 to bfloat16
(nearest even) and ``to_host`` widens back exactly.

Both directions copy: ``to_device`` never aliases the caller's array (the caller may mutate
it later), and ``to_host`` returns an array the caller owns (mutating it cannot change a device
array that a ref cell or a later run still uses).
"""

from __future__ import annotations

import numpy as np

from mskernel import bfloat16
from mskernel_sdk import DType

from .native import load


def device_dtype(dt: DType) -> np.dtype:
    """The NumPy dtype of the device storage of ``dt``."""
    return np.dtype(np.uint16) if dt is bfloat16 else dt.storage


def to_device_data(host: np.ndarray, dt: DType) -> np.ndarray:
    """An aligned, C-contiguous device copy of ``host`` (reference storage of ``dt``)."""
    native = load()
    host = np.asarray(host)
    if dt is bfloat16:
        return native.bfloat16_from_float32(host)
    data = native.aligned_empty(dt.storage, host.shape)
    np.copyto(data, host, casting="unsafe")
    return data


def to_host_data(data: np.ndarray, dt: DType) -> np.ndarray:
    """A host copy of device storage ``data`` in the reference storage of ``dt``."""
    if dt is bfloat16:
        return load().bfloat16_to_float32(data)
    return np.array(data, copy=True)
