"""The model file: a graph and its weights in one versioned file, without pickle.

Layout (all integers little-endian)::

    b"MSKERNEL"                 magic, 8 bytes
    format version              u32
    header length               u64
    header                      UTF-8 JSON, see below
    zero padding                to a multiple of 64 bytes from the start of the file
    payload                     the tensors' raw bytes, each at a 64-byte-aligned offset

The header holds ``format_version``, ``producer`` (``"mskernel <version>"``), ``graph`` (the
printed text form), ``requires`` (distribution → the version of it that wrote the file, for
every distribution owning an op the graph uses; ``null`` when the op was registered in-process
rather than by an installed distribution), ``op_owners`` (op → distribution, to name the op
in messages), ``tensors`` (name → ``dtype``, ``shape``, ``offset`` into the payload, ``nbytes``)
and ``payload`` (``nbytes`` and ``sha256``).  Tensors are stored little-endian; bfloat16 as
its 2-byte bit patterns.

Files are written atomically (a temporary file in the same directory, fsynced, then renamed
over the target), so a crash leaves the previous file intact.  Loading reads bytes only —
JSON, the text form and ``numpy.frombuffer`` — and never executes anything from the file; it
checks the magic, the version, the length and the checksum, and that every distribution in
``requires`` is installed, before it parses the graph.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import secrets
import struct
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Iterator, Mapping, Optional, Union

import numpy as np

from .. import __version__
from ..errors import FileFormatError, MskernelError
from ..hooks.versions import satisfies
from .dtypes import DType, bfloat16, bfloat16_from_bits, bfloat16_to_bits, dtype as to_dtype
from .graph import Graph
from .parser import parse_graph
from .printer import print_graph

MAGIC = b"MSKERNEL"
#: The version this mskernel writes; it reads every version from 1 up to this one.
FORMAT_VERSION = 1
ALIGNMENT = 64
CORE_DISTRIBUTION = "mskernel"
_PREFIX = struct.Struct("<8sIQ")  # magic, format version, header length

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Model:
    """What :func:`load_model` returns.  ``weights`` hold arrays in reference storage
    (bfloat16 as float32); ``weight_dtypes`` gives each weight's IR dtype."""

    graph: Graph
    weights: dict[str, np.ndarray]
    format_version: int
    producer: str
    requires: dict[str, Optional[str]]
    weight_dtypes: dict[str, DType]


@dataclass(frozen=True)
class _Tensor:
    name: str
    dtype: DType
    shape: tuple[int, ...]
    stored: np.ndarray  # the array as stored in the file: little-endian, bfloat16 as bits


def installed_version(distribution: str) -> Optional[str]:
    """The installed version of ``distribution`` (the running core's for ``mskernel``), or
    ``None`` when no distribution of that name is installed."""
    if distribution == CORE_DISTRIBUTION:
        return __version__
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


# -- writing -----------------------------------------------------------------------------------

def save_model(path: PathLike, graph: Graph, weights: Optional[Mapping[str, Any]] = None, *,
               dtypes: Optional[Mapping[str, Union[DType, str]]] = None,
               registry: Any = None) -> None:
    """Write ``graph`` and ``weights`` (name → array in reference storage) to ``path``,
    atomically.  ``dtypes`` gives the IR dtype of weights whose array dtype does not say it
    (``{"w": "bfloat16"}`` for a float32 array holding bfloat16 values).  ``registry`` (default:
    the process-wide one) tells which distribution owns each op the graph uses."""
    if registry is None:
        from ..ops import registry as default_registry

        registry = default_registry()
    tensors = _tensors(dict(weights or {}), dict(dtypes or {}))
    op_owners = {op: registry.get(op).owner for op in sorted(graph.ops_used())}
    requires = {d: installed_version(d) for d in sorted(set(op_owners.values()))}
    table, payload_nbytes = {}, 0
    for t in tensors:
        offset = _aligned(payload_nbytes)
        table[t.name] = {"dtype": t.dtype.name, "shape": list(t.shape), "offset": offset,
                         "nbytes": t.stored.nbytes}
        payload_nbytes = offset + t.stored.nbytes
    digest = hashlib.sha256()
    for chunk in _payload_chunks(tensors):
        digest.update(chunk)
    header = json.dumps({
        "format_version": FORMAT_VERSION, "producer": f"mskernel {__version__}",
        "graph": print_graph(graph), "requires": requires, "op_owners": op_owners,
        "tensors": table, "payload": {"nbytes": payload_nbytes, "sha256": digest.hexdigest()},
    }).encode("utf-8")
    head = _PREFIX.pack(MAGIC, FORMAT_VERSION, len(header)) + header
    head += bytes(_aligned(len(head)) - len(head))
    _write_atomically(os.fspath(path), [head, *_payload_chunks(tensors)])


def _tensors(weights: dict[str, Any], dtypes: dict[str, Any]) -> list[_Tensor]:
    unknown = sorted(set(dtypes) - set(weights))
    if unknown:
        raise ValueError(f"dtypes names weights that are not given: {', '.join(unknown)}")
    out = []
    for name, value in weights.items():
        if not isinstance(name, str):
            raise TypeError(f"weight names must be strings, got {name!r}")
        arr = np.asarray(value)
        if arr.dtype.byteorder not in "=|":
            arr = arr.astype(arr.dtype.newbyteorder("="))
        dt = to_dtype(dtypes[name] if name in dtypes else arr.dtype)
        if arr.dtype != dt.storage:
            raise TypeError(f"weight '{name}' is a {arr.dtype} array, but a {dt.name} weight "
                            f"is stored as {dt.storage}")
        data = bfloat16_to_bits(arr) if dt is bfloat16 else arr
        little = np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("<"))
        out.append(_Tensor(name, dt, arr.shape, little))
    return out


def _payload_chunks(tensors: list[_Tensor]) -> Iterator[bytes | memoryview]:
    written = 0
    for t in tensors:
        offset = _aligned(written)
        yield bytes(offset - written)
        yield t.stored.reshape(-1).view(np.uint8).data
        written = offset + t.stored.nbytes


def _aligned(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


def _write_atomically(path: str, chunks: list[bytes | memoryview]) -> None:
    """Write to a temporary file next to ``path``, fsync it, rename it over ``path`` and
    fsync the directory; on any failure remove the temporary file and leave ``path`` as it
    was."""
    directory = os.path.dirname(os.path.abspath(path))
    temp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: str) -> None:
    """Make the rename durable (POSIX); some filesystems cannot sync a directory, which
    then leaves durability to them as for any other program."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


# -- reading -----------------------------------------------------------------------------------

def load_model(path: PathLike, registry: Any = None) -> Model:
    """Read a model file; raise :class:`~mskernel.errors.FileFormatError` saying what is
    wrong when it is not a model file, is truncated or corrupt, was written by a newer
    mskernel, or needs a plugin distribution that is not installed.  ``registry`` (default:
    the process-wide one) resolves the graph's op names."""
    name = os.fspath(path)
    with open(name, "rb") as f:
        data = bytearray(os.fstat(f.fileno()).st_size)
        del data[f.readinto(data):]  # in place: the file may have shrunk since fstat
    reader = _Reader(name, data)
    header = reader.header()
    if registry is None:
        from ..ops import registry as default_registry

        registry = default_registry()
    requires = reader.requires(header, registry)
    try:
        graph = parse_graph(header["graph"], registry)
    except MskernelError as exc:
        raise FileFormatError(f"{name}: the stored graph does not parse: {exc}") from exc
    weights, weight_dtypes = reader.tensors(header)
    return Model(graph, weights, header["format_version"], header["producer"], requires,
                 weight_dtypes)


class _Reader:
    """Checks of one file's bytes, in the order :func:`load_model` makes them."""

    def __init__(self, path: str, data: bytearray) -> None:
        self.path = path
        self.data = data
        self.payload_start = 0  # set by header()

    def error(self, message: str) -> FileFormatError:
        return FileFormatError(f"{self.path}: {message}")

    def header(self) -> dict[str, Any]:
        data, size = self.data, len(self.data)
        if data[:len(MAGIC)] != MAGIC[:min(size, len(MAGIC))]:
            raise self.error(f"not an mskernel model file (it does not start with {MAGIC!r})")
        if size < _PREFIX.size:
            raise self.error(f"truncated: expected at least {_PREFIX.size} bytes, found {size}")
        _, version, header_nbytes = _PREFIX.unpack_from(data)
        if version > FORMAT_VERSION:
            raise self.error(f"written by a newer mskernel (format {version}); this mskernel "
                             f"reads up to {FORMAT_VERSION}; upgrade mskernel")
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
        self.field(header, "graph", str)
        if header["format_version"] != version:
            raise self.error(f"corrupt: the header says format {header['format_version']}, "
                             f"the file prefix says {version}")
        self.payload_start = _aligned(header_end)
        self.check_payload(header)
        return header

    def field(self, table: dict[str, Any], key: str, kind: type, where: str = "header") -> Any:
        value = table.get(key)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.error(f"invalid header: {where} field '{key}' is missing or not "
                             f"{_KIND_WORDS[kind]}")
        return value

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

    def requires(self, header: dict[str, Any], registry: Any) -> dict[str, Optional[str]]:
        """The ``requires`` table, after checking each distribution is present and at least
        as new as the one that wrote the file (an in-process registration of its ops
        counts as present)."""
        requires = self.field(header, "requires", dict)
        op_owners = self.field(header, "op_owners", dict)
        problems = []
        for dist, recorded in requires.items():
            if recorded is not None and not isinstance(recorded, str):
                raise self.error(f"invalid header: requires[{dist!r}] is not a version string")
            ops = sorted(op for op, owner in op_owners.items() if owner == dist)
            for_ops = (f" for op{'s' if len(ops) > 1 else ''} "
                       f"{', '.join(repr(op) for op in ops)}" if ops else "")
            installed = installed_version(dist)
            if installed is None and not any(op.owner == dist for op in registry):
                bound = f" (>= {recorded})" if recorded else ""
                problems.append(f"this model needs {dist}{bound}{for_ops}; install it with "
                                f"`pip install {dist}`")
            elif installed is not None and recorded and not _at_least(installed, recorded):
                problems.append(f"this model needs {dist} >= {recorded}{for_ops}, but "
                                f"{installed} is installed; upgrade it with "
                                f"`pip install -U {dist}`")
        if problems:
            raise self.error("\n".join(problems))
        return dict(requires)

    def tensors(self, header: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, DType]]:
        table = self.field(header, "tensors", dict)
        payload_nbytes = header["payload"]["nbytes"]
        weights: dict[str, np.ndarray] = {}
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
            weights[name], dtypes[name] = arr, dt
        return weights, dtypes


_KIND_WORDS = {int: "an integer", str: "a string", dict: "a JSON object", list: "a list"}


def _at_least(installed: str, recorded: str) -> bool:
    try:
        return satisfies(installed, f">={recorded}")
    except ValueError:
        return True  # a version this check cannot read is not held against the user
