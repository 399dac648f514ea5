"""``FileWriter``: write rows to MindRecord files (MindSpore's ``mindrecord.FileWriter``)::

    writer = FileWriter("train.mindrecord", shard_num=4)
    writer.add_schema({"image": {"type": "bytes"}, "label": {"type": "int32"}}, "mnist")
    writer.write_raw_data([{"image": png_bytes, "label": 3}, ...])
    writer.commit()

With ``shard_num`` > 1 the files are ``train.mindrecord0`` ... ``train.mindrecord3`` and each
call's rows are split between them in order.  Each file gets its ``.db`` index at
``commit``.  New files are written under temporary names and take their real names at
``commit``, so an interrupted run leaves no half-written dataset; an append
(:meth:`FileWriter.open_for_append`) adds pages after the existing ones and rewrites the
header last.
"""

from __future__ import annotations

import os
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Optional, Sequence

import numpy as np

from ..errors import DatasetError
from .blob import field_bytes, merge_blob
from .header import (
    DEFAULT_HEADER_SIZE, DEFAULT_PAGE_SIZE, MAX_HEADER_SIZE, MAX_PAGE_SIZE, MAX_SHARDS,
    MIN_HEADER_SIZE, MIN_PAGE_SIZE, Header,
)
from .index_db import write_index
from .layout import ShardLayout
from .rows import DUMMY_ROW, pack_row
from .schema import Field, Schema
from .shard import ShardFile

_INT_RANGES = {"int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1)}
_NO_BLOB = b"\0\0\0\0"  # the blob of a row without blob fields, as MindSpore writes it


@dataclass
class _Shard:
    path: Path  # the final name
    writing: Path  # where it is written until commit
    file: BinaryIO
    layout: ShardLayout


class FileWriter:
    """Writes a MindRecord dataset of ``shard_num`` files named after ``file_name``; files
    that exist already are an error unless ``overwrite``."""

    def __init__(self, file_name: Any, shard_num: int = 1, overwrite: bool = False) -> None:
        if not isinstance(file_name, (str, os.PathLike)) or not os.fspath(file_name) or \
                os.path.isdir(file_name):
            raise DatasetError(f"FileWriter: file_name must be a file path, got {file_name!r}")
        if isinstance(shard_num, bool) or not isinstance(shard_num, int) or \
                not 1 <= shard_num <= MAX_SHARDS:
            raise DatasetError(f"FileWriter: shard_num must be an integer in [1, {MAX_SHARDS}], "
                               f"got {shard_num!r}")
        if not isinstance(overwrite, bool):
            raise DatasetError(f"FileWriter: overwrite must be a bool, got {overwrite!r}")
        name = os.fspath(file_name)
        digits = len(str(shard_num - 1))
        self._paths = [Path(name)] if shard_num == 1 else [
            Path(f"{name}{i:0{digits}d}") for i in range(shard_num)]
        existing = [str(p) for p in self._paths
                    for q in (p, p.with_name(p.name + ".db")) if q.exists()][:2]
        if existing and not overwrite:
            raise DatasetError(f"FileWriter: {', '.join(existing)} already exist(s); delete "
                               "them or pass overwrite=True")
        self._schema: Optional[Schema] = None
        self._index: Optional[list[str]] = None
        self._header_size, self._page_size = DEFAULT_HEADER_SIZE, DEFAULT_PAGE_SIZE
        self._compression_size = 0
        self._shards: list[_Shard] = []
        self._calls = 0
        self._parallel: Optional[bool] = None
        self._appending = self._committed = False
        self._cleanup = weakref.finalize(self, _discard, self._shards)

    # -- setting up -------------------------------------------------------------------------

    @classmethod
    def open_for_append(cls, file_name: Any) -> "FileWriter":
        """A writer adding rows to the existing dataset ``file_name`` belongs to."""
        from .files import open_shards

        shards = open_shards(file_name)
        writer = cls(shards[0].path, overwrite=True)
        first = shards[0].header
        writer._schema, writer._index = first.schema, list(first.index_fields)
        writer._header_size, writer._page_size = first.header_size, first.page_size
        writer._compression_size = first.compression_size
        writer._paths = [Path(s.path) for s in shards]
        writer._appending = True
        for shard in shards:
            shard.close()
            handle = open(shard.path, "r+b")
            writer._shards.append(_Shard(Path(shard.path), Path(shard.path), handle,
                                         ShardLayout(handle, shard.header)))
        return writer

    def add_schema(self, content: dict, desc: Optional[str] = None) -> None:
        """Describe the rows: ``{name: {"type": t}}`` for a scalar (int32, int64, float32,
        float64, string, bytes) or ``{name: {"type": t, "shape": [...]}}`` for a NumPy
        array of a numeric type (one dimension may be -1)."""
        self._check_not_started("add_schema")
        if self._schema is not None:
            raise DatasetError("FileWriter: a MindRecord dataset has one schema; add_schema "
                               "was called already")
        self._schema = Schema(content, desc)

    def add_index(self, index_fields: Sequence[str]) -> None:
        """The scalar fields MindSpore's ``.db`` index records (default: every scalar
        field but bytes)."""
        self._check_not_started("add_index")
        self._index = self._require_schema().check_index_fields(index_fields)

    def set_header_size(self, header_size: int) -> None:
        """Bytes reserved for each file's header (the page list grows with the data): a
        multiple of 4 in [16 KiB, 128 MiB]; default 16 MiB."""
        self._check_not_started("set_header_size")
        self._header_size = _size(header_size, MIN_HEADER_SIZE, MAX_HEADER_SIZE, "header")

    def set_page_size(self, page_size: int) -> None:
        """Bytes per page (the largest row must fit one): a multiple of 4 in [32 KiB,
        256 MiB]; default 32 MiB."""
        self._check_not_started("set_page_size")
        self._page_size = _size(page_size, MIN_PAGE_SIZE, MAX_PAGE_SIZE, "page")

    # -- writing ----------------------------------------------------------------------------

    def write_raw_data(self, raw_data: Sequence[dict], parallel_writer: bool = False) -> None:
        """Write rows (dicts with a value for every schema field; other keys are ignored).
        A row that does not fit the schema is an error naming it, and nothing of the call
        is written.  With ``parallel_writer`` each call's rows go to one file in turn (the
        layout MindSpore's parallel writer gives) instead of being split between them."""
        if self._committed and not self._appending:
            raise DatasetError("FileWriter: the files were committed; open them with "
                               "FileWriter.open_for_append to add rows")
        if not isinstance(parallel_writer, bool):
            raise DatasetError(f"parallel_writer must be a bool, got {parallel_writer!r}")
        if self._parallel is not None and self._parallel != parallel_writer:
            raise DatasetError("FileWriter: parallel_writer must be the same in every call")
        if not isinstance(raw_data, list) or not all(isinstance(r, dict) for r in raw_data):
            raise DatasetError("write_raw_data takes a list of dicts (one per row)")
        if not raw_data:
            raise DatasetError("write_raw_data got no rows")
        schema = self._require_schema()
        encoded = [self._encode(schema, row, i) for i, row in enumerate(raw_data)]
        self._parallel = parallel_writer
        self._open()
        if parallel_writer:
            parts = [(self._calls % len(self._shards), encoded)]
        else:
            parts = list(enumerate(_split(encoded, len(self._shards))))
        for shard, rows in parts:
            if rows:
                self._shards[shard].layout.write([b for b, _ in rows], [r for _, r in rows])
        self._calls += 1

    def _encode(self, schema: Schema, row: dict, index: int) -> tuple[bytes, bytes]:
        raw: dict[str, Any] = {}
        blobs: dict[str, bytes] = {}
        for name, field in schema.fields.items():
            if name not in row:
                raise DatasetError(f"write_raw_data: row {index} has no field {name!r}")
            try:
                if field.is_blob:
                    blobs[name] = field_bytes(field, _blob_value(field, row[name]))
                else:
                    raw[name] = _raw_value(field, row[name])
            except (TypeError, ValueError) as exc:
                raise DatasetError(f"write_raw_data: row {index}, field {name!r} "
                                   f"({_describe(field)}): {exc}") from exc
        if not blobs:
            return _NO_BLOB, pack_row(raw)
        blob, saved = merge_blob(schema, blobs)
        if not blob:
            raise DatasetError(f"write_raw_data: row {index} has an empty "
                               f"{schema.blob_fields[0]!r}; MindRecord cannot store a row "
                               "whose only blob field is empty")
        self._compression_size += saved
        return blob, pack_row(raw or DUMMY_ROW)

    def _open(self) -> None:
        if self._shards:
            return
        schema = self._require_schema()
        index = self._index if self._index is not None else schema.default_index_fields()
        names = [p.name for p in self._paths]
        for shard_id, path in enumerate(self._paths):
            writing = path.with_name(f"{path.name}.tmp-{os.getpid()}")
            handle = open(writing, "w+b")
            header = Header(schema, index, names, shard_id, [], self._header_size,
                            self._page_size)
            self._shards.append(_Shard(path, writing, handle, ShardLayout(handle, header)))

    def commit(self) -> None:
        """Write each file's header, give the files their names and write their ``.db``
        indexes."""
        if self._committed and not self._appending:
            raise DatasetError("FileWriter: commit was called already")
        self._open()
        for shard in self._shards:
            header = shard.layout.header
            header.compression_size = max(self._compression_size, 0)
            shard.file.seek(0)
            shard.file.write(header.encode())
            shard.file.flush()
            os.fsync(shard.file.fileno())
            shard.file.close()
        for shard in self._shards:
            os.replace(shard.writing, shard.path)
            shard.writing = shard.path
        for shard in self._shards:
            written = ShardFile(shard.path)
            write_index(written, shard.path.with_name(shard.path.name + ".db"))
            written.close()
        self._committed = True
        if self._appending:
            self._reopen_for_more()
        else:
            self._shards.clear()

    def _reopen_for_more(self) -> None:
        for shard in self._shards:
            shard.file = open(shard.path, "r+b")
            shard.layout.file = shard.file

    # -- helpers ----------------------------------------------------------------------------

    def _require_schema(self) -> Schema:
        if self._schema is None:
            raise DatasetError("FileWriter: call add_schema first")
        return self._schema

    def _check_not_started(self, what: str) -> None:
        if self._shards or self._appending:
            raise DatasetError(f"FileWriter: {what} must come before the first "
                               "write_raw_data (and cannot change an existing dataset)")


def _split(rows: list, parts: int) -> list[list]:
    """``rows`` cut into ``parts`` consecutive runs, the first ``len % parts`` one longer."""
    size, extra = divmod(len(rows), parts)
    bounds = np.cumsum([0] + [size + (k < extra) for k in range(parts)])
    return [rows[bounds[k]:bounds[k + 1]] for k in range(parts)]


def _raw_value(field: Field, value: Any) -> Any:
    if field.type == "string":
        if not isinstance(value, str):
            raise TypeError(f"got a {type(value).__name__}")
        return value
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("got a bool")
    if field.type in _INT_RANGES:
        if not isinstance(value, (int, np.integer)):
            raise TypeError(f"got a {type(value).__name__}")
        low, high = _INT_RANGES[field.type]
        if not low <= int(value) <= high:
            raise ValueError(f"{int(value)} is out of range")
        return int(value)
    if not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"got a {type(value).__name__}")
    return float(value)


def _blob_value(field: Field, value: Any) -> Any:
    if field.type == "bytes":
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"got a {type(value).__name__}")
        return value
    if not isinstance(value, np.ndarray):
        raise TypeError(f"got a {type(value).__name__}, not a NumPy array")
    if value.dtype != field.dtype:
        raise TypeError(f"got an array of {value.dtype}")
    try:
        np.reshape(value, field.shape or ())
    except ValueError:
        raise ValueError(f"an array of shape {value.shape} does not fit") from None
    return value


def _describe(field: Field) -> str:
    return field.type if field.shape is None else f"{field.type} array of shape {list(field.shape)}"


def _size(value: Any, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high or \
            value % 4:
        raise DatasetError(f"the {what} size must be a multiple of 4 in [{low}, {high}] "
                           f"bytes, got {value!r}")
    return value


def _discard(shards: list[_Shard]) -> None:
    """Close and remove the files of a writer dropped before commit."""
    for shard in shards:
        shard.file.close()
        if shard.writing != shard.path:
            shard.writing.unlink(missing_ok=True)
