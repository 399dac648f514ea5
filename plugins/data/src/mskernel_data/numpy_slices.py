"""``NumpySlicesDataset``: rows sliced from in-memory arrays along their first axis."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from .dataset import as_column_list
from .errors import DatasetError
from .execution import Row
from .source import MappableSource


class NumpySlicesDataset(MappableSource):
    """Rows from ``data`` sliced along the first axis.

    ``data`` is a dict (one column per key, named by it), a tuple (one column per item), or
    a list or array (one column).  Columns are named ``column_names`` or ``column_0``,
    ``column_1``, ...  Shuffled unless ``shuffle=False`` (MindSpore's default).
    """

    def __init__(self, data: Any, column_names: Union[str, Sequence[str], None] = None,
                 num_samples: Optional[int] = None, num_parallel_workers: Optional[int] = 1,
                 shuffle: Optional[bool] = None, sampler: Any = None,
                 num_shards: Optional[int] = None, shard_id: Optional[int] = None) -> None:
        super().__init__(num_samples, shuffle, num_shards, shard_id, num_parallel_workers,
                         sampler)
        if isinstance(data, dict):
            default_names, values = list(data), list(data.values())
        elif isinstance(data, tuple):
            default_names, values = None, list(data)
        else:
            default_names, values = None, [data]
        self._columns = [np.asarray(v) for v in values]
        names = as_column_list(column_names, "column_names") or default_names
        self._names = names or [f"column_{i}" for i in range(len(self._columns))]
        if len(self._names) != len(self._columns):
            raise DatasetError(f"NumpySlicesDataset: {len(self._columns)} columns of data but "
                               f"column_names {self._names}")
        lengths = {len(c) if c.ndim else None for c in self._columns}
        if None in lengths or len(lengths) != 1:
            shapes = [c.shape for c in self._columns]
            raise DatasetError(f"NumpySlicesDataset: every column needs the same length along "
                               f"its first axis, got shapes {shapes}")

    def get_col_names(self) -> list[str]:
        return list(self._names)

    def _length(self) -> int:
        return len(self._columns[0])

    def _read(self, index: int) -> Row:
        return tuple(np.array(c[index]) for c in self._columns)
