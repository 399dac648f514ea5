"""The base of sources whose rows are numbered: :class:`MappableSource`.

A mappable source knows its length and reads row ``i`` on its own (:meth:`_read`), so a pass
is an *order* of indices — shuffled, cut to ``num_samples``, split into shards — read through
a worker pool: ``num_parallel_workers`` threads, or processes where ``read_in_processes``
(then the source is pickled to each worker).

Sharding (``num_shards``, ``shard_id``) follows MindSpore's distributed sampler: every shard
gets ``ceil(n / num_shards)`` rows, the order wrapping around to fill the last ones, and all
shards see the same shuffle (same seed), so together they cover the dataset once.  A
``sampler`` (:mod:`.samplers`) takes the place of all four of ``shuffle``, ``num_samples``,
``num_shards`` and ``shard_id``.

Data parallel: a source given neither ``num_shards`` nor a ``sampler`` reads one shard per rank
when this process is one of several data-parallel ranks (a plugin says so through
:func:`mskernel_sdk.data_parallel_group`, consulted when a pass starts): shard ``rank`` of
``size``, as MindSpore scripts pass ``num_shards=get_group_size(), shard_id=get_rank()``.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any, Iterator, Optional, Union

import numpy as np
from mskernel_sdk import data_parallel_group

from .dataset import Dataset
from .errors import DatasetError
from .execution import Plan, Row, RowsFn
from .rng import Epoch, pass_rng
from .samplers import check_num_samples, as_sampler, shard_order


class Shuffle(enum.Enum):
    """How a file-based source shuffles: ``GLOBAL`` every row, ``FILES`` the order of the
    files (each read in order), ``INFILE`` the rows within each file (files in order)."""

    GLOBAL = "global"
    FILES = "files"
    INFILE = "infile"


def file_order(sizes: list[int], mode: Shuffle, rng: np.random.Generator) -> np.ndarray:
    """The indices of one pass over files of ``sizes`` rows (numbered file after file),
    shuffled by file (``FILES``) or within each file (``INFILE``)."""
    starts = np.cumsum([0, *sizes])
    files = rng.permutation(len(sizes)) if mode is Shuffle.FILES else range(len(sizes))
    parts = [np.arange(starts[f], starts[f + 1]) for f in files]
    if mode is Shuffle.INFILE:
        parts = [rng.permutation(p) for p in parts]
    return np.concatenate(parts) if parts else np.arange(0)


@dataclass(frozen=True)
class ReadStage:
    """The per-row work of a mappable source: read row ``index``."""

    label: str
    source: "MappableSource"

    def __call__(self, epoch: Epoch, position: int, index: int) -> Row:
        return self.source._read(int(index))


class MappableSource(Dataset):
    """A source of ``_length()`` rows read by index with ``_read(i)``."""

    #: Whether reading runs in processes (True) or threads when there are several workers.
    read_in_processes = False

    def __init__(self, num_samples: Optional[int], shuffle: Union[bool, Shuffle, None],
                 num_shards: Optional[int], shard_id: Optional[int],
                 num_parallel_workers: Optional[int], sampler: Any = None) -> None:
        super().__init__()
        owner = type(self).__name__
        if sampler is not None and (shuffle or num_samples is not None
                                    or num_shards is not None or shard_id is not None):
            given = {"shuffle": shuffle or None, "num_samples": num_samples,
                     "num_shards": num_shards, "shard_id": shard_id}
            raise DatasetError(f"{owner}: a sampler decides the rows of a pass, so it does not "
                               f"go with {', '.join(k for k, v in given.items() if v is not None)}"
                               "; give those to the sampler instead")
        if (num_shards is None) != (shard_id is None):
            raise DatasetError("num_shards and shard_id go together: give both or neither")
        if num_shards is not None and not 0 <= shard_id < num_shards:
            raise DatasetError(f"shard_id must lie in [0, {num_shards}), got {shard_id}")
        if num_parallel_workers is not None and num_parallel_workers < 1:
            raise DatasetError(f"num_parallel_workers must be >= 1, got {num_parallel_workers}")
        self.num_samples = check_num_samples(num_samples, owner)
        self.sampler = as_sampler(sampler)
        self.shuffle_mode = Shuffle.GLOBAL if shuffle in (None, True) else shuffle or None
        self.num_shards, self.shard_id = num_shards, shard_id
        self.num_parallel_workers = num_parallel_workers

    def _length(self) -> int:
        raise NotImplementedError

    def _read(self, index: int) -> Row:
        raise NotImplementedError

    def _order(self, rng: np.random.Generator) -> np.ndarray:
        """The indices of one pass before sharding and ``num_samples``."""
        n = self._length()
        return rng.permutation(n) if self.shuffle_mode else np.arange(n)

    def _shard_assignment(self) -> tuple[Optional[int], Optional[int]]:
        """``(num_shards, shard_id)``: the given ones, else one shard per data-parallel rank,
        else ``(None, None)``."""
        if self.num_shards is not None or self.sampler is not None or not self._shardable():
            return self.num_shards, self.shard_id
        group = data_parallel_group()
        shard = None if group is None else group.dataset_shard()
        return (None, None) if shard is None else shard

    def _shardable(self) -> bool:
        """Whether rows can be split by index (an iterable source cannot)."""
        return True

    def _count(self) -> float:
        n = self._length()
        if self.sampler is not None:
            return self.sampler.count(n)
        num_shards, _ = self._shard_assignment()
        if num_shards is not None:
            n = math.ceil(n / num_shards)
        return n if self.num_samples is None else min(n, self.num_samples)

    def _sample(self, rng: np.random.Generator) -> np.ndarray:
        if self.sampler is not None:
            return self.sampler.rows(self._length(), rng)
        order = self._order(rng)
        num_shards, shard_id = self._shard_assignment()
        if num_shards is not None:
            order = shard_order(order, num_shards, shard_id)
        return order[:self.num_samples]

    def _rows_fn(self, plan: Plan, node: int) -> RowsFn:
        stage = ReadStage(f"{type(self).__name__} reading", self)
        pool = plan.pool(stage, self.num_parallel_workers, self.read_in_processes)
        seed = plan.seed

        def rows(epoch: Epoch) -> Iterator[Row]:
            yield from pool.imap(epoch, self._sample(pass_rng(seed, node, epoch)))

        return rows
