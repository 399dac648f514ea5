"""``FileReader``: the rows of a MindRecord dataset as dicts (MindSpore's
``mindrecord.FileReader``), without a pipeline."""

from __future__ import annotations

from typing import Any, Iterator, Optional, Sequence

from ..errors import DatasetError
from .files import Paths, open_shards


class FileReader:
    """Reads ``file_name`` (one shard's name stands for the whole dataset; a list names the
    files).  ``columns`` picks fields (default: all).  ``num_consumer`` and ``operator`` are
    accepted for MindSpore's signature; rows are read in the calling thread."""

    def __init__(self, file_name: Paths, num_consumer: int = 4,
                 columns: Optional[Sequence[str]] = None, operator: Any = None) -> None:
        self._shards = open_shards(file_name)
        fields = self._shards[0].schema.fields
        unknown = [c for c in columns or () if c not in fields]
        if unknown:
            raise DatasetError(f"FileReader: no field {', '.join(map(repr, unknown))}; the "
                               f"fields are {list(fields)}")
        self._columns = list(columns) if columns else list(fields)

    def get_next(self) -> Iterator[dict[str, Any]]:
        """Each row as ``{field: value}``: scalars as Python values, ``bytes`` as bytes,
        arrays as NumPy arrays of the field's shape."""
        for shard in self._shards:
            for row in range(len(shard)):
                values = shard.read(row, self._columns)
                yield {name: _plain(shard.schema.fields[name], value)
                       for name, value in values.items()}

    def len(self) -> int:  # noqa: A003 - MindSpore's name
        return sum(len(s) for s in self._shards)

    def schema(self) -> dict[str, dict]:
        return self._shards[0].schema.as_json()["schema"]

    def close(self) -> None:
        for shard in self._shards:
            shard.close()


def _plain(field, value):
    if field.type == "bytes":
        return value[0].tobytes() if value.dtype.itemsize else b""
    return value if field.shape is not None else value.item()
