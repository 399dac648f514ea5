"""``GeneratorDataset``: rows from user Python code."""

from __future__ import annotations

import inspect
import itertools
from typing import Any, Iterator, Optional, Sequence, Union

import numpy as np

from mskernel_sdk import DType, as_storage, dtype as to_dtype

from .dataset import as_column_list
from .errors import DatasetError
from .execution import Plan, Row, RowsFn
from .rng import Epoch
from .source import MappableSource
from .workers import Failure


class GeneratorDataset(MappableSource):
    """Rows from ``source``, which is either

    - *random-accessible* (``__getitem__`` and ``__len__``): row ``i`` is ``source[i]``.  It is
      shuffled unless ``shuffle=False``, can be sharded or given a ``sampler``, and is read by
      ``num_parallel_workers`` workers — processes when ``python_multiprocessing`` (the
      default), so the source must be picklable — or
    - *iterable*: a callable returning an iterator (a generator function) or an iterable,
      read in order, one fresh iterator per epoch, by the iterating thread.

    Each item is a tuple with one value per column of ``column_names`` (a bare value for a
    single column); values become NumPy arrays, cast to ``column_types`` when given.
    """

    def __init__(self, source: Any, column_names: Union[str, Sequence[str], None] = None,
                 column_types: Optional[Sequence[Any]] = None,
                 num_samples: Optional[int] = None, num_parallel_workers: Optional[int] = 1,
                 shuffle: Optional[bool] = None, sampler: Any = None,
                 num_shards: Optional[int] = None, shard_id: Optional[int] = None,
                 python_multiprocessing: bool = True) -> None:
        self._random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        if not self._random_access:
            _check_iterable_source(source, shuffle, sampler, num_shards, num_parallel_workers)
        super().__init__(num_samples, shuffle if self._random_access else False, num_shards,
                         shard_id, num_parallel_workers, sampler)
        names = as_column_list(column_names, "column_names")
        if names is None:
            raise DatasetError("GeneratorDataset needs column_names, one per value the source "
                               "gives")
        self._names = names
        self._types = None if column_types is None else [to_dtype(t) for t in column_types]
        if self._types is not None and len(self._types) != len(names):
            raise DatasetError(f"column_types has {len(self._types)} entries for columns "
                               f"{names}")
        self.source = source
        self.read_in_processes = python_multiprocessing
        self._counted: Optional[int] = None

    def get_col_names(self) -> list[str]:
        return list(self._names)

    def _shardable(self) -> bool:
        return self._random_access

    def _length(self) -> int:
        if self._random_access:
            return len(self.source)
        if self._counted is None:  # the only way to know is to run the source once
            self._counted = sum(1 for _ in self._iterate())
        return self._counted

    def _read(self, index: int) -> Row:
        return to_row(self.source[index], self._names, self._types)

    def _iterate(self) -> Iterator[Any]:
        """The source's items (the factory is called on the first ``next``)."""
        is_factory = callable(self.source) and not hasattr(self.source, "__iter__")
        yield from (self.source() if is_factory else self.source)

    def _rows_fn(self, plan: Plan, node: int) -> RowsFn:
        if self._random_access:
            return super()._rows_fn(plan, node)
        limit = self.num_samples

        def rows(epoch: Epoch) -> Iterator[Row]:
            items = itertools.islice(self._iterate(), limit)
            for position in itertools.count():
                try:
                    item = next(items, _END)
                    if item is _END:
                        return
                    row = to_row(item, self._names, self._types)
                except Exception as exc:
                    failure = Failure.of("GeneratorDataset source", epoch, position, exc,
                                         "in the iterating thread", keep_original=True)
                    raise failure.as_error() from exc
                yield row

        return rows


_END = object()


def to_row(item: Any, names: Sequence[str], types: Optional[Sequence[DType]]) -> Row:
    """``item`` (a tuple of column values, or one value for a one-column source) as a row of
    arrays, cast to ``types`` when given."""
    values = item if isinstance(item, tuple) else (item,)
    if len(values) != len(names):
        got = f"a tuple of {len(values)}" if isinstance(item, tuple) else "a single value"
        raise ValueError(f"the source gave {got} for {len(names)} columns {list(names)}; "
                         "give one value per column, as a tuple")
    if types is None:
        return tuple(np.asarray(v) for v in values)
    return tuple(as_storage(v, t) for v, t in zip(values, types))


def _check_iterable_source(source: Any, shuffle: Optional[bool], sampler: Any,
                           num_shards: Optional[int], num_parallel_workers: Optional[int]) -> None:
    if inspect.isgenerator(source):
        raise DatasetError("GeneratorDataset got a generator object, which can be iterated "
                           "only once; pass the generator function (or an iterable) instead")
    if not (callable(source) or hasattr(source, "__iter__")):
        raise DatasetError(f"GeneratorDataset needs a random-accessible object, an iterable "
                           f"or a callable returning an iterator; got {type(source).__name__}")
    needs_indices = {"shuffle=True": shuffle, "a sampler": sampler is not None,
                     "num_shards": num_shards is not None,
                     "num_parallel_workers > 1": (num_parallel_workers or 1) > 1}
    asked = [what for what, given in needs_indices.items() if given]
    if asked:
        raise DatasetError(f"GeneratorDataset: {', '.join(asked)} needs a random-accessible "
                           "source (with __getitem__ and __len__); an iterable source is read "
                           "in order by one thread — parallelise the work with map instead")
