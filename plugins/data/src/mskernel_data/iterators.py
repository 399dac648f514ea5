"""Iterators over a dataset: rows as lists (:class:`TupleIterator`) or dicts
(:class:`DictIterator`) of :class:`mskernel.Tensor` or NumPy arrays.

An iterator owns its pipeline's worker pools.  Each ``for`` loop over it is one epoch; after
``num_epochs`` epochs, on :meth:`stop`, on an exception in the pipeline, when it is
garbage-collected (a ``break`` out of ``for row in ds``) and at interpreter exit, it closes
the pools, so no worker outlives it.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Iterator, Optional

import numpy as np

from . import config
from .execution import Plan, Row

if TYPE_CHECKING:
    from .dataset import Dataset


class _Iterator:
    def __init__(self, dataset: "Dataset", owner: "Dataset", num_epochs: int,
                 output_numpy: bool) -> None:
        if num_epochs == 0 or num_epochs < -1:
            raise ValueError(f"num_epochs must be positive or -1, got {num_epochs}")
        self._columns = dataset.get_col_names()
        self._owner = owner
        self._epochs_left = num_epochs
        self._output_numpy = output_numpy
        self._current: Optional[Iterator[Row]] = None
        self._plan = Plan(config.current())
        self._finalizer = weakref.finalize(self, self._plan.close)
        try:
            self._rows_fn = dataset.build(self._plan)
        except BaseException:
            self.stop()
            raise

    def __iter__(self) -> "_Iterator":
        return self

    def __next__(self) -> Any:
        if self._current is None:
            if not self._finalizer.alive:
                raise StopIteration
            self._current = self._rows_fn((self._owner._claim_epoch(),))
        try:
            row = next(self._current)
        except StopIteration:
            self._current = None
            self._epochs_left -= 1
            if self._epochs_left == 0:
                self.stop()
            raise
        except BaseException:
            self.stop()
            raise
        return self._package([self._convert(v) for v in row])

    def stop(self) -> None:
        """End the iteration now and stop the workers; idempotent."""
        current, self._current = self._current, None
        if current is not None:
            current.close()
        self._finalizer()

    def _convert(self, value: np.ndarray) -> Any:
        if self._output_numpy or value.dtype.kind in "USOV":
            return value
        from mskernel import Tensor

        return Tensor(value)

    def _package(self, values: list[Any]) -> Any:
        raise NotImplementedError


class TupleIterator(_Iterator):
    """Yields each row as a list of column values."""

    def _package(self, values: list[Any]) -> list[Any]:
        return values


class DictIterator(_Iterator):
    """Yields each row as ``{column name: value}``."""

    def _package(self, values: list[Any]) -> dict[str, Any]:
        return dict(zip(self._columns, values))
