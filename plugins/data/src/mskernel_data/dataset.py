"""The :class:`Dataset` base: the chaining methods every dataset has, and iteration.

A dataset is an immutable description of rows — tuples of NumPy arrays under column names.
Chaining (``ds.map(...).shuffle(...).batch(32)``) builds a new description; nothing runs
until an iterator is created.  A subclass says what columns it has
(:meth:`get_col_names`), how many rows a pass yields (:meth:`_count`) and how to produce them
(:meth:`_rows_fn`).

Epochs.  Every iterator a dataset creates continues that dataset's epoch count, so
``for epoch in range(3): for row in ds: ...`` sees epochs 0, 1, 2 — reshuffled and
re-augmented each time — exactly as one ``ds.create_tuple_iterator(num_epochs=3)`` does.
Recreating the pipeline starts again from epoch 0.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
import math
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import config
from .errors import DatasetError
from .execution import Plan, RowsFn


class Dataset(ABC):
    """Base class of datasets; holds its input datasets in ``children``."""

    def __init__(self, children: Sequence["Dataset"] = ()) -> None:
        self.children = tuple(children)
        self._epochs_started = 0

    # -- what a subclass provides -----------------------------------------------------------

    @abstractmethod
    def get_col_names(self) -> list[str]:
        """The column names, in row order."""

    @abstractmethod
    def _count(self) -> float:
        """Rows in one pass (``math.inf`` for an endless dataset)."""

    @abstractmethod
    def _rows_fn(self, plan: Plan, node: int) -> RowsFn:
        """The rows function of this node in ``plan``; ``node`` is its number."""

    def build(self, plan: Plan) -> RowsFn:
        """Number this node, then build its rows function (children numbered after it)."""
        return self._rows_fn(plan, plan.number())

    # -- chaining ---------------------------------------------------------------------------

    def map(self, operations: Any, input_columns: Union[str, Sequence[str], None] = None,
            output_columns: Union[str, Sequence[str], None] = None,
            num_parallel_workers: Optional[int] = None,
            python_multiprocessing: bool = False) -> "Dataset":
        """Apply ``operations`` (a transform or callable, or a list applied in order) to
        ``input_columns`` (default: the first column) of every row.  The results replace the
        input columns, named ``output_columns`` (default: the input names), at the place of
        the first input column.  ``num_parallel_workers`` workers (default
        ``config.get_num_parallel_workers()``) run as processes when
        ``python_multiprocessing`` is True, else as threads; the order of rows and every
        random decision are the same for any number of workers."""
        from .mapping import MapDataset

        return MapDataset(self, operations, input_columns, output_columns,
                          num_parallel_workers, python_multiprocessing)

    def batch(self, batch_size: int, drop_remainder: bool = False) -> "Dataset":
        """Stack ``batch_size`` consecutive rows column by column; the last, smaller batch
        is kept unless ``drop_remainder``."""
        from .structure import BatchDataset

        return BatchDataset(self, batch_size, drop_remainder)

    def shuffle(self, buffer_size: int) -> "Dataset":
        """Shuffle through a buffer of ``buffer_size`` rows (>= 2): each row out is drawn at
        random from the buffer, which is refilled from the input; a buffer at least the
        dataset's size shuffles it uniformly.  Reshuffled every epoch."""
        from .structure import ShuffleDataset

        return ShuffleDataset(self, buffer_size)

    def repeat(self, count: Optional[int] = None) -> "Dataset":
        """Pass over the input ``count`` times (None or -1: endlessly), each pass with its own
        shuffle and augmentation."""
        from .structure import RepeatDataset

        return RepeatDataset(self, count)

    def take(self, count: int = -1) -> "Dataset":
        """The first ``count`` rows (-1: all)."""
        from .structure import TakeDataset

        return TakeDataset(self, count)

    def skip(self, count: int) -> "Dataset":
        """All rows but the first ``count``."""
        from .structure import SkipDataset

        return SkipDataset(self, count)

    def zip(self, datasets: Union["Dataset", Sequence["Dataset"]]) -> "Dataset":
        """Rows side by side: this dataset's columns, then each of ``datasets``'; as many
        rows as the shortest.  Column names must not repeat."""
        from .structure import ZipDataset

        others = [datasets] if isinstance(datasets, Dataset) else list(datasets)
        return ZipDataset([self, *others])

    def concat(self, datasets: Union["Dataset", Sequence["Dataset"]]) -> "Dataset":
        """This dataset's rows, then each of ``datasets``'; all must have the same columns."""
        from .structure import ConcatDataset

        others = [datasets] if isinstance(datasets, Dataset) else list(datasets)
        return ConcatDataset([self, *others])

    def __add__(self, other: "Dataset") -> "Dataset":
        return self.concat(other)

    def project(self, columns: Union[str, Sequence[str]]) -> "Dataset":
        """Keep ``columns``, in that order."""
        from .structure import ProjectDataset

        return ProjectDataset(self, columns)

    def rename(self, input_columns: Union[str, Sequence[str]],
               output_columns: Union[str, Sequence[str]]) -> "Dataset":
        """Rename ``input_columns`` to ``output_columns``."""
        from .structure import RenameDataset

        return RenameDataset(self, input_columns, output_columns)

    # -- iteration --------------------------------------------------------------------------

    def create_tuple_iterator(self, columns: Union[str, Sequence[str], None] = None,
                              num_epochs: int = -1, output_numpy: bool = False):
        """An iterator over rows as lists of :class:`mskernel.Tensor` (NumPy arrays with
        ``output_numpy``; string columns are always NumPy), ``columns`` only if given.
        One pass per ``for`` loop; it stops, and its workers with it, after ``num_epochs``
        passes (-1: when it is closed or garbage-collected)."""
        from .iterators import TupleIterator

        source = self if columns is None else self.project(columns)
        return TupleIterator(source, self, num_epochs, output_numpy)

    def create_dict_iterator(self, num_epochs: int = -1, output_numpy: bool = False):
        """Like :meth:`create_tuple_iterator`, with rows as ``{column name: value}``."""
        from .iterators import DictIterator

        return DictIterator(self, self, num_epochs, output_numpy)

    def __iter__(self):
        return self.create_tuple_iterator(num_epochs=1)

    def _claim_epoch(self) -> int:
        """The epoch number the next pass of an iterator of this dataset gets."""
        self._epochs_started += 1
        return self._epochs_started - 1

    # -- introspection ----------------------------------------------------------------------

    def get_dataset_size(self) -> int:
        """Rows (batches, after ``batch``) in one epoch; -1 for an endless dataset."""
        count = self._count()
        return -1 if math.isinf(count) else int(count)

    def output_shapes(self) -> list[list[int]]:
        """The shape of each column of the first row."""
        return [list(v.shape) for v in self._first_row()]

    def output_types(self) -> list[np.dtype]:
        """The NumPy dtype of each column of the first row."""
        return [v.dtype for v in self._first_row()]

    def _first_row(self) -> tuple[np.ndarray, ...]:
        plan = Plan(config.current(), inline=True)
        try:
            rows = self.build(plan)((0,))
            row = next(rows, None)
            rows.close()
        finally:
            plan.close()
        if row is None:
            raise DatasetError(f"{type(self).__name__} has no rows to take shapes from")
        return row


def as_column_list(columns: Union[str, Sequence[str], None], what: str) -> Optional[list[str]]:
    """``columns`` as a list of names (a single name is allowed); None stays None."""
    if columns is None:
        return None
    names = [columns] if isinstance(columns, str) else list(columns)
    if not names or not all(isinstance(n, str) for n in names):
        raise DatasetError(f"{what} must be a column name or a non-empty list of names, "
                           f"got {columns!r}")
    if len(set(names)) != len(names):
        raise DatasetError(f"{what} repeats a column name: {names}")
    return names


def column_indices(dataset: Dataset, names: Sequence[str], what: str) -> list[int]:
    """Positions of ``names`` among ``dataset``'s columns; an error names the unknown ones."""
    available = dataset.get_col_names()
    unknown = [n for n in names if n not in available]
    if unknown:
        raise DatasetError(f"{what}: no column {', '.join(map(repr, unknown))}; the columns "
                           f"are {available}")
    return [available.index(n) for n in names]
