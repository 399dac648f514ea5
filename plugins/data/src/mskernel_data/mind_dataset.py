"""``MindDataset``: rows of MindRecord files (see :mod:`mskernel_data.mindrecord`)."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from .dataset import as_column_list
from .errors import DatasetError
from .execution import Row
from .mindrecord.files import Paths, open_shards
from .source import MappableSource, Shuffle, file_order


class MindDataset(MappableSource):
    """The rows of a MindRecord dataset, one column per field (in code-point order, or in
    ``columns_list``'s order).

    ``dataset_files`` is one shard's file name — every shard its header lists is read, from
    the same folder — or a list of the files to read.  Values come as MindSpore gives them:
    scalars as 0-d arrays of the field's type, strings as 0-d string arrays, ``bytes`` as
    a one-element bytes array, arrays in the field's shape.  ``shuffle`` is True or
    ``Shuffle.GLOBAL`` (the default), ``Shuffle.FILES``, ``Shuffle.INFILE`` or False;
    ``sampler`` replaces ``shuffle``, ``num_samples`` and the sharding (see
    :mod:`.samplers`).  ``num_padded`` copies of ``padded_sample`` (a dict with every
    column) follow the rows, so that ``num_shards`` divides the total.
    """

    def __init__(self, dataset_files: Paths,
                 columns_list: Union[str, Sequence[str], None] = None,
                 num_parallel_workers: Optional[int] = None,
                 shuffle: Union[bool, Shuffle, None] = None, num_shards: Optional[int] = None,
                 shard_id: Optional[int] = None, sampler: Any = None,
                 padded_sample: Optional[dict] = None, num_padded: Optional[int] = None,
                 num_samples: Optional[int] = None) -> None:
        super().__init__(num_samples, shuffle, num_shards, shard_id, num_parallel_workers,
                         sampler)
        self._shards = open_shards(dataset_files)
        fields = self._shards[0].schema.fields
        self._columns = as_column_list(columns_list, "columns_list") or list(fields)
        unknown = [c for c in self._columns if c not in fields]
        if unknown:
            raise DatasetError(f"MindDataset: no field {', '.join(map(repr, unknown))}; the "
                               f"fields are {list(fields)}")
        self._sizes = [len(s) for s in self._shards]
        self._offsets = np.cumsum([0, *self._sizes])
        self._padded = self._padding(padded_sample, num_padded, num_shards)

    def _padding(self, sample: Optional[dict], count: Optional[int],
                 num_shards: Optional[int]) -> tuple[Row, ...]:
        if sample is None and not count:
            return ()
        if sample is None or not isinstance(count, int) or count < 1:
            raise DatasetError("MindDataset: padded_sample and a positive num_padded go "
                               "together")
        missing = [c for c in self._columns if c not in sample]
        if missing:
            raise DatasetError(f"MindDataset: padded_sample lacks {missing}")
        if num_shards is None or (int(self._offsets[-1]) + count) % num_shards:
            raise DatasetError(f"MindDataset: with num_padded, num_shards must divide the "
                               f"{int(self._offsets[-1])} rows + {count} padded ones")
        row = tuple(np.asarray(sample[c]) for c in self._columns)
        return (row,) * count

    def get_col_names(self) -> list[str]:
        return list(self._columns)

    def _length(self) -> int:
        return int(self._offsets[-1]) + len(self._padded)

    def _order(self, rng: np.random.Generator) -> np.ndarray:
        if self.shuffle_mode not in (Shuffle.FILES, Shuffle.INFILE):
            return super()._order(rng)
        order = file_order(self._sizes, self.shuffle_mode, rng)
        return np.concatenate([order, np.arange(len(self._padded)) + int(self._offsets[-1])])

    def _read(self, index: int) -> Row:
        if index >= self._offsets[-1]:
            return self._padded[index - int(self._offsets[-1])]
        shard = int(np.searchsorted(self._offsets, index, side="right")) - 1
        values = self._shards[shard].read(index - int(self._offsets[shard]), self._columns)
        return tuple(values[c] for c in self._columns)
