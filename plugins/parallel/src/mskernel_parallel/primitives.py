"""MindSpore's communication primitives, ``mskernel.ops.AllReduce`` and the others: configured
once (``ops.AllReduce(ops.ReduceOp.SUM, group)``), then called on tensors in a Cell's
``construct``, eagerly or traced under ``@jit``.

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.all_reduce = ops.AllReduce(ops.ReduceOp.SUM)

        def construct(self, x):
            return self.all_reduce(x)

Each call applies the collective op of :mod:`.ops` through :mod:`.communication`, so it is
ordered by the state token and differentiable by the ops' rules (:mod:`.rules`: the VJP of
``AllReduce`` is the ``AllReduce`` of the cotangent, ``AllGather``'s is ``ReduceScatter``,
...).  The group is checked when the primitive is made: a group this rank is not a member
of, or an ``AlltoAll`` whose ``split_count`` is not the group's size, is an error then.
"""

from __future__ import annotations

from typing import Any, Sequence, Union

from mskernel_sdk import Tensor, dtype as to_dtype

from . import communication as comm
from .communication import GlobalComm, ReduceOp
from .errors import CommunicationError
from .group import REDUCTIONS

__all__ = ["AllGather", "AllReduce", "AlltoAll", "Broadcast", "NeighborExchange", "Receive",
           "ReduceOp", "ReduceScatter", "Send"]

Tensors = Union[Tensor, Sequence[Tensor]]


class _Communication:
    """A primitive over ``group`` (a group name; MindSpore's world names are the world)."""

    def __init__(self, group: str = GlobalComm.WORLD_COMM_GROUP) -> None:
        if not isinstance(group, str):
            raise CommunicationError(f"ops.{self.name}: group must be a group name (str), got "
                                     f"{group!r}")
        self.group = group
        self.size = comm.get_group_size(group)
        self.rank = comm.get_rank(group)  # raises when this rank is not a member

    @property
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        attrs = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if k not in ("size",
                                                                                  "rank"))
        return f"Prim[{self.name}]<{attrs}>"


class _Reducing(_Communication):
    def __init__(self, op: str = ReduceOp.SUM,
                 group: str = GlobalComm.WORLD_COMM_GROUP) -> None:
        super().__init__(group)
        if op not in REDUCTIONS:
            raise CommunicationError(f"ops.{self.name}: op must be one of ReduceOp.SUM, MAX, "
                                     f"MIN, PROD (or MEAN), got {op!r}")
        self.op = op


class AllReduce(_Reducing):
    """``AllReduce(op=ReduceOp.SUM, group=GlobalComm.WORLD_COMM_GROUP)(x)``: the reduction
    ``op`` of every rank's ``x``, elementwise, on every rank."""

    def __call__(self, x: Tensor) -> Tensor:
        return comm.all_reduce(x, self.op, self.group)


class ReduceScatter(_Reducing):
    """``ReduceScatter(op=ReduceOp.SUM, group=...)(x)``: the reduction of every rank's ``x``,
    split along axis 0 into one block per rank; this rank's block."""

    def __call__(self, x: Tensor) -> Tensor:
        return comm.reduce_scatter(x, self.op, self.group)


class AllGather(_Communication):
    """``AllGather(group=...)(x)``: every rank's ``x`` concatenated along axis 0, in rank
    order."""

    def __call__(self, x: Tensor) -> Tensor:
        return comm.all_gather(x, self.group)


class Broadcast(_Communication):
    """``Broadcast(root_rank, group=...)(input_x)``: rank ``root_rank``'s tensors on every
    rank.  ``input_x`` is a tuple of tensors (MindSpore's form) and so is the result; a
    single tensor gives a single tensor."""

    def __init__(self, root_rank: int, group: str = GlobalComm.WORLD_COMM_GROUP) -> None:
        super().__init__(group)
        if not isinstance(root_rank, int) or not 0 <= root_rank < self.size:
            raise CommunicationError(f"ops.Broadcast: root_rank {root_rank!r} is not a rank of "
                                     f"group '{group}' (0 to {self.size - 1})")
        self.root_rank = root_rank

    def __call__(self, input_x: Tensors) -> Any:
        if isinstance(input_x, (tuple, list)):
            return tuple(comm.broadcast(x, self.root_rank, self.group) for x in input_x)
        return comm.broadcast(input_x, self.root_rank, self.group)


class AlltoAll(_Communication):
    """``AlltoAll(split_count, split_dim, concat_dim, group=...)(x)``: ``x`` split along
    ``split_dim`` into ``split_count`` blocks (the group's size), block ``j`` sent to rank
    ``j``; the blocks received, in rank order, concatenated along ``concat_dim``."""

    def __init__(self, split_count: int, split_dim: int, concat_dim: int,
                 group: str = GlobalComm.WORLD_COMM_GROUP) -> None:
        super().__init__(group)
        if split_count != self.size:
            raise CommunicationError(f"ops.AlltoAll: split_count {split_count} must equal the "
                                     f"size of group '{group}' ({self.size})")
        self.split_count, self.split_dim, self.concat_dim = split_count, split_dim, concat_dim

    def __call__(self, x: Tensor) -> Tensor:
        return comm.all_to_all(x, self.split_dim, self.concat_dim, self.group)


class Send(_Communication):
    """``Send(sr_tag, dest_rank, group=...)(x)``: send ``x`` to rank ``dest_rank``, whose
    ``Receive`` with the same ``sr_tag`` takes it.  Returns ``x`` (MindSpore returns a
    placeholder; the value keeps a data dependency on the send)."""

    def __init__(self, sr_tag: int, dest_rank: int,
                 group: str = GlobalComm.WORLD_COMM_GROUP) -> None:
        super().__init__(group)
        self.sr_tag, self.dest_rank = sr_tag, dest_rank

    def __call__(self, x: Tensor) -> Tensor:
        comm.send(x, self.dest_rank, self.group, self.sr_tag)
        return x


class Receive(_Communication):
    """``Receive(sr_tag, src_rank, shape, dtype, group=...)()``: the tensor rank ``src_rank``
    sent with ``sr_tag``, which must have ``shape`` and ``dtype``."""

    def __init__(self, sr_tag: int, src_rank: int, shape: Sequence[int], dtype: Any,
                 group: str = GlobalComm.WORLD_COMM_GROUP) -> None:
        super().__init__(group)
        self.sr_tag, self.src_rank = sr_tag, src_rank
        self.shape, self.dtype = tuple(shape), to_dtype(dtype)

    def __call__(self) -> Tensor:
        return comm.recv(self.shape, self.src_rank, self.group, self.sr_tag, dtype=self.dtype)


class NeighborExchange(_Communication):
    """``NeighborExchange(send_rank_ids, recv_rank_ids, recv_shapes, send_shapes, recv_type,
    group=...)(input_x)``: tensor ``i`` of ``input_x`` to rank ``send_rank_ids[i]``; returns
    the tensors received from ``recv_rank_ids`` (shapes ``recv_shapes``, dtype
    ``recv_type``).  The messages with each peer go in ascending order of peers, the lower
    rank of a pair sending first, so no two ranks wait on each other's receive."""

    def __init__(self, send_rank_ids: Sequence[int], recv_rank_ids: Sequence[int],
                 recv_shapes: Sequence[Sequence[int]], send_shapes: Sequence[Sequence[int]],
                 recv_type: Any, group: str = GlobalComm.WORLD_COMM_GROUP) -> None:
        super().__init__(group)
        if len(recv_shapes) != len(recv_rank_ids) or len(send_shapes) != len(send_rank_ids):
            raise CommunicationError(
                f"ops.NeighborExchange: {len(send_rank_ids)} send_rank_ids with "
                f"{len(send_shapes)} send_shapes, {len(recv_rank_ids)} recv_rank_ids with "
                f"{len(recv_shapes)} recv_shapes; each rank needs one shape")
        peers = [*send_rank_ids, *recv_rank_ids]
        if len(set(send_rank_ids)) != len(send_rank_ids) or len(set(recv_rank_ids)) != len(
                recv_rank_ids) or not all(0 <= p < self.size and p != self.rank for p in peers):
            raise CommunicationError(
                f"ops.NeighborExchange: send_rank_ids {list(send_rank_ids)} and recv_rank_ids "
                f"{list(recv_rank_ids)} must be distinct other ranks of group '{group}' "
                f"(0 to {self.size - 1}, this rank {self.rank})")
        self.send_rank_ids, self.recv_rank_ids = list(send_rank_ids), list(recv_rank_ids)
        self.recv_shapes = [tuple(s) for s in recv_shapes]
        self.send_shapes = [tuple(s) for s in send_shapes]
        self.recv_type = to_dtype(recv_type)

    def __call__(self, input_x: Sequence[Tensor]) -> tuple[Tensor, ...]:
        sends = dict(zip(self.send_rank_ids, input_x, strict=True))
        for peer, x, shape in zip(self.send_rank_ids, input_x, self.send_shapes):
            if tuple(x.shape) != shape:
                raise CommunicationError(f"ops.NeighborExchange: the tensor for rank {peer} has "
                                         f"shape {tuple(x.shape)}, send_shapes says {shape}")
        received: dict[int, Tensor] = {}
        for peer in sorted(set(self.send_rank_ids) | set(self.recv_rank_ids)):
            send_first = self.rank < peer
            for step in ("send", "recv") if send_first else ("recv", "send"):
                if step == "send" and peer in sends:
                    comm.send(sends[peer], peer, self.group)
                elif step == "recv" and peer in self.recv_rank_ids:
                    shape = self.recv_shapes[self.recv_rank_ids.index(peer)]
                    received[peer] = comm.recv(shape, peer, self.group, dtype=self.recv_type)
        return tuple(received[p] for p in self.recv_rank_ids)
