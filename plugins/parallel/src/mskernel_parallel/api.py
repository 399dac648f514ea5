"""``mskernel.parallel``: the parallel context (MindSpore's ``set_auto_parallel_context``),
data parallelism and the parameter server.

    import mskernel
    from mskernel.parallel import ParallelMode, set_auto_parallel_context
    mskernel.communication.init()
    set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True)
    model = Model(net, loss_fn, optimizer)     # mskernel-nn: gradients reduced over ranks
    model.train(epochs, dataset)               # mskernel-data: one shard of it per rank

- :func:`set_auto_parallel_context`, :func:`get_auto_parallel_context`,
  :func:`reset_auto_parallel_context`, :class:`ParallelMode`, :class:`AutoParallelContext`;
- :class:`DistributedGradReducer`: the gradient all-reduce of a custom training step
  (MindSpore's ``nn.DistributedGradReducer``); ``TrainOneStepCell`` uses one in data-parallel
  mode;
- :mod:`~mskernel_parallel.ps`: the parameter server (``mskernel.parallel.ps``);
- operator parallelism: :class:`OpSharding` (what a ``"sharding"`` rule returns, for plugins
  adding ops), :class:`Layout` (a device mesh, MindSpore's), :class:`Mesh`,
  :class:`TensorLayout`, :func:`shard` (also ``mskernel.shard`` and ``Cell.shard``),
  :func:`parallelize` giving a :class:`ShardedProgram` (one rank's graph of a sharded
  function), :func:`simulate` (every rank's graph in one process), :class:`ShardedSGD`
  (training a sharded loss), :class:`AutoParallel` (the cost model's strategy search),
  :func:`save_checkpoint` (``integrated_save``) and :func:`load_distributed_checkpoint`;
- pipeline parallelism: :class:`PipelineSGD` (stages on ranks, micro-batches, 1F1B);
- expert parallelism: :func:`moe` (a mixture-of-experts layer, experts over the ranks).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from mskernel_sdk import Tensor

from .context import (
    AutoParallelContext, ParallelMode, get_auto_parallel_context, reset_auto_parallel_context,
    set_auto_parallel_context,
)
from . import ps
from .data_parallel import DEFAULT_BUCKET_MB, GradientBuckets
from .sharding.checkpoint import load_distributed_checkpoint, save_checkpoint
from .sharding.constraint import shard, with_sharding_constraint
from .sharding.layout import Layout, Mesh, TensorLayout
from .sharding.moe import moe
from .sharding.pipeline import PipelineSGD
from .sharding.program import ShardedProgram, parallelize
from .sharding.rules import OpSharding
from .sharding.search import AutoParallel
from .sharding.simulate import simulate
from .sharding.train import ShardedSGD

__all__ = ["AutoParallel", "AutoParallelContext", "DistributedGradReducer", "Layout", "Mesh",
           "OpSharding", "ParallelMode", "PipelineSGD", "ShardedProgram", "ShardedSGD",
           "TensorLayout", "get_auto_parallel_context", "load_distributed_checkpoint", "moe",
           "parallelize", "ps", "reset_auto_parallel_context", "save_checkpoint",
           "set_auto_parallel_context", "shard", "simulate", "with_sharding_constraint"]


class DistributedGradReducer:
    """``reducer(grads)``: the gradients summed over the ranks of ``group`` (the world), divided
    by ``degree`` (default: the group's size) when ``mean``; fused into buckets of
    ``bucket_mb`` MB.  Works eagerly and inside a ``@jit`` training step."""

    def __init__(self, parameters: Sequence[Any] = (), mean: bool = True,
                 degree: Optional[int] = None, group: Optional[str] = None,
                 bucket_mb: float = DEFAULT_BUCKET_MB) -> None:
        self.parameters = tuple(parameters)
        self._buckets = GradientBuckets(group, mean=False, bucket_mb=bucket_mb)
        size = self._buckets.group.size
        self.degree = size if degree is None else int(degree)
        self.mean = mean

    def __call__(self, grads: Sequence[Tensor]) -> tuple[Tensor, ...]:
        summed = self._buckets(grads)
        if not self.mean or self.degree == 1:
            return summed
        return tuple(g / self.degree for g in summed)
