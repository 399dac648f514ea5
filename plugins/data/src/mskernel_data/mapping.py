"""``Dataset.map``: apply operations to some columns of every row, possibly in workers."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Iterator, Optional

import numpy as np

from .dataset import Dataset, as_column_list, column_indices
from .errors import DatasetError
from .execution import Plan, Row, RowsFn
from .rng import Epoch, row_rng
from .transforms import Operation, apply_operations


@dataclass(frozen=True)
class MapStage:
    """The per-row work of one ``map`` (what a worker runs): draw the row's generator, apply
    the operations, check the number of results and make them arrays."""

    label: str
    operations: tuple[Operation, ...]
    outputs: int
    seed: int
    node: int

    def __call__(self, epoch: Epoch, position: int, columns: tuple) -> Row:
        out = apply_operations(self.operations, columns,
                               row_rng(self.seed, self.node, epoch, position))
        if len(out) != self.outputs:
            raise ValueError(f"the operations returned {len(out)} columns for "
                             f"{self.outputs} output column(s); set output_columns to "
                             f"name each result")
        return tuple(np.asarray(v) for v in out)


class MapDataset(Dataset):
    """See :meth:`Dataset.map`."""

    def __init__(self, child: Dataset, operations: Any, input_columns: Any,
                 output_columns: Any, num_parallel_workers: Optional[int],
                 python_multiprocessing: bool) -> None:
        super().__init__([child])
        ops = list(operations) if isinstance(operations, (list, tuple)) else [operations]
        if not ops or not all(callable(op) for op in ops):
            raise DatasetError(f"map needs a transform or callable, or a list of them; got "
                               f"{operations!r}")
        if num_parallel_workers is not None and num_parallel_workers < 1:
            raise DatasetError(f"num_parallel_workers must be >= 1, got {num_parallel_workers}")
        names = child.get_col_names()
        inputs = as_column_list(input_columns, "map input_columns") or names[:1]
        self._input_positions = column_indices(child, inputs, "map")
        outputs = as_column_list(output_columns, "map output_columns") or inputs
        kept = [n for n in names if n not in inputs]
        clash = [n for n in outputs if n in kept]
        if clash:
            raise DatasetError(f"map output_columns {clash} clash with columns the map keeps; "
                               "rename them or include them in input_columns")
        first = min(self._input_positions)
        self._kept_before = [i for i in range(first) if names[i] not in inputs]
        self._kept_after = [i for i in range(first, len(names)) if names[i] not in inputs]
        self._names = ([names[i] for i in self._kept_before] + outputs
                       + [names[i] for i in self._kept_after])
        self.operations = tuple(ops)
        self.input_columns, self.output_columns = inputs, outputs
        self.num_parallel_workers = num_parallel_workers
        self.python_multiprocessing = python_multiprocessing

    def get_col_names(self) -> list[str]:
        return list(self._names)

    def _count(self) -> float:
        return self.children[0]._count()

    def _rows_fn(self, plan: Plan, node: int) -> RowsFn:
        child = self.children[0].build(plan)
        stage = MapStage(label=f"map on {self.input_columns}", operations=self.operations,
                         outputs=len(self.output_columns), seed=plan.seed, node=node)
        pool = plan.pool(stage, self.num_parallel_workers, self.python_multiprocessing)
        before, after, inputs = self._kept_before, self._kept_after, self._input_positions

        def rows(epoch: Epoch) -> Iterator[Row]:
            waiting: deque[Row] = deque()  # rows whose mapped columns are in flight

            def payloads() -> Iterator[tuple]:
                for row in child(epoch):
                    waiting.append(row)
                    yield tuple(row[i] for i in inputs)

            for out in pool.imap(epoch, payloads()):
                row = waiting.popleft()
                yield (*(row[i] for i in before), *out, *(row[i] for i in after))

        return rows
