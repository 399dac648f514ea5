"""How a dataset description runs: one :class:`Plan` per iterator.

A :class:`~.dataset.Dataset` is an immutable description; iterating it builds, node by node,
a *rows function* ``rows(epoch) -> Iterator[Row]`` that holds whatever the iteration needs
(worker pools, the node's number for its random seed).  The same dataset object used twice
in one pipeline (``ds.zip(ds.rename(...))``) gets two independent rows functions.

Nodes are numbered in a depth-first walk from the root, so two equal pipelines number their
nodes alike and draw the same random numbers whatever else the program built before.
"""

from __future__ import annotations

from typing import Callable, Iterator

import numpy as np

from .config import DataConfig
from .rng import Epoch
from .workers import InlinePool, Pool, ProcessPool, Stage, ThreadPool

Row = tuple[np.ndarray, ...]
RowsFn = Callable[[Epoch], Iterator[Row]]


class Plan:
    """The settings, node numbering and worker pools of one iterator.

    ``inline=True`` runs every stage in the iterating thread whatever its worker count (used
    to probe a pipeline for its first row's shapes; results are the same either way).
    """

    def __init__(self, config: DataConfig, inline: bool = False) -> None:
        self.config = config
        self.seed = config.seed
        self.inline = inline
        self._nodes = 0
        self._pools: list[Pool] = []

    def number(self) -> int:
        """The next node number."""
        self._nodes += 1
        return self._nodes - 1

    def pool(self, stage: Stage, workers: int | None, processes: bool) -> Pool:
        """A pool for ``stage`` with ``workers`` workers (None: the configured default) as
        processes or threads; inline for one worker.  Closed with the plan."""
        count = self.config.num_parallel_workers if workers is None else workers
        window = count + self.config.prefetch_size
        if self.inline or count <= 1:
            pool: Pool = InlinePool(stage)
        elif processes:
            pool = ProcessPool(stage, count, window, self.config.multiprocessing_start_method)
        else:
            pool = ThreadPool(stage, count, window)
        self._pools.append(pool)
        return pool

    def close(self) -> None:
        """Stop every worker of this plan (idempotent)."""
        pools, self._pools = self._pools, []
        for pool in pools:
            pool.close()
