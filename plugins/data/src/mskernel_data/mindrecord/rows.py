"""A row's raw (scalar) fields as MessagePack, the encoding of MindRecord's raw pages.

Written byte for byte as MindSpore's writer (nlohmann::json's ``to_msgpack``) writes it:
a map with the keys in code-point order, integers in their smallest form, and a float as
float32 when that is exact, else float64.
"""

from __future__ import annotations

import math
import struct
from typing import Any, Mapping

import msgpack

#: The raw part of a row that has only blob fields (MindSpore writes this placeholder).
DUMMY_ROW = {"id": 0}
_FLOAT32_MAX = 3.4028234663852886e38


def pack_row(values: Mapping[str, Any]) -> bytes:
    """MessagePack of ``values`` (str keys; int, float, str values)."""
    packer = msgpack.Packer()
    parts = [packer.pack_map_header(len(values))]
    for key in sorted(values):
        value = values[key]
        parts += [packer.pack(key), _pack_float(value) if isinstance(value, float)
                  else packer.pack(value)]
    return b"".join(parts)


def _pack_float(value: float) -> bytes:
    if math.isfinite(value) and abs(value) <= _FLOAT32_MAX and \
            struct.unpack(">f", struct.pack(">f", value))[0] == value:
        return b"\xca" + struct.pack(">f", value)
    return b"\xcb" + struct.pack(">d", value)


def unpack_row(data: bytes) -> dict[str, Any]:
    """The map in ``data``; raises ``ValueError`` unless it is exactly one map with string
    keys.  (``unpackb`` bounds every length inside by ``len(data)``.)"""
    value = msgpack.unpackb(data, raw=False, strict_map_key=True)
    if not isinstance(value, dict):
        raise ValueError(f"a raw row is a map, got {type(value).__name__}")
    return value
