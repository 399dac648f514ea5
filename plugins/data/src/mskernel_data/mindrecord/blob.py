"""A row's blob fields as one byte string, the unit of MindRecord's blob pages.

One blob field is stored as it is; several are each prefixed by their length (8 bytes,
big-endian), in the schema's (code-point) order.  When the schema has an integer array
field, every int32/int64 array is stored compressed, as MindSpore's writer does: a 4-byte
big-endian element count, a 2-bit width code per element (8, 16, 32 or 64 bits; four
codes a byte, the first in the high bits), then each element little-endian in its width.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from .schema import Field, Schema

_WIDTHS: tuple[np.dtype, ...] = (np.dtype("<i1"), np.dtype("<i2"), np.dtype("<i4"),
                                  np.dtype("<i8"))


def field_bytes(field: Field, value: Any) -> bytes:
    """The stored bytes of one blob value (bytes, or an array of the field's dtype)."""
    if field.type == "bytes":
        return bytes(value)
    return np.ascontiguousarray(value, dtype=field.dtype.newbyteorder("<")).tobytes()


def merge_blob(schema: Schema, values: dict[str, bytes]) -> tuple[bytes, int]:
    """The blob of a row from each blob field's stored bytes, and the bytes compression
    saved (negative when it cost some)."""
    fields = [schema.fields[name] for name in schema.blob_fields]
    compress = schema.compresses_integers
    parts = [compress_ints(values[f.name], f.dtype) if compress and f.type in ("int32", "int64")
             else values[f.name] for f in fields]
    saved = sum(len(values[f.name]) - len(p) for f, p in zip(fields, parts))
    if len(parts) == 1:
        return parts[0], saved
    return b"".join(struct.pack(">Q", len(p)) + p for p in parts), saved


def split_blob(schema: Schema, blob: bytes) -> dict[str, bytes]:
    """Each blob field's stored bytes, decompressed; ``ValueError`` when the lengths do not
    add up."""
    fields = [schema.fields[name] for name in schema.blob_fields]
    if len(fields) == 1:
        parts = [blob]
    else:
        parts, at = [], 0
        for f in fields:
            if at + 8 > len(blob):
                raise ValueError(f"the blob ends before the length of field {f.name!r}")
            (size,) = struct.unpack_from(">Q", blob, at)
            if size > len(blob) - at - 8:
                raise ValueError(f"field {f.name!r} declares {size} bytes but the blob has "
                                 f"{len(blob) - at - 8} left")
            parts.append(blob[at + 8:at + 8 + size])
            at += 8 + size
        if at != len(blob):
            raise ValueError(f"{len(blob) - at} bytes follow the last blob field")
    compress = schema.compresses_integers
    return {f.name: decompress_ints(p, f.dtype) if compress and f.type in ("int32", "int64")
            else p for f, p in zip(fields, parts)}


def compress_ints(data: bytes, dtype: np.dtype) -> bytes:
    values = np.frombuffer(data, dtype.newbyteorder("<")).astype(np.int64)
    codes = np.select([(values >= -2**7) & (values < 2**7), (values >= -2**15) & (values < 2**15),
                       (values >= -2**31) & (values < 2**31)], [0, 1, 2], 3).astype(np.uint8)
    padded = np.zeros(-(-len(codes) // 4) * 4, np.uint8)
    padded[:len(codes)] = codes
    bitmap = (padded.reshape(-1, 4) << np.array([6, 4, 2, 0], np.uint8)).sum(1).astype(np.uint8)
    sizes = np.left_shift(1, codes.astype(np.int64))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    body = np.empty(int(sizes.sum()), np.uint8)
    for code, width in enumerate(_WIDTHS):
        chosen = codes == code
        if chosen.any():
            as_bytes = values[chosen].astype(width).view(np.uint8).reshape(-1, width.itemsize)
            body[starts[chosen][:, None] + np.arange(width.itemsize)] = as_bytes
    return struct.pack(">I", len(values)) + bitmap.tobytes() + body.tobytes()


def decompress_ints(data: bytes, dtype: np.dtype) -> bytes:
    if len(data) < 4:
        raise ValueError("a compressed integer array is shorter than its 4-byte count")
    (count,) = struct.unpack_from(">I", data)
    body = 4 + -(-count // 4)
    if body > len(data) or count > len(data) - body:  # each element takes a byte at least
        raise ValueError(f"a compressed integer array declares {count} elements in "
                         f"{len(data)} bytes")
    bitmap = np.frombuffer(data, np.uint8, body - 4, 4)
    codes = ((bitmap[:, None] >> np.array([6, 4, 2, 0], np.uint8)) & 3).ravel()[:count]
    sizes = np.left_shift(1, codes.astype(np.int64))
    if body + int(sizes.sum()) != len(data):
        raise ValueError(f"a compressed integer array of {count} elements needs "
                         f"{body + int(sizes.sum())} bytes, has {len(data)}")
    starts = body + np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    out = np.empty(count, dtype.newbyteorder("<"))
    for code in range(4):
        at = starts[codes == code]
        if len(at):
            width = _WIDTHS[code]
            raw = np.frombuffer(data, np.uint8)[at[:, None] + np.arange(width.itemsize)]
            out[codes == code] = raw.copy().view(width).ravel()
    return out.tobytes()
