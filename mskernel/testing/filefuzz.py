"""Container files taken apart and sealed again, for testing that a loader trusts nothing.

:class:`Parts` splits a format 2 container file (:mod:`mskernel.ir.container`); :func:`seal`
puts parts together with a correct digest — a forged file, as a buggy writer or an attacker
would make it — and :func:`seal_version_1` writes the format 1 layout of mskernel 0.1.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

ALIGNMENT = 64
PREFIX = struct.Struct("<8sIQQ")  # magic, format version, header length, payload length


@dataclass(frozen=True)
class Parts:
    """A format 2 container file taken apart (see :mod:`mskernel.ir.container`)."""

    magic: bytes
    version: int
    header_text: bytes
    payload: bytes

    @property
    def header(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.header_text)
        return parsed

    @classmethod
    def of(cls, data: bytes) -> "Parts":
        magic, version, header_nbytes, payload_nbytes = PREFIX.unpack_from(data)
        start = _aligned(PREFIX.size + header_nbytes)
        return cls(magic, version, data[PREFIX.size:PREFIX.size + header_nbytes],
                   data[start:start + payload_nbytes])


def seal(magic: bytes, version: int, header_text: bytes, payload: bytes) -> bytes:
    """A format 2 file of these parts with a correct digest, written independently of the
    container's writer (so that each checks the other)."""
    head = PREFIX.pack(magic, version, len(header_text), len(payload)) + header_text
    body = head + bytes(_aligned(len(head)) - len(head)) + payload
    return body + hashlib.sha256(body).digest()


def seal_version_1(magic: bytes, header: dict[str, Any], payload: bytes) -> bytes:
    """A format 1 file of these parts, as mskernel 0.1 wrote them: the header's ``payload``
    field holds the payload's length and digest, the prefix only the header's length."""
    header = {**header, "format_version": 1,
              "payload": {"nbytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}}
    text = json.dumps(header).encode()
    head = struct.pack("<8sIQ", magic, 1, len(text)) + text
    return head + bytes(_aligned(len(head)) - len(head)) + payload


def same_arrays(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtype, shape and bytes (NaN payloads included)."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _aligned(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT

