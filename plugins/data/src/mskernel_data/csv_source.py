"""``CSVDataset``: rows from CSV files."""

from __future__ import annotations

import csv
import glob
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import numpy as np

from .dataset import as_column_list
from .errors import DatasetError
from .execution import Row
from .source import MappableSource, Shuffle, file_order

_TYPES = {int: np.int32, float: np.float32, str: np.str_}


class CSVDataset(MappableSource):
    """One row per CSV record of ``dataset_files`` (paths or glob patterns, read in sorted
    order), one scalar column per field.

    ``column_names`` names the fields; without it the first record of each file is the
    header.  ``column_defaults`` gives one value per field whose type (int → int32, float →
    float32, str) is the column's type and which fills empty fields; without it every column
    is a string.  ``shuffle`` is ``Shuffle.GLOBAL`` (or True; the default), ``Shuffle.FILES``
    (file order only), ``Shuffle.INFILE`` (rows within each file) or False.  Files are read
    into memory on first use.
    """

    def __init__(self, dataset_files: Union[str, Sequence[str]], field_delim: str = ",",
                 column_defaults: Optional[Sequence[Any]] = None,
                 column_names: Optional[Sequence[str]] = None,
                 num_samples: Optional[int] = None, num_parallel_workers: Optional[int] = None,
                 shuffle: Union[bool, Shuffle] = Shuffle.GLOBAL,
                 num_shards: Optional[int] = None, shard_id: Optional[int] = None) -> None:
        super().__init__(num_samples, shuffle, num_shards, shard_id, num_parallel_workers)
        self.files = _expand(dataset_files)
        self.field_delim = field_delim
        self._has_header = column_names is None
        self._names = as_column_list(column_names, "column_names") or self._header()
        if column_defaults is not None:
            if len(column_defaults) != len(self._names):
                raise DatasetError(f"CSVDataset: {len(column_defaults)} column_defaults for "
                                   f"{len(self._names)} columns {self._names}")
            bad = [d for d in column_defaults if type(d) not in _TYPES]
            if bad:
                raise DatasetError(f"CSVDataset column_defaults must be int, float or str "
                                   f"values, got {bad}")
        self.column_defaults = None if column_defaults is None else list(column_defaults)
        self._records: Optional[list[list[list[str]]]] = None  # per file, per record

    def get_col_names(self) -> list[str]:
        return list(self._names)

    def _table(self) -> list[list[list[str]]]:
        if self._records is None:
            self._records = [self._read_file(path) for path in self.files]
        return self._records

    def _read_file(self, path: str) -> list[list[str]]:
        with open(path, newline="") as f:
            records = list(csv.reader(f, delimiter=self.field_delim))
        body = records[1:] if self._has_header else records
        first_line = 2 if self._has_header else 1
        for line, record in enumerate(body, first_line):
            if len(record) != len(self._names):
                raise DatasetError(f"{path}, line {line}: {len(record)} fields, expected "
                                   f"{len(self._names)} ({self._names})")
        return body

    def _header(self) -> list[str]:
        with open(self.files[0], newline="") as f:
            header = next(csv.reader(f, delimiter=self.field_delim), None)
        if not header:
            raise DatasetError(f"CSVDataset: {self.files[0]} is empty, so it has no header "
                               "to take column names from; pass column_names")
        return header

    def _length(self) -> int:
        return sum(len(records) for records in self._table())

    def _order(self, rng: np.random.Generator) -> np.ndarray:
        if self.shuffle_mode not in (Shuffle.FILES, Shuffle.INFILE):
            return super()._order(rng)
        return file_order([len(records) for records in self._table()], self.shuffle_mode, rng)

    def _read(self, index: int) -> Row:
        for records in self._table():
            if index < len(records):
                return self._convert(records[index])
            index -= len(records)
        raise IndexError(index)

    def _convert(self, record: list[str]) -> Row:
        if self.column_defaults is None:
            return tuple(np.asarray(field) for field in record)
        values = []
        for name, field, default in zip(self._names, record, self.column_defaults):
            kind = type(default)
            try:
                values.append(np.asarray(kind(field) if field else default, _TYPES[kind]))
            except ValueError:
                raise ValueError(f"column {name!r}: {field!r} is not a valid "
                                 f"{kind.__name__}") from None
        return tuple(values)


def _expand(dataset_files: Union[str, Sequence[str]]) -> list[str]:
    patterns = [dataset_files] if isinstance(dataset_files, str) else list(dataset_files)
    files: list[str] = []
    for pattern in patterns:
        matches = glob.glob(pattern) if glob.has_magic(pattern) else [pattern]
        if not matches or not all(Path(m).is_file() for m in matches):
            raise DatasetError(f"CSVDataset: no file {pattern!r}")
        files += matches
    return sorted(files)
