"""The data-parallel seam: how training and data plugins run on several ranks without knowing
the plugin that provides the ranks.

A plugin that runs processes as ranks (mskernel-parallel) registers a *provider* under the rule
kind :data:`DATA_PARALLEL_RULE`, keyed by its own name::

    @hookimpl
    def mskernel_register_rules(rules):
        rules.register(DATA_PARALLEL_RULE, "parallel", provider)

``provider(parallel_mode)`` returns a :class:`DataParallelGroup` when this process trains data
parallel — ``parallel_mode`` is what the user gave the training API (``Model(...,
parallel_mode=...)``, ``TrainOneStepCell``), ``None`` for the provider's own process-wide
setting (MindSpore's ``set_auto_parallel_context``) — and ``None`` otherwise.  Consumers call
:func:`data_parallel_group`: mskernel-nn reduces gradients with it, saves checkpoints on one
rank and sums evaluation metrics over ranks; mskernel-data shards a dataset that was given no
``num_shards``.  Without a provider, or when it returns ``None``, they run as one process.
"""

from __future__ import annotations

from typing import Any, Optional, Protocol, Sequence, runtime_checkable

import numpy as np
from mskernel.ops import rule_registry

#: The rule kind of data-parallel providers.
DATA_PARALLEL_RULE = "data_parallel"


@runtime_checkable
class DataParallelGroup(Protocol):
    """The ranks training one model data parallel, as a training or data plugin uses them."""

    #: this process's rank and the number of ranks
    rank: int
    size: int

    def prepare(self, parameters: Sequence[Any]) -> None:
        """Called once when a training step over ``parameters`` is built: a provider may
        give every rank the same initial values here (MindSpore's ``parameter_broadcast``)."""
        ...

    def reduce_gradients(self, gradients: Sequence[Any]) -> tuple[Any, ...]:
        """The gradients (tensors, one per parameter) combined over the ranks — summed, or
        averaged when the user asked for ``gradients_mean`` — with collective ops, so it works
        eagerly and under ``@jit``."""
        ...

    def sum_over_ranks(self, values: np.ndarray) -> np.ndarray:
        """The elementwise sum of every rank's ``values`` (host numbers: metric counts)."""
        ...

    def barrier(self) -> None:
        """Return once every rank has called it (after one rank wrote a file the others read)."""
        ...

    def dataset_shard(self) -> Optional[tuple[int, int]]:
        """``(num_shards, shard_id)`` for a dataset given no sharding, or ``None`` when every
        rank reads the whole dataset."""
        ...


def data_parallel_group(parallel_mode: Optional[str] = None) -> Optional[DataParallelGroup]:
    """The first group a registered provider gives for ``parallel_mode`` (by provider name),
    ``None`` when this process trains alone."""
    rules = rule_registry()
    for name in sorted(rules.ops_with(DATA_PARALLEL_RULE)):
        group = rules.get(DATA_PARALLEL_RULE, name)(parallel_mode)
        if group is not None:
            return group  # type: ignore[no-any-return]
    return None
