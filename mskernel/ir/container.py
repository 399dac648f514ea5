"""The tensor container: a versioned file of named tensors and a JSON header, without pickle.

The model file (:mod:`.fileformat`) and mskernel-nn's checkpoints are both this container
under their own magic; a plugin storing tensors uses it the same way.  Layout of format 2
(all integers little-endian)::

    magic                       8 bytes, one per kind of file
    format version              u32
    header length               u64, at most MAX_HEADER_NBYTES
    payload length              u64
    header                      UTF-8 JSON object: format_version, producer, the kind's own
                                fields, tensors (name → dtype, shape, offset, nbytes)
    zero padding                to a multiple of 64 bytes from the start of the file
    payload                     the tensors in header order, little-endian, each at the first
                                64-byte boundary after the previous one (the first at 0);
                                bfloat16 as its 2-byte bit patterns
    SHA-256                     32 bytes: the digest of every byte before it

:func:`write_container` writes atomically (:mod:`.atomic`), so a crash leaves the previous
file intact.  :func:`read_container` reads bytes only — JSON and ``numpy.frombuffer`` — and
trusts nothing: it reads the fixed prefix first (magic, version, the lengths, the header's
capped), compares the file's size with it before reading further, checks the digest, parses
the header (a duplicate key, a deep nesting or an overlong number is an error), and checks
the layout above exactly before it builds a tensor.  Every failure is a
:class:`~mskernel.errors.FileFormatError` naming the file and the failed check.

Format 1 files (the digest over the payload only, kept in the header's ``payload`` field,
and no payload length in the prefix) are still read, with the same layout checks and a
warning: their header is not covered by a checksum, and saving them again upgrades them.
Refusing them would strand every checkpoint written so far, which only this reader can open.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import struct
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping, NoReturn, Optional, Union

import numpy as np

from ..errors import FileFormatError
from .atomic import write_atomically
from .dtypes import DType, bfloat16, bfloat16_from_bits, bfloat16_to_bits, dtype as to_dtype

ALIGNMENT = 64
#: The largest header read or written: it bounds what a forged header length can make a
#: reader allocate or parse (large constants belong in the tensors, not in graph text).
MAX_HEADER_NBYTES = 256 << 20
#: Shapes beyond these are refused on write and read (NumPy's rank limit; 2**48 elements
#: counting the non-zero dimensions, so a huge dimension on an empty tensor is refused too).
MAX_RANK = 32
MAX_ELEMENTS = 1 << 48
#: Integers in a header have at most this many digits (Python's default int-string limit).
MAX_INT_DIGITS = 4300

_START = struct.Struct("<8sI")  # magic, format version: how every version starts
_V1_PREFIX = struct.Struct("<8sIQ")  # + header length
_PREFIX = struct.Struct("<8sIQQ")  # + header length, payload length
_DIGEST_NBYTES = hashlib.sha256().digest_size
_ENTRY_FIELDS = ("dtype", "shape", "offset", "nbytes")
_KIND_WORDS = {int: "an integer", str: "a string", dict: "a JSON object", list: "a list"}

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Kind:
    """One kind of container file: its ``magic`` (8 bytes), the ``version`` this code writes
    (2 or more; it reads every version from 1 up to it), what a user calls it (``"model
    file"``) and the distribution that writes it (named when a file is too new)."""

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
        version: int = self.header["format_version"]
        return version

    @property
    def producer(self) -> str:
        producer: str = self.header["producer"]
        return producer


def shape_problem(shape: Any) -> Optional[str]:
    """Why ``shape`` (a list of dimensions) cannot be stored, or ``None``."""
    if len(shape) > MAX_RANK:
        return f"has {len(shape)} dimensions (at most {MAX_RANK})"
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        return f"has shape {shape} (dimensions are non-negative integers)"
    if math.prod(d for d in shape if d) > MAX_ELEMENTS:
        return f"has shape {shape}, beyond {MAX_ELEMENTS} elements"
    return None


def quote_name(name: str) -> str:
    """A name read from a file, quoted and shortened for a message."""
    return repr(name) if len(name) <= 80 else repr(name[:77]) + "..."


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
    header = json.dumps({"format_version": kind.version, "producer": producer, **fields,
                         "tensors": table}).encode("utf-8")
    if len(header) > MAX_HEADER_NBYTES:
        raise ValueError(f"the {kind.noun} header would take {len(header)} bytes, more than "
                         f"{MAX_HEADER_NBYTES}; store large constants as tensors")
    head = _PREFIX.pack(kind.magic, kind.version, len(header), payload_nbytes) + header
    chunks: list[bytes | memoryview] = [head + bytes(_aligned(len(head)) - len(head))]
    written = 0
    for t in stored:
        offset = _aligned(written)
        chunks += [bytes(offset - written), t.data.reshape(-1).view(np.uint8).data]
        written = offset + t.data.nbytes
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    write_atomically(os.fspath(path), [*chunks, digest.digest()])


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
        problem = shape_problem(arr.shape)
        if problem:
            raise ValueError(f"tensor '{name}' {problem}")
        data = bfloat16_to_bits(arr) if dt is bfloat16 else arr
        little = np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("<"))
        out.append(_Stored(name, dt, arr.shape, little))
    return out


def _aligned(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


# -- reading -----------------------------------------------------------------------------------

def read_container(path: PathLike, kind: Kind,
                   fields: Mapping[str, type] = {}) -> Container:  # noqa: B006 (read only)
    """Read and check a ``kind`` file; ``fields`` (name → ``int``/``str``/``dict``/``list``)
    are the header fields the kind requires, checked before any tensor is built."""
    name = os.fspath(path)
    with open(name, "rb") as f:
        reader = _Reader(name, f, kind)
        header, data, payload_start = reader.read()
    for key, field_kind in fields.items():
        header_field(name, header, key, field_kind)
    tensors, dtypes = reader.tensors(header, data, payload_start)
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


class _Malformed(Exception):
    """A JSON header breaks a rule the JSON grammar does not state."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    table = dict(pairs)
    if len(table) != len(pairs):
        duplicate = next(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
        raise _Malformed(f"key {quote_name(duplicate)} appears twice in one JSON object")
    return table


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Malformed(f"an integer of {digits} digits (at most {MAX_INT_DIGITS})")
    return int(text)


class _Reader:
    """The checks of one open file, in the order they are made."""

    def __init__(self, path: str, file: io.BufferedReader, kind: Kind) -> None:
        self.path = path
        self.file = file
        self.kind = kind
        self.size = os.fstat(file.fileno()).st_size

    def fail(self, message: str) -> NoReturn:
        raise FileFormatError(f"{self.path}: {message}")

    def field(self, table: dict[str, Any], key: str, kind: type, where: str = "header") -> Any:
        return header_field(self.path, table, key, kind, where)

    def read(self) -> tuple[dict[str, Any], bytearray, int]:
        """The header and the bytes holding the payload (with the payload's offset in them),
        after every check that needs no tensor."""
        version = self.version()
        if version == 1:
            return self.read_version_1()
        prefix = self.prefix(_PREFIX)
        _, _, header_nbytes, payload_nbytes = _PREFIX.unpack(prefix)
        self.check_header_nbytes(header_nbytes)
        payload_start = _aligned(_PREFIX.size + header_nbytes)
        self.check_size(payload_start + payload_nbytes + _DIGEST_NBYTES)
        rest = self.read_exactly(self.size - _PREFIX.size)
        digest = hashlib.sha256(prefix)
        digest.update(memoryview(rest)[:-_DIGEST_NBYTES])
        if digest.digest() != rest[-_DIGEST_NBYTES:]:
            self.fail("corrupt: the file does not match its SHA-256 checksum (it was damaged "
                      "after it was written)")
        header = self.header(rest[:header_nbytes], version)
        self.check_layout(header, payload_nbytes)
        return header, rest, payload_start - _PREFIX.size

    def version(self) -> int:
        start = self.file.read(_START.size)
        magic = self.kind.magic
        if start[:len(magic)] != magic[:len(start)]:
            self.fail(f"not an mskernel {self.kind.noun} (it does not start with {magic!r})")
        if len(start) < _START.size:
            self.fail(f"truncated: expected at least {_PREFIX.size} bytes, found {self.size}")
        version: int = _START.unpack(start)[1]
        if version > self.kind.version:
            self.fail(f"written by a newer {self.kind.writer} (format {version}); this "
                      f"{self.kind.writer} reads up to {self.kind.version}; upgrade "
                      f"{self.kind.writer}")
        if version < 1:
            self.fail(f"corrupt: format version {version} does not exist")
        return version

    def prefix(self, layout: struct.Struct) -> bytes:
        if self.size < layout.size:
            self.fail(f"truncated: expected at least {layout.size} bytes, found {self.size}")
        self.file.seek(0)
        return self.file.read(layout.size)

    def check_header_nbytes(self, nbytes: int) -> None:
        if nbytes > MAX_HEADER_NBYTES:
            self.fail(f"corrupt: the prefix gives a header of {nbytes} bytes, more than the "
                      f"{MAX_HEADER_NBYTES} a header may take")

    def check_size(self, expected: int) -> None:
        if self.size < expected:
            self.fail(f"truncated: the file should hold {expected} bytes, found {self.size}")
        if self.size > expected:
            self.fail(f"corrupt: {self.size - expected} unexpected bytes after the payload")

    def read_exactly(self, nbytes: int) -> bytearray:
        data = bytearray(nbytes)
        found = self.file.readinto(data)
        if found != nbytes:  # the file shrank since it was measured
            self.fail(f"truncated: {found} bytes read where the file held {nbytes} more")
        return data

    def header(self, raw: Union[bytes, bytearray], version: int) -> dict[str, Any]:
        try:
            header = json.loads(bytes(raw).decode("utf-8"), object_pairs_hook=_unique_keys,
                                parse_int=_bounded_int)
        except _Malformed as exc:
            self.fail(f"invalid header: {exc}")
        except RecursionError:
            self.fail("invalid header: JSON nested too deeply")
        except (UnicodeDecodeError, ValueError) as exc:
            self.fail(f"invalid header: not UTF-8 JSON ({exc})")
        if not isinstance(header, dict):
            self.fail("invalid header: not a JSON object")
        self.field(header, "format_version", int)
        self.field(header, "producer", str)
        if header["format_version"] != version:
            self.fail(f"corrupt: the header says format {header['format_version']}, the file "
                      f"prefix says {version}")
        return header

    def read_version_1(self) -> tuple[dict[str, Any], bytearray, int]:
        """Format 1: the header before the lengths are known, its ``payload`` field (nbytes,
        sha256 of the payload only) after."""
        _, _, header_nbytes = _V1_PREFIX.unpack(self.prefix(_V1_PREFIX))
        self.check_header_nbytes(header_nbytes)
        header_end = _V1_PREFIX.size + header_nbytes
        if self.size < header_end:
            self.fail(f"truncated: the header needs {header_end} bytes, found {self.size}")
        header = self.header(self.read_exactly(header_nbytes), 1)
        payload = self.field(header, "payload", dict)
        payload_nbytes = self.field(payload, "nbytes", int, "payload")
        sha256 = self.field(payload, "sha256", str, "payload")
        self.check_size(_aligned(header_end) + payload_nbytes)
        self.file.seek(_aligned(header_end))
        data = self.read_exactly(payload_nbytes)
        if hashlib.sha256(data).hexdigest() != sha256:
            self.fail("corrupt: the payload does not match its SHA-256 checksum (the file was "
                      "damaged after it was written)")
        self.check_layout(header, payload_nbytes)
        warnings.warn(f"{self.path} is a format 1 {self.kind.noun}: its checksum covers the "
                      f"tensors but not the header; save it again to protect both",
                      stacklevel=5)
        return header, data, 0

    def check_layout(self, header: dict[str, Any], payload_nbytes: int) -> None:
        """The tensor table describes the writer's layout exactly: known dtypes, sizes that
        are dtype × shape, offsets in order at the first aligned byte after the previous
        tensor, and the last tensor ending where the payload ends."""
        table = self.field(header, "tensors", dict)
        end = 0
        for name, entry in table.items():
            where = f"tensor {quote_name(name)}"
            if not isinstance(entry, dict) or sorted(entry) != sorted(_ENTRY_FIELDS):
                self.fail(f"invalid header: {where} is not a JSON object with the fields "
                          f"{', '.join(_ENTRY_FIELDS)}")
            try:
                dt = to_dtype(self.field(entry, "dtype", str, where))
            except TypeError as exc:
                self.fail(f"invalid header: {where}: {exc}")
            shape = self.field(entry, "shape", list, where)
            problem = shape_problem(shape)
            if problem:
                self.fail(f"invalid header: {where} {problem}")
            offset = self.field(entry, "offset", int, where)
            nbytes = self.field(entry, "nbytes", int, where)
            if nbytes != math.prod(shape) * dt.itemsize:
                self.fail(f"invalid header: {where} is {dt.name}{shape} "
                          f"({math.prod(shape) * dt.itemsize} bytes), but the header gives "
                          f"it {nbytes} bytes")
            if offset != _aligned(end):
                self.fail(f"invalid header: {where} is at payload offset {offset}; each "
                          f"tensor starts at the first {ALIGNMENT}-byte boundary after the "
                          f"one before it (here {_aligned(end)})")
            end = offset + nbytes
        if end != payload_nbytes:
            self.fail(f"invalid header: the tensors end at payload byte {end}, but the payload "
                      f"holds {payload_nbytes} bytes")

    def tensors(self, header: dict[str, Any], data: bytearray,
                payload_start: int) -> tuple[dict[str, np.ndarray], dict[str, DType]]:
        """The arrays of a header whose layout :meth:`check_layout` accepted, viewing
        ``data``."""
        arrays: dict[str, np.ndarray] = {}
        dtypes: dict[str, DType] = {}
        for name, entry in header["tensors"].items():
            dt = to_dtype(entry["dtype"])
            stored = np.dtype("<u2") if dt is bfloat16 else dt.storage.newbyteorder("<")
            arr = np.frombuffer(data, dtype=stored, count=math.prod(entry["shape"]),
                                offset=payload_start + entry["offset"]).reshape(entry["shape"])
            if dt is bfloat16:
                arr = bfloat16_from_bits(arr)
            elif arr.dtype != dt.storage:
                arr = arr.astype(dt.storage)
            arrays[name], dtypes[name] = arr, dt
        return arrays, dtypes
