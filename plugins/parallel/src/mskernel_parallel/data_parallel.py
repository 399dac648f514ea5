"""Data parallelism: each rank trains a replica of the model on its shard of the data, and
the gradients are combined over the ranks before every update, so the replicas stay equal.

:class:`GradientBuckets` fuses the gradients into buckets (by size, in backward order, one
dtype per bucket, as PyTorch's DDP does) and all-reduces each bucket in two halves: a
``parallel.all_reduce_start`` of the bucket's gradients as soon as they exist, which the
partitioner schedules ahead of the rest of the backward pass (the op's ``schedule_early``
trait), and a ``parallel.all_reduce_wait`` after every start, where the optimizer needs the
results.  Between the two, the group's communication thread fuses the bucket into one buffer
(the one copy, off the backend's thread; a bucket of one gradient is handed to MPI as the
backend's own buffer) and runs the all-reduce over MPI while the backend computes the
gradients of the earlier layers; the wait returns each gradient's part of the result.

:data:`PROVIDER` is what mskernel-nn and mskernel-data consult through the SDK's
data-parallel seam (:mod:`mskernel_sdk.data_parallel`): in ``data_parallel`` mode it gives
them the world's :class:`DataParallel` group.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from mskernel_sdk import Tensor, apply

from . import groups, ops
from .context import AutoParallelContext, ParallelMode, auto_parallel_context
from .context import set_auto_parallel_context
from .errors import CommunicationError

DEFAULT_BUCKET_MB = 25.0


class GradientBuckets:
    """Combine gradients over the ranks of ``group`` in buckets: summed, or averaged with
    ``mean``.  ``bucket_mb`` bounds a bucket's size; ``split_indices`` instead ends a bucket
    after each listed position of the gradient list (MindSpore's fusion indices)."""

    def __init__(self, group: Optional[str] = None, mean: bool = True,
                 bucket_mb: float = DEFAULT_BUCKET_MB,
                 split_indices: Optional[Sequence[int]] = None) -> None:
        if bucket_mb <= 0:
            raise CommunicationError(f"the gradient bucket size must be positive, got "
                                     f"{bucket_mb} MB")
        self.group = groups.get_group(group)
        self.mean = mean
        self.bucket_bytes = int(bucket_mb * 2**20)
        self.split_indices = None if split_indices is None else sorted(set(split_indices))

    def buckets(self, gradients: Sequence[Tensor]) -> list[list[int]]:
        """The positions of the gradients in each bucket, in the order they are reduced."""
        if self.split_indices is not None:
            return self._by_index(gradients)
        buckets: list[list[int]] = []
        open_by_dtype: dict[Any, list[int]] = {}
        size: dict[Any, int] = {}
        for i in reversed(range(len(gradients))):
            g = gradients[i]
            nbytes = g.type.nbytes
            current = open_by_dtype.get(g.dtype)
            if current is None or size[g.dtype] + nbytes > self.bucket_bytes:
                current = open_by_dtype[g.dtype] = []
                size[g.dtype] = 0
                buckets.append(current)
            current.append(i)
            size[g.dtype] += nbytes
        return buckets

    def _by_index(self, gradients: Sequence[Tensor]) -> list[list[int]]:
        ends = [i for i in self.split_indices or () if 0 < i < len(gradients)] + [len(gradients)]
        buckets, start = [], 0
        for end in ends:
            span = list(range(start, end))
            for dt in dict.fromkeys(gradients[i].dtype for i in span):
                buckets.append([i for i in span if gradients[i].dtype == dt])
            start = end
        return [b for b in buckets if b]

    def __call__(self, gradients: Sequence[Tensor]) -> tuple[Tensor, ...]:
        grads = tuple(gradients)
        if self.group.size == 1:  # the all-reduce of one rank's gradients is those gradients
            return grads
        return self.reduce(grads)

    def reduce(self, grads: Sequence[Tensor]) -> tuple[Tensor, ...]:
        """The gradients all-reduced bucket by bucket, each bucket's all-reduce started as soon
        as its gradients exist and waited for after every start (a group of one included)."""
        out = list(grads)
        attrs = {"group": self.group.name, "group_size": self.group.size,
                 "reduction": "mean" if self.mean else "sum"}
        buckets = self.buckets(grads)
        for key, bucket in enumerate(buckets):
            apply(ops.ALL_REDUCE_START, *(grads[i] for i in bucket), key=key, **attrs)
        for key, bucket in enumerate(buckets):
            reduced = apply(ops.ALL_REDUCE_WAIT, *(grads[i] for i in bucket), key=key, **attrs)
            for i, g in zip(bucket, reduced if len(bucket) > 1 else (reduced,)):
                out[i] = g
        return tuple(out)


def buckets_for(context: AutoParallelContext, mean: Optional[bool] = None) -> GradientBuckets:
    """The bucketed reducer the context configures (``mean`` overrides ``gradients_mean``)."""
    fusion = context.comm_fusion
    mean = context.gradients_mean if mean is None else mean
    if fusion.mode == "index":
        return GradientBuckets(mean=mean, split_indices=list(fusion.config or []))
    size = float(fusion.config) if fusion.mode == "size" and fusion.config else DEFAULT_BUCKET_MB
    return GradientBuckets(mean=mean, bucket_mb=size)


class DataParallel:
    """The world's ranks training data parallel (mskernel-sdk's ``DataParallelGroup``)."""

    def __init__(self, context: AutoParallelContext) -> None:
        world = groups.world()
        for field, value, actual in (("device_num", context.device_num, world.size),
                                     ("global_rank", context.global_rank, world.rank)):
            if value is not None and value != actual:
                raise CommunicationError(
                    f"set_auto_parallel_context({field}={value}) disagrees with the "
                    f"communicator ({field} {actual}); leave it unset")
        self.rank, self.size = world.rank, world.size
        self.context = context
        self._reduce = buckets_for(context)

    def reduce_gradients(self, gradients: Sequence[Any]) -> tuple[Any, ...]:
        return self._reduce(gradients)

    def sum_over_ranks(self, values: np.ndarray) -> np.ndarray:
        return groups.world().all_reduce(np.ascontiguousarray(values), "sum")

    def barrier(self) -> None:
        groups.world().barrier()

    def dataset_shard(self) -> Optional[tuple[int, int]]:
        if self.context.full_batch or self.size == 1:
            return None
        return self.size, self.rank

    def prepare(self, parameters: Sequence[Any]) -> None:
        """With ``parameter_broadcast``, give every rank rank 0's values of ``parameters``."""
        if not self.context.parameter_broadcast or self.size == 1:
            return
        for p in parameters:
            p.set_data(apply(ops.BROADCAST, Tensor(p.numpy()), group=groups.WORLD,
                             group_size=self.size, root=0))


def provider(parallel_mode: Optional[str] = None) -> Optional[DataParallel]:
    """The data-parallel provider: ``parallel_mode`` (from ``Model``/``TrainOneStepCell``)
    sets the context's mode like ``set_auto_parallel_context``; in ``data_parallel`` mode the
    world's group, else ``None``."""
    if parallel_mode is not None:
        set_auto_parallel_context(parallel_mode=parallel_mode)
    context = auto_parallel_context()
    if context.parallel_mode is not ParallelMode.DATA_PARALLEL:
        return None
    return DataParallel(context)


PROVIDER = provider
