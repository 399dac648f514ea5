"""The tensor container: a versioned file of named tensors and a JSON header, without pickle.

The model file (:mod:`.fileformat`) and mskernel-nn's checkpoints are both this container
under their own magic; a plugin storing tensors uses it the same way.  Layout (all integers
little-endian)::

    magic                       8 bytes, one per kind of file
    format version              u32
    header length               u64
    header                      UTF-8 JSON: format_version, producer, the kind's own fields,
                                tensors (name → dtype, shape, offset, nbytes),
                                payload (nbytes, sha256)
    zero padding                to a multiple of 64 bytes from the start of the file
    payload                     each tensor little-endian at a 64-byte-aligned offset;
                                bfloat16 as its 2-byte bit patterns

:func:`write_container` writes atomically (:mod:`.atomic`), so a crash leaves the previous
file intact.
:func:`read_container` reads bytes only — JSON and ``numpy.frombuffer`` — and checks the
magic, the version, the lengths and the payload's SHA-256 before it trusts a byte, raising
:class:`~mskernel.errors.FileFormatError` that says which check failed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import struct
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Optional, Union

import numpy as np

from ..errors import FileFormatError
from .atomic import write_atomically
from .dtypes import DType, bfloat16, bfloat16_from_bits, bfloat16_to_bits, dtype as to_dtype

ALIGNMENT = 64
_PREFIX = struct.Struct("<8sIQ")  # magic, format version, header length
_KIND_WORDS = {int: "an integer", str: "a string", dict: "a JSON object", list: "a list"}

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Kind:
    """One kind of container file: its ``magic`` (8 bytes), the ``version`` this code writes
    (it reads every version from 1 up to it), what a user calls it (``"model file"``) and
    the distribution that writes it (named when a file is too new)."""

    magic: bytes
    version: int
    noun: str
    writer: str


@dataclass(frozen=True)
class Container:
    """A container read back: its header (the kind's own fields included) and its tensors in
    reference storage (bfloat16 as float32) with their IR dtypes."""

    header: dict[str, Any]
    tensors: dict[str, np.ndarray]
    dtypes: dict[str, DType]

    @property
    def format_version(self) -> int:
        return self.header["format_version"]

    @property
    def producer(self) -> str:
        return self.header["producer"]


# -- writing -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Stored:
    name: str
    dtype: DType
    shape: tuple[int, ...]
    data: np.ndarray  # as stored: little-endian, bfloat16 as bits


def write_container(path: PathLike, kind: Kind, producer: str, fields: Mapping[str, Any],
                    tensors: Mapping[str, Any],
                    dtypes: Optional[Mapping[str, Union[DType, str]]] = None) -> None:
    """Write ``tensors`` (name → array in reference storage) with the header ``fields`` to
    ``path``, atomically.  ``dtypes`` gives the IR dtype of arrays whose dtype does not say
    it (``{"w": "bfloat16"}`` for a float32 array holding bfloat16 values)."""
    stored = _stored(dict(tensors), dict(dtypes or {}))
    table, payload_nbytes = {}, 0
    for t in stored:
        offset = _aligned(payload_nbytes)
        table[t.name] = {"dtype": t.dtype.name, "shape": list(t.shape), "offset": offset,
                         "nbytes": t.data.nbytes}
        payload_nbytes = offset + t.data.nbytes
    digest = hashlib.sha256()
    for chunk in _payload_chunks(stored):
        digest.update(chunk)
    header = json.dumps({
        "format_version": kind.version, "producer": producer, **fields, "tensors": table,
        "payload": {"nbytes": payload_nbytes, "sha256": digest.hexdigest()},
    }).encode("utf-8")
    head = _PREFIX.pack(kind.magic, kind.version, len(header)) + header
    head += bytes(_aligned(len(head)) - len(head))
    write_atomically(os.fspath(path), [head, *_payload_chunks(stored)])


def _stored(tensors: dict[str, Any], dtypes: dict[str, Any]) -> list[_Stored]:
    unknown = sorted(set(dtypes) - set(tensors))
    if unknown:
        raise ValueError(f"dtypes names tensors that are not given: {', '.join(unknown)}")
    out = []
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be strings, got {name!r}")
        arr = np.asarray(value)
        if arr.dtype.byteorder not in "=|":
            arr = arr.astype(arr.dtype.newbyteorder("="))
        dt = to_dtype(dtypes[name] if name in dtypes else arr.dtype)
        if arr.dtype != dt.storage:
            raise TypeError(f"tensor '{name}' is a {arr.dtype} array, but a {dt.name} tensor "
                            f"is stored as {dt.storage}")
        data = bfloat16_to_bits(arr) if dt is bfloat16 else arr
        little = np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("<"))
        out.append(_Stored(name, dt, arr.shape, little))
    return out


def _payload_chunks(stored: list[_Stored]) -> Iterator[bytes | memoryview]:
    written = 0
    for t in stored:
        offset = _aligned(written)
        yield bytes(offset - written)
        yield t.data.reshape(-1).view(np.uint8).data
        written = offset + t.data.nbytes


def _aligned(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


# -- reading -----------------------------------------------------------------------------------

def read_container(path: PathLike, kind: Kind,
                   fields: Mapping[str, type] = {}) -> Container:  # noqa: B006 (read only)
    """Read and check a ``kind`` file; ``fields`` (name → ``int``/``str``/``dict``/``list``)
    are the header fields the kind requires, checked before any tensor is read."""
    name = os.fspath(path)
    with open(name, "rb") as f:
        data = bytearray(os.fstat(f.fileno()).st_size)
        del data[f.readinto(data):]  # in place: the file may have shrunk since fstat
    reader = _Reader(name, data, kind)
    header = reader.header()
    for key, field_kind in fields.items():
        header_field(name, header, key, field_kind)
    tensors, dtypes = reader.tensors(header)
    return Container(header, tensors, dtypes)


def header_field(path: str, table: dict[str, Any], key: str, kind: type,
                 where: str = "header") -> Any:
    """``table[key]`` when it is a ``kind``, else a FileFormatError naming ``path`` and the
    field (for a kind's own checks of its header)."""
    value = table.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise FileFormatError(f"{path}: invalid header: {where} field '{key}' is missing or "
                              f"not {_KIND_WORDS[kind]}")
    return value


class _Reader:
    """The checks of one file's bytes, in order."""

    def __init__(self, path: str, data: bytearray, kind: Kind) -> None:
        self.path = path
        self.data = data
        self.kind = kind
        self.payload_start = 0  # set by header()

    def error(self, message: str) -> FileFormatError:
        return FileFormatError(f"{self.path}: {message}")

    def field(self, table: dict[str, Any], key: str, kind: type, where: str = "header") -> Any:
        return header_field(self.path, table, key, kind, where)

    def header(self) -> dict[str, Any]:
        data, size, kind = self.data, len(self.data), self.kind
        if data[:len(kind.magic)] != kind.magic[:min(size, len(kind.magic))]:
            raise self.error(f"not an mskernel {kind.noun} (it does not start with "
                             f"{kind.magic!r})")
        if size < _PREFIX.size:
            raise self.error(f"truncated: expected at least {_PREFIX.size} bytes, found {size}")
        _, version, header_nbytes = _PREFIX.unpack_from(data)
        if version > kind.version:
            raise self.error(f"written by a newer {kind.writer} (format {version}); this "
                             f"{kind.writer} reads up to {kind.version}; upgrade {kind.writer}")
        if version < 1:
            raise self.error(f"corrupt: format version {version} does not exist")
        header_end = _PREFIX.size + header_nbytes
        if size < header_end:
            raise self.error(f"truncated: the header needs {header_end} bytes, found {size}")
        try:
            header = json.loads(data[_PREFIX.size:header_end].decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise self.error(f"invalid header: not UTF-8 JSON ({exc})") from None
        if not isinstance(header, dict):
            raise self.error("invalid header: not a JSON object")
        self.field(header, "format_version", int)
        self.field(header, "producer", str)
        if header["format_version"] != version:
            raise self.error(f"corrupt: the header says format {header['format_version']}, "
                             f"the file prefix says {version}")
        self.payload_start = _aligned(header_end)
        self.check_payload(header)
        return header

    def check_payload(self, header: dict[str, Any]) -> None:
        start = self.payload_start
        payload = self.field(header, "payload", dict)
        nbytes = self.field(payload, "nbytes", int, "payload")
        sha256 = self.field(payload, "sha256", str, "payload")
        expected, found = start + nbytes, len(self.data)
        if found < expected:
            raise self.error(f"truncated: the header says the file holds {expected} bytes, "
                             f"found {found}")
        if found > expected:
            raise self.error(f"corrupt: {found - expected} unexpected bytes after the payload")
        if hashlib.sha256(memoryview(self.data)[start:]).hexdigest() != sha256:
            raise self.error("corrupt: the payload does not match its SHA-256 checksum "
                             "(the file was damaged after it was written)")

    def tensors(self, header: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, DType]]:
        table = self.field(header, "tensors", dict)
        payload_nbytes = header["payload"]["nbytes"]
        arrays: dict[str, np.ndarray] = {}
        dtypes: dict[str, DType] = {}
        for name, entry in table.items():
            where = f"tensor '{name}'"
            if not isinstance(entry, dict):
                raise self.error(f"invalid header: {where} is not a JSON object")
            try:
                dt = to_dtype(self.field(entry, "dtype", str, where))
            except TypeError as exc:
                raise self.error(f"invalid header: {where}: {exc}") from None
            shape = self.field(entry, "shape", list, where)
            offset = self.field(entry, "offset", int, where)
            nbytes = self.field(entry, "nbytes", int, where)
            if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
                raise self.error(f"invalid header: {where} has shape {shape}")
            count = math.prod(shape)
            if nbytes != count * dt.itemsize or offset < 0 or offset + nbytes > payload_nbytes:
                raise self.error(f"invalid header: {where} ({dt.name}{shape}, {nbytes} bytes "
                                 f"at offset {offset}) does not fit the payload")
            stored = np.dtype("<u2") if dt is bfloat16 else dt.storage.newbyteorder("<")
            arr = np.frombuffer(self.data, dtype=stored, count=count,
                                offset=self.payload_start + offset).reshape(shape)
            if dt is bfloat16:
                arr = bfloat16_from_bits(arr)
            elif arr.dtype != dt.storage:
                arr = arr.astype(dt.storage)
            arrays[name], dtypes[name] = arr, dt
        return arrays, dtypes
