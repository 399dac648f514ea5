"""Reading one MindRecord shard file: where each row's raw and blob bytes are, and a row's
fields as NumPy values.

The row table is built from the header alone (the ``.db`` index is not needed): for each
blob page, in row-group order, its rows' blobs follow one another, and the group's raw rows
follow one another in the raw page that lists the group.  Every length read from the file
is checked against the page it lies in, so a damaged file is a :class:`FileFormatError`
naming the file and the row, never a read past a page or an allocation the file cannot
back.
"""

from __future__ import annotations

import math
import mmap
import os
import struct
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

import numpy as np

from mskernel_sdk import FileFormatError

from .blob import split_blob
from .header import Header, blob_pages, raw_group_starts, read_header
from .rows import unpack_row
from .schema import Field

_INT_RANGES = {"int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1)}


@dataclass(frozen=True)
class RowTable:
    """Per row: its row group, the pages and page offsets of its raw and blob bytes (each
    an 8-byte length and the data), and the data's lengths."""

    group: np.ndarray
    raw_page: np.ndarray
    raw_offset: np.ndarray
    raw_length: np.ndarray
    blob_page: np.ndarray
    blob_offset: np.ndarray
    blob_length: np.ndarray

    def __len__(self) -> int:
        return len(self.group)


class ShardFile:
    """One ``.mindrecord`` file, mapped into memory on first use (and again in a worker
    process after pickling)."""

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self.path = os.fspath(path)
        self._map: Optional[mmap.mmap] = None
        data = self._data()
        self.header: Header = read_header(data, self.path)
        self.rows = _row_table(self.header, data, self.path)

    @property
    def schema(self):
        return self.header.schema

    def __len__(self) -> int:
        return len(self.rows)

    def _data(self) -> mmap.mmap:
        if self._map is None:
            with open(self.path, "rb") as f:
                if os.fstat(f.fileno()).st_size == 0:
                    raise FileFormatError(f"{self.path} is empty, not a MindRecord file")
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        return self._map

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_map": None}

    def raw_bytes(self, row: int) -> bytes:
        return self._slice(self.rows.raw_page[row], self.rows.raw_offset[row],
                           self.rows.raw_length[row])

    def blob_bytes(self, row: int) -> bytes:
        return self._slice(self.rows.blob_page[row], self.rows.blob_offset[row],
                           self.rows.blob_length[row])

    def _slice(self, page: int, offset: int, length: int) -> bytes:
        start = self.header.page_offset(int(page)) + int(offset) + 8
        return self._data()[start:start + int(length)]

    def raw_values(self, row: int) -> dict[str, Any]:
        try:
            return unpack_row(self.raw_bytes(row))
        except ValueError as exc:
            raise FileFormatError(f"{self.path}: row {row}'s raw fields are damaged: "
                                  f"{exc}") from exc

    def read(self, row: int, columns: Sequence[str]) -> dict[str, np.ndarray]:
        """The values of ``columns`` in row ``row`` (0-based within this file)."""
        fields = [self.schema.fields[c] for c in columns]
        values: dict[str, Any] = {}
        if any(not f.is_blob for f in fields):
            values.update(self.raw_values(row))
        if any(f.is_blob for f in fields):
            try:
                values.update(split_blob(self.schema, self.blob_bytes(row)))
            except ValueError as exc:
                raise FileFormatError(f"{self.path}: row {row}'s blob is damaged: "
                                      f"{exc}") from exc
        try:
            return {f.name: column_value(f, values) for f in fields}
        except (ValueError, TypeError, KeyError) as exc:
            raise FileFormatError(f"{self.path}: row {row} does not fit the schema: "
                                  f"{exc}") from exc


def column_value(field: Field, values: dict[str, Any]) -> np.ndarray:
    """A field's value as MindSpore's MindDataset gives it: a scalar array of the field's
    type, a string array, a one-element bytes array (``|S<n>``), or an array of the
    field's shape."""
    if field.name not in values:
        raise KeyError(f"field {field.name!r} is missing")
    value = values[field.name]
    if field.type == "bytes":
        return np.array([value])
    if field.shape is not None:
        return _array(field, field.shape, value)
    if field.type == "string":
        if not isinstance(value, str):
            raise TypeError(f"field {field.name!r} holds a {type(value).__name__}, not a "
                            "string")
        return np.array(value)
    if field.type in _INT_RANGES:
        low, high = _INT_RANGES[field.type]
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ValueError(f"field {field.name!r} holds {value!r}, not an {field.type}")
    elif not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"field {field.name!r} holds a {type(value).__name__}, not a number")
    return np.array(value, field.dtype)


def _array(field: Field, shape: tuple[int, ...], data: bytes) -> np.ndarray:
    dtype = field.dtype.newbyteorder("<")
    known = math.prod(d for d in shape if d != -1)
    if len(data) % dtype.itemsize or (len(data) // dtype.itemsize) % known or (
            -1 not in shape and len(data) // dtype.itemsize != known):
        raise ValueError(f"field {field.name!r} holds {len(data)} bytes, not a whole "
                         f"{field.type} array of shape {list(shape)}")
    return np.frombuffer(data, dtype).reshape(shape).astype(field.dtype)


def _row_table(header: Header, data: Any, path: str) -> RowTable:
    starts = raw_group_starts(header)
    columns: list[list[int]] = [[] for _ in range(7)]
    next_row = 0
    for page in blob_pages(header):
        group = page.page_type_id
        if group not in starts:
            raise FileFormatError(f"{path}: row group {group} (blob page {page.page_id}) has "
                                  "no raw page")
        if page.start_row_id != next_row:
            raise FileFormatError(f"{path}: blob page {page.page_id} starts at row "
                                  f"{page.start_row_id}, expected {next_row}")
        raw_page, raw_at = starts[group]
        blob_at = 0
        for row in range(page.start_row_id, page.end_row_id):
            blob_length = _length(data, header, page, blob_at, path, row)
            raw_length = _length(data, header, raw_page, raw_at, path, row)
            for column, value in zip(columns, (group, raw_page.page_id, raw_at, raw_length,
                                               page.page_id, blob_at, blob_length)):
                column.append(value)
            blob_at += 8 + blob_length
            raw_at += 8 + raw_length
        next_row = page.end_row_id
    return RowTable(*(np.array(c, np.int64) for c in columns))


def _length(data: Any, header: Header, page, at: int, path: str, row: int) -> int:
    if at + 8 > page.page_size:
        raise FileFormatError(f"{path}: row {row} starts past the used part of page "
                              f"{page.page_id}")
    (length,) = struct.unpack_from("<Q", data, header.page_offset(page.page_id) + at)
    if length > page.page_size - at - 8:
        raise FileFormatError(f"{path}: row {row} declares {length} bytes, more than page "
                              f"{page.page_id} holds after it")
    return length
