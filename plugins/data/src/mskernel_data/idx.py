"""The IDX file format of MNIST and Fashion-MNIST, plain or gzip-compressed.

An IDX file is two zero bytes, a type code, the number of dimensions ``d``, ``d`` big-endian
uint32 sizes, then the data in C order, big-endian.  Compression is recognised from the
file's first bytes, not its name.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import BinaryIO

import numpy as np

from .errors import DatasetError

_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_GZIP_MAGIC = b"\x1f\x8b"


def _open(path: Path) -> BinaryIO:
    with open(path, "rb") as f:
        compressed = f.read(2) == _GZIP_MAGIC
    return gzip.open(path, "rb") if compressed else open(path, "rb")


def _header(f: BinaryIO, path: Path) -> tuple[tuple[int, ...], np.dtype]:
    magic = f.read(4)
    if len(magic) < 4 or magic[:2] != b"\0\0" or magic[2] not in _TYPES:
        raise DatasetError(f"{path} is not an IDX file (it starts with {magic!r}; an IDX file "
                           f"starts with 00 00, a type code in {sorted(_TYPES)} and a rank)")
    sizes = f.read(4 * magic[3])
    if len(sizes) < 4 * magic[3]:
        raise DatasetError(f"{path}: the IDX header is cut short")
    return tuple(int(s) for s in np.frombuffer(sizes, ">u4")), np.dtype(_TYPES[magic[2]])


def idx_shape(path: Path) -> tuple[int, ...]:
    """The array shape an IDX file declares (reads only its header)."""
    with _open(path) as f:
        return _header(f, path)[0]


def read_idx(path: Path) -> np.ndarray:
    """The array stored in an IDX file, in native byte order."""
    with _open(path) as f:
        shape, dtype = _header(f, path)
        data = f.read()
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(data) != expected:
        raise DatasetError(f"{path}: the header declares shape {shape} ({expected} bytes of "
                           f"data) but the file holds {len(data)} bytes")
    return np.frombuffer(data, dtype).reshape(shape).astype(dtype.newbyteorder("="))
