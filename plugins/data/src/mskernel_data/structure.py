"""Datasets that rearrange rows without looking inside them: batch, shuffle, repeat, take,
skip, zip, concat, project and rename (see the matching :class:`~.dataset.Dataset` methods)."""

from __future__ import annotations

import itertools
import math
from typing import Iterator, Optional, Sequence

import numpy as np

from .dataset import Dataset, as_column_list, column_indices
from .errors import DatasetError
from .execution import Plan, Row, RowsFn
from .rng import Epoch, pass_rng


def _positive(value: int, what: str) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise DatasetError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


class _Unary(Dataset):
    """A dataset with one input whose columns it keeps."""

    def __init__(self, child: Dataset) -> None:
        super().__init__([child])

    @property
    def child(self) -> Dataset:
        return self.children[0]

    def get_col_names(self) -> list[str]:
        return self.child.get_col_names()


class BatchDataset(_Unary):
    def __init__(self, child: Dataset, batch_size: int, drop_remainder: bool) -> None:
        super().__init__(child)
        self.batch_size = _positive(batch_size, "batch_size")
        self.drop_remainder = drop_remainder

    def _count(self) -> float:
        rounding = math.floor if self.drop_remainder else math.ceil
        return rounding(self.child._count() / self.batch_size)

    def _rows_fn(self, plan: Plan, node: int) -> RowsFn:
        child, size, names = self.child.build(plan), self.batch_size, self.get_col_names()

        def rows(epoch: Epoch) -> Iterator[Row]:
            source = child(epoch)
            for index in itertools.count():
                group = list(itertools.islice(source, size))
                if not group or (len(group) < size and self.drop_remainder):
                    return
                yield tuple(_stack([r[c] for r in group], names[c], index)
                            for c in range(len(names)))

        return rows


def _stack(values: list[np.ndarray], column: str, batch: int) -> np.ndarray:
    shapes = {v.shape for v in values}
    if len(shapes) > 1:
        raise DatasetError(f"batch {batch}: column {column!r} has rows of different shapes "
                           f"{sorted(shapes)}; make them equal in a map (Resize, crop, pad) "
                           "before batching")
    return np.stack(values)


class ShuffleDataset(_Unary):
    def __init__(self, child: Dataset, buffer_size: int) -> None:
        super().__init__(child)
        self.buffer_size = _positive(buffer_size, "buffer_size")
        if self.buffer_size < 2:
            raise DatasetError("shuffle buffer_size must be at least 2")

    def _count(self) -> float:
        return self.child._count()

    def _rows_fn(self, plan: Plan, node: int) -> RowsFn:
        child, size, seed = self.child.build(plan), self.buffer_size, plan.seed

        def rows(epoch: Epoch) -> Iterator[Row]:
            rng = pass_rng(seed, node, epoch)
            buffer: list[Row] = []
            for row in child(epoch):
                if len(buffer) < size:
                    buffer.append(row)
                    continue
                pick = int(rng.integers(size))
                yield buffer[pick]
                buffer[pick] = row
            for pick in rng.permutation(len(buffer)):
                yield buffer[pick]

        return rows


class RepeatDataset(_Unary):
    def __init__(self, child: Dataset, count: Optional[int]) -> None:
        super().__init__(child)
        self.count = None if count in (None, -1) else _positive(count, "repeat count")

    def _count(self) -> float:
        inner = self.child._count()
        if self.count is None:
            return math.inf if inner else 0
        return inner * self.count

    def _rows_fn(self, plan: Plan, node: int) -> RowsFn:
        child = self.child.build(plan)

        def rows(epoch: Epoch) -> Iterator[Row]:
            for index in (itertools.count() if self.count is None else range(self.count)):
                empty = True
                for row in child((*epoch, index)):
                    empty = False
                    yield row
                if empty:  # an endless repeat of nothing would never return
                    return

        return rows


class TakeDataset(_Unary):
    def __init__(self, child: Dataset, count: int) -> None:
        super().__init__(child)
        self.count = None if count == -1 else _positive(count, "take count")

    def _count(self) -> float:
        inner = self.child._count()
        return inner if self.count is None else min(inner, self.count)

    def _rows_fn(self, plan: Plan, node: int) -> RowsFn:
        child, count = self.child.build(plan), self.count

        def rows(epoch: Epoch) -> Iterator[Row]:
            yield from itertools.islice(child(epoch), count)

        return rows


class SkipDataset(_Unary):
    def __init__(self, child: Dataset, count: int) -> None:
        super().__init__(child)
        if not isinstance(count, (int, np.integer)) or count < 0:
            raise DatasetError(f"skip count must be a non-negative integer, got {count!r}")
        self.count = int(count)

    def _count(self) -> float:
        return max(0, self.child._count() - self.count)

    def _rows_fn(self, plan: Plan, node: int) -> RowsFn:
        child, count = self.child.build(plan), self.count

        def rows(epoch: Epoch) -> Iterator[Row]:
            yield from itertools.islice(child(epoch), count, None)

        return rows


class ProjectDataset(_Unary):
    def __init__(self, child: Dataset, columns: str | Sequence[str]) -> None:
        super().__init__(child)
        self.columns = as_column_list(columns, "project columns")
        self._positions = column_indices(child, self.columns, "project")

    def get_col_names(self) -> list[str]:
        return list(self.columns)

    def _count(self) -> float:
        return self.child._count()

    def _rows_fn(self, plan: Plan, node: int) -> RowsFn:
        child, positions = self.child.build(plan), self._positions

        def rows(epoch: Epoch) -> Iterator[Row]:
            for row in child(epoch):
                yield tuple(row[i] for i in positions)

        return rows


class RenameDataset(_Unary):
    def __init__(self, child: Dataset, input_columns: str | Sequence[str],
                 output_columns: str | Sequence[str]) -> None:
        super().__init__(child)
        old = as_column_list(input_columns, "rename input_columns")
        new = as_column_list(output_columns, "rename output_columns")
        if len(old) != len(new):
            raise DatasetError(f"rename needs as many output_columns as input_columns, got "
                               f"{old} and {new}")
        column_indices(child, old, "rename")
        mapping = dict(zip(old, new))
        self._names = [mapping.get(n, n) for n in child.get_col_names()]
        if len(set(self._names)) != len(self._names):
            raise DatasetError(f"rename would repeat a column name: {self._names}")

    def get_col_names(self) -> list[str]:
        return list(self._names)

    def _count(self) -> float:
        return self.child._count()

    def _rows_fn(self, plan: Plan, node: int) -> RowsFn:
        return self.child.build(plan)


class ZipDataset(Dataset):
    def __init__(self, datasets: Sequence[Dataset]) -> None:
        super().__init__(datasets)
        names = [n for d in datasets for n in d.get_col_names()]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise DatasetError(f"zip: column names {repeated} appear in more than one dataset; "
                               "rename them first")
        self._names = names

    def get_col_names(self) -> list[str]:
        return list(self._names)

    def _count(self) -> float:
        return min(d._count() for d in self.children)

    def _rows_fn(self, plan: Plan, node: int) -> RowsFn:
        children = [d.build(plan) for d in self.children]

        def rows(epoch: Epoch) -> Iterator[Row]:
            for parts in zip(*(child(epoch) for child in children)):
                yield tuple(v for part in parts for v in part)

        return rows


class ConcatDataset(Dataset):
    def __init__(self, datasets: Sequence[Dataset]) -> None:
        super().__init__(datasets)
        names = datasets[0].get_col_names()
        for d in datasets[1:]:
            if d.get_col_names() != names:
                raise DatasetError(f"concat needs the same columns in every dataset, got "
                                   f"{names} and {d.get_col_names()}")
        self._names = names

    def get_col_names(self) -> list[str]:
        return list(self._names)

    def _count(self) -> float:
        return sum(d._count() for d in self.children)

    def _rows_fn(self, plan: Plan, node: int) -> RowsFn:
        children = [d.build(plan) for d in self.children]

        def rows(epoch: Epoch) -> Iterator[Row]:
            for child in children:
                yield from child(epoch)

        return rows
